"""Tests of the RSN fabric: its switch, functional units, control plane, place & route."""

"""Tests of the Ripple golden model: operators, the interpreter, the RipTide importer and suite."""

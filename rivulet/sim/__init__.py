"""The simulation back-end: Verilator builds (shared, locked, with progress lines) and cocotb
runs (each in a directory of its own), host stream drivers and protocol monitors, the
whole-fabric run and its result parsing, and the stream components' bench.

``rivulet run --sim rtl``, the demo and the test suite all run their simulations through it, so a
result means the same thing whichever of them produced it.
"""

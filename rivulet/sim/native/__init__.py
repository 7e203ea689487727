"""The native tier: a fabric run at the Verilated model's own speed, its host side in hardware.

:mod:`.top` is the simulation top (the fabric plus memories, pattern generators, sinks,
protocol checkers and the end of a run), :mod:`.patterns` the generators both tiers share,
:mod:`.build` the Verilator build with the C++ driver (``driver.cpp``), and :mod:`.runs` the
Python side: it writes the runs, starts the driver and reads the results back into the records
the cocotb tier writes, so that everything downstream is the same.
"""

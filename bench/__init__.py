"""Benchmarks: FPGA area/Fmax (YoWASP Yosys + nextpnr) and simulated throughput.

Run ``make bench`` (or ``python -m bench.run``); results land in ``bench/results/``.
"""

"""Boards: the FPGA bitstream flow, board tops, and the UART host link that drives both a real
board and the Verilated board top with the same host code."""

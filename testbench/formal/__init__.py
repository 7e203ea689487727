"""Formal proofs (SymbiYosys, Yices 2) that the stream primitives keep the stream rules and lose,
duplicate or reorder no token, for all time rather than for the traces a simulation happens to try.
"""

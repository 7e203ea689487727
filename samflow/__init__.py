"""Sparse tensor algebra streams after SAM (the Sparse Abstract Machine, ASPLOS 2023).

One token layout (:mod:`samflow.tokens`) is shared by the golden models (:mod:`samflow.models`),
the RTL primitives (:mod:`samflow.rtl`) and the conformance runner over SAM's vector files
(:mod:`samflow.conform`). See docs/sparse.md.
"""

"""SAM's streaming primitives in Amaranth 0.5, on :mod:`samflow.tokens` streams.

Every output has its own register stage and is offered until taken; a primitive moves one token
per cycle where its semantics allow it (a stop that closes a fiber after a reference costs a cycle
of its own only where SAM emits two tokens for one).
"""

from .accumulator import PackedAccumulator, SparseAccumulator
from .alu import Alu
from .bitvector import Bv, BvChunk, BvDrop, IntersectBv, RdScanBv
from .drop import CrdDrop, EmptyStknDrop, StknDrop, ZeroValueDrop
from .joiner import Intersect, Union
from .levels import CrdHold, CrdPtConverter, Flatten, Split
from .memory import Array, CompressedWriter, ValsWriter
from .reduce import Reduce
from .repeat import Repeat, RepeatSigGen
from .scanner import LevelScanner

__all__ = ["Alu", "CrdDrop", "EmptyStknDrop", "StknDrop", "Intersect", "Union", "Array", "ValsWriter",
           "CompressedWriter", "Reduce", "Repeat", "RepeatSigGen", "LevelScanner", "CrdHold",
           "CrdPtConverter", "Flatten", "Split", "ZeroValueDrop", "Bv", "BvChunk", "BvDrop", "IntersectBv",
           "RdScanBv", "SparseAccumulator", "PackedAccumulator"]

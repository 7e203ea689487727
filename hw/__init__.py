"""Stream primitives: the building blocks every Rivulet tile and link is made of."""

from .arbiter import Arbiter
from .banked_memory import BankedMemory, MemoryOp
from .fork import FORK_MODES, Fork
from .join import Join
from .params import ParameterError
from .skid_buffer import SkidBuffer
from .token_queue import QUEUE_MODES, TokenQueue

__all__ = ["Arbiter", "BankedMemory", "FORK_MODES", "Fork", "Join", "MemoryOp", "ParameterError",
           "QUEUE_MODES", "SkidBuffer", "TokenQueue"]

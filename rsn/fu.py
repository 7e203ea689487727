"""The functional-unit interface: what every FU kind plugs into a tile with.

A FU kind is described completely by one :class:`FuKind`: its ports, micro-op layout, RTL and
golden model, the parameters it takes from a fabric description, how its micro-ops count tokens
and which programs it accepts. ``rsn`` never branches on a kind's name: every check, the
generator, the golden model and the cycle model ask the descriptor (``rsn.fu_kinds`` keeps the
registry). :func:`fu_signature` builds the one signature every FU component has; see
docs/rsn-architecture.md ("Functional units") for the meaning of each member.
"""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from amaranth.hdl import Value, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.banked_memory import request_layout, response_layout

from .isa import MAX_FU_STATUS_REGISTERS, REGISTERS

__all__ = ["ConfigBus", "FuKind", "KindParameters", "NoParameters", "fu_signature", "count_status",
           "MAX_FU_INPUTS", "MAX_FU_OUTPUTS", "MEMORY_META_BITS"]

MAX_FU_INPUTS = 3
MAX_FU_OUTPUTS = 2
MEMORY_META_BITS = 1        # the meta bits of the shared memory's requests (a kind's own use)

# Register access from the control plane, as seen by the controller (a FU takes `In(ConfigBus)`).
# A write takes effect at the clock edge; read data is valid in the cycle after `read`.
ConfigBus = wiring.Signature({
    "addr": Out(16),
    "data": Out(32),
    "write": Out(1),
    "read": Out(1),
    "rdata": In(32),
})


@dataclass(frozen=True)
class KindParameters:
    """The parameters of one FU kind in a fabric description: the TOML table named after the kind
    (``[pe]``, ``[xbar]``, ...), the same for every tile of that kind.

    A kind subclasses this as a frozen dataclass whose fields are the table's keys, with their
    defaults. The fabric loader refuses unknown keys and calls :meth:`check` (each value's range)
    and, when the fabric has tiles of the kind, :meth:`check_fabric` (rules that involve the rest
    of the fabric, such as the data width). Both raise ``ValueError`` with a message that names the
    key, the value and what is allowed; the loader prefixes the file and the table.
    """

    def check(self) -> None:
        """Raise ``ValueError`` for a value out of range."""

    def check_fabric(self, spec) -> None:
        """Raise ``ValueError`` for a value that does not fit the fabric ``spec``."""

    def rtl_arguments(self) -> dict[str, Any]:
        """Keyword arguments, besides ``width``, of the kind's RTL and golden model classes."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


@dataclass(frozen=True)
class NoParameters(KindParameters):
    """A kind that takes nothing from the fabric description but the data width."""


def _no_check(uop: dict, parameters) -> None:
    pass


@dataclass(frozen=True)
class FuKind:
    """A kind of functional unit, as the fabric generator, the checks and the compiler see it.

    ``tokens(uops)`` returns (tokens consumed per input, tokens produced per output) by a list of
    micro-ops (dicts of field values), or None for a kind whose counts depend on the data (the
    program then states each stream's count, and a wrong count shows as a deadlock).
    ``count_fields(uop)`` names the micro-op fields that count something (beats, firings, steps):
    0 is refused, since the RTL would run it as the field's full range. ``check_uop(uop,
    parameters)`` raises ``ValueError`` for any other micro-op the unit refuses. ``cyclic`` says
    units of this kind may wait on each other in a loop (they fire token by token by their own
    rules). ``late_inputs(uops)`` gives the inputs that are not read before the unit's first
    output, so a cycle through them is a recurrence rather than a wait. ``timing`` builds the
    cycle model's skeleton of one unit, ``timing(uop_queue, input_queues)``, for kinds whose
    timing depends on token counts alone, or on token values too when the skeleton has a
    ``prepare`` method (rsn.cycle_model). ``storage_words(parameters)`` is the size of the bank
    a program's ``memories`` fill with data words from address 0 (None: those entries are 32-bit
    registers). ``generator`` is an optional ``hw.catalog.Generator`` for ``rivulet generate``.

    ``memory_port`` says the kind's FU reaches the fabric's shared memory: in a fabric with a
    ``[memory]`` table its RTL and model get ``shared_words`` (the memory's words), and its
    component has ``mem_req`` / ``mem_resp`` (:func:`fu_signature`).

    ``status_registers`` is how many read-only registers the FU answers at
    ``REGISTERS["fu_status"]`` onwards, beside its storage (a sticky fault and the token that
    raised it, say): the tile passes READs of them to the FU, and the golden model's
    ``read_word`` answers them too.

    ``describe_config(words)`` names what a unit is configured to do (an operator), from the
    words of its storage or status registers ``describe_registers`` (in that order), for hang reports
    (:mod:`rsn.hang_report`): a report that says which operator stopped reads like the
    program. None for a kind whose micro-ops say everything. Both the RTL (through READs after
    the watchdog fires) and the golden model (``read_word``) supply the words.
    """
    name: str
    n_in: int
    n_out: int
    uop_layout: object      # an Amaranth data layout of exactly one micro-op body
    latency: int            # cycles from a step's last input token to its output token
    rtl: type               # the wiring.Component; rtl(width=..., **parameters.rtl_arguments())
    model: type             # the golden model (an rsn.channels.UnitModel), constructed alike
    parameters: type = NoParameters
    tokens: Callable[[list], tuple[list, list]] | None = None
    count_fields: Callable[[dict], tuple[str, ...]] = lambda uop: ()
    check_uop: Callable[[dict, Any], None] = _no_check
    cyclic: bool = False
    late_inputs: Callable[[list], frozenset] = lambda uops: frozenset()
    timing: Callable | None = None
    storage_words: Callable[[Any], int] | None = None
    generator: Any = None
    describe_registers: tuple[int, ...] = ()
    describe_config: Callable[[tuple[int, ...]], str] | None = None
    memory_port: bool = False
    status_registers: int = 0

    def __post_init__(self):
        if not (self.name.isidentifier() and self.name.islower()):
            raise ValueError(f"FU kind name {self.name!r} must be a lower-case identifier")
        if not (0 <= self.n_in <= MAX_FU_INPUTS and 0 <= self.n_out <= MAX_FU_OUTPUTS):
            raise ValueError(f"FU kind {self.name!r}: {self.n_in} inputs and {self.n_out} outputs; a tile "
                             f"has room for at most {MAX_FU_INPUTS} and {MAX_FU_OUTPUTS}")
        if not (isinstance(self.parameters, type) and issubclass(self.parameters, KindParameters)):
            raise ValueError(f"FU kind {self.name!r}: parameters must be a KindParameters subclass")
        if not 0 <= self.status_registers <= MAX_FU_STATUS_REGISTERS:
            raise ValueError(f"FU kind {self.name!r}: {self.status_registers} status registers; a tile "
                             f"passes at most {MAX_FU_STATUS_REGISTERS} to its FU")
        storage = REGISTERS["firings"]          # a FU's own registers lie below the tile's
        if any(not (0 <= address < storage or self.is_status_register(address))
               for address in self.describe_registers):
            status = REGISTERS["fu_status"]
            raise ValueError(f"FU kind {self.name!r}: describe_registers {self.describe_registers} must "
                             f"be the FU's storage registers, 0..{storage - 1}, or its status registers, "
                             f"{status:#x}..{status + self.status_registers - 1:#x}")

    def is_status_register(self, address: int) -> bool:
        """``address`` is one of the FU's read-only status registers."""
        base = REGISTERS["fu_status"]
        return base <= address < base + self.status_registers

    @property
    def data_dependent(self) -> bool:
        return self.tokens is None


def fu_signature(kind: FuKind, width: int, shared_words: int = 0) -> wiring.Signature:
    """The signature of every FU: data streams, micro-ops, config bus, counters and flags; with
    ``shared_words`` (a kind with a memory port in a fabric with a shared memory) also the
    memory port, whose payloads are :mod:`hw.banked_memory`'s with one meta bit."""
    assert kind.n_in <= MAX_FU_INPUTS and kind.n_out <= MAX_FU_OUTPUTS
    members = {
        "uop": In(stream.Signature(kind.uop_layout)),
        "cfg": In(ConfigBus),
        "clear": In(1),         # START: zero the counters and the finished flag
        "firings": Out(32),
        "stalls": Out(32),
        "busy": Out(1),
        "finished": Out(1),
    }
    if kind.n_in:
        members["i"] = In(stream.Signature(unsigned(width))).array(kind.n_in)
    if kind.n_out:
        members["o"] = Out(stream.Signature(unsigned(width))).array(kind.n_out)
    if shared_words:
        members["mem_req"] = Out(stream.Signature(request_layout(32, MEMORY_META_BITS)))
        members["mem_resp"] = In(stream.Signature(response_layout(32, MEMORY_META_BITS)))
    return wiring.Signature(members)


def count_status(m, unit, *, firing, stall, completes_last):
    """Drive a FU's ``firings``, ``stalls`` and ``finished``; ``clear`` restarts them from this cycle."""
    with m.If(unit.clear):
        m.d.sync += [unit.firings.eq(firing), unit.stalls.eq(stall),
                     unit.finished.eq(completes_last)]
    with m.Else():
        _count(m, unit.firings, firing)
        _count(m, unit.stalls, stall)
        m.d.sync += unit.finished.eq(unit.finished | completes_last)


def _count(m, counter, amount):
    """``counter += amount``. A one-bit amount enables an increment instead of entering the
    adder: it comes late in the cycle (a unit's firing decision), and through the adder it would
    ripple along the counter's whole carry chain."""
    amount = Value.cast(amount)
    if len(amount) == 1:
        with m.If(amount):
            m.d.sync += counter.eq(counter + 1)
    else:
        m.d.sync += counter.eq(counter + amount)

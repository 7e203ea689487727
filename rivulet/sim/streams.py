"""Stream drivers, a protocol monitor and a bench engine that know nothing of the simulator.

A bench is a loop over clock cycles. Before each edge, :meth:`StreamBench.drive` says what the
bench's sources and sinks put on the ports; once the design has settled, :meth:`StreamBench.observe`
takes the sampled port values, checks the stream rules, records transfers and feeds the
scoreboard. The cocotb/Verilator backend and the Amaranth-simulator backend are thin adapters
around this loop, so both tiers run exactly the same checks.
"""

import itertools
import random
from dataclasses import dataclass, field

from amaranth.hdl import Shape
from amaranth.lib import wiring

__all__ = [
    "ProtocolError", "ScoreboardError", "NoProgressError", "Schedule", "StallProfile", "PROFILES",
    "SLOW_PROFILES", "profile_named",
    "StreamPort", "port_paths", "port_name", "stream_ports", "SourceDriver", "SinkDriver",
    "ProtocolMonitor", "StreamBench",
]


class ProtocolError(AssertionError):
    """A stream broke the valid/ready rules."""


class ScoreboardError(AssertionError):
    """A design's outputs differ from its golden model."""


class NoProgressError(AssertionError):
    """A bench ran out of cycles before every expected token arrived."""


class Schedule:
    """A probability that may change with time: phases of ``(cycles, probability)``.

    ``Schedule(0.5)`` is constant; ``Schedule((64, 1.0), (None, 0.0))`` is 1.0 for 64 cycles
    and 0.0 from then on. Probabilities are 0 to 1 inclusive.
    """

    def __init__(self, *phases):
        if len(phases) == 1 and not isinstance(phases[0], tuple):
            phases = ((None, phases[0]),)
        self.phases = []
        start = 0
        for length, probability in phases:
            if not 0.0 <= probability <= 1.0:
                raise ValueError(f"stall probability {probability} is outside 0..1")
            self.phases.append((None if length is None else start + length, probability))
            start = start + (length or 0)
        if self.phases[-1][0] is not None:
            self.phases.append((None, self.phases[-1][1]))

    def at(self, cycle: int) -> float:
        for end, probability in self.phases:
            if end is None or cycle < end:
                return probability
        raise AssertionError("unreachable: the last phase is open-ended")

    def __repr__(self):
        return "Schedule(" + ", ".join(f"{end}:{p}" for end, p in self.phases) + ")"


@dataclass(frozen=True)
class StallProfile:
    """How often sources idle and sinks refuse, as named rows of a scenario table."""
    name: str
    idle: Schedule
    backpressure: Schedule


PROFILES = {profile.name: profile for profile in [
    StallProfile("no_stall", Schedule(0.0), Schedule(0.0)),
    StallProfile("random_stall_50", Schedule(0.5), Schedule(0.5)),
    StallProfile("backpressure_90", Schedule(0.0), Schedule(0.9)),
    StallProfile("blocked_then_free", Schedule(0.0), Schedule((48, 1.0), (None, 0.0))),
    StallProfile("starved_then_flood", Schedule((48, 1.0), (None, 0.0)), Schedule(0.3)),
]}
# Profiles for particular tests only, never drawn at random from PROFILES: a host that sends
# about one word in 10 cycles (a large image then takes longer than the fabric's watchdog limit).
SLOW_PROFILES = {"slow_host": StallProfile("slow_host", Schedule(0.9), Schedule(0.0))}


def profile_named(name: str) -> StallProfile:
    """The stall profile ``name``, of PROFILES or SLOW_PROFILES."""
    return PROFILES.get(name) or SLOW_PROFILES[name]


@dataclass(frozen=True)
class StreamPort:
    """A stream on the design's boundary: ``prefix__valid``, ``prefix__ready``, ``prefix__payload``.

    ``into_design`` is True for a stream the design consumes (the bench drives it).
    """
    prefix: str
    into_design: bool
    width: int

    @property
    def valid(self) -> str:
        return f"{self.prefix}__valid"

    @property
    def ready(self) -> str:
        return f"{self.prefix}__ready"

    @property
    def payload(self) -> str:
        return f"{self.prefix}__payload"


def port_paths(signature, prefix=()):
    """Yield ``(path, member)`` for every port, with array members expanded into indices.

    (``SignatureMembers.flatten`` leaves arrays of interfaces unexpanded.)
    """
    for name, member in signature.members.items():
        for index in itertools.product(*(range(size) for size in member.dimensions)):
            path = prefix + (name,) + index
            if member.is_port:
                yield path, member
            else:
                # An In member's signature is already flipped: its ports carry their own flow.
                yield from port_paths(member.signature, path)


def port_name(path) -> str:
    """Amaranth's Verilog name of a port: the path parts joined by ``__``."""
    return "__".join(str(part) for part in path)


def stream_ports(component) -> tuple[list[StreamPort], list[str]]:
    """Find a component's streams, and its other ports, from its signature."""
    members = dict(port_paths(component.signature))
    streams, others = [], []
    for path, member in members.items():
        if path[-1] == "valid" and path[:-1] + ("payload",) in members:
            width = Shape.cast(members[path[:-1] + ("payload",)].shape).width
            streams.append(StreamPort(port_name(path[:-1]), member.flow == wiring.In, width))
        elif path[-1] not in ("valid", "ready", "payload"):
            others.append(port_name(path))
    return streams, others


class SourceDriver:
    """Offers ``tokens`` on a stream, idling at random between tokens, never mid-offer.

    While idle it drives random junk on the payload, so a design that samples the payload
    without ``valid`` is caught by its scoreboard.
    """

    def __init__(self, port: StreamPort, tokens, idle: Schedule, rng: random.Random):
        self.port, self.tokens, self.idle, self.rng = port, list(tokens), idle, rng
        self.sent = 0
        self.offering = False

    @property
    def done(self) -> bool:
        return self.sent == len(self.tokens)

    def drive(self, cycle: int) -> dict[str, int]:
        if not self.offering and not self.done:
            self.offering = self.rng.random() >= self.idle.at(cycle)
        if self.offering:
            return {self.port.valid: 1, self.port.payload: self.tokens[self.sent]}
        return {self.port.valid: 0, self.port.payload: self.rng.getrandbits(self.port.width)}

    def observe(self, transferred: bool):
        if transferred:
            self.sent += 1
            self.offering = False


class SinkDriver:
    """Takes tokens from a stream, refusing at random.

    ``persistent=True`` models a consumer whose ready never falls without a transfer (a queue's
    input): once it says ready, it stays ready until it takes a token.
    """

    def __init__(self, port: StreamPort, backpressure: Schedule, rng: random.Random,
                 persistent: bool = False):
        self.port, self.backpressure, self.rng, self.persistent = port, backpressure, rng, persistent
        self.ready = False

    def drive(self, cycle: int) -> dict[str, int]:
        if not (self.persistent and self.ready):
            self.ready = self.rng.random() >= self.backpressure.at(cycle)
        return {self.port.ready: int(self.ready)}

    def observe(self, transferred: bool):
        if transferred:
            self.ready = False


@dataclass
class ProtocolMonitor:
    """Checks one stream's rules every cycle and records its transfers.

    Rules: once ``valid`` is high it stays high, with the same payload, until a transfer (a
    cycle with ``valid`` and ``ready`` both high).
    """
    port: StreamPort
    transfers: list[tuple[int, int]] = field(default_factory=list)
    _waiting: tuple[int, int] | None = None     # (since cycle, payload) of an untaken offer

    def observe(self, cycle: int, valid: int, ready: int, payload: int) -> bool:
        if self._waiting is not None:
            since, offered = self._waiting
            if not valid:
                raise ProtocolError(
                    f"{self.port.prefix}: valid fell at cycle {cycle} without a transfer; "
                    f"payload {offered:#x} was offered since cycle {since}")
            if payload != offered:
                raise ProtocolError(
                    f"{self.port.prefix}: payload changed from {offered:#x} to {payload:#x} at "
                    f"cycle {cycle} while valid and not ready (offered since cycle {since})")
        transferred = bool(valid and ready)
        if transferred:
            self.transfers.append((cycle, payload))
            self._waiting = None
        elif valid and self._waiting is None:
            self._waiting = (cycle, payload)
        return transferred


class StreamBench:
    """One bench: drivers on the design's streams, a monitor on each, and a scoreboard.

    ``checker`` gets ``on_cycle(cycle, sample, transfers)`` every cycle, where ``transfers``
    maps stream prefixes to the payload they transferred; ``complete()`` says whether every
    expected output has arrived and ``finish()`` makes the end-of-run comparison.
    """

    def __init__(self, ports, sources, sinks, checker, extra_signals=()):
        self.ports = list(ports)
        self.sources = list(sources)
        self.sinks = list(sinks)
        self.checker = checker
        self.monitors = [ProtocolMonitor(port) for port in self.ports]
        self._driver_of = {driver.port.prefix: driver for driver in self.sources + self.sinks}
        self.sampled = [name for port in self.ports
                        for name in (port.valid, port.ready, port.payload)] + list(extra_signals)
        self.cycles = 0

    @property
    def driven(self) -> list[str]:
        names = []
        for source in self.sources:
            names += [source.port.valid, source.port.payload]
        return names + [sink.port.ready for sink in self.sinks]

    def idle_values(self) -> dict[str, int]:
        """What the bench drives while the design is in reset: nothing offered, nothing taken."""
        return {name: 0 for name in self.driven}

    def drive(self, cycle: int) -> dict[str, int]:
        values = {}
        for driver in self.sources + self.sinks:
            values.update(driver.drive(cycle))
        return values

    def observe(self, cycle: int, sample: dict[str, int]):
        transfers = {}
        for monitor in self.monitors:
            port = monitor.port
            if monitor.observe(cycle, sample[port.valid], sample[port.ready], sample[port.payload]):
                transfers[port.prefix] = sample[port.payload]
        for prefix, driver in self._driver_of.items():
            driver.observe(prefix in transfers)
        self.checker.on_cycle(cycle, sample, transfers)
        self.cycles = cycle + 1

    @property
    def finished(self) -> bool:
        return all(source.done for source in self.sources) and self.checker.complete()

    def no_progress(self, max_cycles: int) -> NoProgressError:
        sent = ", ".join(f"{s.port.prefix} sent {s.sent}/{len(s.tokens)}" for s in self.sources)
        return NoProgressError(
            f"no completion after {max_cycles} cycles: {sent}; {self.checker.progress()}")

    def transfers(self, prefix: str) -> list[tuple[int, int]]:
        for monitor in self.monitors:
            if monitor.port.prefix == prefix:
                return monitor.transfers
        raise KeyError(prefix)

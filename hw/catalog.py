"""The catalog of generators a user can name: one entry per component, with its parameters.

The command line and the test benches both build components through this table, so a
parameter is named, typed, defaulted and documented in exactly one place.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from amaranth.hdl import unsigned

from .arbiter import Arbiter
from .fork import FORK_MODES, Fork
from .join import Join
from .params import ParameterError
from .skid_buffer import SkidBuffer
from .token_queue import QUEUE_MODES, TokenQueue

__all__ = ["Parameter", "Budget", "Generator", "CATALOG", "build", "check_parameters", "parse_parameters"]


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: type
    default: Any
    help: str
    choices: tuple = ()
    minimum: int | None = None
    maximum: int | None = None

    def parse(self, component: str, text: str):
        """Turn a command-line string into this parameter's value."""
        if self.kind is int:
            try:
                return int(text, 0)
            except ValueError:
                raise ParameterError(f"{component}: {self.name}={text!r} is not an integer; "
                                     f"{self.name} is the {self.help}") from None
        return text

    def check(self, component: str, value):
        """Raise :class:`ParameterError` unless ``value`` is allowed."""
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParameterError(f"{component}: {self.name}={value!r} is not an integer; "
                                     f"{self.name} is the {self.help}")
            if self.minimum is not None and value < self.minimum:
                raise ParameterError(f"{component}: {self.name}={value} is not allowed; "
                                     f"{self.name} is the {self.help}")
            if self.maximum is not None and value > self.maximum:
                raise ParameterError(f"{component}: {self.name}={value} exceeds the limit "
                                     f"{self.maximum}; {self.name} is the {self.help}")
        if self.choices and value not in self.choices:
            raise ParameterError(f"{component}: {self.name}={value!r} is not allowed; "
                                 f"choose one of: {', '.join(self.choices)}")


@dataclass(frozen=True)
class Budget:
    """A limit on the product of some parameters: what elaboration's time and memory grow with,
    when each parameter alone is within its own limit."""
    names: tuple[str, ...]
    maximum: int
    unit: str
    why: str

    def check(self, component: str, arguments: dict):
        total = math.prod(arguments[name] for name in self.names)
        if total > self.maximum:
            product = " x ".join(f"{name}={arguments[name]}" for name in self.names)
            raise ParameterError(f"{component}: {product} = {total} {self.unit} exceeds the limit "
                                 f"{self.maximum} {self.unit} ({self.why}); make one of them smaller")


@dataclass(frozen=True)
class Generator:
    name: str
    summary: str
    parameters: tuple[Parameter, ...]
    construct: Callable[..., Any]
    budgets: tuple[Budget, ...] = ()

    def parameter(self, name: str) -> Parameter:
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        allowed = ", ".join(p.name for p in self.parameters)
        raise ParameterError(f"{self.name}: unknown parameter {name!r}; its parameters are: {allowed}")


# Limits: each keeps `rivulet generate` within seconds and a few hundred MB (measured on one
# core: a 65536 x 32-bit token_queue 6 s / 320 MB, a 1024 x 1024 xbar 10 s / 560 MB), far above
# what a fabric uses (data_width <= 64, queue depths <= 64), and far below what killed the
# machine (depth=100000000: 5 minutes, 23 GB). Elaboration grows with the stored bits, which is
# why some generators also bound a product of parameters (their budgets).
MAX_WIDTH = 1024
MAX_DEPTH = 65536
MAX_STORED_BITS = 1 << 21           # a token_queue's depth x width: 2 Mibit, 65536 x 32
MAX_PORTS = 64                      # fork outputs, arbiter and join inputs
# An arbiter's or join's n inputs of width bits are one value in Amaranth's netlist, which holds
# at most 65535 bits (64 x 1024 fails inside Amaranth); half of that leaves room for the rest.
MAX_PORT_BITS = 1 << 15
MAX_TUPLE_BEATS = 65536             # beyond the 16-bit beat counts of any stream

_WIDTH = Parameter("width", int, 32, f"payload width in bits, 1..{MAX_WIDTH}", minimum=1,
                   maximum=MAX_WIDTH)
_PORT_BITS = Budget(("n", "width"), MAX_PORT_BITS, "bits",
                    "all inputs' payloads together; Amaranth holds at most 65535 bits in a value")
CATALOG: dict[str, Generator] = {generator.name: generator for generator in [
    Generator(
        "token_queue", "FIFO token queue, registered outputs or shorter latency, occupancy output",
        (_WIDTH, Parameter("depth", int, 4, f"number of tokens held, 1..{MAX_DEPTH} (and depth x width "
                           f"<= {MAX_STORED_BITS} bits)", minimum=1, maximum=MAX_DEPTH),
         Parameter("mode", str, "registered", "latency mode: registered, fall_through (one cycle at "
                   "every depth) or bypass (none while empty)", QUEUE_MODES)),
        lambda width, depth, mode: TokenQueue(unsigned(width), depth, mode=mode),
        (Budget(("depth", "width"), MAX_STORED_BITS, "bits", "the queue's storage"),)),
    Generator(
        "skid_buffer", "register slice cutting valid and ready paths, full throughput",
        (_WIDTH,),
        lambda width: SkidBuffer(unsigned(width))),
    Generator(
        "fork", "1-to-N multicast, eager or lock-step",
        (_WIDTH, Parameter("n", int, 2, f"number of outputs, 2..{MAX_PORTS}", minimum=2,
                           maximum=MAX_PORTS),
         Parameter("mode", str, "eager", "fork mode: eager or lockstep", FORK_MODES)),
        lambda width, n, mode: Fork(unsigned(width), n, mode=mode)),
    Generator(
        "arbiter", "N-to-1 round-robin merge, optional multi-beat grants",
        (_WIDTH, Parameter("n", int, 2, f"number of inputs, 2..{MAX_PORTS} (and n x width "
                           f"<= {MAX_PORT_BITS} bits)", minimum=2, maximum=MAX_PORTS),
         Parameter("tuple_beats", int, 1, f"transfers per grant, 1..{MAX_TUPLE_BEATS}", minimum=1,
                   maximum=MAX_TUPLE_BEATS)),
        lambda width, n, tuple_beats: Arbiter(unsigned(width), n, tuple_beats=tuple_beats),
        (_PORT_BITS,)),
    Generator(
        "join", "N-to-1 join: one output token carrying all N payloads",
        (_WIDTH, Parameter("n", int, 2, f"number of inputs, 2..{MAX_PORTS} (and n x width "
                           f"<= {MAX_PORT_BITS} bits)", minimum=2, maximum=MAX_PORTS)),
        lambda width, n: Join(unsigned(width), n),
        (_PORT_BITS,)),
]}


def _generator(name: str, catalog: dict | None) -> Generator:
    catalog = CATALOG if catalog is None else catalog
    try:
        return catalog[name]
    except KeyError:
        known = ", ".join(sorted(catalog))
        raise ParameterError(f"unknown component {name!r}; known components: {known}") from None


def parse_parameters(name: str, assignments: list[str], catalog: dict | None = None) -> dict[str, Any]:
    """Parse ``NAME=VALUE`` strings for component ``name``; unknown names are errors. ``catalog``
    replaces :data:`CATALOG` (the command adds the FU kinds' generators to it)."""
    generator = _generator(name, catalog)
    values = {}
    for assignment in assignments:
        key, separator, text = assignment.partition("=")
        if not separator or not key:
            raise ParameterError(f"{name}: parameter {assignment!r} is not of the form NAME=VALUE")
        value = generator.parameter(key).parse(name, text)
        if key in values:       # the last one winning would hide a slip in a long command line
            raise ParameterError(f"{name}: {key} is given twice ({values[key]!r} and {value!r}); "
                                 f"give it once")
        values[key] = value
    return values


def check_parameters(name: str, catalog: dict | None = None, **values) -> dict[str, Any]:
    """``values`` over the defaults of component ``name`` of ``catalog`` (default :data:`CATALOG`),
    every one checked.

    Raises :class:`ParameterError` for an unknown component or parameter, for a value out of
    range and for a product of values beyond its budget.
    """
    generator = _generator(name, catalog)
    for key in values:
        generator.parameter(key)
    arguments = {p.name: values.get(p.name, p.default) for p in generator.parameters}
    for parameter in generator.parameters:
        parameter.check(name, arguments[parameter.name])
    for budget in generator.budgets:
        budget.check(name, arguments)
    return arguments


def build(name: str, catalog: dict | None = None, **values):
    """Construct component ``name`` of ``catalog`` (default :data:`CATALOG`) with ``values`` over
    its defaults, once :func:`check_parameters` accepts them: before any hardware is elaborated."""
    return _generator(name, catalog).construct(**check_parameters(name, catalog, **values))

"""The catalog of generators a user can name: one entry per component, with its parameters.

The command line and the test benches both build components through this table, so a
parameter is named, typed, defaulted and documented in exactly one place.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from amaranth.hdl import unsigned

from .arbiter import Arbiter
from .fork import FORK_MODES, Fork
from .join import Join
from .params import ParameterError
from .skid_buffer import SkidBuffer
from .token_queue import TokenQueue

__all__ = ["Parameter", "Generator", "CATALOG", "build", "parse_parameters"]


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: type
    default: Any
    help: str
    choices: tuple = ()
    minimum: int | None = None

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
        if self.choices and value not in self.choices:
            raise ParameterError(f"{component}: {self.name}={value!r} is not allowed; "
                                 f"choose one of: {', '.join(self.choices)}")


@dataclass(frozen=True)
class Generator:
    name: str
    summary: str
    parameters: tuple[Parameter, ...]
    construct: Callable[..., Any]

    def parameter(self, name: str) -> Parameter:
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        allowed = ", ".join(p.name for p in self.parameters)
        raise ParameterError(f"{self.name}: unknown parameter {name!r}; its parameters are: {allowed}")


_WIDTH = Parameter("width", int, 32, "payload width in bits, >= 1", minimum=1)
CATALOG: dict[str, Generator] = {generator.name: generator for generator in [
    Generator(
        "token_queue", "FIFO token queue of any depth, registered outputs, occupancy output",
        (_WIDTH, Parameter("depth", int, 4, "number of tokens held, >= 1", minimum=1)),
        lambda width, depth: TokenQueue(unsigned(width), depth)),
    Generator(
        "skid_buffer", "register slice cutting valid and ready paths, full throughput",
        (_WIDTH,),
        lambda width: SkidBuffer(unsigned(width))),
    Generator(
        "fork", "1-to-N multicast, eager or lock-step",
        (_WIDTH, Parameter("n", int, 2, "number of outputs, >= 2", minimum=2),
         Parameter("mode", str, "eager", "fork mode: eager or lockstep", FORK_MODES)),
        lambda width, n, mode: Fork(unsigned(width), n, mode=mode)),
    Generator(
        "arbiter", "N-to-1 round-robin merge, optional multi-beat grants",
        (_WIDTH, Parameter("n", int, 2, "number of inputs, >= 2", minimum=2),
         Parameter("tuple_beats", int, 1, "transfers per grant, >= 1", minimum=1)),
        lambda width, n, tuple_beats: Arbiter(unsigned(width), n, tuple_beats=tuple_beats)),
    Generator(
        "join", "N-to-1 join: one output token carrying all N payloads",
        (_WIDTH, Parameter("n", int, 2, "number of inputs, >= 2", minimum=2)),
        lambda width, n: Join(unsigned(width), n)),
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
        values[key] = generator.parameter(key).parse(name, text)
    return values


def build(name: str, catalog: dict | None = None, **values):
    """Construct component ``name`` of ``catalog`` (default :data:`CATALOG`) with ``values`` over
    its defaults.

    Raises :class:`ParameterError` for an unknown component or parameter and for a value out
    of range, before any hardware is elaborated.
    """
    generator = _generator(name, catalog)
    for key in values:
        generator.parameter(key)
    arguments = {p.name: values.get(p.name, p.default) for p in generator.parameters}
    for parameter in generator.parameters:
        parameter.check(name, arguments[parameter.name])
    return generator.construct(**arguments)

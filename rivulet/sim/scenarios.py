"""Build a bench for a catalog component: random tokens, drivers, monitors and its scoreboard.

Both simulator backends call :func:`make_bench`, so a scenario (component, parameters, stall
profile, seed) means the same stimulus and the same checks in either tier.
"""

import random

from .scoreboard import ArbiterChecker, ForkChecker, JoinChecker, QueueChecker
from .streams import PROFILES, SinkDriver, SourceDriver, StreamBench, StreamPort

__all__ = ["make_bench", "checker_for"]


def checker_for(kind: str, params: dict, inputs: list[list[int]]):
    """The scoreboard of catalog component ``kind``, fed the tokens the sources will send."""
    if kind == "token_queue":
        return QueueChecker(inputs[0], params["depth"], has_level=True,
                            mode=params.get("mode", "registered"))
    if kind == "skid_buffer":
        return QueueChecker(inputs[0], 2, has_level=False)
    if kind == "fork":
        return ForkChecker(inputs[0], params["n"], params.get("mode", "eager"))
    if kind == "arbiter":
        return ArbiterChecker(inputs, params["n"], params.get("tuple_beats", 1))
    if kind == "join":
        return JoinChecker(inputs, params["n"], params["width"])
    raise ValueError(f"no scoreboard for component {kind!r}")


def _token_counts(kind: str, params: dict, sources: int, tokens: int, rng: random.Random):
    if kind == "arbiter":
        # Uneven loads exercise inputs that drop out while others keep requesting.
        beats = params.get("tuple_beats", 1)
        return [beats * rng.randint(tokens // (2 * beats), tokens // beats) for _ in range(sources)]
    return [tokens] * sources


def make_bench(kind: str, params: dict, ports: list[StreamPort], extra_signals: list[str],
               profile: str, seed: int, tokens: int) -> StreamBench:
    """A bench for one scenario. Every random choice derives from ``seed``."""
    stall = PROFILES[profile]
    rng = random.Random(seed)
    into = [port for port in ports if port.into_design]
    out_of = [port for port in ports if not port.into_design]
    counts = _token_counts(kind, params, len(into), tokens, rng)
    inputs = [[rng.getrandbits(port.width) for _ in range(count)]
              for port, count in zip(into, counts, strict=True)]
    sources = [SourceDriver(port, values, stall.idle, random.Random(rng.getrandbits(64)))
               for port, values in zip(into, inputs, strict=True)]
    # A lock-step fork keeps the stream rules only towards consumers whose ready stays up
    # until they take a token (see hw/fork.py), so that is the consumer it is tested with.
    persistent = kind == "fork" and params.get("mode") == "lockstep"
    sinks = [SinkDriver(port, stall.backpressure, random.Random(rng.getrandbits(64)), persistent)
             for port in out_of]
    checker = checker_for(kind, params, inputs)
    return StreamBench(ports, sources, sinks, checker, extra_signals)

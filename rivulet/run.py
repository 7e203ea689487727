"""``rivulet run``: compile a program, run it on the golden model and/or the RTL, compare, report."""

import time

from rsn.fabric_spec import DEFAULT_FABRIC, load_fabric
from rsn.model import FabricModel
from rsn.program import compile_program, load_program
from rsn.readout import model_register_reads, register_reads, split_register_reads

from .errors import RunMismatch

__all__ = ["run_program"]

_DIRECTION_NAMES = ("N", "E", "S", "W")


def _compare(what: str, got: dict, expected: dict):
    for port, tokens in expected.items():
        if got.get(port, []) != tokens:
            produced = got.get(port, [])
            first = next((k for k, (a, b) in enumerate(zip(produced, tokens, strict=False)) if a != b),
                         min(len(produced), len(tokens)))
            raise RunMismatch(f"{what}: host port {port} differs at token {first}: "
                              f"got {produced[first:first + 4]}..., expected {tokens[first:first + 4]}... "
                              f"({len(produced)} vs {len(tokens)} tokens)")


def _compare_reads(what: str, got: dict, expected: dict | None, say):
    """The program's register reads after the run (e.g. xbar membranes), node by node."""
    if not expected:
        return
    for node, values in expected.items():
        if got.get(node) != values:
            produced = got.get(node, [])
            first = next((k for k, (a, b) in enumerate(zip(produced, values, strict=False)) if a != b),
                         min(len(produced), len(values)))
            raise RunMismatch(f"{what}: register reads of {node} differ at read {first}: got "
                              f"{produced[first:first + 4]}..., expected {values[first:first + 4]}...")
    say(f"   register reads equal ({sum(map(len, expected.values()))} values: {', '.join(expected)})")


def _report_units(compiled, firings, link_beats, say, stalls=None):
    """One line per used tile; stalls are timing, known only from the RTL."""
    placement = compiled.routing.placement.tiles
    names = {tile: name for name, tile in placement.items() if not compiled.program.graph.nodes[name].is_host}
    say(f"   {'tile':<8} {'node':<14} {'kind':<5} {'firings':>8} {'stalls':>7}   "
        f"link beats (outputs N E S W, FU inputs)")
    for tile in sorted(set(compiled.routing.switch_uops) | set(compiled.routing.fu_uops)):
        beats = " ".join(str(value) for value in link_beats.get(tile, []))
        stall = "-" if stalls is None else str(stalls.get(tile, 0))
        say(f"   {str(list(tile)):<8} {names.get(tile, '-'):<14} {compiled.spec.kind(tile):<5} "
            f"{firings.get(tile, 0):>8} {stall:>7}   {beats}")


def run_program(path, *, fabric=None, sim: str = "model", seed: int = 1, profile: str = "random_stall_50",
                say=print, port: str | None = None, baud: int = 115_200, vectors=None) -> dict:
    """Run the program in ``path``; raise :class:`RunMismatch` if any comparison fails."""
    if str(path).endswith(".json"):         # a dataflow graph: the Ripple model or pe tiles
        from .ripple_run import run_graph
        results = run_graph(path, vectors, sim=sim, say=say, fabric=fabric, seed=seed, profile=profile)
        return {"model" if sim == "model" else "rtl": results}
    spec = load_fabric(fabric or DEFAULT_FABRIC)
    program = load_program(path)
    started = time.monotonic()
    compiled = compile_program(program, spec, seed=seed)
    say(f"{program.name}: {program.description}")
    say(f"   compiled for a {spec.rows}x{spec.cols} fabric in {time.monotonic() - started:.1f} s: "
        f"{len(compiled.image)} image words, {len(compiled.routing.routes)} streams, "
        f"placement {dict(sorted(compiled.routing.placement.tiles.items()))}")
    results = {}
    if sim in ("model", "both"):
        fabric_model = FabricModel(spec)
        model = fabric_model.run(compiled.image, program.host_inputs)
        results["model"] = model
        say(f"== golden model: done={model.done}")
        if program.expected is not None:
            _compare("golden model vs reference", model.outputs, program.expected)
            say("   outputs equal the program's reference")
        model.register_values = model_register_reads(fabric_model, compiled)
        _compare_reads("golden model vs reference", model.register_values, program.expected_reads, say)
        _report_units(compiled, model.firings, model.link_beats, say)
    if sim in ("rtl", "both"):
        from rivulet.sim.fabric_run import run_on_rtl
        say(f"== RTL (Verilator), stall profile {profile}, seed {seed}"
            " (the first run builds the fabric; that takes minutes)")
        started = time.monotonic()
        extra = register_reads(compiled) if program.reads else None
        rtl = run_on_rtl(compiled, profile=profile, seed=seed, extra_reads=extra)
        results["rtl"] = rtl
        say(f"   done after {rtl.cycles} fabric cycles ({time.monotonic() - started:.1f} s wall)")
        if program.expected is not None:
            _compare("RTL vs reference", rtl.outputs, program.expected)
            say("   outputs equal the program's reference")
        rtl.register_values = split_register_reads(compiled, getattr(rtl, "extra", []))
        _compare_reads("RTL vs reference", rtl.register_values, program.expected_reads, say)
        _report_units(compiled, rtl.firings, rtl.link_beats, say, rtl.stalls)
    if sim == "board":
        results["rtl"] = _run_on_board(compiled, port, baud, say)
        if program.expected is not None:
            _compare("board vs reference", results["rtl"].outputs, program.expected)
            say("   outputs equal the program's reference")
        _report_units(compiled, results["rtl"].firings, results["rtl"].link_beats, say, results["rtl"].stalls)
    if "model" in results and "rtl" in results:
        model, rtl = results["model"], results["rtl"]
        _compare("RTL vs golden model", rtl.outputs, model.outputs)
        _compare_reads("RTL vs golden model", rtl.register_values, model.register_values, lambda _: None)
        for tile in rtl.firings:
            if rtl.firings[tile] != model.firings[tile] or rtl.link_beats[tile] != model.link_beats[tile]:
                raise RunMismatch(f"tile {list(tile)}: RTL counters (firings {rtl.firings[tile]}, links "
                                  f"{rtl.link_beats[tile]}) differ from the golden model's "
                                  f"({model.firings[tile]}, {model.link_beats[tile]})")
        reads = ", register reads" if program.expected_reads else ""
        say(f"== RTL and golden model agree: outputs, firings, link beats{reads}")
    return results


def _run_on_board(compiled, port: str, baud: int, say):
    """The same program through the UART host link of a board built by ``rivulet build``."""
    import asyncio

    from board.host import HostLink, SerialTransport

    say(f"== board on {port} at {baud} baud")
    started = time.monotonic()

    async def run():
        with SerialTransport(port, baud) as transport:
            return await HostLink(transport, compiled.spec).run_program(compiled)

    result = asyncio.run(run())
    say(f"   done after {result.cycles} fabric cycles ({time.monotonic() - started:.1f} s wall)")
    return result

"""Run a :class:`~rivulet.sim.streams.StreamBench` in Amaranth's own simulator (the fast tier)."""

from amaranth.hdl import Value
from amaranth.sim import Simulator

from .streams import StreamBench, port_name, port_paths
from .wrappers import Clocked, member_value

__all__ = ["run_in_amaranth", "port_values"]


def port_values(component) -> dict:
    """Map each Verilog-style port name (``o__0__valid``) to the component's Amaranth value."""
    return {port_name(path): member_value(component, path)
            for path, _member in port_paths(component.signature)}


def _as_int(value) -> int:
    return value.as_bits() if hasattr(value, "as_bits") else int(value)


def run_in_amaranth(component, bench: StreamBench, *, max_cycles: int, vcd_path=None) -> int:
    """Simulate ``component`` under ``bench`` until it completes; return the cycle count."""
    top = Clocked(component)
    # Plain values, so that ports with a data layout (micro-ops) take integers like the rest.
    signals = {name: Value.cast(value) for name, value in port_values(top).items()}

    async def testbench(ctx):
        for name, value in bench.idle_values().items():
            ctx.set(signals[name], value)
        for cycle in range(max_cycles):
            for name, value in bench.drive(cycle).items():
                ctx.set(signals[name], value)
            # Testbench reads see the design settled after the writes above: the values the
            # coming clock edge will act on.
            bench.observe(cycle, {name: _as_int(ctx.get(signals[name])) for name in bench.sampled})
            await ctx.tick()
            if bench.finished:
                return
        raise bench.no_progress(max_cycles)

    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    if vcd_path is None:
        simulator.run()
    else:
        with simulator.write_vcd(str(vcd_path)):
            simulator.run()
    bench.checker.finish()
    return bench.cycles

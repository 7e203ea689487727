"""Run a :class:`~rivulet.sim.streams.StreamBench` in Amaranth's own simulator (the fast tier)."""

from amaranth.hdl import Cat, Elaboratable, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.sim import Simulator

from .streams import StreamBench, port_name, port_paths
from .wrappers import Clocked, member_value

__all__ = ["run_in_amaranth", "run_each_in_amaranth", "port_values", "SharedSimulator", "AmaranthDesign",
           "component_of"]


def port_values(component) -> dict:
    """Map each Verilog-style port name (``o__0__valid``) to the component's Amaranth value."""
    return {port_name(path): member_value(component, path)
            for path, _member in port_paths(component.signature)}


class _Stimulus(Elaboratable):
    """The top with every input port driven from one slice of a single ``stimulus`` signal, and
    every port readable through one ``observed`` signal.

    A testbench's ``ctx.set`` settles the design after each write, and a PE's or a switch's
    combinational logic then runs once per port written: a dozen times a cycle. Through one
    signal the bench writes every input at once and the design settles once a cycle. Reading is
    the same: each ``ctx.get`` costs about as much for one bit as for hundreds, and a bench
    samples a dozen ports a cycle, which took a third of a PE bench's time.
    """

    def __init__(self, top):
        self.top = top
        self.inputs = {port_name(path): Value.cast(member_value(top, path))
                       for path, member in port_paths(top.signature) if member.flow == wiring.In}
        self.offsets, offset = {}, 0
        for name, value in self.inputs.items():
            self.offsets[name] = offset
            offset += len(value)
        # Each port starts at its own initial value, as when the bench drove it directly.
        self.initial = {name: getattr(value, "init", 0) for name, value in self.inputs.items()}
        self.stimulus = Signal(max(offset, 1), init=self.pack(self.initial))
        # Plain values, so that ports with a data layout (micro-ops) read as integers like the rest.
        self.ports = {name: Value.cast(value) for name, value in port_values(top).items()}
        self.fields, offset = {}, 0
        for name, value in self.ports.items():
            self.fields[name] = (offset, (1 << len(value)) - 1, value.shape().signed and len(value))
            offset += len(value)
        self.observed = Signal(max(offset, 1))

    def pack(self, values: dict[str, int]) -> int:
        word = 0
        for name, value in values.items():
            word |= (value & ((1 << len(self.inputs[name])) - 1)) << self.offsets[name]
        return word

    def unpack(self, word: int, names) -> dict[str, int]:
        """The ports ``names`` from a value of ``observed``, as ``ctx.get`` reads each (a signed
        port negative when its sign bit is set)."""
        values = {}
        for name in names:
            offset, mask, signed_width = self.fields[name]
            value = (word >> offset) & mask
            if signed_width and value >> (signed_width - 1):
                value -= 1 << signed_width
            values[name] = value
        return values

    def elaborate(self, platform):
        m = Module()
        m.submodules.top = self.top
        for name, value in self.inputs.items():
            m.d.comb += value.eq(self.stimulus[self.offsets[name]:self.offsets[name] + len(value)])
        m.d.comb += self.observed.eq(Cat(*self.ports.values()))
        return m


class SharedSimulator:
    """One Amaranth simulator of ``design`` for a series of testbenches, each run from reset.

    Making a simulator compiles the design, about a second for a PE and several for a few PEs
    on a memory: tests that run seeds or stall profiles one after another on one design pay it
    once. ``Simulator.reset`` returns every signal and memory to its initial value and restarts
    the clock before each run after the first, as a simulator of its own would start. After a
    run that raised, the next run gets a new simulator rather than one stopped part-way.
    """

    def __init__(self, design, *, period: float = 1e-8):
        self.design, self.period = design, period
        self._simulator = None
        self._testbench = None

    def _fresh(self):
        self._simulator = Simulator(self.design)
        self._simulator.add_clock(self.period)

        async def current(ctx):
            await self._testbench(ctx)

        self._simulator.add_testbench(current)

    def run(self, testbench):
        """Run ``testbench`` (an ``async def testbench(ctx)``) to its end, from reset."""
        if self._simulator is None:
            self._fresh()
        else:
            self._simulator.reset()
        simulator, self._simulator = self._simulator, None        # not reused if the run raises
        self._testbench = testbench
        simulator.run()
        self._simulator = simulator


def run_in_amaranth(component, bench: StreamBench, *, max_cycles: int) -> int:
    """Simulate ``component`` under ``bench`` until it completes; return the cycle count."""
    return run_each_in_amaranth(component, [(bench, max_cycles)])[0]


class AmaranthDesign:
    """A component made ready for :func:`run_each_in_amaranth`: its stimulus top (through which
    every port is written and read) and one :class:`SharedSimulator`. A test module that keeps one
    per shape (``functools.cache``) compiles each shape once for all of its tests, not once per
    test."""

    def __init__(self, component):
        self.component = component
        self.stimulus = _Stimulus(Clocked(component))
        self.simulator = SharedSimulator(self.stimulus)


def component_of(target):
    """The component of ``target``, an :class:`AmaranthDesign` or a component itself: what a
    bench takes its port names from."""
    return target.component if isinstance(target, AmaranthDesign) else target


def run_each_in_amaranth(component, runs) -> list[int]:
    """Each ``(bench, max_cycles)`` of ``runs`` on ``component``, from reset, in one simulator;
    return their cycle counts.

    The runs share one :class:`SharedSimulator`: the design is compiled for the simulator once
    (once for every call, when ``component`` is an :class:`AmaranthDesign`).
    """
    design = component if isinstance(component, AmaranthDesign) else AmaranthDesign(component)
    stimulus, simulator = design.stimulus, design.simulator

    def testbench_of(bench: StreamBench, max_cycles: int):
        async def testbench(ctx):
            inputs = dict(stimulus.initial)

            def apply(values: dict[str, int]):
                if not values.keys() <= inputs.keys():
                    unknown = sorted(values.keys() - inputs.keys())
                    raise KeyError(f"the bench drives {unknown}, which are not input ports of the design")
                inputs.update(values)

            apply(bench.idle_values())
            ctx.set(stimulus.stimulus, stimulus.pack(inputs))
            for cycle in range(max_cycles):
                apply(bench.drive(cycle))
                ctx.set(stimulus.stimulus, stimulus.pack(inputs))
                # Testbench reads see the design settled after the writes above: the values the
                # coming clock edge will act on.
                bench.observe(cycle, stimulus.unpack(ctx.get(stimulus.observed), bench.sampled))
                await ctx.tick()
                if bench.finished:
                    return
            raise bench.no_progress(max_cycles)
        return testbench

    cycles = []
    runs = list(runs)
    for index, (bench, max_cycles) in enumerate(runs):
        try:
            simulator.run(testbench_of(bench, max_cycles))
            bench.checker.finish()
        except Exception as error:
            if len(runs) > 1:
                error.add_note(f"(in run {index + 1} of the {len(runs)} that shared the simulator)")
            raise
        cycles.append(bench.cycles)
    return cycles

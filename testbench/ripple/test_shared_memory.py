"""Ripple graphs on a fabric with a shared memory (a ``[memory]`` table): the memory shapes that
private banks refuse, and the public RipTide suite, on the fabric's golden model and the RTL.

Expected values come from plain Python loops written here, or from the suite's own ``expect``,
never from the golden models.
"""

import random

import pytest

from ripple_core.builder import Builder
from ripple_core.lower import LoweringError, compile_lowering, lower_graph
from ripple_core.ops import MASK
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rivulet.sim.toolchain import REPOSITORY
from rsn.fabric_spec import load_fabric, parse_fabric
from rsn.model import FabricModel
from rsn.program import SHARED_MEMORY
from rsn.readout import model_register_reads, register_reads, split_register_reads
from testbench.native.test_tiers import SMALL_PE_FABRIC
from testbench.pe_grid import pe_grid
from testbench.ripple.test_lower import _check, _programs, needs_suite

PRIVATE = load_fabric(REPOSITORY / "examples" / "fabrics" / "ripple.toml")      # 5x6, 64-word banks


def shared_fabric(rows: int, cols: int, words: int = 1024, banks: int = 4):
    """ripple.toml's host ports and parameters on a rows x cols grid of pe tiles with a shared
    memory instead of the private banks."""
    data = pe_grid("ripple.toml", rows, cols)
    data.pop("pe")
    data["memory"] = {"words": words, "banks": banks}
    return parse_fabric(data, f"{rows}x{cols} shared-memory fabric")


SHARED = shared_fabric(5, 6)
SMALL_SHARED = parse_fabric(SMALL_PE_FABRIC, "3x4 pe test fabric")     # the tier tests' fabric: one build


def _sum_program(name: str, computed_base: bool):
    """sum of A[i] for i < n to the host port ``total``; the LOAD's base is the array's pointer,
    or with ``computed_base`` ``A + i`` (an ADD of the pointer and the index) with offset 0, the
    shape RipTide-compiled code has after a GEP."""
    b = Builder(name)
    index, flag = b.stream(b.const(0), b.scalar("n", hold=False), b.const(1), cmp="SLT", pred=False,
                           name="loop")
    if computed_base:
        value = b.load(b.add(b.array("A"), index, name="address"), b.hold(0), name="fetch")
    else:
        value = b.load(b.array("A"), index, name="fetch")
    acc_next = b.wire("acc_next")
    acc = b.carry(flag, b.const(0), acc_next, pred=False, name="acc")
    acc_next.bind(b.add(b.steer(flag, acc, pred=False, name="running"), value, name="sum"))
    b.sink("total", b.steer(flag, acc, pred=True, name="exit"))
    return b.build()


def gather_program():
    return _sum_program("gather", computed_base=True)


def check_on_fabric_model(label: str, lowering, spec, seed: int):
    """Compile ``lowering`` for ``spec``, run it on the golden fabric model and check outputs,
    firings and the words read back against the case."""
    compiled = compile_lowering(lowering, spec, seed=seed)
    model = FabricModel(spec)
    result = model.run(compiled.image, lowering.program.host_inputs)
    assert result.done, label
    _check(label, lowering, compiled, result.outputs, result.firings, model_register_reads(model, compiled))


def gather_case(values):
    return {"args": {"n": len(values)}, "mem": {"A": list(values)},
            "expect": {"A": list(values), "total": [sum(values) & MASK]}}


def double_in_place_program():
    """For i < n: A[n + i] = 2 * A[i], then a second LOAD reads A[n + i] back, ordered after the
    STORE by its done token: two LOADs and a STORE on one array."""
    b = Builder("double_in_place")
    n = b.scalar("n")
    index, _ = b.stream(b.const(0), b.scalar("n", hold=False), b.const(1), cmp="SLT", pred=False,
                        name="loop")
    doubled = b.shl(b.load(b.array("A"), index, name="read"), b.hold(1), name="double")
    upper = b.add(index, n, name="upper")
    done = b.store(b.array("A"), upper, doubled, name="write")
    b.sink("back", b.load(b.array("A"), b.ident(upper, name="again"), done, name="reread"))
    return b.build()


def double_in_place_case(values):
    n = len(values)
    memory = list(values) + [0] * n
    doubled = [(2 * v) & MASK for v in values]
    return {"args": {"n": n}, "mem": {"A": memory},
            "expect": {"A": list(values) + doubled, "back": doubled}}


def sum_program():
    """The same sum with the array's pointer as its base: the shape private banks serve, as long
    as the array fits one."""
    return _sum_program("sum", computed_base=False)


COMPUTED_BASE = r"its base is address.o0; on pe tiles a LOAD's base must be an array's pointer argument"
CASES = {   # name: (graph, case from a random generator, why private banks refuse it)
    "computed base": (gather_program,
                      lambda rng: gather_case([rng.randrange(-1000, 1000) for _ in range(9)]), COMPUTED_BASE),
    "several accesses per array": (double_in_place_program,
                                   lambda rng: double_in_place_case([rng.randrange(1000) for _ in range(7)]),
                                   "both access array 'A', which is stored to"),
    "array larger than a bank": (sum_program,
                                 lambda rng: gather_case([rng.randrange(1 << 20) for _ in range(200)]),
                                 r"array 'A' has 200 words in this case, but a pe tile's bank holds 64"),
}


def test_the_shared_memory_shapes_private_banks_refuse():
    """Each graph is refused on private banks, naming why, and runs on the shared memory's golden
    fabric model with the case's outputs, firings and arrays."""
    (seed,) = seeds_for("shared-memory-shapes", count=1)
    print(f"shared memory shapes seed={seed}")
    rng = random.Random(seed)
    for label, (program, case_of, refusal) in CASES.items():
        graph, case = program(), case_of(rng)
        with pytest.raises(LoweringError, match=refusal):
            lower_graph(graph, case, PRIVATE)
        lowering = lower_graph(graph, case, SHARED, name=label.replace(" ", "_"))
        check_on_fabric_model(label, lowering, SHARED, seed)


def test_arrays_that_do_not_fit_the_shared_memory_are_refused_naming_the_size():
    with pytest.raises(LoweringError, match=r"array 'A' occupies addresses 0..1999 in this case, but the "
                                            r"fabric's shared memory holds 1024 words; .* at least 2048"):
        lower_graph(gather_program(), gather_case([1] * 2000), SHARED)




@needs_suite
def test_the_suite_on_the_shared_memory_golden_model():
    """Every suite case with LOADs or STOREs (and the builder programs that need no queue, now
    with their atomics) lowered onto the shared memory: arrays preloaded before START and read
    back after, outputs and firings as the case says."""
    (seed,) = seeds_for("shared-memory-suite-model", count=1)
    print(f"suite on the shared memory, fabric model, seed={seed}")
    checked = 0
    for label, graph, case in _programs(seed):
        if not any(node.op in ("LOAD", "STORE") for node in graph.nodes.values()):
            continue            # nothing differs from a fabric of private banks
        try:
            lowering = lower_graph(graph, case, SHARED, name=label.replace(" ", "_"))
        except LoweringError as error:
            assert "needs a pe tile's private bank" in str(error), label
            continue
        check_on_fabric_model(label, lowering, SHARED, seed)
        checked += 1
    assert checked >= 40, f"only {checked} cases with LOADs or STOREs ran"


@pytest.mark.verilator
def test_the_shapes_on_the_rtl_under_back_pressure():
    """The three shapes on a 3x4 fabric of pe tiles with a 512-word shared memory, in one native
    simulation, each under every stall profile: the whole path (preload through the control
    plane, LOADs and STOREs through the banks, read-back) on the generated Verilog."""
    (seed,) = seeds_for("shared-memory-rtl", count=1)
    rng = random.Random(seed)
    runs = []
    for label, (program, case_of, _) in CASES.items():
        case = case_of(rng)
        lowering = lower_graph(program(), case, SMALL_SHARED, name=label.replace(" ", "_"))
        for profile in PROFILES:
            run_seed = rng.randrange(2**31)
            runs.append((f"{label} {profile} seed={run_seed}", lowering,
                         compile_lowering(lowering, SMALL_SHARED, seed=run_seed), profile, run_seed))
    print(f"shared memory on the RTL, base seed {seed}: {[run[0] for run in runs]}")
    for label, lowering, *_ in runs:
        assert SHARED_MEMORY in lowering.program.reads, label
    check_on_small_rtl(runs, "shared-memory-rtl")


def check_on_small_rtl(runs, case: str):
    """Run ``runs``, (label, lowering, compiled, profile, seed) each, in one native simulation of
    the 3x4 shared-memory fabric, and check outputs, firings and read-back against each case;
    without stalls, the cycle model's counter against the fabric's too."""
    from rivulet.sim.fabric_run import run_many_on_rtl
    from rsn.cycle_model import predict_cycles

    results = run_many_on_rtl([run[2] for run in runs], profiles=[run[3] for run in runs],
                              seeds=[run[4] for run in runs], case=case,
                              extra_reads=[register_reads(run[2]) for run in runs])
    for (label, lowering, compiled, profile, _), result in zip(runs, results, strict=True):
        _check(label, lowering, compiled, result.outputs, result.firings,
               split_register_reads(compiled, result.extra))
        if profile == "no_stall":
            assert predict_cycles(compiled).cycles == result.cycles, f"{label}: cycle model"


# --- the bank counters -----------------------------------------------------------------------
# References are plain counts of the addresses each program's LOADs and STOREs touch (the arrays
# lie one after another from address 0; word a is in bank a % banks), never a golden model.

def _banks_of(addresses, banks: int) -> list[int]:
    counts = [0] * banks
    for address in addresses:
        counts[address % banks] += 1
    return counts


def pair_program(name: str, second_offset: int):
    """Two LOADs, each its own PE, fed by one index stream i = 0, step, 2 * step, ...: one reads
    A[i], the other A[i + second_offset]. With the step a multiple of the banks and offset 0 both
    hammer bank 0; with offset 1 they use banks 0 and 1 and never compete."""
    b = Builder(name)
    index, _ = b.stream(b.const(0), b.scalar("n", hold=False), b.scalar("step", hold=False), cmp="SLT",
                        pred=False, name="loop")
    b.sink("left", b.load(b.array("A"), index, name="first"))
    b.sink("right", b.load(b.array("A"), b.add(index, b.hold(second_offset), name="shift"), name="second"))
    return b.build()


def pair_case(values, step: int, second_offset: int):
    indices = range(0, len(values) - second_offset, step)
    return {"args": {"n": len(values) - second_offset, "step": step}, "mem": {"A": list(values)},
            "expect": {"left": [values[i] for i in indices],
                       "right": [values[i + second_offset] for i in indices]}}


def counted_cases(rng, banks: int):
    """(label, graph, case, the addresses its LOADs and STOREs touch) for the counter tests."""
    gathered = [rng.randrange(1 << 20) for _ in range(37)]
    doubled = [rng.randrange(1000) for _ in range(11)]
    paired = [rng.randrange(1000) for _ in range(16 * banks + 1)]
    n = len(doubled)
    return [
        ("sum counted", sum_program(), gather_case(gathered), list(range(len(gathered)))),
        ("double in place counted", double_in_place_program(), double_in_place_case(doubled),
         [*range(n), *range(n, 2 * n), *range(n, 2 * n)]),
        ("one bank", pair_program("one_bank", 0), pair_case(paired, banks, 0),
         [i for i in range(0, len(paired), banks) for _ in range(2)]),
        ("two banks", pair_program("two_banks", 1), pair_case(paired, banks, 1),
         [i + k for i in range(0, len(paired) - 1, banks) for k in (0, 1)]),
    ]


def test_the_fabric_model_counts_every_load_and_store_per_bank():
    """The golden fabric model's per-bank accesses after a run: the LOADs' and STOREs' addresses
    modulo the banks; the preload before START is not counted."""
    (seed,) = seeds_for("shared-memory-bank-counts-model", count=1)
    print(f"bank counters on the fabric model, seed={seed}")
    spec = SMALL_SHARED
    for label, graph, case, addresses in counted_cases(random.Random(seed), spec.memory.banks):
        lowering = lower_graph(graph, case, spec, name=label.replace(" ", "_"))
        compiled = compile_lowering(lowering, spec, seed=seed)
        model = FabricModel(spec)
        result = model.run(compiled.image, lowering.program.host_inputs)
        _check(label, lowering, compiled, result.outputs, result.firings,
               model_register_reads(model, compiled))
        assert result.bank_accesses == _banks_of(addresses, spec.memory.banks), label


@pytest.mark.verilator
def test_the_bank_counters_on_the_rtl():
    """The bank counters read through the control plane after each run (one native simulation):
    accesses equal the plain count per bank and the golden model's; two LOADs on one bank wait
    for each other in some cycles, on different banks never. And the cycle model, which times
    the memory's credits and its banks' round-robin grants: its counter equals the fabric's,
    with conflicts too."""
    from rivulet.sim.fabric_run import run_many_on_rtl
    from rsn.cycle_model import predict_cycles

    (seed,) = seeds_for("shared-memory-bank-counts-rtl", count=1)
    print(f"bank counters on the RTL, seed={seed}")
    spec, runs = SMALL_SHARED, []
    for label, graph, case, addresses in counted_cases(random.Random(seed), spec.memory.banks):
        lowering = lower_graph(graph, case, spec, name=label.replace(" ", "_"))
        runs.append((label, lowering, compile_lowering(lowering, spec, seed=seed), addresses))
    results = run_many_on_rtl([run[2] for run in runs], profiles=["no_stall"] * len(runs),
                              seeds=[seed] * len(runs), case="shared-memory-bank-counts",
                              extra_reads=[register_reads(run[2]) for run in runs])
    conflicts = {}
    for (label, lowering, compiled, addresses), result in zip(runs, results, strict=True):
        _check(label, lowering, compiled, result.outputs, result.firings,
               split_register_reads(compiled, result.extra))
        assert result.bank_accesses == _banks_of(addresses, spec.memory.banks), label
        model = FabricModel(spec)
        assert model.run(compiled.image, lowering.program.host_inputs).bank_accesses == result.bank_accesses
        conflicts[label] = result.bank_conflicts
        predicted = predict_cycles(compiled).cycles
        print(f"{label}: accesses {result.bank_accesses}, conflict cycles {result.bank_conflicts}, "
              f"{result.cycles} cycles, cycle model {predicted}")
        assert predicted == result.cycles, label
    assert conflicts["one bank"][0] > 0 and not any(conflicts["one bank"][1:]), conflicts
    assert not any(conflicts["two banks"]), conflicts
    assert not any(conflicts["sum counted"]), conflicts     # one LOAD: no one to wait for

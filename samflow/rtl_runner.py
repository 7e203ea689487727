"""The conformance cases on the RTL: every primitive in one Verilated design, every case of every
file under every stall profile and several seeds, in one simulation.

One build serves all primitives and all cases (Verilator builds are the slow part): the design
:class:`SparsePrimitives` holds one instance of each primitive side by side, and the bench
drives the ports of the primitive a case is for. A run parameter (a dense scanner's ``dim``, an
adder's ``neg1``/``neg2``) is a plain input set for the case; arrays are loaded through the
banks' host ports before the streams start and read back after they end.
"""

import json
from dataclasses import dataclass, field

from amaranth.hdl import Module
from amaranth.lib import wiring

from rivulet.sim.streams import PROFILES, port_name, port_paths
from rivulet.sim.wrappers import member_value

from . import rtl
from .conform import Outcome, timing_reason
from .suite import REPSIG_PORTS, Case, VectorFile
from .tokens import TokenError, decode, encode

__all__ = ["WIDTH", "BANK_DEPTH", "RTL_PRIMITIVES", "SparsePrimitives", "rtl_jobs", "rtl_outcomes",
           "RECORDED_SCHEDULE"]

WIDTH = 16              # the data width of the conformance build (Onyx's too)
BANK_DEPTH = 1024       # words per bank: SAM's own default array size
RECORDED_SCHEDULE = "recorded_schedule"


@dataclass(frozen=True)
class RtlPrimitive:
    build: object                                   # width -> component
    config: object = None                           # params -> {input name: value}
    banks_in: dict = field(default_factory=dict)    # memory name -> bank member
    banks_out: dict = field(default_factory=dict)   # memory_out name -> bank member


def _neg_flags(params):
    return {"neg1": int(bool(params.get("neg1"))), "neg2": int(bool(params.get("neg2")))}


RTL_PRIMITIVES = {
    "rd_scan_uncompressed": RtlPrimitive(lambda w: rtl.LevelScanner(w), lambda p: {"dim": p.get("dim", 0)}),
    "rd_scan_compressed": RtlPrimitive(lambda w: rtl.LevelScanner(w, compressed=True, depth=BANK_DEPTH),
                                       banks_in={"seg_arr": "seg_bank", "crd_arr": "crd_bank"}),
    "repeat": RtlPrimitive(rtl.Repeat),
    "repeat_sig_gen": RtlPrimitive(rtl.RepeatSigGen),
    "intersect": RtlPrimitive(rtl.Intersect),
    "union": RtlPrimitive(rtl.Union),
    "add": RtlPrimitive(lambda w: rtl.Alu(w, "add"), _neg_flags),
    "multiply": RtlPrimitive(lambda w: rtl.Alu(w, "mul")),
    "reduce": RtlPrimitive(rtl.Reduce),
    "crd_drop": RtlPrimitive(rtl.CrdDrop),
    "stkn_drop": RtlPrimitive(rtl.StknDrop),
    "empty_stkn_drop": RtlPrimitive(rtl.EmptyStknDrop),
    "array": RtlPrimitive(lambda w: rtl.Array(w, BANK_DEPTH), banks_in={"init_arr": "arr_bank"},
                          banks_out={"arr": "arr_bank"}),
    "wr_scan_vals": RtlPrimitive(lambda w: rtl.ValsWriter(w, BANK_DEPTH), banks_out={"arr": "arr_bank"}),
    "wr_scan_compressed": RtlPrimitive(lambda w: rtl.CompressedWriter(w, BANK_DEPTH),
                                       banks_out={"crd_arr": "crd_bank", "seg_arr": "seg_bank"}),
}


class SparsePrimitives(wiring.Component):
    """One instance of every primitive of :data:`RTL_PRIMITIVES`, its ports prefixed with its name
    (``add__in_val1__valid``). A conformance build only; a fabric places primitives one per tile."""

    def __init__(self, width: int = WIDTH):
        self.units = {name: primitive.build(width) for name, primitive in RTL_PRIMITIVES.items()}
        super().__init__({f"{name}__{member}": port for name, unit in self.units.items()
                          for member, port in unit.signature.members.items()})

    def elaborate(self, platform):
        m = Module()
        for name, unit in self.units.items():
            m.submodules[name] = unit
            for path, member in port_paths(unit.signature):
                outer = member_value(self, (f"{name}__{path[0]}",) + path[1:])
                inner = member_value(unit, path)
                m.d.comb += (inner.eq(outer) if member.flow == wiring.In else outer.eq(inner))
        return m


def _encode_stream(port: str, tokens):
    return [encode(token, WIDTH, repsig=port in REPSIG_PORTS) for token in tokens]


def _job(vectors: VectorFile, case: Case):
    """The bench's description of one case, or the reason it cannot run on the RTL."""
    primitive = RTL_PRIMITIVES.get(vectors.primitive)
    if primitive is None:
        return None, "no RTL for this primitive"
    reason = timing_reason(vectors.primitive, case)
    if reason:
        return None, reason
    if vectors.primitive == "rd_scan_compressed" and case.inputs.get("in_crd_skip"):
        return None, "the scanner's skip input is not built"
    prefix = vectors.primitive + "__"
    memory = dict(case.memory)
    for method, arguments, _keywords in case.setup:
        if method == "resize":
            memory["init_arr"] = [0] * arguments[0]
    try:
        inputs = {prefix + port: _encode_stream(port, tokens) for port, tokens in case.inputs.items()
                  if not (vectors.primitive == "rd_scan_compressed" and port == "in_crd_skip")}
        outputs = {prefix + port: _encode_stream(port, tokens) for port, tokens in case.outputs.items()}
        loads = {}
        for name, bank in primitive.banks_in.items():
            words = memory.get(name, [])
            if len(words) > BANK_DEPTH:
                return None, f"memory {name} holds {len(words)} words; the bank holds {BANK_DEPTH}"
            loads[prefix + bank] = [encode(word, WIDTH) & ((1 << WIDTH) - 1) for word in words]
        reads = {}
        for name, bank in primitive.banks_out.items():
            words = case.memory_out.get(name, [])
            if len(words) > BANK_DEPTH:
                return None, f"memory_out {name} holds {len(words)} words; the bank holds {BANK_DEPTH}"
            reads[prefix + bank] = [word & ((1 << WIDTH) - 1) for word in words]
    except TokenError as error:
        return None, f"does not fit the {WIDTH}-bit build: {error}"
    schedule = None
    if case.schedule_dependent:
        schedule = [[prefix + port for port in ports] for ports in case.schedule]
    config = {prefix + name: value for name, value in (primitive.config(case.params) if primitive.config
                                                        else {}).items()}
    repsig = [prefix + port for port in (*case.inputs, *case.outputs) if port in REPSIG_PORTS]
    return {"file": vectors.path.name, "primitive": vectors.primitive, "case": case.name,
            "inputs": inputs, "outputs": outputs, "loads": loads, "reads": reads, "config": config,
            "schedule": schedule, "repsig": repsig}, None


def rtl_jobs(files):
    """(jobs, outcomes of the cases that cannot run)."""
    jobs, skipped = [], []
    for vectors in files:
        for case in vectors.cases:
            job, reason = _job(vectors, case)
            if job is None:
                skipped.append(Outcome(vectors.path.name, vectors.primitive, case.name, "rtl",
                                       "unsupported", reason))
            else:
                jobs.append(job)
    return jobs, skipped


def describe(bits, width=WIDTH, repsig=False):
    return decode(bits, width, repsig=repsig)


def rtl_outcomes(files, *, profiles=None, seeds=None, say=print) -> list[Outcome]:
    """Run every case that the RTL can take on the Verilated build; one outcome per case (a case
    passes only if it passes under every profile and seed)."""
    from rivulet.sim.run_dirs import run_directory
    from rivulet.sim.seeds import base_seed, seeds_for
    from rivulet.sim.verilator import build_design, run_cocotb

    jobs, outcomes = rtl_jobs(files)
    if not jobs:
        return outcomes
    profiles = list(profiles or PROFILES)
    seeds = list(seeds or seeds_for("samflow:conform", 2))
    say(f"samflow RTL conformance: {len(jobs)} cases x {len(profiles)} profiles x {len(seeds)} seeds "
        f"(seeds {seeds}, base seed {base_seed()}; replay with RIVULET_SEED={base_seed()})")
    top = SparsePrimitives(WIDTH)
    top_inputs = [port_name(path) for path, member in port_paths(top.signature) if member.flow == wiring.In]
    built = build_design(f"samflow-primitives-w{WIDTH}", top)
    with run_directory("samflow-conform") as directory:
        setup = directory / "jobs.json"
        results = directory / "results.jsonl"
        setup.write_text(json.dumps({"jobs": jobs, "profiles": profiles, "seeds": seeds, "width": WIDTH,
                                     "top_inputs": top_inputs}))
        run_cocotb(built, "samflow.tb_conform", directory,
                   {"SAMFLOW_JOBS": str(setup), "SAMFLOW_RESULTS": str(results)})
        records = [json.loads(line) for line in results.read_text().splitlines()]
    by_case = {}
    for record in records:
        by_case.setdefault((record["file"], record["case"]), []).append(record)
    for job in jobs:
        runs = by_case.get((job["file"], job["case"]), [])
        failures = [r for r in runs if r["status"] != "passed"]
        if not runs:
            outcomes.append(Outcome(job["file"], job["primitive"], job["case"], "rtl", "failed", "never ran"))
        elif failures:
            first = failures[0]
            outcomes.append(Outcome(job["file"], job["primitive"], job["case"], "rtl", "failed",
                                    f"{len(failures)}/{len(runs)} runs failed; first: profile "
                                    f"{first['profile']} seed {first['seed']}: {first['detail']}"))
        else:
            outcomes.append(Outcome(job["file"], job["primitive"], job["case"], "rtl", "passed",
                                    f"{len(runs)} runs, {sum(r['cycles'] for r in runs)} cycles"))
    return outcomes

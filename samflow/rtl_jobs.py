"""The conformance cases as jobs for the RTL: what to drive, load, expect and read back.

One design serves all primitives and all cases (Verilator builds are the slow part):
:class:`SparsePrimitives` holds one instance of each primitive side by side, and a bench drives
the ports of the primitive a case is for. A run parameter (a dense scanner's ``dim``, an adder's
``neg1``/``neg2``) is a plain input set for the case; arrays are loaded through the banks' host
ports before the streams start and read back after they end. The simulation itself is the
simulation back-end's (``rivulet.sim.sparse_conform``), which sits above this package.
"""

from dataclasses import dataclass, field

from amaranth.hdl import Module, Shape
from amaranth.lib import wiring

from . import rtl
from .conform import Outcome, has_hints, hinted_scan, timing_reason
from .models import ModelError, whole_sums
from .skip import HINTS
from .suite import FLOAT_PRIMITIVES, REPSIG_PORTS, Case, VectorFile
from .tokens import TokenError, encode, is_data

__all__ = ["WIDTH", "BANK_DEPTH", "RTL_PRIMITIVES", "SparsePrimitives", "rtl_jobs", "case_outcomes",
           "RECORDED_SCHEDULE", "HINT_LOCKSTEP", "top_inputs"]

WIDTH = 33              # the conformance build's data width: signed values and SAM's 32-bit bit vectors
BANK_DEPTH = 1024       # words per bank: SAM's own default array size
ACCUMULATOR_COLS = 64   # a sparse accumulator's workspace: inner coordinates ...
ACCUMULATOR_ROWS = 16   # ... and, for the matrix form, outer ones
RECORDED_SCHEDULE = "recorded_schedule"
# A hinted scan's exact run: each hint offered once the scanner has emitted the tokens it had
# emitted when the hint arrived in SAM's timing (samflow.skip), the outputs held until then.
HINT_LOCKSTEP = "hint_lockstep"


@dataclass(frozen=True)
class RtlPrimitive:
    build: object                                   # width -> component
    config: object = None                           # params -> {input name: value}
    banks_in: dict = field(default_factory=dict)    # memory name -> bank member
    banks_out: dict = field(default_factory=dict)   # memory_out name -> bank member


def _accumulator(width: int, order: int, points: bool):
    return rtl.SparseAccumulator(width, order, points, cols=ACCUMULATOR_COLS, rows=ACCUMULATOR_ROWS)


def _spacc_flags(params):
    return {"last_level": int(bool(params.get("last_level", True))),
            "val_stkn": int(bool(params.get("val_stkn", False)))}


def _accumulator_problem(primitive: str, case: Case) -> str | None:
    """Why an accumulator's case does not fit the build's workspace or its integer sums, or None."""
    rows = ACCUMULATOR_ROWS if primitive.endswith("2") else 1
    for port, limit in (("in_inner_crdpt", ACCUMULATOR_COLS), ("in_outer_crdpt", rows if rows > 1 else None)):
        for token in case.inputs.get(port, []):
            if is_data(token) and limit is not None and not 0 <= token < limit:
                return f"{port} coordinate {token} is outside the build's {limit}-word workspace"
    for port, tokens in case.outputs.items():
        for token in tokens:
            if isinstance(token, float) and not token.is_integer():
                return f"{port} value {token} is not an integer (the RTL sums integers)"
    return None


def _neg_flags(params):
    return {"neg1": int(bool(params.get("neg1"))), "neg2": int(bool(params.get("neg2")))}


RTL_PRIMITIVES = {
    "rd_scan_uncompressed": RtlPrimitive(lambda w: rtl.LevelScanner(w), lambda p: {"dim": p.get("dim", 0)}),
    "rd_scan_compressed": RtlPrimitive(lambda w: rtl.LevelScanner(w, compressed=True, depth=BANK_DEPTH,
                                                                  skip=True),
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
    "crd_hold": RtlPrimitive(rtl.CrdHold),
    "split": RtlPrimitive(rtl.Split, lambda p: {"split_factor": p.get("split_factor", 4),
                                                "orig_crd": int(bool(p.get("orig_crd", True)))}),
    "flatten": RtlPrimitive(rtl.Flatten, lambda p: {"split_factor": p.get("split_factor", 4)}),
    "crdpt_converter": RtlPrimitive(rtl.CrdPtConverter,
                                    lambda p: {"last_level": int(bool(p.get("last_level", False)))}),
    "bv": RtlPrimitive(rtl.Bv),
    "bv_chunk": RtlPrimitive(rtl.BvChunk,
                             lambda p: {"size": p.get("size", 16), "chunk_width": p.get("width", 4)}),
    "rd_scan_bv": RtlPrimitive(lambda w: rtl.RdScanBv(w, BANK_DEPTH), banks_in={"bv_arr": "bv_bank"}),
    "intersect_bv": RtlPrimitive(rtl.IntersectBv, lambda p: {"emit_zeros": int(bool(p.get("emit_zeros")))}),
    "bv_drop": RtlPrimitive(rtl.BvDrop),
    "spacc1": RtlPrimitive(lambda w: _accumulator(w, 1, points=False), _spacc_flags),
    "spacc2": RtlPrimitive(lambda w: _accumulator(w, 2, points=False), _spacc_flags),
    "spcrdpt_accum1": RtlPrimitive(lambda w: _accumulator(w, 1, points=True)),
    "spcrdpt_accum2": RtlPrimitive(lambda w: _accumulator(w, 2, points=True)),
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
            for member_name, member in unit.signature.members.items():
                outer, inner = getattr(self, f"{name}__{member_name}"), getattr(unit, member_name)
                if member.is_port:
                    m.d.comb += inner.eq(outer) if member.flow == wiring.In else outer.eq(inner)
                else:
                    wiring.connect(m, wiring.flipped(outer), inner)
        return m


def top_inputs(top: SparsePrimitives) -> list[str]:
    """The Verilog names of every input of the top: stream payloads and valids, readies of its
    outputs, bank ports and run parameters (a bench sets them all to 0 before each case)."""
    def ports(members, prefix):
        for name, member in members.items():
            if member.is_port:
                if member.flow == wiring.In:
                    yield "__".join((*prefix, name))
            else:       # an In member's signature is already flipped: its ports keep their own flow
                yield from ports(member.signature.members, (*prefix, name))
    return list(ports(top.signature.members, ()))


def _output_streams(top: "SparsePrimitives", primitive: str) -> tuple[str, ...]:
    """The output streams of the primitive's RTL."""
    members = top.units[primitive].signature.members
    return tuple(name for name, member in members.items() if member.flow == wiring.Out and not member.is_port)


def _encode_stream(port: str, tokens):
    return [encode(token, WIDTH, repsig=port in REPSIG_PORTS) for token in tokens]


def _job(top: SparsePrimitives, vectors: VectorFile, case: Case):
    """The bench's description of one case, or the reason it cannot run on the RTL."""
    primitive = RTL_PRIMITIVES.get(vectors.primitive)
    if primitive is None:
        return None, "no RTL for this primitive"
    reason = timing_reason(vectors.primitive, case)
    if reason:
        return None, reason
    if vectors.primitive == "bv" and any(is_data(t) and not 0 <= t < WIDTH for t in case.inputs["in_crd"]):
        return None, f"a coordinate does not fit a {WIDTH}-bit word"
    if vectors.primitive in FLOAT_PRIMITIVES and (problem := _accumulator_problem(vectors.primitive, case)):
        return None, problem
    prefix = vectors.primitive + "__"
    memory = dict(case.memory)
    for method, arguments, _keywords in case.setup:
        if method == "resize":
            memory["init_arr"] = [0] * arguments[0]
    try:
        inputs = {prefix + port: _encode_stream(port, tokens) for port, tokens in case.inputs.items()}
        outputs = {prefix + port: _encode_stream(port, whole_sums(tokens))     # SAM's float sums
                   for port, tokens in case.outputs.items()}
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
    if case.schedule_dependent and not has_hints(vectors.primitive, case):
        schedule = [[prefix + port for port in ports] for ports in case.schedule]
    hinted = None
    if has_hints(vectors.primitive, case):
        # Under random stalls any timing of the hints is as good as another, so the output is
        # checked against the skip rules; the lock-step run replays SAM's timing exactly.
        try:
            visible_after = hinted_scan(case).visible_after
        except ModelError as error:
            return None, f"the model refuses the case: {error}"
        hinted = {"memory": case.memory, "inputs": case.inputs, "hints": prefix + HINTS,
                  "crd": prefix + "crd", "visible_after": visible_after}
    settings = primitive.config(case.params) if primitive.config else {}
    for name, value in settings.items():
        bits = Shape.cast(top.units[vectors.primitive].signature.members[name].shape).width
        if not (isinstance(value, int) and 0 <= value < 1 << bits):
            return None, f"parameter {name}={value!r} does not fit the RTL's {bits}-bit run input"
    config = {prefix + name: value for name, value in settings.items()}
    repsig = [prefix + port for port in (*case.inputs, *case.outputs) if port in REPSIG_PORTS]
    # Outputs a case does not record are still taken (and not compared), so they cannot block.
    unrecorded = [prefix + port for port in _output_streams(top, vectors.primitive)
                  if port not in case.outputs]
    return {"file": vectors.path.name, "primitive": vectors.primitive, "case": case.name,
            "inputs": inputs, "outputs": outputs, "unrecorded": unrecorded, "loads": loads, "reads": reads,
            "config": config,
            "schedule": schedule, "hinted": hinted, "repsig": repsig}, None


def rtl_jobs(files, top: SparsePrimitives):
    """(jobs for ``top``, outcomes of the cases that cannot run)."""
    jobs, skipped = [], []
    for vectors in files:
        for case in vectors.cases:
            job, reason = _job(top, vectors, case)
            if job is None:
                skipped.append(Outcome(vectors.path.name, vectors.primitive, case.name, "rtl",
                                       "unsupported", reason))
            else:
                jobs.append(job)
    return jobs, skipped


def case_outcomes(jobs, records) -> list[Outcome]:
    """One outcome per job from the bench's per-run records: a case passes only if it passed
    under every profile and seed."""
    by_case = {}
    for record in records:
        by_case.setdefault((record["file"], record["case"]), []).append(record)
    outcomes = []
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
            cycles = sum(r["cycles"] for r in runs)
            outcomes.append(Outcome(job["file"], job["primitive"], job["case"], "rtl", "passed",
                                    f"{len(runs)} runs, {cycles} cycles", cycles))
    return outcomes

"""The differential fuzzer of the ``pe`` fabric, end to end: random programs on the reference
interpreter, both golden models and the Verilated fabric, with shrinking of every disagreement.

:func:`fuzz` draws programs from :func:`ripple_core.fuzz.generate.random_program` (one seed
each, derived from the run's base seed, so any program can be drawn again alone), compares the
models first (:func:`ripple_core.fuzz.differential.model_disagreements`) and then runs every
program in one simulation under a random stall profile. A program on which some machine
disagrees is shrunk (:func:`ripple_core.fuzz.shrink.shrink`) with the same check, and the
smallest one is returned for a regression test (:func:`regression_record`).
"""

import random
import zlib
from collections import Counter
from dataclasses import dataclass, field

from ripple_core.fuzz.differential import NotRunnable, model_disagreements, prepare, rtl_disagreements
from ripple_core.fuzz.generate import GeneratorLimits, random_program
from ripple_core.fuzz.shrink import shrink
from ripple_core.fuzz.source import Program
from rsn.readout import register_reads, split_register_reads

from .fabric_run import run_each_on_rtl
from .streams import PROFILES

__all__ = ["FuzzReport", "Finding", "fuzz", "rtl_verdicts", "regression_record"]


@dataclass
class Finding:
    seed: int
    program: Program
    problems: list[str]
    profile: str | None = None
    run_seed: int | None = None
    shrunk: Program | None = None


@dataclass
class FuzzReport:
    graphs: int = 0                 # programs run on every machine asked for
    not_runnable: int = 0           # did not place and route on the fabric
    rtl_graphs: int = 0
    operators: Counter = field(default_factory=Counter)
    sizes: list[int] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def summary(self) -> str:
        mix = ", ".join(f"{op} {count}" for op, count in sorted(self.operators.items()))
        low, high = (min(self.sizes), max(self.sizes)) if self.sizes else (0, 0)
        return (f"{self.graphs} graphs of {low} to {high} operators on both golden models"
                f"{f', {self.rtl_graphs} of them on the RTL' if self.rtl_graphs else ''}; "
                f"{self.not_runnable} did not route; {len(self.findings)} disagreements\n"
                f"operators (static, over all graphs): {mix}")


def rtl_verdicts(prepared_list, *, profiles, seeds, case: str) -> list[list[str]]:
    """Run every prepared program in one simulation; per program, its disagreements with the
    reference and the golden model (empty when the RTL agrees)."""
    extra = [register_reads(prepared.compiled) for prepared in prepared_list]
    results = run_each_on_rtl([prepared.compiled for prepared in prepared_list], profiles=profiles,
                              seeds=seeds, case=case, extra_reads=extra)
    verdicts = []
    for prepared, result in zip(prepared_list, results, strict=True):
        if isinstance(result, str):
            verdicts.append([f"RTL: {result}"])
        else:
            reads = split_register_reads(prepared.compiled, result.extra)
            verdicts.append(rtl_disagreements(prepared, result, reads))
    return verdicts


def fuzz(count: int, spec, *, base_seed: int, limits: GeneratorLimits | None = None, rtl: bool = True,
         shrink_findings: bool = True, case: str = "pe-fuzz", fixed=(), say=print) -> FuzzReport:
    """Draw ``count`` programs and run them on every machine; see the module docstring.

    ``fixed``: further (label, program, profile, seed) to run the same way, such as regression
    programs (their label stands in for the seed in findings)."""
    report = FuzzReport()
    chooser = random.Random(base_seed)
    prepared_runs = []
    drawn = []
    for _ in range(count):
        seed = chooser.randrange(2**63)
        drawn.append((seed, random_program(random.Random(seed), limits), None, None))
    for seed, program, fixed_profile, fixed_seed in [*drawn, *fixed]:
        try:
            placement_seed = zlib.crc32(seed.encode()) if isinstance(seed, str) else seed
            prepared = prepare(program, spec, name=f"fuzz_{seed}", seed=placement_seed)
        except NotRunnable:
            report.not_runnable += 1
            continue
        report.graphs += 1
        report.sizes.append(len(prepared.graph.nodes))
        report.operators.update(node.op for node in prepared.graph.nodes.values())
        problems = model_disagreements(prepared, spec)
        if problems:
            report.findings.append(Finding(seed, program, problems))
            say(f"program seed {seed}: the models disagree: {problems[0]}")
            continue
        profile = fixed_profile or chooser.choice(list(PROFILES))
        run_seed = fixed_seed if fixed_seed is not None else chooser.randrange(2**31)
        prepared_runs.append((seed, prepared, profile, run_seed))
    if rtl and prepared_runs:
        report.rtl_graphs = len(prepared_runs)
        _, prepared_list, profiles, run_seeds = zip(*prepared_runs, strict=True)
        verdicts = rtl_verdicts(prepared_list, profiles=profiles, seeds=run_seeds, case=case)
        for (seed, prepared, profile, run_seed), problems in zip(prepared_runs, verdicts, strict=True):
            if problems:
                report.findings.append(Finding(seed, prepared.program, problems, profile, run_seed))
                say(f"program seed {seed} (profile {profile}, seed {run_seed}): the RTL disagrees: "
                    f"{problems[0].splitlines()[0]}")
    if shrink_findings:
        for finding in report.findings:
            finding.shrunk = shrink_finding(finding, spec, case=case)
    return report


def _fails_on_models(spec):
    def fails(programs):
        verdicts = []
        for program in programs:
            try:
                prepared = prepare(program, spec, name="shrink", seed=0)
            except NotRunnable:
                verdicts.append(False)
                continue
            verdicts.append(bool(model_disagreements(prepared, spec)))
        return verdicts
    return fails


def _fails_on_rtl(spec, profile, run_seed, case):
    def fails(programs):
        prepared, verdicts = [], [False] * len(programs)
        for index, program in enumerate(programs):
            try:
                candidate = prepare(program, spec, name=f"shrink_{index}", seed=0)
            except NotRunnable:
                continue
            if model_disagreements(candidate, spec):
                continue        # a different finding: keep the search on the RTL's one
            prepared.append((index, candidate))
        if not prepared:
            return verdicts
        results = rtl_verdicts([p for _, p in prepared], profiles=[profile] * len(prepared),
                               seeds=[run_seed] * len(prepared), case=f"{case}-shrink")
        for (index, _), problems in zip(prepared, results, strict=True):
            verdicts[index] = bool(problems)
        return verdicts
    return fails


def shrink_finding(finding: Finding, spec, *, case: str = "pe-fuzz") -> Program:
    """The smallest program found that fails the same way (on the models, or on the RTL under
    the finding's stall profile and seed)."""
    if finding.profile is None:
        return shrink(finding.program, _fails_on_models(spec))
    return shrink(finding.program, _fails_on_rtl(spec, finding.profile, finding.run_seed, case), batch=16)


def regression_record(finding: Finding, fabric: str) -> dict:
    """A JSON record of a (shrunk) finding for ``testbench/ripple/fuzz_regressions/``."""
    program = finding.shrunk or finding.program
    return {"found_by_seed": finding.seed, "fabric": fabric, "profile": finding.profile,
            "run_seed": finding.run_seed, "problem": finding.problems[0].splitlines()[0],
            "program": program.to_json()}

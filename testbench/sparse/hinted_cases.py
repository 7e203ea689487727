"""Random compressed scans with skip hints: a CSR matrix A, and for each scanned row the
coordinates of a row of a second matrix B as the hints, as an intersecter of A and B would send
them, arriving on a random schedule.

The intersection of each hinted row with B's row must equal numpy's, whatever the schedule
(:func:`intersections`); the exact token streams depend on the schedule, so the cases' expected
outputs are the golden model's in SAM's timing, which the RTL's lock-step run must reproduce.
"""

from pathlib import Path

import numpy as np

from samflow.skip import scan_with_hints
from samflow.suite import parse_vectors

__all__ = ["HintedCase", "random_hinted", "hinted_file"]


class HintedCase:
    """One scan: A's CSR arrays, the references (rows, now and then an ``N`` or a stop with no
    fiber before it), for each fiber the scanner closes a row of B (the hints), the arrival cycles."""

    def __init__(self, rng):
        rows, cols = int(rng.integers(1, 6)), int(rng.integers(1, 40))
        dense = rng.random((rows, cols)) < rng.uniform(0.1, 0.7)
        self.indptr = np.concatenate([[0], np.cumsum(dense.sum(axis=1))]).astype(int).tolist()
        self.indices = np.concatenate([np.flatnonzero(r) for r in dense]).astype(int).tolist()
        refs = []
        for row in sorted(rng.choice(rows, size=int(rng.integers(1, rows + 1)), replace=False).tolist()):
            refs.append("N" if rng.random() < 0.1 else row)
            if rng.random() < 0.15:
                refs.append("S0")
        refs += ["S0"] * (1 + (rng.random() < 0.2))
        self.fibers = self._fibers(refs)
        self.other = [np.flatnonzero(rng.random(cols) < rng.uniform(0.05, 0.6)).tolist() for _ in self.fibers]
        hints = []
        for fiber in self.other:
            hints += fiber + ["S0"]
        self.inputs = {"in_ref": [*refs, "D"], "in_crd_skip": hints}
        self.memory = {"seg_arr": self.indptr, "crd_arr": self.indices}
        spread = int(rng.integers(1, 4))
        self.arrivals = {port: sorted(rng.integers(0, spread * len(tokens) + 1, size=len(tokens)).tolist())
                         for port, tokens in self.inputs.items()}

    def _fibers(self, refs) -> list[list[int]]:
        """The coordinates of each fiber the scanner closes, from the CSR arrays: a row per
        reference (none for ``N``), and an empty fiber per stop that no reference precedes."""
        fibers, after_reference = [], False
        for token in refs:
            if token == "S0" and after_reference:
                after_reference = False         # it closes the reference's fiber, one level up
            elif token == "S0":
                fibers.append([])
            else:
                fibers.append([] if token == "N" else self.indices[self.indptr[token]:self.indptr[token + 1]])
                after_reference = True
        return fibers

    def schedule(self) -> list[list[str]]:
        length = 1 + max(c for cycles in self.arrivals.values() for c in cycles)
        cycles = [[] for _ in range(length)]
        for port, arrivals in self.arrivals.items():
            for cycle in arrivals:
                cycles[cycle].append(port)
        return cycles


def intersections(case: HintedCase, crd) -> list[list[int]]:
    """Each fiber's coordinates, from the scanner's output, met with its row of B."""
    fibers, current = [], []
    for token in crd:
        if isinstance(token, int):
            current.append(token)
        elif isinstance(token, str) and token.startswith("S"):
            fibers.append(current)
            current = []
    return [np.intersect1d(kept, other).tolist() for kept, other in zip(fibers, case.other, strict=True)]


def random_hinted(seed: int, count: int) -> list[HintedCase]:
    rng = np.random.default_rng(seed)
    return [HintedCase(rng) for _ in range(count)]


def hinted_file(cases: list[HintedCase]):
    """The cases in the suite's format, each with its schedule and the model's output on it."""
    entries = []
    for n, case in enumerate(cases):
        outputs = scan_with_hints(case.memory, case.inputs, case.arrivals).outputs
        entries.append({"name": f"random_hinted_scan[{n}]", "params": {}, "memory": case.memory,
                        "inputs": case.inputs, "outputs": outputs, "schedule_dependent": True,
                        "schedule": case.schedule()})
    return parse_vectors({"primitive": "rd_scan_compressed",
                          "ports": {"inputs": ["in_ref", "in_crd_skip"], "outputs": ["crd", "ref"]},
                          "cases": entries}, Path("random_hinted_scan.json"),
                         checked_primitives={"rd_scan_compressed"})

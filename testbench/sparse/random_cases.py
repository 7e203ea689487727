"""Random cases in the suite's vector format whose expected streams come from numpy, not from
the golden models: sets of coordinates for the joiners, CSR matrices for the compressed scanner,
sums for the reducer, the ALUs and the sparse accumulators. They run through the same runner as
SAM's own vectors."""

from pathlib import Path

import numpy as np

from samflow.suite import parse_vectors

__all__ = ["random_files", "SUITE", "ACCUMULATORS"]

ACCUMULATORS = ("spacc1", "spacc2", "spcrdpt_accum1", "spcrdpt_accum2")

SUITE = Path(__file__).resolve().parents[3] / "shared" / "peer-suites" / "sam"


def _fiber(rng, universe: int, density: float) -> np.ndarray:
    return np.flatnonzero(rng.random(universe) < density)


def _file(primitive, inputs, outputs, cases):
    return parse_vectors({"primitive": primitive, "ports": {"inputs": inputs, "outputs": outputs},
                          "cases": cases}, Path(f"random_{primitive}.json"), checked_primitives={primitive})


def _stream(fibers, close_level=1):
    """Fibers of one level as a stream: S0 between fibers, S<close_level-1>... closing, D."""
    tokens = []
    for k, fiber in enumerate(fibers):
        tokens += [int(v) for v in fiber]
        tokens.append("S0" if k < len(fibers) - 1 else f"S{close_level}")
    return tokens + ["D"]


def _joiner_cases(rng, count, union):
    cases = []
    for n in range(count):
        rows = int(rng.integers(1, 4))
        side1 = [_fiber(rng, 40, rng.uniform(0.05, 0.6)) for _ in range(rows)]
        side2 = [_fiber(rng, 40, rng.uniform(0.05, 0.6)) for _ in range(rows)]
        offset1, offset2 = 100, 300          # references: positions in two made-up value arrays
        crd, ref1, ref2 = [], [], []
        for row, (a, b) in enumerate(zip(side1, side2, strict=True)):
            pos1 = {int(c): offset1 + 50 * row + k for k, c in enumerate(a)}
            pos2 = {int(c): offset2 + 50 * row + k for k, c in enumerate(b)}
            joined = np.union1d(a, b) if union else np.intersect1d(a, b)
            for c in joined.tolist():
                crd.append(c)
                ref1.append(pos1.get(c, "N"))
                ref2.append(pos2.get(c, "N"))
            closing = "S0" if row < rows - 1 else "S1"
            crd.append(closing)
            ref1.append(closing)
            ref2.append(closing)

        def refs(fibers, offset):
            return _stream([[offset + 50 * row + k for k in range(len(f))] for row, f in enumerate(fibers)])
        inputs = {"in_crd1": _stream(side1), "in_ref1": refs(side1, offset1),
                  "in_crd2": _stream(side2), "in_ref2": refs(side2, offset2)}
        cases.append({"name": f"random_{'union' if union else 'intersect'}[{n}]", "params": {},
                      "inputs": inputs, "outputs": {"crd": crd + ["D"], "ref1": ref1 + ["D"],
                                                    "ref2": ref2 + ["D"]},
                      "schedule_dependent": False})
    return cases


def _csr_cases(rng, count):
    cases = []
    for n in range(count):
        rows, cols = int(rng.integers(1, 6)), int(rng.integers(1, 30))
        dense = rng.random((rows, cols)) < rng.uniform(0.05, 0.5)
        indptr = np.concatenate([[0], np.cumsum(dense.sum(axis=1))]).tolist()
        indices = np.concatenate([np.flatnonzero(r) for r in dense]).astype(int).tolist()
        chosen = sorted(rng.choice(rows, size=int(rng.integers(1, rows + 1)), replace=False).tolist())
        crd, ref = [], []
        for k, r in enumerate(chosen):
            crd += indices[indptr[r]:indptr[r + 1]]
            ref += list(range(indptr[r], indptr[r + 1]))
            closing = "S0" if k < len(chosen) - 1 else "S1"
            crd.append(closing)
            ref.append(closing)
        cases.append({"name": f"random_csr[{n}]", "params": {},
                      "memory": {"seg_arr": indptr, "crd_arr": indices},
                      "inputs": {"in_ref": [*chosen, "S0", "D"], "in_crd_skip": []},
                      "outputs": {"crd": crd + ["D"], "ref": ref + ["D"]}, "schedule_dependent": False})
    return cases


def _reduce_cases(rng, count):
    cases = []
    for n in range(count):
        fibers = [rng.integers(-50, 50, size=int(rng.integers(0, 6))) for _ in range(int(rng.integers(1, 6)))]
        sums = [int(np.sum(f)) for f in fibers]
        cases.append({"name": f"random_reduce[{n}]", "params": {},
                      "inputs": {"in_val": _stream(fibers)}, "outputs": {"val": sums + ["S0", "D"]},
                      "schedule_dependent": False})
    return cases


def _alu_cases(rng, count, primitive):
    cases = []
    for n in range(count):
        lengths = rng.integers(0, 8, size=int(rng.integers(1, 4)))
        a = [rng.integers(-90, 90, size=k) for k in lengths]
        b = [rng.integers(-90, 90, size=k) for k in lengths]
        params = {"neg1": bool(rng.integers(2)), "neg2": bool(rng.integers(2))} if primitive == "add" else {}
        result = []
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            if primitive == "add":
                values = np.where(params["neg1"], -x, x) + np.where(params["neg2"], -y, y)
            else:
                values = np.multiply(x, y)
            result += values.astype(int).tolist() + ["S0" if k < len(lengths) - 1 else "S1"]
        cases.append({"name": f"random_{primitive}[{n}]", "params": params,
                      "inputs": {"in_val1": _stream(a), "in_val2": _stream(b)},
                      "outputs": {"val": result + ["D"]}, "schedule_dependent": False})
    return cases


def _accumulator_cases(rng, count, primitive):
    """Points with repeated (outer, inner) pairs; the sums from numpy's add.at on a dense matrix,
    per run of equal outer coordinates (order 1) or over the whole stream (order 2)."""
    whole, points = primitive.endswith("2"), primitive.startswith("spcrdpt")
    cases = []
    for n in range(count):
        length = int(rng.integers(0, 30))
        outer = np.sort(rng.integers(0, 6, size=length)) if not whole and rng.random() < 0.5 \
            else rng.integers(0, 6, size=length)
        inner, values = rng.integers(0, 40, size=length), rng.integers(-60, 60, size=length)
        runs = ([np.arange(length)] if whole
                else np.split(np.arange(length), np.flatnonzero(np.diff(outer)) + 1) if length else [])
        groups = []                      # (outer, sorted inner coordinates, their sums)
        for run in runs:
            rows = np.unique(outer[run]) if whole else outer[run][:1]
            for row in rows:
                chosen = run[outer[run] == row]
                sums, seen = np.zeros(40, dtype=int), np.zeros(40, dtype=bool)
                np.add.at(sums, inner[chosen], values[chosen])
                seen[inner[chosen]] = True
                groups.append((int(row), np.flatnonzero(seen).tolist(), sums[seen].tolist()))
        params = {} if points else {"val_stkn": bool(rng.integers(2)), "last_level": bool(rng.integers(2))}
        if points:
            outputs = {"outer_crdpt": [row for row, crds, _ in groups for _ in crds] + ["D"],
                       "inner_crdpt": [c for _, crds, _ in groups for c in crds] + ["D"],
                       "val": [float(v) for _, _, sums in groups for v in sums] + ["D"]}
        else:
            closing = "S1" if params["last_level"] else "S0"
            inner_out, val_out = [], []
            for k, (_, crds, sums) in enumerate(groups):
                stop = "S0" if k < len(groups) - 1 else closing
                inner_out += [*crds, stop]
                val_out += [float(v) for v in sums] + ([stop] if params["val_stkn"] else [])
            outer_out = [row for row, _, _ in groups] + (["S0"] if groups else [])
            outputs = {"outer_crd": outer_out + ["D"], "inner_crd": inner_out + ["D"], "val": val_out + ["D"]}
        cases.append({"name": f"random_{primitive}[{n}]", "params": params,
                      "inputs": {"in_outer_crdpt": [*outer.tolist(), "D"],
                                 "in_inner_crdpt": [*inner.tolist(), "D"], "in_val": [*values.tolist(), "D"]},
                      "outputs": outputs, "schedule_dependent": False})
    return cases


def random_files(seed: int, count: int = 6):
    """One VectorFile per primitive, ``count`` cases each, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    joiner = ["in_ref1", "in_crd1", "in_ref2", "in_crd2"]
    return [
        _file("intersect", joiner, ["crd", "ref1", "ref2", "crd_skip1", "crd_skip2"],
              _joiner_cases(rng, count, union=False)),
        _file("union", joiner, ["crd", "ref1", "ref2"], _joiner_cases(rng, count, union=True)),
        _file("rd_scan_compressed", ["in_ref", "in_crd_skip"], ["crd", "ref"], _csr_cases(rng, count)),
        _file("reduce", ["in_val"], ["val"], _reduce_cases(rng, count)),
        _file("add", ["in_val1", "in_val2"], ["val"], _alu_cases(rng, count, "add")),
        _file("multiply", ["in_val1", "in_val2"], ["val"], _alu_cases(rng, count, "multiply")),
        *(_file(primitive, ["in_outer_crdpt", "in_inner_crdpt", "in_val"],
                ["outer_crdpt", "inner_crdpt", "val"] if primitive.startswith("spcrdpt")
                else ["outer_crd", "inner_crd", "val"], _accumulator_cases(rng, count, primitive))
          for primitive in ACCUMULATORS),
    ]

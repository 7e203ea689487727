"""Cases written by hand from the statements of SAM's semantics in the suite's README and the
reference notes (not from the models), for behaviour the recorded vectors do not exercise."""

from pathlib import Path

from samflow.suite import parse_vectors

__all__ = ["spec_files"]


def _case(name, inputs, outputs, params=None):
    return {"name": name, "params": params or {}, "inputs": inputs, "outputs": outputs,
            "schedule_dependent": False}


def spec_files():
    joiner = ["in_ref1", "in_crd1", "in_ref2", "in_crd2"]
    files = {
        # "A run of consecutive stop tokens becomes the largest one, and leading stop tokens are dropped."
        ("empty_stkn_drop", ("in_stream",), ("val",)): [
            _case("leading stops", {"in_stream": ["S0", "S1", 3, "S0", "S0", "S1", 4, "S2", "D"]},
                  {"val": [3, "S1", 4, "S2", "D"]}),
        ],
        # "[0, 1, "S0"] ∪ ["N", "S0"] gives crd [0, 1, "N", "S0"], ref2 ["N", "N", "N", "S0"]."
        ("union", tuple(joiner), ("crd", "ref1", "ref2")): [
            _case("N waits, then leaves as a coordinate",
                  {"in_crd1": [0, 1, "S0", "D"], "in_ref1": [7, 8, "S0", "D"],
                   "in_crd2": ["N", "S0", "D"], "in_ref2": ["N", "S0", "D"]},
                  {"crd": [0, 1, "N", "S0", "D"], "ref1": [7, 8, "N", "S0", "D"],
                   "ref2": ["N", "N", "N", "S0", "D"]}),
        ],
        # "an N on either side is paired with exactly one token from the other side ... and N goes
        # out on crd, ref1 and ref2".
        ("intersect", tuple(joiner), ("crd", "ref1", "ref2")): [
            _case("N pairs with one token",
                  {"in_crd1": ["N", 2, "S0", "D"], "in_ref1": ["N", 5, "S0", "D"],
                   "in_crd2": [1, 2, "S0", "D"], "in_ref2": [9, 10, "S0", "D"]},
                  {"crd": ["N", 2, "S0", "D"], "ref1": ["N", 5, "S0", "D"], "ref2": ["N", 10, "S0", "D"]}),
        ],
        # "[1, "S0", ...] + [10, 20, "S0", ...] gives [11, 20, "S0", ...]"
        ("add", ("in_val1", "in_val2"), ("val",)): [
            _case("value facing a stop", {"in_val1": [1, "S0", "D"], "in_val2": [10, 20, "S0", "D"]},
                  {"val": [11, 20, "S0", "D"]}),
        ],
        ("multiply", ("in_val1", "in_val2"), ("val",)): [
            _case("value facing a stop", {"in_val1": [3, "S0", "D"], "in_val2": [10, 20, "S0", "D"]},
                  {"val": [30, 0, "S0", "D"]}),
        ],
        # SAM's Repeat takes an 'S' from the repeat signal for a stop with no reference before it
        # (an empty fiber: the signal comes from the level below, whose scanner raised its stop).
        ("repeat", ("in_ref", "in_repsig"), ("ref",)): [
            _case("empty fiber takes its S", {"in_ref": [0, "S0", "S0", 1, "S1", "D"],
                                              "in_repsig": ["R", "R", "S", "S", "R", "S", "D"]},
                  {"ref": [0, 0, "S1", "S1", 1, "S2", "D"]}),
            _case("leading empty fiber", {"in_ref": ["S0", 2, "S1", "D"], "in_repsig": ["S", "R", "S", "D"]},
                  {"ref": ["S1", 2, "S2", "D"]}),
        ],
        # "[0, 2, "S0", "S0", 1, "S1", "D"] gives seg_arr [0, 2, 3]"
        ("wr_scan_compressed", ("in_crd",), ()): [
            {**_case("empty fiber, no segment entry", {"in_crd": [0, 2, "S0", "S0", 1, "S1", "D"]}, {}),
             "memory_out": {"crd_arr": [0, 2, 1], "seg_arr": [0, 2, 3]}},
        ],
        # "in_ref [0, "S0", 1, "S1", "D"] yields ..., "S1", ..., "S2", "D""
        ("rd_scan_uncompressed", ("in_ref",), ("crd", "ref")): [
            _case("stops raised and merged", {"in_ref": [0, "S0", 1, "S1", "D"]},
                  {"crd": [0, 1, "S1", 0, 1, "S2", "D"], "ref": [0, 1, "S1", 2, 3, "S2", "D"]}, {"dim": 2}),
        ],
    }
    return [parse_vectors({"primitive": primitive, "cases": cases,
                           "ports": {"inputs": list(inputs), "outputs": list(outputs)}},
                          Path(f"spec_{primitive}.json"), checked_primitives={primitive})
            for (primitive, inputs, outputs), cases in files.items()]

"""The scenario table of the stream primitives: one row per (component, parameters).

Amaranth's simulator runs every row per stall profile. On Verilator the rows are built side by
side into one design and run in one simulation, one row per shape of generated Verilog: rows
that differ only in a count the same logic repeats (a fork's third output, an arbiter's third
input with the same tuple length, a queue depth within the same storage) are left to the first
tier, listed in :data:`SAME_SHAPE`. Add a row here to cover a new parameter set everywhere.
"""

import pytest

PRIMITIVES = [
    ("token_queue", {"width": 8, "depth": 1}),
    ("token_queue", {"width": 8, "depth": 2}),
    ("token_queue", {"width": 8, "depth": 3}),
    ("token_queue", {"width": 32, "depth": 4}),
    ("token_queue", {"width": 8, "depth": 5}),
    ("token_queue", {"width": 8, "depth": 16}),
    ("token_queue", {"width": 8, "depth": 3, "mode": "fall_through"}),
    ("token_queue", {"width": 32, "depth": 4, "mode": "fall_through"}),
    ("token_queue", {"width": 8, "depth": 1, "mode": "bypass"}),
    ("token_queue", {"width": 8, "depth": 2, "mode": "bypass"}),
    ("token_queue", {"width": 32, "depth": 4, "mode": "bypass"}),
    ("token_queue", {"width": 8, "depth": 5, "mode": "bypass"}),
    ("skid_buffer", {"width": 1}),
    ("skid_buffer", {"width": 32}),
    ("fork", {"width": 8, "n": 2, "mode": "eager"}),
    ("fork", {"width": 8, "n": 3, "mode": "eager"}),
    ("fork", {"width": 8, "n": 2, "mode": "lockstep"}),
    ("fork", {"width": 8, "n": 3, "mode": "lockstep"}),
    ("arbiter", {"width": 8, "n": 2, "tuple_beats": 1}),
    ("arbiter", {"width": 8, "n": 3, "tuple_beats": 1}),
    ("arbiter", {"width": 8, "n": 3, "tuple_beats": 2}),
    ("arbiter", {"width": 16, "n": 5, "tuple_beats": 3}),
    ("join", {"width": 8, "n": 2}),
    ("join", {"width": 5, "n": 3}),
]


def row_id(kind: str, params: dict) -> str:
    return kind + "-" + "-".join(f"{name}={value}" for name, value in params.items())


# Rows whose Verilog has the shape of another row's: each with the row it repeats.
SAME_SHAPE = {
    "token_queue-width=8-depth=5": "token_queue-width=8-depth=3 (a memory of non-power-of-two depth)",
    "token_queue-width=8-depth=3-mode=fall_through":
        "token_queue-width=32-depth=4-mode=fall_through (the same memory of another depth)",
    "token_queue-width=8-depth=5-mode=bypass": "token_queue-width=32-depth=4-mode=bypass",
    "skid_buffer-width=1": "skid_buffer-width=32",
    "fork-width=8-n=3-mode=lockstep": "fork-width=8-n=2-mode=lockstep",
    "arbiter-width=8-n=3-tuple_beats=1": "arbiter-width=8-n=2-tuple_beats=1",
    "join-width=8-n=2": "join-width=5-n=3",
}
VERILATOR_ROWS = [(kind, params) for kind, params in PRIMITIVES if row_id(kind, params) not in SAME_SHAPE]

primitive_rows = pytest.mark.parametrize(
    "kind,params", [pytest.param(kind, params, id=row_id(kind, params)) for kind, params in PRIMITIVES])

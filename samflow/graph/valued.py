"""The value forms of crddrop and crdhold, which SAM's vector compression graphs use.

``vec_ds_compression`` (dense to sparse) puts a ``crddrop`` with ``vals=true`` behind a dense
scanner: its inner stream is the values at the scanner's coordinates, not a deeper coordinate
level, and what it drops is the zero values with their coordinates (SAM's simulator does this in
its value dropper). ``vec_sd_compression`` (sparse to dense) puts a ``crdhold`` with ``vals=true``
behind a compressed scanner: each coordinate is held once per value, and with one value per
coordinate that passes both streams unchanged. The golden models have neither form (their
``crd_drop`` and ``crd_hold`` take an inner coordinate level), so both are written here from those
rules. Both streams must line up token for token: a value for each coordinate (``N`` faces a value),
and the same stops.
"""

from samflow.models import ModelError
from samflow.tokens import is_data

__all__ = ["drop_zero_values", "hold_values"]


def _aligned(crds, vals):
    if len(crds) != len(vals):
        raise ModelError(f"in_outer_crd has {len(crds)} tokens and in_inner_crd {len(vals)}; a value "
                         "stream at the coordinates' level has one token per coordinate token")
    for at, (c, v) in enumerate(zip(crds, vals, strict=True)):
        if (is_data(c) or c == "N") != (is_data(v) or isinstance(v, float)) or \
                (not is_data(c) and c != "N" and c != v):
            raise ModelError(f"in_inner_crd token {at} {v!r} does not line up with in_outer_crd token "
                             f"{at} {c!r}")
        yield c, v


def drop_zero_values(crds, vals) -> dict:
    """Coordinates and values, without the positions whose value is 0; stops pass."""
    kept = [(c, v) for c, v in _aligned(crds, vals) if not (isinstance(v, int | float) and v == 0)]
    return {"outer_crd": [c for c, _ in kept], "inner_crd": [v for _, v in kept]}


def hold_values(crds, vals) -> dict:
    """Each coordinate held once per value: with one value per coordinate, both unchanged."""
    pairs = list(_aligned(crds, vals))
    return {"outer_crd": [c for c, _ in pairs], "inner_crd": [v for _, v in pairs]}

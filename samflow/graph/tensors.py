"""Tensors to SAM's per-level arrays and back: the memory a graph's scanners read and its writers fill.

A graph's ``comment`` gives each tensor's format: one letter per level (``s`` compressed, ``d``
dense), then the mode each level holds, outermost first (``ss10``: level 0 holds mode 1, so a
matrix is stored by columns, CSC-like; ``ds01`` is CSR; ``none`` is a scalar). A compressed level
is a segment array and a coordinate array, with one segment per position of the level above; a
dense level is its dimension, and position ``p`` of the level above has children ``p*dim + c``.
The values sit in one array indexed by the last level's positions (a scalar: ``[value]``).

Any scipy sparse array or matrix, numpy array or Python number is taken, re-encoded into the
graph's format. What must match is the order (scalar, vector, matrix, ...) and integer values: the
golden models compute on integers. Stored zeros are dropped, so a compressed level holds exactly the
nonzeros. Outputs come back as numpy arrays (vectors, scalars) or scipy CSR arrays (matrices).
"""

from dataclasses import dataclass
from itertools import groupby
from numbers import Integral

import numpy as np

from .dot import GraphError

__all__ = ["TensorFormat", "parse_formats", "EncodedTensor", "encode_tensor", "decode_tensor",
           "tensor_order"]

_LEVEL_NAMES = {"s": "compressed", "d": "dense"}


@dataclass(frozen=True)
class TensorFormat:
    name: str
    levels: tuple          # 'compressed' / 'dense', outermost first
    mode_order: tuple      # the mode each level holds

    @property
    def order(self) -> int:
        return len(self.levels)

    def level_of(self, mode: int) -> int:
        return self.mode_order.index(mode)

    def spelled(self) -> str:
        if not self.levels:
            return "none"
        letters = {name: letter for letter, name in _LEVEL_NAMES.items()}
        return "".join(letters[level] for level in self.levels) + "".join(map(str, self.mode_order))


def _parse_one(name: str, text: str, source: str) -> TensorFormat:
    if text == "none":
        return TensorFormat(name, (), ())
    letters = text.rstrip("0123456789")
    digits = text[len(letters):]
    if not letters or any(c not in _LEVEL_NAMES for c in letters) or len(digits) != len(letters) \
            or sorted(map(int, digits)) != list(range(len(letters))):
        raise GraphError(f"{source}: tensor {name}'s format {text!r} is not a format: write one letter "
                         "per level (s compressed, d dense), then the mode each level holds, e.g. "
                         "'ss01' (DCSR), 'ds01' (CSR), 'ss10' (by columns), 's0' (sparse vector), 'none'")
    return TensorFormat(name, tuple(_LEVEL_NAMES[c] for c in letters), tuple(map(int, digits)))


def parse_formats(comment: str | None, source: str) -> dict:
    """``'x=s0,b=none,C=ss10'`` -> {name: TensorFormat}."""
    if not comment:
        raise GraphError(f"{source}: the graph has no comment=\"...\" giving each tensor's format "
                         "(e.g. comment=\"x=s0,B=ds01,c=s0\")")
    formats = {}
    for item in comment.split(","):
        name, equals, text = item.strip().partition("=")
        if not equals or not name:
            raise GraphError(f"{source}: the graph comment's item {item.strip()!r} is not name=format "
                             "(e.g. C=ss01)")
        if name in formats:
            raise GraphError(f"{source}: the graph comment gives tensor {name}'s format twice")
        formats[name] = _parse_one(name, text.strip(), source)
    return formats


def tensor_order(value) -> int:
    """How many modes ``value`` has (0 for a number)."""
    if isinstance(value, Integral | float | complex) and not isinstance(value, bool):
        return 0
    shape = getattr(value, "shape", None)
    if shape is None:
        return np.asarray(value).ndim
    return len(shape)


def _points(name: str, value):
    """(shape, [(coordinates, value)]) of the nonzeros, with integer values."""
    if tensor_order(value) == 0:
        array = np.asarray(value)
        return (), [((), array.item())], array.dtype
    if hasattr(value, "tocoo"):                        # scipy sparse, any format
        coo = value.tocoo()
        coo.sum_duplicates()
        coords = np.stack(coo.coords if hasattr(coo, "coords") else (coo.row, coo.col), axis=1)
        points = [(tuple(int(c) for c in at), v) for at, v in zip(coords, coo.data, strict=True) if v != 0]
        return tuple(coo.shape), points, coo.data.dtype
    array = np.asarray(value)
    points = [(tuple(int(c) for c in at), array[at]) for at in zip(*np.nonzero(array), strict=True)]
    return array.shape, points, array.dtype


@dataclass
class EncodedTensor:
    format: TensorFormat
    shape: tuple
    levels: list           # per level: {'seg': [...], 'crd': [...]} or {'dim': n}
    vals: list


def encode_tensor(fmt: TensorFormat, value) -> EncodedTensor:
    """``value`` as SAM's per-level arrays in ``fmt``'s level order."""
    if tensor_order(value) != fmt.order:
        kinds = {0: "a scalar", 1: "a vector", 2: "a matrix"}
        raise GraphError(f"tensor {fmt.name}: the graph declares it {fmt.spelled()!r}, "
                         f"{kinds.get(fmt.order, f'order {fmt.order}')}, but was given "
                         f"{kinds.get(tensor_order(value), f'an order-{tensor_order(value)} tensor')}"
                         f"{'' if tensor_order(value) == 0 else f' of shape {tuple(value.shape)}'}")
    shape, points, dtype = _points(fmt.name, value)
    if not (np.issubdtype(dtype, np.integer) and not np.issubdtype(dtype, np.bool_)):
        raise GraphError(f"tensor {fmt.name} holds {dtype} values; the golden models compute on "
                         "integers: pass an integer array (e.g. .astype(np.int64))")
    in_level_order = sorted((tuple(at[m] for m in fmt.mode_order), int(v)) for at, v in points)
    groups = [(0, in_level_order)]        # (position, points under it), in position order
    levels = []
    for depth, kind in enumerate(fmt.levels):
        dim = shape[fmt.mode_order[depth]]
        children = []
        if kind == "compressed":
            seg, crd = [0], []
            for _position, under in groups:
                for c, same in groupby(under, key=lambda point, d=depth: point[0][d]):
                    crd.append(c)
                    children.append((len(crd) - 1, list(same)))
                seg.append(len(crd))
            levels.append({"seg": seg, "crd": crd})
        else:
            for position, under in groups:
                by_crd = {c: list(same) for c, same in groupby(under, key=lambda point, d=depth: point[0][d])}
                children.extend((position * dim + c, by_crd.get(c, [])) for c in range(dim))
            levels.append({"dim": dim})
        groups = children
    vals = [under[0][1] if under else 0 for _position, under in groups]
    return EncodedTensor(fmt, tuple(shape), levels, vals)


def decode_tensor(fmt: TensorFormat, shape: tuple, levels: list, vals: list, writers: list):
    """The tensor a graph's writers filled: ``levels[l]`` is level *l*'s ``seg``/``crd`` as written
    (a dense level's writer keeps its coordinates too), ``vals`` the values; ``writers[l]`` names the
    node that wrote level *l* (the last entry, the values' writer) for the errors."""
    parents = [()]                        # coordinates (in level order) of each position
    for depth, level in enumerate(levels):
        seg, crd = level["seg"], level["crd"]
        if len(seg) == 1 and len(parents) == 1:
            seg = [0, 0]                  # the root's one fiber was empty: the writer stores no segment
        if len(seg) - 1 != len(parents):
            raise GraphError(f"{writers[depth]}: wrote {len(seg) - 1} fibers under the {len(parents)} "
                             "positions of the level above; SAM's writer gives an empty fiber no "
                             "segment, so drop the outer coordinates of empty fibers first (a crddrop "
                             "before the writers)")
        children = []
        for position, at in enumerate(parents):
            fiber = crd[seg[position]:seg[position + 1]]
            if any(b <= a for a, b in zip(fiber, fiber[1:], strict=False)):
                raise GraphError(f"{writers[depth]}: coordinates {fiber} under {at} do not rise")
            dim = shape[fmt.mode_order[depth]]
            if fiber and not 0 <= fiber[0] <= fiber[-1] < dim:
                raise GraphError(f"{writers[depth]}: coordinates {fiber} under {at} leave 0..{dim - 1}")
            children.extend(at + (c,) for c in fiber)
        parents = children
    if not parents and not any(vals):
        # SAM's reduce gives an empty stream ([S1, D] under an empty root fiber) one sum, 0, so a
        # reduction whose output has no coordinate at all still writes a 0: nothing to place.
        vals = []
    if len(vals) != len(parents):
        raise GraphError(f"{writers[-1]}: wrote {len(vals)} values for the {len(parents)} coordinates "
                         "its tensor's levels hold")
    if fmt.order == 0:
        return np.asarray(vals[0] if vals else 0)
    array = np.zeros(shape, dtype=np.result_type(*vals) if vals else np.int64)
    inverse = [fmt.mode_order.index(mode) for mode in range(fmt.order)]
    for at, v in zip(parents, vals, strict=True):
        array[tuple(at[level] for level in inverse)] = v
    if fmt.order == 2:
        import scipy.sparse
        return scipy.sparse.csr_array(array)
    return array

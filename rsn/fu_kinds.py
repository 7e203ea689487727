"""The registry of FU kinds: every kind a fabric description may name, found by its own name.

``rsn`` registers the kinds it owns (``mem``, ``mac``, ``alu``). Any other package adds its kinds
with one line in its ``pyproject.toml``, an entry point in the group :data:`ENTRY_POINT_GROUP`
whose value is a :class:`rsn.fu.FuKind` (or a list of them)::

    [project.entry-points."rivulet.fu_kinds"]
    pe = "ripple_core.pe:PE_KIND"

Entry points are loaded on the first look-up, not at import, so ``rsn`` imports no package above
it. :func:`register` adds a kind at run time (a test's own kind, or a script's).
"""

from importlib import metadata

from .fu import FuKind

__all__ = ["ENTRY_POINT_GROUP", "UnknownKindError", "register", "find_kind", "fu_kind", "fu_kinds",
           "kind_names", "component_catalog"]

ENTRY_POINT_GROUP = "rivulet.fu_kinds"

_KINDS: dict[str, FuKind] = {}
_loaded = False


class UnknownKindError(KeyError):
    """No registered FU kind has this name."""

    def __str__(self):
        return self.args[0]


def register(kind: FuKind) -> FuKind:
    """Add ``kind`` to the registry under ``kind.name`` and return it. Registering the same
    descriptor twice is harmless; another kind under a taken name is refused."""
    if not isinstance(kind, FuKind):
        raise TypeError(f"register() takes an rsn.fu.FuKind, not {kind!r}")
    _load()     # the installed kinds first, whenever a script registers its own: one order always
    taken = _KINDS.get(kind.name)
    if taken is not None and taken is not kind:
        raise ValueError(f"FU kind {kind.name!r} is registered twice ({taken.rtl.__module__} and "
                         f"{kind.rtl.__module__}); every kind needs a name of its own")
    _KINDS[kind.name] = kind
    return kind


def _load():
    global _loaded
    if _loaded:
        return
    _loaded = True
    from .fu_alu import ALU_KIND
    from .fu_mac import MAC_KIND
    from .fu_mem import MEM_KIND
    for kind in (MEM_KIND, MAC_KIND, ALU_KIND):
        register(kind)
    for entry in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda entry: entry.name):
        loaded = entry.load()
        if isinstance(loaded, (list, tuple)):
            for kind in loaded:
                register(kind)
        elif loaded.name != entry.name:
            raise ValueError(f"entry point {entry.name!r} of {ENTRY_POINT_GROUP!r} names FU kind "
                             f"{loaded.name!r}; give the entry point the kind's own name")
        else:
            register(loaded)


def fu_kinds() -> dict[str, FuKind]:
    """Every registered kind, by name (a copy)."""
    _load()
    return dict(_KINDS)


def kind_names() -> tuple[str, ...]:
    _load()
    return tuple(_KINDS)


def find_kind(name: str) -> FuKind | None:
    """The kind called ``name``, or None."""
    _load()
    return _KINDS.get(name)


def fu_kind(name: str) -> FuKind:
    """The kind called ``name``; :class:`UnknownKindError` lists the known ones."""
    kind = find_kind(name)
    if kind is None:
        raise UnknownKindError(f"unknown FU kind {name!r}; kinds are {', '.join(_KINDS)}")
    return kind


def component_catalog() -> dict:
    """What ``rivulet generate`` can build: the stream primitives of ``hw.catalog`` and every
    registered kind's own generator (``FuKind.generator``), by name."""
    from hw.catalog import CATALOG
    catalog = dict(CATALOG)
    for name, kind in fu_kinds().items():
        if kind.generator is not None:
            catalog[name] = kind.generator
    return catalog

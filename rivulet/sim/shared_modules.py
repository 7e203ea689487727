"""One Verilog module per distinct piece of hardware, instead of one per instance.

Amaranth writes every elaborated instance as a module of its own, named by its place in the
hierarchy (``\\top.fabric.tile_2_3.switch``). Thirty identical tiles become thirty copies of the
same switch, FU and queues, and Verilator compiles each copy on its own. This pass keeps one
module of each distinct text: a module whose text, with its own name and its children's names
replaced by their representatives, equals one already kept, is dropped and its instances refer
to the kept one. Instance names do not change, so hierarchical paths (waves, a bench reaching
inside) stay as they were.
"""

import hashlib
import re

__all__ = ["share_identical_modules"]

_HEADER = re.compile(r"^module (\\\S+|\w+)\s*\(", re.MULTILINE)
# An instance: two spaces, a module name (escaped identifiers end at whitespace), an instance name.
_INSTANCE = re.compile(r"^  (\\\S+) +(\\\S+ |\w+) *\($", re.MULTILINE)
# Names the Verilog writer makes up, numbered across the whole design (``\$auto$...$152``).
_AUTO_NAME = re.compile(r"\\\$auto\$\S*?\$\d+(?=\s)")


def _split(text: str):
    """(prologue, [(name, text)], epilogue): each module with the attribute lines before it."""
    modules = []
    position = 0
    starts = [match.start() for match in re.finditer(r"^(?:\(\*[^\n]*\*\)\n)*module ", text, re.MULTILINE)]
    prologue = text[:starts[0]] if starts else text
    for index, start in enumerate(starts):
        end = text.index("\nendmodule\n", start) + len("\nendmodule\n")
        following = starts[index + 1] if index + 1 < len(starts) else len(text)
        body = text[start:end]
        name = _HEADER.search(body)[1]
        modules.append((name, body + text[end:following]))
        position = following
    return prologue, modules, text[position:] if starts else ""


def share_identical_modules(text: str) -> tuple[str, int, int]:
    """``text`` with identical modules shared: (new text, modules before, modules after)."""
    prologue, modules, epilogue = _split(text)
    if not modules:
        return text, 0, 0
    bodies = dict(modules)
    children = {name: [match[1] for match in _INSTANCE.finditer(body) if match[1] in bodies]
                for name, body in modules}
    representative, kept_by_digest, kept = {}, {}, {}

    def visit(name):
        if name in representative:
            return
        for child in children[name]:
            visit(child)
        body = _number_made_up_names(bodies[name])
        for child in set(children[name]):
            body = _rename(body, child, representative[child])
        canonical = _rename(body, name, "\\@self")
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        if digest in kept_by_digest:
            representative[name] = kept_by_digest[digest]
        else:
            kept_by_digest[digest] = representative[name] = name
            kept[name] = body

    for name, _ in modules:
        visit(name)
    shared = prologue + "".join(kept[name] for name, _ in modules if name in kept) + epilogue
    return shared, len(modules), len(kept)


def _number_made_up_names(body: str) -> str:
    """The writer's made-up names numbered within the module, in order of first use: they are
    local to it, and otherwise differ between copies of the same module."""
    numbers = {}

    def local(match):
        name = match[0]
        if name not in numbers:
            numbers[name] = f"\\$auto$local${len(numbers)}"
        return numbers[name]

    return _AUTO_NAME.sub(local, body)


def _rename(body: str, old: str, new: str) -> str:
    """Every reference to module ``old`` in ``body`` (its header, its instances) named ``new``."""
    if old.startswith("\\"):
        # An escaped identifier ends at the first whitespace: match it with what follows.
        return re.sub(re.escape(old) + r"(?=\s)", lambda _: new, body)
    # A plain name: not where it begins a child's escaped name (``\\top_u.primitive``).
    return re.sub(r"(?<![\w\\$])" + re.escape(old) + r"(?![\w.$])", lambda _: new, body)

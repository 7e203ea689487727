"""The dependency direction of docs/layout.md, read from the sources: ``hw`` <- ``rsn`` <-
``ripple_core``, ``snn``, ``samflow``, ``board`` <- ``rivulet``; ``testbench`` and ``bench`` may import
everything, nothing imports them, and no library needs pytest. And no import circles."""

import ast
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
LIBRARY = ("hw", "rsn", "ripple_core", "snn", "samflow", "board", "rivulet")
# package -> the packages of this repository it may import (besides itself)
ALLOWED = {
    "hw": set(),
    "rsn": {"hw"},
    "ripple_core": {"hw", "rsn"},
    "snn": {"hw", "rsn"},
    "samflow": {"hw", "rsn"},
    "board": {"hw", "rsn"},
    "rivulet": {"hw", "rsn", "ripple_core", "snn", "samflow", "board"},
    "bench": {"hw", "rsn", "ripple_core", "snn", "samflow", "board", "rivulet"},
}
OURS = set(ALLOWED) | {"testbench"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPOSITORY).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports anywhere, in functions too (an import
    moved into a function hides a circle, it does not remove it); relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            if node.module:
                names.add(module)
            else:               # `from . import fpga` imports the module bench.fpga
                names |= {f"{module}.{alias.name}" for alias in node.names}
    return names


def _sources(package: str):
    return sorted((REPOSITORY / package).rglob("*.py"))


@pytest.mark.parametrize("package", LIBRARY + ("bench",))
def test_imports_follow_the_dependency_direction(package):
    wrong = []
    for path in _sources(package):
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "pytest" or top in OURS and top != package and top not in ALLOWED[package]:
                wrong.append(f"{path.relative_to(REPOSITORY)} imports {name}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", ("rivulet", "bench"))
def test_no_module_imports_itself_through_a_circle(package):
    modules = {_module_name(path): path for path in _sources(package)}
    edges = {name: {other for other in _imports(path) if other in modules}
             for name, path in modules.items()}
    done, path = set(), []

    def visit(name):
        if name in path:
            raise AssertionError("import circle: " + " -> ".join(path[path.index(name):] + [name]))
        if name in done:
            return
        path.append(name)
        for other in sorted(edges[name]):
            visit(other)
        path.pop()
        done.add(name)

    for name in sorted(modules):
        visit(name)

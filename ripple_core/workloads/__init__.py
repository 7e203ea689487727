"""Ripple's nine workloads, each written twice in the Ripple language: ``ordered`` (plain
sequential code, the ordered-dataflow baseline) and ``ripple`` (tasks, push, atomics and
asynchronous iterators where they help).

One module per workload (``bfs``, ``ts``, ``kc``, ``cc``, ``sssp``, ``prd``, ``ma``, ``st``,
``dmv``) defines ``WORKLOAD``, a :class:`Workload`: the two kernels, a case maker and a checker.
The checker compares a run's final arrays and outputs with an independent reference (networkx
for the graph algorithms, numpy for the dense kernels, imported only when a check runs), never
with our own code. Graph inputs come from :mod:`.graphs`.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from ripple_core.lang.api import Kernel

__all__ = ["Workload", "NAMES", "workload", "VERSIONS"]

NAMES = ("bfs", "ts", "kc", "cc", "sssp", "prd", "ma", "st", "dmv")
VERSIONS = ("ordered", "ripple")


@dataclass(frozen=True)
class Workload:
    """``case(version, size, kind, seed)`` gives ``{"args": {...}, "mem": {...}}`` for that
    version's kernel (versions may lay memory out differently); ``size`` is vertices for graphs
    and the matrix side for dense kernels; ``kind`` is a graph kind of :data:`.graphs.KINDS` (dense
    kernels ignore it). ``check(version, case, memory, outputs)`` returns the problems of a run
    (empty when correct): ``memory`` maps each array to its final words, ``outputs`` each host
    output to its tokens. ``small`` is the size the tests use, ``sizes`` the bench's."""
    name: str
    ordered: Kernel
    ripple: Kernel
    case: Callable[[str, int, str, int], dict]
    check: Callable[[str, dict, dict, dict], list[str]]
    small: int
    sizes: tuple[int, ...]
    graph: bool = True

    def kernel(self, version: str) -> Kernel:
        if version not in VERSIONS:
            raise ValueError(f"version {version!r}: use one of {', '.join(VERSIONS)}")
        return getattr(self, version)


def workload(name: str) -> Workload:
    """The workload ``name`` (one of :data:`NAMES`)."""
    if name not in NAMES:
        raise ValueError(f"unknown workload {name!r}; the workloads are {', '.join(NAMES)}")
    return importlib.import_module(f"{__name__}.{name}").WORKLOAD

"""Each simulation run gets a directory of its own under ``build/sim-runs/``.

Two runs of the same case at once (two ``rivulet run`` of one program, two test sessions) must
not share results, logs or waves: the directory is ``<case>-<pid>-<n>``, made with an atomic
``mkdir``, so no two invocations ever get the same one. A run that passes removes its directory
unless waves were asked for (``WAVES=1``, ``--waves``) or ``RIVULET_KEEP_RUNS=1`` (``--keep``); a
failed run keeps it, since its message points at the log inside. The Verilator builds the runs
use stay shared, one per design (:func:`rivulet.sim.verilator.build_design`).
"""

import contextlib
import itertools
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from .toolchain import BUILD_ROOT

__all__ = ["RUN_ROOT", "run_directory", "new_run_directory", "keep_runs", "safe_name"]

RUN_ROOT = BUILD_ROOT / "sim-runs"

_numbers = itertools.count()


def safe_name(text: str) -> str:
    """``text`` with everything but letters, digits and ``_.=-`` replaced: a file name."""
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_")


def keep_runs() -> bool:
    """Whether passing runs keep their directories: waves asked for, or RIVULET_KEEP_RUNS set."""
    return any(os.environ.get(name, "") not in ("", "0") for name in ("WAVES", "RIVULET_KEEP_RUNS"))


def new_run_directory(case: str) -> Path:
    """A new, empty directory for one run of ``case``, which no other run shares."""
    RUN_ROOT.mkdir(parents=True, exist_ok=True)
    while True:
        directory = RUN_ROOT / f"{safe_name(case)}-{os.getpid()}-{next(_numbers)}"
        try:
            directory.mkdir()
            return directory
        except FileExistsError:
            continue        # left by an earlier process with this pid: take the next number


@contextlib.contextmanager
def run_directory(case: str) -> Iterator[Path]:
    """A new directory for one run of ``case``; removed when the block ends without an error,
    unless :func:`keep_runs`."""
    directory = new_run_directory(case)
    yield directory
    if not keep_runs():
        shutil.rmtree(directory, ignore_errors=True)

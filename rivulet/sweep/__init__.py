"""``rivulet sweep SPEC.toml``: a design-space sweep, fabric parameters against programs.

A sweep file names a fabric family and the axes to vary (:mod:`.spec`), the programs, and the
jobs run at every point (:mod:`.jobs`: generate, model run, RTL run, synthesis, place and route
with the bitstream). Every job is a pure function of its inputs, kept by their content hash in a
directory of its own, so a second run, or one after an interruption, does only what is missing.
The jobs run on a local process pool or on Ray (:mod:`.executors`); the results are one table,
a Markdown summary and Pareto plots (:mod:`.results`, :mod:`.plots`). docs/sweeps.md says why.
"""

from .command import SweepOutcome, run_sweep
from .spec import SweepError, SweepSpec, load_sweep

__all__ = ["SweepError", "SweepSpec", "SweepOutcome", "load_sweep", "run_sweep"]

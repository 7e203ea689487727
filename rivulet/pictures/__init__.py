"""Pictures of a run, for ``rivulet run ... --report DIR``: the figures (:mod:`.draw`) and an
HTML page that puts them beside the run's table of tiles (:mod:`.page`)."""

from .page import write_run_report

__all__ = ["write_run_report"]

"""The ways a run fails that the command reports without a traceback, with exit status 1."""

__all__ = ["RunFailed", "RunMismatch"]


class RunFailed(Exception):
    """A run that did not give what it should: a board that does not answer, a hang, wrong
    results. ``label`` starts the command's line."""
    label = ""


class RunMismatch(RunFailed, AssertionError):
    """Two runs, or a run and the program's reference, disagree."""
    label = "MISMATCH: "

"""The ways a run fails that the command reports without a traceback."""

__all__ = ["RunMismatch"]


class RunMismatch(AssertionError):
    """Two runs, or a run and the program's reference, disagree."""

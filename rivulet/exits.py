"""How the command ends: its exit statuses, one line for what it did not expect, and signals.

Scripts read the status: 0 the run passed, 1 its results differ (or it hung, or the board did
not answer), 2 the input was refused (a message says what to change), 3 the command broke (a
bug: the traceback goes to a file, or to stderr with ``--debug``). Ctrl-C and SIGTERM unwind
like an exception, so subprocesses (Verilator, the simulation) are stopped and files closed,
then end with one line and the shell's 128 + signal number.
"""

import contextlib
import os
import signal
import tempfile
import threading
import traceback

from .files import normal_mode

__all__ = ["PASSED", "DIFFERED", "BAD_INPUT", "INTERNAL_ERROR", "INTERRUPTED", "TERMINATED",
           "Terminated", "signals_unwind", "crash_line"]

PASSED, DIFFERED, BAD_INPUT, INTERNAL_ERROR = 0, 1, 2, 3
INTERRUPTED, TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, as KeyboardInterrupt is: no ``except Exception`` stops it."""


def _terminate(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def signals_unwind():
    """For the block, SIGINT raises KeyboardInterrupt (even where a parent ignored it) and
    SIGTERM raises :class:`Terminated`; the previous handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield       # only the main thread may set handlers; a caller in a thread keeps its own
        return
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def crash_line(error: BaseException) -> str:
    """Write ``error``'s traceback to a file; the line that names the error and the file."""
    descriptor, path = tempfile.mkstemp(prefix="rivulet-traceback-", suffix=".txt")
    with open(descriptor, "w") as file:
        file.write("".join(traceback.format_exception(error)))
    with contextlib.suppress(OSError):
        os.chmod(path, normal_mode())
    return (f"internal error: {type(error).__name__}: {error} (a bug in rivulet; the traceback is in "
            f"{path}, or run again with --debug to see it)")

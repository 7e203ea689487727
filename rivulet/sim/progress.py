"""Say how a long step is going, so a build of minutes never looks hung: its phase and the time
so far, at each change of phase and every ``interval`` seconds, on stderr."""

import sys
import threading
import time
from collections.abc import Callable

__all__ = ["Progress", "CountBar", "duration", "say_on_stderr"]


def say_on_stderr(line: str):
    print(line, file=sys.stderr, flush=True)


class Progress:
    """``with Progress("building the fabric", phase=...) as progress:`` says
    ``building the fabric (verilator, 42 s)...`` at once, at every change of phase, and every
    ``interval`` seconds between; ``phase`` (polled) or :meth:`set_phase` names the phase.
    ``quiet_for``: say nothing unless the step is still running after that many seconds.
    ``done``: the line said when the step ends without an error (``in N s`` is added).
    """

    def __init__(self, what: str, *, phase: Callable[[], str] | str = "", done: str | None = None,
                 say: Callable[[str], None] = say_on_stderr, interval: float = 12.0,
                 quiet_for: float = 0.0, poll: float = 1.0):
        self.what, self.done, self.say = what, done, say
        self.interval, self.quiet_for, self.poll = interval, quiet_for, poll
        self._phase = phase
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self.started = time.monotonic()

    def set_phase(self, phase: str):
        self._phase = phase

    def phase(self) -> str:
        return self._phase() if callable(self._phase) else self._phase

    def line(self) -> str:
        phase = self.phase()
        elapsed = f"{time.monotonic() - self.started:.0f} s"
        return f"{self.what} ({phase + ', ' if phase else ''}{elapsed})..."

    def _say_line(self):
        self._said = (self.phase(), time.monotonic())
        self.say(self.line())

    def _watch(self):
        while not self._stop.wait(self.poll):
            now = time.monotonic()
            if now - self.started < self.quiet_for:
                continue
            if self._said is None or self.phase() != self._said[0] or now - self._said[1] >= self.interval:
                self._say_line()

    def __enter__(self) -> "Progress":
        self.started, self._said = time.monotonic(), None
        if not self.quiet_for:
            self._say_line()
        self._thread.start()
        return self

    def __exit__(self, kind, error, traceback):
        self._stop.set()
        self._thread.join()
        if kind is None and self.done:
            self.say(f"{self.done} in {time.monotonic() - self.started:.0f} s")
        return False


class CountBar:
    """Where a step of many parts (a sweep's jobs, a run's cases) stands: on a terminal one line
    redrawn in place, ``[#####.......] 12/88, 5 min, ~12 min left``; on anything else (a log, a
    pipe) nothing, since a log wants the caller's own lines, not redraws. :meth:`say` prints a
    line above the bar."""

    def __init__(self, total: int, stream=None, *, width: int = 24, label: str = ""):
        self.total, self.width, self.done, self.label = total, width, 0, label
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()

    def line(self) -> str:
        filled = self.width * self.done // self.total if self.total else self.width
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done) if 0 < self.done < self.total else None
        return (f"{self.label + ' ' if self.label else ''}[{'#' * filled}{'.' * (self.width - filled)}] "
                f"{self.done}/{self.total}, {duration(elapsed)}"
                + (f", ~{duration(left)} left" if left is not None else ""))

    def _draw(self):
        if self.live:
            self.stream.write("\r\033[K" + self.line())
            self.stream.flush()

    def update(self, done: int):
        self.done = done
        self._draw()

    def say(self, text: str):
        if self.live:
            self.stream.write("\r\033[K")
        print(text, file=self.stream, flush=True)
        self._draw()

    def close(self):
        if self.live:
            self.stream.write("\r\033[K")
            self.stream.flush()


def duration(seconds: float) -> str:
    """Seconds below two minutes, minutes above."""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"

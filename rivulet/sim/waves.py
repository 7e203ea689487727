"""Waves of a Verilator run: whether they are asked for, how the model is built to write them,
and where they went.

``WAVES=1`` (``rivulet run --waves``) asks for them. Verilator writes FST when the lz4 headers
are installed (:func:`~rivulet.sim.toolchain.fst_supported`), else VCD, said once per process;
each run's waves are ``dump.fst`` or ``dump.vcd`` in its own run directory, which is kept; a
fabric run's also get a saved signal list, ``signals.gtkw`` (:mod:`rivulet.sim.wave_signals`).
"""

import os
from pathlib import Path

from .progress import say_on_stderr
from .toolchain import fst_supported, shown_path
from .wave_signals import write_gtkw

__all__ = ["waves_requested", "trace_args", "say_where_waves_went"]

_vcd_note_given = False


def waves_requested() -> bool:
    return os.environ.get("WAVES", "") not in ("", "0")


def _vcd_note(say):
    global _vcd_note_given
    if not _vcd_note_given:
        say("note: lz4 headers not found (Debian: liblz4-dev); waves are written as VCD instead of FST")
        _vcd_note_given = True


def trace_args(say=say_on_stderr) -> list[str]:
    """Verilator's arguments for waves beyond cocotb's own ``--trace`` (which writes VCD)."""
    if fst_supported():
        return ["--trace-fst", "--trace-structs"]
    _vcd_note(say)
    return []


def say_where_waves_went(test_dir: Path, say=say_on_stderr, signals=None):
    """Name the waves file of the run in ``test_dir`` and the viewers that open it; with
    ``signals`` (:func:`rivulet.sim.wave_signals.fabric_signals`), also write their saved list
    beside the waves and give it to GTKWave's command."""
    found = [test_dir / name for name in ("dump.fst", "dump.vcd") if (test_dir / name).exists()]
    if not found:
        say(f"note: waves were asked for, but the run wrote none into {shown_path(test_dir)}")
        return
    if found[0].suffix == ".vcd":
        _vcd_note(say)
    waves = shown_path(found[0])
    gtkwave = f"gtkwave {waves}"
    if signals:
        saved, missing = write_gtkw(test_dir, found[0], signals)
        gtkwave += f" {shown_path(saved)}"
        if missing:
            more = " and others" if len(missing) > 3 else ""
            say(f"note: the waves hold no {', '.join(missing[:3])}{more}; the saved signal list "
                f"leaves {'them' if len(missing) > 1 else 'it'} out")
    say(f"waves: {waves} (open with: {gtkwave}  or: surfer {waves})")

"""The boards a fabric can be built for: part, package, clock, pins, LEDs and capacity.

Capacities are the parts' own resource counts (Lattice data sheets, and nextpnr's reports of
the same parts). They let the flow say "does not fit" with the numbers before placement runs.
"""

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Board", "BOARDS", "BoardError", "board_named", "CONSTRAINTS"]

CONSTRAINTS = Path(__file__).resolve().parent.parent / "constraints"


class BoardError(ValueError):
    """An unknown board, or a board the request does not suit; the message names the choices."""


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    family: str                  # "ice40" or "ecp5": selects yosys synth_* and nextpnr-*
    device_flags: tuple[str, ...]
    package: str
    constraints: str             # file name under constraints/
    clock_hz: int
    n_leds: int
    button_active_low: bool
    leds_active_low: bool
    capacity: dict               # resource -> count available: LUT, FF, BRAM, DSP
    default_fabric: str          # file name under examples/fabrics/

    @property
    def constraints_path(self) -> Path:
        return CONSTRAINTS / self.constraints

    @property
    def clock_mhz(self) -> float:
        return self.clock_hz / 1e6

    @property
    def bitstream_suffix(self) -> str:
        return ".bin" if self.family == "ice40" else ".bit"


def _ulx3s(part: str, luts: int, brams: int, multipliers: int, default_fabric: str) -> Board:
    """One ULX3S variant: the board, its pins and its clock are shared; only the ECP5 part differs."""
    return Board(
        name=f"ulx3s-{part}f", description=f"ULX3S, ECP5 LFE5U-{part.upper()}F-6BG381", family="ecp5",
        device_flags=(f"--{part}k", "--speed", "6"), package="CABGA381", constraints="ulx3s.lpf",
        clock_hz=25_000_000, n_leds=8, button_active_low=False, leds_active_low=False,
        capacity={"LUT": luts, "FF": luts, "BRAM": brams, "DSP": multipliers},
        default_fabric=default_fabric)


BOARDS: dict[str, Board] = {board.name: board for board in (
    Board(
        name="icebreaker", description="iCEBreaker v1.0, iCE40UP5K-SG48", family="ice40",
        device_flags=("--up5k",), package="sg48", constraints="icebreaker.pcf",
        clock_hz=12_000_000, n_leds=2, button_active_low=True, leds_active_low=True,
        capacity={"LUT": 5280, "FF": 5280, "BRAM": 30, "DSP": 8},
        default_fabric="icebreaker.toml"),
    _ulx3s("25", luts=24288, brams=56, multipliers=28, default_fabric="ulx3s-25f.toml"),
    _ulx3s("85", luts=83640, brams=208, multipliers=156, default_fabric="default.toml"),
)}


def board_named(name: str) -> Board:
    """The board called ``name``, or a :class:`BoardError` that lists the known ones."""
    try:
        return BOARDS[name]
    except KeyError:
        known = ", ".join(sorted(BOARDS))
        raise BoardError(f"unknown board {name!r}; known boards: {known}") from None

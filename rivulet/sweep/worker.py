"""``python -m rivulet.sweep.worker JOB_DIRECTORY``: one fabric job of a sweep (generate, synth,
pnr), in a process of its own. It reads ``inputs.json`` and ``fabric.toml`` there and prints one
JSON object, ``{"status", "error", "figures"}``, on stdout; its log goes to stderr.

Synthesis and place and route use the board flow (:mod:`board.flow`) on the job's ``board``:
the fabric with its UART bridge, as ``rivulet build`` builds it, so LUTs and Fmax are those of
the design a board would run. ``pnr`` writes the bitstream too (timing failures allowed: a
sweep wants the Fmax of every point, and the report says whether it met the clock).
"""

import json
import sys
from pathlib import Path

__all__ = ["main"]


def _generate(directory: Path, inputs: dict) -> dict:
    from rivulet.generate import generate_fabric
    verilog, _ = generate_fabric(directory / "fabric.toml", directory / "verilog")
    return {"verilog_lines": len(verilog.read_text().splitlines())}


def _synth(directory: Path, inputs: dict) -> dict:
    from board.boards import board_named
    from board.flow import check_fit, lut_mapper, synthesise, write_top
    from rsn.fabric_spec import load_fabric

    board, spec = board_named(inputs["board"]), load_fabric(directory / "fabric.toml")
    build = directory / "fpga"
    build.mkdir(exist_ok=True)
    write_top(board, spec, build)
    resources = synthesise(board, build, log=_log)
    check_fit(board, resources, "the point's fabric")
    return {**{resource.lower(): count for resource, count in resources.items()}, "board": board.name,
            "lut_mapper": lut_mapper(build)}


def _pnr(directory: Path, inputs: dict) -> dict:
    from board.boards import board_named
    from board.flow import build_bitstream, lut_mapper
    from rsn.fabric_spec import load_fabric

    board, spec = board_named(inputs["board"]), load_fabric(directory / "fabric.toml")
    report = build_bitstream(board, spec, fabric_name="the point's fabric", directory=directory / "fpga",
                             allow_timing_fail=True, seed=inputs["seed"], log=_log)
    return {**{resource.lower(): count for resource, count in report.resources.items()},
            "board": board.name, "fmax_mhz": round(report.fmax_mhz, 2), "target_mhz": report.target_mhz,
            "meets_timing": report.meets_timing, "lut_mapper": lut_mapper(directory / "fpga"),
            "bitstream": str(report.bitstream) if report.bitstream else None}


_KINDS = {"generate": _generate, "synth": _synth, "pnr": _pnr}


def _log(line: str):
    print(line, file=sys.stderr, flush=True)


def main(argv=None) -> int:
    (directory,) = argv if argv is not None else sys.argv[1:]
    directory = Path(directory)
    inputs = json.loads((directory / "inputs.json").read_text())
    from board.flow import FlowError
    from rsn.fabric_spec import FabricError
    try:
        figures = _KINDS[inputs["kind"]](directory, inputs)
    except (FlowError, FabricError) as error:     # the point's verdict: it does not fit, say
        _log(f"{inputs['kind']}: {error}")
        print(json.dumps({"status": "failed", "error": str(error), "figures": {}}))
        return 1
    print(json.dumps({"status": "passed", "error": None, "figures": figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``rivulet`` command: list and generate components, run programs, build bitstreams.

It sits on top of the dependency order, so it may drive every front-end and the simulation
back-end (:mod:`rivulet.sim`); nothing but the tests and benchmarks imports it. See docs/layout.md.
Exit statuses (:mod:`rivulet.exits`): 0 passed, 1 results differ, 2 bad input, 3 internal error,
130 / 143 interrupted by Ctrl-C / SIGTERM.
"""

import argparse
import contextlib
import json
import os
import sys
import traceback
from pathlib import Path

from board.boards import BOARDS, BoardError, board_named
from hw.catalog import parse_parameters
from hw.params import ParameterError
from rsn.checks import ProgramError
from rsn.fabric_spec import DEFAULT_FABRIC, FabricError
from rsn.faults import FaultError
from rsn.fu_kinds import component_catalog
from rsn.graph import GraphError
from rsn.image import ImageError
from rsn.isa import IsaError
from rsn.place import PlaceError
from rsn.program import ProgramLoadError
from rsn.route import RouteError
from samflow.suite import SuiteError

from .errors import RunFailed
from .exits import (
    BAD_INPUT,
    DIFFERED,
    INTERNAL_ERROR,
    INTERRUPTED,
    TERMINATED,
    Terminated,
    crash_line,
    signals_unwind,
)
from .extras import ExtraMissing, require_extra
from .files import path_problem
from .frontends import FrontendError
from .generate import generate
from .report import RunRecord
from .sim.streams import PROFILES
from .sweep.spec import SweepError

__all__ = ["main", "USER_ERRORS"]

# Errors about what the user asked for: reported as one clear line, without a traceback.
USER_ERRORS = (BoardError, ParameterError, FabricError, IsaError, ImageError, GraphError, ProgramError,
               PlaceError, RouteError, ProgramLoadError, FrontendError, SuiteError, SweepError,
               ExtraMissing, FaultError)

_EXAMPLES = """\
examples:
  rivulet list
  rivulet generate token_queue --param width=32 --param depth=16 -o token_queue.v
  rivulet generate fork -p n=3 -p mode=lockstep -o fork3.v --metadata fork3.json
  rivulet compile examples/ripple_bfs.py -o build/bfs.json
  rivulet build --board icebreaker
  rivulet sweep examples/sweeps/family.toml -j 2

exit status: 0 passed, 1 results differ, 2 bad input, 3 internal error (a bug),
130 / 143 interrupted (Ctrl-C / SIGTERM)
"""

DEFAULT_PROFILE = "random_stall_50"      # the RTL run's host stalls unless --profile says otherwise
DEFAULT_BAUD = 115_200                  # a board run's UART rate unless --baud says otherwise
_DEBUG_HELP = "on an error, print the Python traceback too (also RIVULET_DEBUG=1)"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("rivulet-hw")
    except PackageNotFoundError:
        return "unknown (the rivulet-hw package is not installed; run `make install`)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rivulet", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Generate, verify and build spatial dataflow hardware.", epilog=_EXAMPLES)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    # --debug after the command too; SUPPRESS keeps a subcommand from resetting the top-level one.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    listing = commands.add_parser(
        "list", parents=[common], help="list the components you can generate, with their parameters",
        description="List every component of the catalog with its parameters and defaults.")
    listing.set_defaults(handler=_list)

    generate = commands.add_parser(
        "generate", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        help="write the Verilog of one component",
        description="Write the Verilog of one component. Stream ports keep Amaranth's names "
                    "(i__payload, i__valid, i__ready, o__...; arrays as o__0__payload), so "
                    "third-party stream drivers attach to them directly. Parameters are checked "
                    "before anything is written.",
        epilog="components: " + ", ".join(sorted(component_catalog()))
               + "\n(`rivulet list` shows parameters)\n\n"
               "`rivulet generate fabric [--fabric FILE.toml] -o DIR` writes a whole fabric:\n"
               "DIR/rivulet_fabric.v and DIR/rivulet_fabric.json (ports, tiles, registers, ISA).")
    generate.add_argument("component", metavar="COMPONENT", help="component name, see `rivulet list`")
    generate.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                          help="set a parameter (repeatable); unset ones take their defaults")
    generate.add_argument("-o", "--output", required=True, type=Path, metavar="FILE.v",
                          help="Verilog file to write (a directory for `generate fabric`)")
    generate.add_argument("--fabric", type=Path, metavar="FILE.toml",
                          help="fabric description for `generate fabric` (default: "
                               "examples/fabrics/default.toml)")
    generate.add_argument("--top", metavar="NAME",
                          help="Verilog module name (default: rivulet_COMPONENT; a prefix keeps "
                               "names such as fork and join clear of Verilog keywords)")
    generate.add_argument("--metadata", type=Path, metavar="FILE.json",
                          help="also write the port list (names, directions, widths) as JSON")
    generate.add_argument("--keep-src", action="store_true",
                          help="keep (* src *) attributes that map cells back to Python lines")
    generate.set_defaults(handler=_generate)

    run = commands.add_parser(
        "run", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        help="compile a program and run it on the golden model and/or the RTL fabric",
        description="Lower PROGRAM for a fabric, run it, check the results against the program's own "
                    "reference, and report per-FU firings and per-link beats (and cycles on the RTL). "
                    "PROGRAM is a Python file whose program(fabric, ...) returns an rsn.program.Program, "
                    "a RippleProgram or an SnnProgram (rivulet.frontends), or a RipTide graph JSON with "
                    "--vectors. The fabric given with --fabric is the one the program is lowered for "
                    "and placed on (docs/frontends.md).",
        epilog="examples:\n  rivulet run examples/mlp.py --sim both\n"
               "  rivulet run examples/snn_small.py -D steps=16 -D rate=0.3\n"
               "  rivulet run simple.riptide.json --vectors simple.vectors.json --sim both")
    run.add_argument("program", type=Path, metavar="PROGRAM", help="program file, e.g. examples/mlp.py")
    run.add_argument("--fabric", type=Path, metavar="FILE.toml",
                     help="fabric description (default: the program file's FABRIC, else "
                          "examples/fabrics/default.toml; examples/fabrics/ripple.toml for a dataflow graph)")
    run.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE", dest="definitions",
                     help="set parameter NAME of the file's program() (repeatable); VALUE reads as an "
                          "int, else a float, else a string")
    run.add_argument("--sim", choices=("model", "rtl", "both", "board"), default="model",
                     help="where to run: golden model, Verilated RTL, both compared, or a real board "
                          "built by `rivulet build` on the serial port --port (default: model)")
    run.add_argument("--port", metavar="PORT",
                     help="serial port of the board for --sim board, e.g. /dev/ttyUSB1 (pyserial URLs work)")
    run.add_argument("--baud", type=int, default=None, help="the board's UART baud rate (default: 115200)")
    run.add_argument("--seed", type=int, default=1, help="seed for placement and stall patterns")
    run.add_argument("--profile", default=None,
                     help=f"host-port stall profile for the RTL run (default: {DEFAULT_PROFILE})")
    run.add_argument("--waves", action="store_true",
                     help="write waves of the RTL run into its directory build/sim-runs/<case>-<pid>-<n>/ "
                          "(kept; the command says where and how to open them)")
    run.add_argument("--tier", choices=("native", "cocotb"),
                     help="how the RTL run is simulated: native (the default: the host side in hardware, "
                          "at the Verilated model's own speed) or cocotb (the Python bench, for "
                          "protocol-level debugging; --waves uses it)")
    run.add_argument("--keep", action="store_true",
                     help="keep the RTL run's directory (results, log) when it passes; a failed run's "
                          "is always kept")
    run.add_argument("--json", action="store_true",
                     help="print the results as JSON on stdout (outputs, cycles, per-tile counters, "
                          "pass/fail per case, exit status, error); the report goes to stderr")
    run.add_argument("--report", type=Path, metavar="DIR",
                     help="draw the run into DIR (PNG and SVG, needs pip install 'rivulet-hw[plot]'): the "
                          "grid with tile kinds and placed nodes, each stream's route, link beats, firings "
                          "and stalls per tile as heat maps, and DIR/index.html with the table of tiles")
    run.add_argument("--vectors", type=Path, metavar="VECTORS.json",
                     help="for a dataflow graph PROGRAM.json (RipTide JSON): its cases; --sim model runs "
                          "them on the Ripple golden model, --sim rtl/both on pe tiles (default fabric "
                          "for graphs: examples/fabrics/ripple.toml); for a file of @kernel functions: its "
                          "cases instead of its cases()")
    run.add_argument("--mode", choices=("ordered", "ripple"),
                     help="for a file of Ripple-language @kernel functions: compile as ordered dataflow "
                          "or with Ripple's tasks (default: inferred from the kernel)")
    run.add_argument("--kernel", metavar="NAME",
                     help="for a file of @kernel functions: which kernel to run (needed when it has several)")
    run.add_argument("--fault", action="append", default=[], metavar="FAULT", dest="faults",
                     help="run on a fabric with this run-time fault (repeatable; --sim model): "
                          "stuck:R,C,SIDE[@N], drop:R,C,SIDE[@N], corrupt:R,C,SIDE[@N][/BIT] or "
                          "stop:R,C[@N]; the run detects it, runs again and places round it (docs/faults.md)")
    run.set_defaults(handler=_run)

    compiling = commands.add_parser(
        "compile", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        help="write a program's dataflow graph as RipTide JSON",
        description="Write the dataflow graph of SOURCE as RipTide graph JSON with Rivulet's extensions "
                    "(docs/graph-json.md), which `rivulet run GRAPH.json --vectors FILE` runs. SOURCE "
                    "is a RipTide graph JSON (written again in normal form), a Python file of "
                    "Ripple-language @kernel functions, or a Python file whose program() returns a "
                    "RippleProgram (rivulet/compile.py lists the source kinds).",
        epilog="examples:\n  rivulet compile examples/ripple_bfs.py -o build/bfs.json -D vertices=24\n"
               "  rivulet compile examples/lang/dmv.py -o build/dmv.json\n"
               "  rivulet compile dmv.riptide.json -o build/dmv.json")
    compiling.add_argument("source", type=Path, metavar="SOURCE", help="graph JSON or program file (.py)")
    compiling.add_argument("-o", "--output", required=True, type=Path, metavar="GRAPH.json",
                           help="graph file to write (whole or not at all)")
    compiling.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                           dest="definitions", help="set parameter NAME of the file's program() (repeatable)")
    compiling.add_argument("--mode", choices=("ordered", "ripple"),
                           help="for a file of Ripple-language @kernel functions: ordered dataflow or "
                                "Ripple tasks (default: inferred from the kernel)")
    compiling.add_argument("--kernel", metavar="NAME",
                           help="for a file of @kernel functions: which kernel (needed when it has several)")
    compiling.set_defaults(handler=_compile)

    sweep = commands.add_parser(
        "sweep", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        help="run a design-space sweep: fabric parameters against programs, one table of results",
        description="Run every job of SPEC.toml (generate, model and RTL runs, synthesis, place and route) "
                    "at every point of its axes, skipping the jobs done before (each is kept by the hash "
                    "of its inputs), and write results.json, results.csv, summary.md and Pareto plots "
                    "into the sweep's directory. A failed job is reported with its log and the others "
                    "go on; the exit status is 1 when any job did not pass (docs/sweeps.md).",
        epilog="examples:\n  rivulet sweep examples/sweeps/family.toml\n"
               "  rivulet sweep examples/sweeps/family.toml -j 2 -o build/my-sweep\n"
               "  rivulet sweep examples/sweeps/family.toml --executor ray --address auto")
    sweep.add_argument("spec", type=Path, metavar="SPEC.toml", help="the sweep file")
    sweep.add_argument("-j", "--jobs", type=int, metavar="N",
                       help="jobs at once (default: every core; with Ray, the CPUs of a local cluster)")
    sweep.add_argument("--executor", choices=("pool", "ray"), default="pool",
                       help="a local pool of job processes (default) or Ray (pip install 'rivulet-hw[ray]')")
    sweep.add_argument("--address", metavar="ADDRESS",
                       help="with --executor ray: the cluster to join (e.g. auto, or ray://HOST:10001); "
                            "default: start a local one")
    sweep.add_argument("-o", "--output", type=Path, metavar="DIR",
                       help="the sweep's directory: jobs/ and the results (default: build/sweep/NAME/)")
    sweep.set_defaults(handler=_sweep)

    build = commands.add_parser(
        "build", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        help="build an FPGA bitstream of a fabric with its UART host bridge for a board",
        description="Amaranth to Verilog, yosys synthesis, nextpnr place and route with the board's "
                    "pins (constraints/), then the bitstream. Prints utilisation and Fmax against the "
                    "board clock, and keeps nextpnr's report.json and a readable report.txt beside "
                    "the bitstream.",
        epilog="boards: " + ", ".join(f"{name} ({board.description})" for name, board in BOARDS.items())
               + "\n\nexamples:\n  rivulet build --board icebreaker\n"
                 "  rivulet build --board ulx3s-85f --fabric examples/fabrics/default.toml -o build/my85f")
    build.add_argument("--board", required=True, metavar="BOARD", help="one of: " + ", ".join(BOARDS))
    build.add_argument("--fabric", type=Path, metavar="FILE.toml",
                       help="fabric description (default: the board's examples/fabrics/ file)")
    build.add_argument("-o", "--output", type=Path, metavar="DIR",
                       help="where the files go (default: build/boards/BOARD/)")
    build.add_argument("--allow-timing-fail", action="store_true",
                       help="write the bitstream even when Fmax is below the board clock")
    build.add_argument("--seed", type=int, default=1, help="nextpnr placement seed (default: 1)")
    build.add_argument("--baud", type=int, default=115_200, help="UART baud rate (default: 115200)")
    build.set_defaults(handler=_build)

    conform = commands.add_parser(
        "conform", parents=[common], help="run SAM conformance vector files on the sparse primitives",
        description="Run every case of every *.json vector file in DIR (the SAM suite's format, "
                    "docs/sparse.md) on the sparse primitives' golden models, their RTL on Verilator "
                    "under every stall profile, or both; print passed/failed/unsupported per primitive.")
    conform.add_argument("directory", type=Path, metavar="DIR", help="a directory of vector files")
    conform.add_argument("--sim", choices=("model", "rtl", "both"), default="model",
                         help="golden model, RTL, or both (default: model)")
    conform.add_argument("-v", "--verbose", action="store_true", help="say why each case was unsupported")
    conform.set_defaults(handler=_conform)
    return parser


def _list(arguments) -> int:
    for name, generator in sorted(component_catalog().items()):
        print(f"{name}: {generator.summary}")
        for parameter in generator.parameters:
            choices = f" (one of: {', '.join(parameter.choices)})" if parameter.choices else ""
            setting = f"{parameter.name}={parameter.default}"
            print(f"    {setting:<16} {parameter.help}{choices}")
    return 0


def _generate(arguments) -> int:
    if arguments.component == "fabric":
        return _generate_fabric(arguments)
    if arguments.fabric is not None:
        raise ParameterError(f"--fabric applies to `generate fabric`, not to {arguments.component}")
    values = parse_parameters(arguments.component, arguments.param, component_catalog())
    generated = generate(arguments.component, values, arguments.output, top=arguments.top,
                         metadata=arguments.metadata, keep_src=arguments.keep_src)
    print(f"wrote {generated.path} (module {generated.module}, {generated.lines} lines)")
    if arguments.metadata:
        print(f"wrote {arguments.metadata}")
    return 0


def _generate_fabric(arguments) -> int:
    from .generate import generate_fabric
    if arguments.param:
        raise ParameterError("fabric takes its parameters from --fabric FILE.toml, not --param")
    if arguments.metadata:
        raise ParameterError("--metadata applies to one component; `generate fabric` writes its ports, "
                             "tiles, registers and ISA to DIR/rivulet_fabric.json itself")
    written = generate_fabric(arguments.fabric or DEFAULT_FABRIC, arguments.output,
                              top=arguments.top, keep_src=arguments.keep_src)
    for path in written:
        print(f"wrote {path}")
    return 0


def _compile(arguments) -> int:
    from .compile import compile_file
    compiled, output = compile_file(arguments.source, arguments.output, definitions=arguments.definitions,
                                    mode=arguments.mode, kernel=arguments.kernel)
    graph = compiled.graph
    print(f"wrote {output} ({graph.name}: {len(graph.nodes)} nodes, {len(graph.scalars)} "
          f"scalar and {len(graph.arrays)} array arguments, from {compiled.kind})")
    return 0


def _run(arguments) -> int:
    from .run import run_file
    if arguments.profile is not None and arguments.profile not in PROFILES:
        raise ParameterError(f"--profile {arguments.profile!r} is not a stall profile; "
                             f"choose one of: {', '.join(PROFILES)}")
    # Given where they do nothing, they would read as if they had been applied.
    if arguments.profile is not None and arguments.sim not in ("rtl", "both"):
        raise ParameterError(f"--profile stalls the RTL run's host ports, and --sim {arguments.sim} makes "
                             f"none: add --sim rtl or --sim both")
    if arguments.baud is not None and arguments.sim != "board":
        raise ParameterError(f"--baud sets the board's UART rate, and --sim {arguments.sim} runs no board: "
                             f"add --sim board")
    if arguments.sim == "board" and not arguments.port:
        raise ParameterError("--sim board needs --port, the board's serial port (e.g. /dev/ttyUSB1)")
    if arguments.port and arguments.sim != "board":     # else a run on the model could pass for the board's
        raise ParameterError(f"--port names a board's serial port, and --sim {arguments.sim} runs no board: "
                             f"add --sim board")
    rtl_options = [flag for flag, given in (("--waves", arguments.waves), ("--tier", arguments.tier),
                                            ("--keep", arguments.keep)) if given]
    if rtl_options and arguments.sim not in ("rtl", "both"):
        raise ParameterError(f"{rtl_options[0]} applies to the RTL run, and --sim {arguments.sim} makes "
                             f"none: add --sim rtl or --sim both")
    say = _on_stderr if arguments.json else print       # stdout is the JSON's alone
    if arguments.report is not None:
        require_extra("matplotlib", "plot", "rivulet run --report")
    if arguments.faults and arguments.sim != "model":
        raise ParameterError("--fault runs on the golden model: use --sim model (the RTL takes link faults "
                             "through python -m bench.faults --rtl; docs/faults.md)")
    if arguments.waves and arguments.tier == "native":
        raise ParameterError("--waves needs the cocotb tier: leave out --tier native (the native tier "
                             "writes no waves)")
    with _environment(WAVES="1" if arguments.waves else None,
                      RIVULET_KEEP_RUNS="1" if arguments.keep else None,
                      RIVULET_SIM_TIER=arguments.tier):
        try:
            run_file(arguments.program, fabric=arguments.fabric, sim=arguments.sim, seed=arguments.seed,
                     profile=arguments.profile or DEFAULT_PROFILE, port=arguments.port,
                     baud=DEFAULT_BAUD if arguments.baud is None else arguments.baud,
                     vectors=arguments.vectors, definitions=arguments.definitions, say=say,
                     record=arguments.record, mode=arguments.mode, kernel=arguments.kernel,
                     report=arguments.report, faults=arguments.faults)
        except _board_errors() as error:
            if arguments.sim != "board":
                raise
            raise RunFailed(f"board: {error}") from error
    return 0


def _on_stderr(line: str):
    print(line, file=sys.stderr)


@contextlib.contextmanager
def _environment(**settings):
    """The variables in ``settings`` that are not None, set for the block, then restored: the
    simulation back-end reads them (WAVES, RIVULET_KEEP_RUNS), and main() may run again."""
    settings = {name: value for name, value in settings.items() if value is not None}
    previous = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _board_errors() -> tuple:
    """What a real board can report: a port that will not open, silence, a stall, a link error."""
    from board.host import BoardProtocolError, FabricStalled, LinkError, TransportTimeout
    return (OSError, TransportTimeout, LinkError, FabricStalled, BoardProtocolError)


def _sweep(arguments) -> int:
    from .sweep import run_sweep
    if arguments.jobs is not None and arguments.jobs < 1:
        raise ParameterError(f"-j {arguments.jobs}: give at least 1 job at once")
    if arguments.address and arguments.executor != "ray":
        raise ParameterError("--address names a Ray cluster: add --executor ray")
    outcome = run_sweep(arguments.spec, executor=arguments.executor, workers=arguments.jobs,
                        address=arguments.address, directory=arguments.output, say=print)
    print(f"{len(outcome.rows)} jobs ({outcome.ran} run now, the others done before) in "
          f"{outcome.seconds:.1f} s; {len(outcome.failed)} did not pass")
    for path in outcome.files:
        print(f"wrote {_shown(path)}")
    if outcome.failed:
        raise RunFailed(f"{len(outcome.failed)} of {len(outcome.rows)} sweep jobs did not pass; "
                        f"their logs are named above and in {_shown(outcome.directory / 'summary.md')}")
    return 0


def _build(arguments) -> int:
    from board.flow import FlowError, build_bitstream
    from board.top import clocks_per_bit
    from rsn.fabric_spec import load_fabric

    board = board_named(arguments.board)
    try:        # before the flow clears the last build's files and elaborates the fabric
        clocks_per_bit(board.clock_hz, arguments.baud)
    except ValueError as error:
        raise ParameterError(f"--baud {arguments.baud} on {board.name} ({board.clock_hz} Hz clock): "
                             f"{error}") from None
    fabric_path = arguments.fabric or DEFAULT_FABRIC.parent / board.default_fabric
    spec = load_fabric(fabric_path)
    try:
        report = build_bitstream(board, spec, fabric_name=_shown(fabric_path), directory=arguments.output,
                                 allow_timing_fail=arguments.allow_timing_fail, seed=arguments.seed,
                                 baud=arguments.baud)
    except FlowError as error:
        print(f"rivulet: error: {error}", file=sys.stderr)
        return 1
    print()
    print(report.text(), end="")
    print(f"report: {report.directory / 'report.txt'} (nextpnr: {report.directory / 'report.json'})")
    return 0


def _conform(arguments) -> int:
    from samflow.conform import main as conform_main

    from .sim.sparse_conform import run_rtl
    return conform_main(arguments.directory, arguments.sim, rtl=run_rtl, verbose=arguments.verbose)


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it: shorter, and the same
    on every machine."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def main(argv=None) -> int:
    """The command: its exit status (see the module's docstring)."""
    arguments = _parser().parse_args(argv)
    running = arguments.command == "run"
    arguments.record = RunRecord(str(arguments.program), arguments.sim) if running else None
    with signals_unwind():
        status, error = _outcome(arguments)
    if getattr(arguments, "json", False):
        print(json.dumps(arguments.record.as_json(status, error)))
    return status


def _failed_runs() -> tuple:
    from rsn.model import DeadlockError
    return (RunFailed, DeadlockError)


def _outcome(arguments) -> tuple[int, str | None]:
    """Run the command: its exit status and, when it did not pass, the line said on stderr."""
    debug = arguments.debug or os.environ.get("RIVULET_DEBUG", "") not in ("", "0")
    try:
        return arguments.handler(arguments), None
    except USER_ERRORS as error:
        return _said(f"error: {error}", BAD_INPUT, debug)
    except _failed_runs() as error:
        return _said(f"{getattr(error, 'label', '')}{error}", DIFFERED, debug)
    except OSError as error:        # a path that cannot be written or read: the user's to fix
        return _said(f"error: {path_problem(error)}", BAD_INPUT, debug)
    except KeyboardInterrupt:
        return _said("interrupted", INTERRUPTED)
    except Terminated:
        return _said("interrupted", TERMINATED)
    except Exception as error:
        return _said(crash_line(error), INTERNAL_ERROR, debug)


def _said(line: str, status: int, debug: bool = False) -> tuple[int, str]:
    """Say ``line`` on stderr (after the traceback of the error being handled, with --debug)."""
    if debug:
        traceback.print_exc()
    print(f"rivulet: {line}", file=sys.stderr)
    return status, line


if __name__ == "__main__":
    sys.exit(main())

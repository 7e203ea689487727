"""What a host reads back after a run: the counter READ packets and their parsing.

Shared by every host of the fabric (the simulation harness, the UART host link), so that a
result means the same thing whichever way it was read.
"""

from dataclasses import dataclass

from .assemble import read_packet
from .control import MAX_WINDOW_LIMIT
from .fu_kinds import fu_kind
from .isa import BANK_COUNTERS, GLOBAL_REGISTERS, REGISTERS, bank_counter
from .program import SHARED_MEMORY, host_inputs_declared

__all__ = ["RtlResult", "counter_reads", "used_tiles", "parse_readback", "register_reads",
           "split_register_reads", "model_register_reads", "short_host_inputs"]


@dataclass
class RtlResult:
    outputs: dict[str, list[int]]
    firings: dict[tuple[int, int], int]
    link_beats: dict[tuple[int, int], list[int]]
    cycles: int             # the fabric's own cycle counter at the end (since START)
    done_cycle: int | None  # bench cycle at which `done` rose (None where the host cannot see it)
    status: dict[tuple[int, int], int]      # tile status registers (bit 2: stalled per watchdog)
    stalls: dict[tuple[int, int], int]      # FU cycles busy without moving a token (timing: RTL only)
    stalled_cycle: int | None = None        # bench cycle at which the watchdog fired
    host_sent: dict[str, int] | None = None  # host port -> tokens the fabric took (a simulated host's count)
    # The shared memory's per-bank counters since START (None without a [memory] table): requests
    # each bank served (exact: the golden model counts them too), and cycles in which some
    # request for the bank waited for another's grant (timing: RTL only, like `stalls`).
    bank_accesses: list[int] | None = None
    bank_conflicts: list[int] | None = None


MEMORY_COUNTERS = "memory"      # the layout entry of the bank counters


def used_tiles(compiled) -> list[tuple[int, int]]:
    """The tiles a compiled program gives micro-ops to: the ones whose counters mean something."""
    return sorted(set(compiled.routing.switch_uops) | set(compiled.routing.fu_uops))


def counter_reads(spec, tiles) -> tuple[list[int], list[tuple]]:
    """READ packets for the counters of ``tiles``, the global cycle counter and, on a fabric with
    a shared memory, its bank counters; and their layout."""
    words, layout = [], []
    for tile in tiles:
        outputs = 4 + fu_kind(spec.kind(tile)).n_in
        addresses = [REGISTERS["status"], REGISTERS["firings"], REGISTERS["stalls"]]
        addresses += [REGISTERS["link_beats"] + k for k in range(outputs)]
        words += read_packet(tile, addresses)
        layout.append((tile, len(addresses)))
    words += read_packet(None, [GLOBAL_REGISTERS["cycles"]])
    layout.append((None, 1))
    if spec.memory is not None:
        addresses = [bank_counter(bank, name) for bank in range(spec.memory.banks) for name in BANK_COUNTERS]
        for first in range(0, len(addresses), MAX_WINDOW_LIMIT):
            words += read_packet(None, addresses[first:first + MAX_WINDOW_LIMIT])
        layout.append((MEMORY_COUNTERS, len(addresses)))
    return words, layout


def parse_readback(outputs: dict[str, list[int]], readback: list[int], layout, *,
                   done_cycle: int | None = None, stalled_cycle: int | None = None) -> RtlResult:
    """An :class:`RtlResult` from the host outputs and the words read back for ``layout``."""
    words = iter(readback)
    firings, link_beats, status, stalls, cycles = {}, {}, {}, {}, 0
    accesses = conflicts = None
    for tile, count in layout:
        values = [next(words) for _ in range(count)]
        if tile is None:
            cycles = values[0]
        elif tile == MEMORY_COUNTERS:
            step = len(BANK_COUNTERS)
            accesses = values[BANK_COUNTERS.index("accesses")::step]
            conflicts = values[BANK_COUNTERS.index("conflicts")::step]
        else:
            status[tile], firings[tile], stalls[tile] = values[:3]
            link_beats[tile] = values[3:]
    return RtlResult(outputs, firings, link_beats, cycles, done_cycle, status, stalls, stalled_cycle,
                     bank_accesses=accesses, bank_conflicts=conflicts)


def register_reads(compiled) -> tuple[list[int], int]:
    """Control words for the program's ``reads`` (after the counters) and how many values return."""
    from .assemble import read_packet
    from .isa import Opcode, packet

    placement = compiled.routing.placement.tiles
    words, count = [], 0
    for name, operations in compiled.program.reads.items():
        if name == SHARED_MEMORY:
            shared_words, shared_count = _shared_memory_reads(operations)
            words, count = words + shared_words, count + shared_count
            continue
        row, col = placement[name]
        for address, value in operations:
            if value is None:
                words += read_packet((row, col), [address])
                count += 1
            else:
                words += packet(Opcode.WRITE, {"rows": 1 << row, "cols": 1 << col},
                                [address | ((value & 0xFFFF_FFFF) << 32)])
    return words, count


def _shared_memory_reads(operations) -> tuple[list[int], int]:
    """READs (and WRITEs) of the shared memory through the control plane's pointer: each run of
    consecutive read addresses is one pointer write and then its words, in packets as large as
    the header's window field allows (global bodies stream through the dispenser; only micro-op
    windows are limited by the expanders' buffers)."""
    from .assemble import shared_memory_packets, shared_memory_read_packets

    words, count, run = [], 0, []

    def flush():
        if run:
            words.extend(shared_memory_read_packets(run[0], len(run), MAX_WINDOW_LIMIT))
            run.clear()

    for address, value in operations:
        if value is None:
            if run and address != run[-1] + 1:
                flush()
            run.append(address)
            count += 1
        else:
            flush()
            words.extend(shared_memory_packets({address: value}, MAX_WINDOW_LIMIT))
    flush()
    return words, count


def split_register_reads(compiled, values: list[int]) -> dict[str, list[int]]:
    """The values read by :func:`register_reads`, per node."""
    values, result = iter(values), {}
    for name, operations in compiled.program.reads.items():
        result[name] = [next(values) for _, value in operations if value is None]
    return result


def model_register_reads(model, compiled) -> dict[str, list[int]]:
    """The program's ``reads`` on a golden fabric model after its run, through the units' registers."""
    placement, result = compiled.routing.placement.tiles, {}
    for name, operations in compiled.program.reads.items():
        if name == SHARED_MEMORY:
            result[name] = []
            for address, value in operations:
                if value is None:
                    result[name].append(model.memory.data[address])
                else:
                    model.memory.data[address] = value & 0xFFFF_FFFF
            continue
        unit = model.tiles[placement[name]].fu
        result[name] = []
        for address, value in operations:
            if value is None:
                result[name].append(unit.read_word(address) if hasattr(unit, "read_word") else 0)
            elif hasattr(unit, "write_word"):
                unit.write_word(address, value)
    return result


def short_host_inputs(program, sent: dict[str, int], *, given: dict[str, int] | None = None) -> list[str]:
    """A line for each host input of ``program`` that the fabric took fewer tokens from (``sent``:
    host port -> tokens transferred, as a fabric run reports them) than its stream declares.

    A fabric fed too few tokens waits for the rest: its watchdog fires or the run times out, and
    the switch it names is only where the wait shows. These lines name the cause. With ``given``
    (host port -> tokens the host had), an input the host still had tokens for is not short:
    the fabric stopped taking them, a hang that rsn.hang_report explains.
    """
    return [f"host input {port!r} (node {host.node!r}) is short: {sent.get(port, 0)} tokens sent, "
            f"but {host.stream} declares {host.declared}"
            for port, host in host_inputs_declared(program.graph).items()
            if sent.get(port, 0) < host.declared
            and (given is None or sent.get(port, 0) >= given.get(port, 0))]

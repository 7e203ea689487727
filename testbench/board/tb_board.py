"""cocotb bench of the board top: the host driver of board/host.py loads and runs programs
through the UART pins, exactly as it would on a real board.

Runs arrive as JSON in ``RIVULET_BOARD_RUN`` (see test_board_top.py), one cocotb test each,
separated by a press of the reset button; results go to ``RIVULET_BOARD_RESULT``, one JSON line
per run, and the pytest side compares them with the golden model.
"""

import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.simtime import get_sim_time
from cocotb.triggers import ClockCycles

from board.host import HostLink, LinkError
from board.protocol import encode_status_request
from testbench.board.programs import board_program, board_spec
from testbench.board.uart_transport import CocotbUartTransport

CONFIG = json.loads(os.environ.get("RIVULET_BOARD_RUN", '{"runs": [], "clocks_per_bit": 8}'))
PERIOD_NS = 10


async def _reset(dut):
    """Line idle, then the reset button, held long enough to pass its synchroniser."""
    dut.uart_rx.value = 1
    dut.reset_button.value = 1
    await ClockCycles(dut.clk, 8)
    dut.reset_button.value = 0
    await ClockCycles(dut.clk, 32)


def _cycles() -> int:
    return int(get_sim_time(unit="ns")) // PERIOD_NS


@cocotb.test()
@cocotb.parametrize(index=list(range(len(CONFIG["runs"]))))
async def board_run(dut, index):
    run = CONFIG["runs"][index]
    compiled = board_program(run["shape"], run["program_seed"])
    cocotb.log.info("run %d: %s, idle seed %d", index, compiled.program.name, run["idle_seed"])
    Clock(dut.clk, PERIOD_NS, unit="ns").start()
    await _reset(dut)
    transport = CocotbUartTransport(dut.clk, dut.uart_rx, dut.uart_tx, CONFIG["clocks_per_bit"],
                                    rng=random.Random(run["idle_seed"]), idle=run["idle"],
                                    max_idle=run["max_idle"])
    link = HostLink(transport, board_spec())
    start = _cycles()
    result = await link.run_program(compiled)
    cycles = _cycles() - start
    transport.stop()
    assert transport.framing_errors == 0, "the board sent a frame with a low stop bit"
    assert link.status is not None and link.status.done and not link.status.link_error
    leds = int(dut.led.value)
    assert leds & 0b11 == 0b01, f"LEDs {leds:05b}: done should be lit, stalled/link error not"
    with open(os.environ["RIVULET_BOARD_RESULT"], "a") as out:
        out.write(json.dumps({
            "index": index, "outputs": result.outputs,
            "firings": [[list(tile), value] for tile, value in result.firings.items()],
            "link_beats": [[list(tile), value] for tile, value in result.link_beats.items()],
            "fabric_cycles": result.cycles, "sim_cycles": cycles, "frames_sent": link.frames_sent,
            "bytes_written": transport.bytes_written, "bytes_received": link.bytes_received,
        }) + "\n")
    cocotb.log.info("run %d: %d frames to the board, %d bytes back, %d cycles", index, link.frames_sent,
                    link.bytes_received, cycles)


async def _status_despite_error(link):
    link.status = None
    await link.transport.write(encode_status_request())
    while link.status is None:
        try:
            await link.poll()
        except LinkError:
            pass
    return link.status


@cocotb.test()
async def unknown_channel_is_a_link_error(dut):
    """A frame byte the protocol does not define lights the link error: the host hears of it,
    LED 1 shows it, and only the reset button clears it."""
    Clock(dut.clk, PERIOD_NS, unit="ns").start()
    await _reset(dut)
    transport = CocotbUartTransport(dut.clk, dut.uart_rx, dut.uart_tx, CONFIG["clocks_per_bit"],
                                    timeout_cycles=20_000)
    link = HostLink(transport, board_spec())
    status = await link.request_status()
    assert not status.link_error and not status.done
    await transport.write(bytes([0x3E]))
    raised = None
    while raised is None:       # the status change is reported without a request
        try:
            await link.poll()
        except LinkError as error:
            raised = error
    assert link.status.link_error and "link error" in str(raised)
    status = await _status_despite_error(link)
    assert status.link_error, "the link error is sticky"
    assert int(dut.led.value) & 0b10, "LED 1 shows the link error"
    transport.stop()

    await _reset(dut)           # the reset button clears it
    transport = CocotbUartTransport(dut.clk, dut.uart_rx, dut.uart_tx, CONFIG["clocks_per_bit"],
                                    timeout_cycles=20_000)
    link = HostLink(transport, board_spec())
    status = await link.request_status()
    assert not status.link_error, "the reset button clears the link error"
    assert not int(dut.led.value) & 0b10
    transport.stop()

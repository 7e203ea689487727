"""The board top: the fabric, the UART host bridge, clock and reset, and status LEDs."""

from amaranth.hdl import ClockDomain, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from hw.uart import MIN_CLOCKS_PER_BIT
from rsn.fabric import Fabric
from rsn.fabric_spec import FabricSpec

from .bridge import HostBridge
from .protocol import DEFAULT_CREDITS

__all__ = ["BoardTop", "clocks_per_bit", "MAX_BAUD_ERROR", "LED_NAMES"]

MAX_BAUD_ERROR = 0.02
POWER_ON_RESET_CYCLES = 16
LED_NAMES = ("done", "stalled or link error", "heartbeat", "UART receive", "UART transmit")


def clocks_per_bit(clock_hz: int, baud: int) -> int:
    """round(clock_hz / baud), refused if the resulting baud rate is off by more than 2%."""
    for name, value in (("clock_hz", clock_hz), ("baud", baud)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name}={value!r} must be a positive integer (Hz, bits per second)")
    divisor = round(clock_hz / baud)
    if divisor < MIN_CLOCKS_PER_BIT:
        raise ValueError(f"clock_hz={clock_hz} and baud={baud} give {clock_hz / baud:.2f} clocks per bit; "
                         f"the UART needs at least {MIN_CLOCKS_PER_BIT}: lower the baud rate")
    error = abs(clock_hz / divisor - baud) / baud
    if error > MAX_BAUD_ERROR:
        raise ValueError(f"clock_hz={clock_hz} and baud={baud}: {divisor} clocks per bit give "
                         f"{clock_hz / divisor:.0f} baud, an error of {error:.1%} (at most "
                         f"{MAX_BAUD_ERROR:.0%} is allowed); choose a baud rate closer to a divisor "
                         f"of the clock")
    return divisor


class BoardTop(wiring.Component):
    """Fabric + UART host bridge + clock/reset + status LEDs, with plain pins as ports.

    Ports (Verilog names): clk (In 1), uart_rx (In 1), uart_tx (Out 1), reset_button (In 1),
    led (Out n_leds).

    The ``sync`` domain is clocked from ``clk`` and reset for a few cycles after configuration
    (power-on reset) and while the synchronised reset button is pressed. LEDs, in order: done;
    stalled or link error; heartbeat (about 1 Hz); UART receive activity; UART transmit
    activity; any further LEDs stay off.

    The fabric's watchdog limit is raised to a quarter second of clock cycles: over a UART, a
    fabric that waits for the host is slow, not stuck.
    """

    def __init__(self, spec: FabricSpec, *, clock_hz: int, baud: int = 115_200, n_leds: int = 2,
                 button_active_low: bool = False, leds_active_low: bool = False):
        self.clocks_per_bit = clocks_per_bit(clock_hz, baud)
        if isinstance(n_leds, bool) or not isinstance(n_leds, int) or n_leds < 1:
            raise ValueError(f"n_leds={n_leds!r} must be an integer >= 1")
        self.spec, self.clock_hz, self.baud, self.n_leds = spec, clock_hz, baud, n_leds
        self.button_active_low, self.leds_active_low = button_active_low, leds_active_low
        self.credits = DEFAULT_CREDITS
        self.watchdog_limit = max(1024, clock_hz // 4)
        super().__init__({
            "clk": In(1),
            "uart_rx": In(1, init=1),
            "uart_tx": Out(1, init=1),
            "reset_button": In(1, init=1 if button_active_low else 0),
            "led": Out(n_leds, init=(1 << n_leds) - 1 if leds_active_low else 0),
        })

    def elaborate(self, platform):
        m = Module()
        # Power-on reset and the button's synchroniser live in a domain without reset.
        m.domains.sync = sync = ClockDomain("sync", local=True)
        m.domains.por = por = ClockDomain("por", reset_less=True, local=True)
        m.d.comb += [sync.clk.eq(self.clk), por.clk.eq(self.clk)]

        button = Signal(init=1 if self.button_active_low else 0)
        m.submodules.button_sync = FFSynchronizer(self.reset_button, button, o_domain="por",
                                                  init=1 if self.button_active_low else 0)
        pressed = ~button if self.button_active_low else button
        power_on = Signal(range(POWER_ON_RESET_CYCLES + 1))
        with m.If(power_on != POWER_ON_RESET_CYCLES):
            m.d.por += power_on.eq(power_on + 1)
        in_reset = Signal(init=1)
        m.d.por += in_reset.eq((power_on != POWER_ON_RESET_CYCLES) | pressed)
        m.d.comb += sync.rst.eq(in_reset)

        m.submodules.fabric = fabric = Fabric(self.spec, watchdog_limit=self.watchdog_limit)
        m.submodules.bridge = bridge = HostBridge(self.spec, clocks_per_bit=self.clocks_per_bit,
                                                  credits=self.credits)
        wiring.connect(m, bridge.ctrl, fabric.ctrl)
        wiring.connect(m, fabric.readback, bridge.readback)
        for port in self.spec.host_ports:
            if port.direction == "in":
                wiring.connect(m, getattr(bridge, port.name), getattr(fabric, port.name))
            else:
                wiring.connect(m, getattr(fabric, port.name), getattr(bridge, port.name))
        m.d.comb += [
            bridge.uart_rx.eq(self.uart_rx),
            self.uart_tx.eq(bridge.uart_tx),
            bridge.done.eq(fabric.done),
            bridge.stalled.eq(fabric.stalled),
        ]

        heartbeat = Signal()
        half_second = max(1, self.clock_hz // 2)
        beat_timer = Signal(range(half_second))
        with m.If(beat_timer == half_second - 1):
            m.d.sync += [beat_timer.eq(0), heartbeat.eq(~heartbeat)]
        with m.Else():
            m.d.sync += beat_timer.eq(beat_timer + 1)
        rx_led = self._stretch(m, bridge.rx_busy, "rx")
        tx_led = self._stretch(m, bridge.tx_busy, "tx")

        lights = [fabric.done, fabric.stalled | bridge.link_error, heartbeat, rx_led, tx_led]
        for index in range(self.n_leds):
            value = lights[index] if index < len(lights) else 0
            m.d.comb += self.led[index].eq(~value if self.leds_active_low else value)
        return m

    def _stretch(self, m, busy, name):
        """Light for about 50 ms after any activity, so that single bytes are visible."""
        hold = max(1, self.clock_hz // 20)
        timer = Signal(range(hold + 1), name=f"{name}_led_timer")
        with m.If(busy):
            m.d.sync += timer.eq(hold)
        with m.Elif(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        return timer != 0

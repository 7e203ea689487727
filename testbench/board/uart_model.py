"""UART 8N1 as the specification states it, for the Amaranth-simulator tests: the line levels of
a frame, and a strict decoder of a sampled line that shares no code with the RTL."""

__all__ = ["frame_bits", "decode_line"]


def frame_bits(byte: int, *, stop: int = 1) -> list[int]:
    """Start bit (0), eight data bits least significant first, stop bit."""
    return [0] + [(byte >> bit) & 1 for bit in range(8)] + [stop]


def decode_line(levels: list[int], clocks_per_bit: int) -> list[int]:
    """Bytes on a line sampled once per clock. Every fall from idle starts a frame; every one of
    its ten bits must hold its level for exactly ``clocks_per_bit`` cycles and the stop bit must
    be high (a transmitter never sends anything else)."""
    n = clocks_per_bit
    received = []
    position = 0
    while position < len(levels):
        if levels[position] == 1:
            position += 1
            continue
        if position + 10 * n > len(levels):
            raise AssertionError(f"frame starting at cycle {position} is cut off by the end of the capture")
        bits = []
        for k in range(10):
            cells = levels[position + k * n:position + (k + 1) * n]
            if len(set(cells)) != 1:
                raise AssertionError(f"bit {k} of the frame at cycle {position} is not held for "
                                     f"{n} cycles: {cells}")
            bits.append(cells[0])
        if bits[9] != 1:
            raise AssertionError(f"frame at cycle {position} has a low stop bit")
        received.append(sum(bit << k for k, bit in enumerate(bits[1:9])))
        position += 10 * n
    return received

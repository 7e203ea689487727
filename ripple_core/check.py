"""Ripple's checker: what a fabric run of a lowered graph must give, and what it got wrong.

A run of a :class:`~ripple_core.lower.RippleLowering` passes when its host outputs equal the
case's ``expect``, every PE fired as often as its operators did in the golden model (ordered
dataflow fires each operator equally often whatever the timing), and the words read back after
the run equal the case: each memory PE's status register with the fault bit clear, and every
STOREd array from its PE's bank. The same rules judge the RTL, the fabric's golden model, the
command and the benchmarks, so they live here, beside the lowering that sets them.
"""

from ripple_core.pe import STATUS_FAULT
from rsn.program import SHARED_MEMORY
from rsn.words import same_word, word_text, words_problem

__all__ = ["fabric_problems", "output_problems", "firing_problems", "read_problems", "RippleCheck"]

WORD_BITS = 32      # Ripple's words (ripple_core.ops.MASK), whatever the fabric's data_width


def fabric_problems(lowering, compiled, outputs: dict, firings: dict, reads: dict | None = None) -> list[str]:
    """What a fabric run (RTL or the fabric's golden model) got wrong: arrays that cannot change,
    ``reads`` (node -> the words the program's ``reads`` returned) against the case, host outputs
    against the case's ``expect``, and each PE's firings against the golden model's."""
    return (list(lowering.array_problems) + read_problems(lowering, reads or {})
            + output_problems(lowering, outputs) + firing_problems(lowering, compiled, firings))


def output_problems(lowering, outputs: dict) -> list[str]:
    """Each host port whose tokens differ from the case's ``expect`` (Ripple's 32-bit words, compared
    modulo 2^32), at its first difference."""
    return [problem for port, tokens in (lowering.program.expected or {}).items()
            if (problem := words_problem(f"host port {port}", outputs.get(port, []), tokens, WORD_BITS))]


def firing_problems(lowering, compiled, firings: dict) -> list[str]:
    """PEs whose firing counter differs from the golden model's firings of their operators. With
    open counts the fabric's schedule may fire other counts than the golden model's, so nothing is
    compared (the memory and outputs are, by the caller's reference)."""
    if lowering.counts == "open":
        return []
    tiles = compiled.routing.placement.tiles
    wrong = [f"{name} on {list(tiles[name])}: {firings.get(tiles[name], 0)} (model {count})"
             for name, count in lowering.firings.items()
             if count and firings.get(tiles[name], 0) != count]
    return ["PE firings differ from the golden model's: " + ", ".join(wrong)] if wrong else []


def read_problems(lowering, reads: dict) -> list[str]:
    """The status of each memory PE (fault bit) and the STOREd arrays read back from their banks."""
    problems = []
    for node, wanted in (lowering.program.expected_reads or {}).items():
        got = list(reads.get(node, []))
        if len(got) != len(wanted):
            problems.append(f"{node}: {len(got)} words read back, expected {len(wanted)}")
            continue
        if node == SHARED_MEMORY:
            problems += _shared_memory_problems(lowering, got, wanted)
            continue
        status, words = got[0], got[1:]
        if status & STATUS_FAULT:
            if node in lowering.arrays:
                problems.append(f"{node} ({lowering.arrays[node]}): memory fault (status bit 4): a LOAD or "
                                f"STORE address fell outside its bank")
            elif node in lowering.rings:
                base, size = lowering.rings[node]
                problems.append(f"queue {node}: fault (status bit 4): its spill ring in the shared memory "
                                f"(addresses {base}..{base + size - 1}, {size} words) ran out, so it held "
                                f"words back; give it a larger ring (lower_graph's ring_words)")
            else:
                problems.append(f"{node}: fault (status bit 4): a RELEASE of an address no ACQUIRE held")
        elif status != wanted[0]:
            problems.append(f"{node}: status register {status:#x}, expected {wanted[0]:#x}")
        wrong = [k for k, (a, b) in enumerate(zip(words, wanted[1:], strict=True))
                 if not same_word(a, b, WORD_BITS)]
        if wrong:
            k = wrong[0]
            problems.append(f"array {lowering.arrays[node]} (bank of {node}) differs at {len(wrong)} "
                            f"word(s), first word {k}: got {word_text(words[k], WORD_BITS)}, expected "
                            f"{word_text(wanted[1 + k], WORD_BITS)}")
    return problems


def _shared_memory_problems(lowering, got: list[int], wanted: list[int]) -> list[str]:
    """Each array read back from the shared memory that differs from the case, at its first word."""
    problems, start = [], 0
    for array, (base, length) in lowering.shared_arrays.items():
        wrong = [k for k in range(length) if not same_word(got[start + k], wanted[start + k], WORD_BITS)]
        if wrong:
            k = wrong[0]
            problems.append(f"array {array} (shared memory, from address {base}) differs at {len(wrong)} "
                            f"word(s), first word {k}: got {word_text(got[start + k], WORD_BITS)}, "
                            f"expected {word_text(wanted[start + k], WORD_BITS)}")
        start += length
    return problems


class RippleCheck:
    """The checker of one lowered case, as a front-end hands it to ``rivulet run``:
    ``check(compiled, outputs, firings, reads)`` returns the problems, none when the run passed.
    ``reads`` is None where the host could not read registers back (a board): then only the host
    outputs and the firings are judged."""

    def __init__(self, lowering):
        self.lowering = lowering

    def __call__(self, compiled, outputs: dict, firings: dict, reads: dict | None) -> list[str]:
        if reads is not None:
            return fabric_problems(self.lowering, compiled, outputs, firings, reads)
        return (list(self.lowering.array_problems) + output_problems(self.lowering, outputs)
                + firing_problems(self.lowering, compiled, firings))

    def arrays_equal(self, reads: dict) -> bool:
        """Whether the read-back words (status and STOREd arrays) equal the case."""
        return not read_problems(self.lowering, reads)

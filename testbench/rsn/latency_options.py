"""The fabric's latency options that the RTL-against-model tests sweep: (queue_mode, register_every).

Every FU input queue mode with registered switch outputs, and pass-through switch outputs
(rsn/hops.py) feeding bypassing queues, which gives the longest combinational paths.
"""

from hw.token_queue import QUEUE_MODES

__all__ = ["LATENCY_OPTIONS", "options_id"]

LATENCY_OPTIONS = [(mode, 1) for mode in QUEUE_MODES] + [("bypass", 2)]


def options_id(option) -> str:
    return option[0] if option[1] == 1 else f"{option[0]}-every{option[1]}"

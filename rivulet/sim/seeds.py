"""One base seed per test session, printed, and replayable with ``RIVULET_SEED``.

Every random choice in a bench derives from the base seed and the test's own name, so
``RIVULET_SEED=<base> pytest <test id>`` replays a failure exactly, while runs without it
explore new stimulus each time.
"""

import hashlib
import os
import secrets

__all__ = ["base_seed", "seeds_for"]

_VARIABLE = "RIVULET_SEED"


def base_seed() -> int:
    """The session's base seed; chosen once and exported, so that parallel workers agree."""
    if _VARIABLE not in os.environ:
        os.environ[_VARIABLE] = str(secrets.randbelow(2**31))
    return int(os.environ[_VARIABLE], 0)


def seeds_for(test_name: str, count: int = 3) -> list[int]:
    """``count`` seeds for one test, fixed by the base seed and the test's name."""
    return [int.from_bytes(hashlib.sha256(f"{base_seed()}:{test_name}:{k}".encode()).digest()[:4],
                           "little") for k in range(count)]

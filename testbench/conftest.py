"""Session-wide test settings: the base seed, printed in the header so any run can be replayed."""

from rivulet.sim.seeds import base_seed


def pytest_report_header(config):
    seed = base_seed()
    return f"rivulet: base seed {seed} (replay any failure with RIVULET_SEED={seed})"


def pytest_configure(config):
    base_seed()     # fixed before xdist starts its workers, which inherit it


def pytest_terminal_summary(terminalreporter):
    # Also at the end, which -q keeps: a failure is only useful if its seed can be replayed.
    seed = base_seed()
    terminalreporter.write_line(f"rivulet: base seed {seed} (replay with RIVULET_SEED={seed})")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``long(half)`` (half a minute or more of one core) run first, each at the
    front of its half of the collection: ``make test``'s scheduler (xdist's worksteal) starts
    each of two workers on one contiguous half and steals only from the ends of the queues. So
    each worker begins with its long tests and both finish on short ones, instead of a long test
    running alone at the end. Long tests that build the same model share a half, so that one
    never idles waiting for the other's build."""
    halves = {0: [], 1: []}
    short = []
    for item in items:
        marker = item.get_closest_marker("long")
        (halves[marker.args[0] if marker.args else 0] if marker else short).append(item)
    split = max(0, len(items) // 2 - len(halves[0]))
    items[:] = halves[0] + short[:split] + halves[1] + short[split:]

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

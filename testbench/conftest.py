"""Session-wide test settings: the base seed, printed in the header so any run can be replayed."""

from testbench.seeds import base_seed


def pytest_report_header(config):
    seed = base_seed()
    return f"rivulet: base seed {seed} (replay any failure with RIVULET_SEED={seed})"


def pytest_configure(config):
    base_seed()     # fixed before xdist starts its workers, which inherit it

"""Generated files get the permissions any tool gives a new file: 0644 under the umask 022 (they
were 0600, the private mode of the temporary file they are renamed from), and the umask's
choice under another umask."""

import os
import stat

import pytest

from rivulet.cli import main
from testbench.line_fabric import LINE_FABRIC


@pytest.fixture
def umask():
    """Set the process's umask for one test, then restore it."""
    previous = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(previous)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_generated_verilog_and_metadata_are_0644_under_umask_022(tmp_path, umask):
    verilog, metadata = tmp_path / "q.v", tmp_path / "q.json"
    assert main(["generate", "token_queue", "-o", str(verilog), "--metadata", str(metadata)]) == 0
    assert (_mode(verilog), _mode(metadata)) == (0o644, 0o644)


def test_a_generated_fabric_is_0644_under_umask_022(tmp_path, umask):
    # The smallest fabric: the files' mode is checked, not the fabric (test_cli.py generates the default).
    description = tmp_path / "one.toml"
    description.write_text(LINE_FABRIC)
    assert main(["generate", "fabric", "--fabric", str(description), "-o", str(tmp_path / "fabric")]) == 0
    written = sorted((tmp_path / "fabric").iterdir())
    assert [path.name for path in written] == ["rivulet_fabric.json", "rivulet_fabric.v"]
    assert {_mode(path) for path in written} == {0o644}


def test_the_umask_decides(tmp_path, umask):
    umask(0o077)
    verilog = tmp_path / "q.v"
    assert main(["generate", "token_queue", "-o", str(verilog)]) == 0
    assert _mode(verilog) == 0o600

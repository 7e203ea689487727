"""Example pe fabrics on smaller grids, for tests that need fewer tiles than the example has."""

import tomllib

from rivulet.sim.toolchain import REPOSITORY


def pe_grid(example: str, rows: int, cols: int) -> dict:
    """The description of ``examples/fabrics/<example>`` on a rows x cols grid of pe tiles, its
    host ports kept on their sides (west ports in column 0, east ports in the last column, rows
    past the grid's last moved to it), every other field as the example has it."""
    data = tomllib.loads((REPOSITORY / "examples" / "fabrics" / example).read_text())
    data.update(rows=rows, cols=cols, tiles=[" ".join(["pe"] * cols)] * rows)
    for port in data.get("host_ports", []):
        port["tile"] = [min(port["tile"][0], rows - 1), cols - 1 if port["side"] == "E" else 0]
    return data

"""``rivulet run ... --report DIR``: the pictures show what the run did. The SVGs are read back:
the routes drawn are the program's streams, each with one arrow per link its route takes (from
place and route, computed here again), and every heat-map cell and link label equals the counter
that ``--json`` reports for the same run."""

import contextlib
import io
import json
import re
import sys
from collections import Counter

import pytest

from rivulet.cli import main
from rivulet.sim.seeds import base_seed
from rsn.fabric_spec import default_fabric
from rsn.program import compile_program
from testbench.svg_texts import svg_texts
from testbench.sweep.programs import dot

PROGRAM = "testbench/sweep/programs/dot.py"




@pytest.fixture(scope="module")
def report(tmp_path_factory):
    directory = tmp_path_factory.mktemp("report")
    seed = base_seed()
    print(f"seed {seed} (RIVULET_SEED={seed})")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["run", PROGRAM, "--sim", "both", "--seed", str(seed), "--json",
                       "--report", str(directory / "pictures")])
    assert status == 0
    record = json.loads(printed.getvalue())
    (case,) = record["cases"]
    return directory / "pictures", case["runs"]["rtl"], seed


@pytest.mark.verilator
def test_the_routes_drawn_are_the_programs_streams_with_one_arrow_per_link(report):
    pictures, _, seed = report
    program = dot.program()
    compiled = compile_program(program, default_fabric(), seed=seed)
    arrows = Counter(int(match.group(1)) for name in svg_texts(pictures / "routes.svg")
                     if (match := re.fullmatch(r"route-(\d+)-\d+", name)))
    edges = program.graph.edges
    assert set(arrows) == set(range(len(edges)))
    for k, route in enumerate(compiled.routing.routes):
        links = sum(side < 4 for hop in route.hops for side in hop.outputs)
        from_host = program.graph.nodes[route.edge.source[0]].is_host
        assert arrows[k] == links + from_host, f"stream {k}"
    legend = (pictures / "routes.svg").read_text()
    for k, edge in enumerate(edges):
        sinks = ", ".join(name for name, _ in edge.sinks)
        assert f"{k}: {edge.source[0]} -&gt; {sinks}" in legend


@pytest.mark.verilator
def test_the_heat_maps_show_the_runs_counters(report):
    pictures, rtl, _ = report
    counted = {tuple(tile["tile"]): tile for tile in rtl["tiles"]}
    spec = default_fabric()
    for name in ("firings", "stalls"):
        cells = svg_texts(pictures / f"{name}.svg")
        for tile in spec.all_tiles():
            kind, value = cells[f"{name}-{tile[0]}-{tile[1]}"]
            assert kind == spec.kind(tile)
            assert int(value) == (counted[tile][name] if tile in counted else 0), (name, tile)
    assert sum(tile["stalls"] for tile in rtl["tiles"]) > 0     # the host stalled it: the map shows it
    links = {name: texts for name, texts in svg_texts(pictures / "link_beats.svg").items()
             if name.startswith("link-")}
    expected = {f"link-{row}-{col}-{side}": [str(beats)] for (row, col), tile in counted.items()
                for side, beats in zip("NESW", tile["link_beats"][:4], strict=True) if beats}
    assert links == expected


@pytest.mark.verilator
def test_the_stream_graph_shows_every_node_with_its_firings_and_every_stream(report):
    pictures, rtl, seed = report
    program = dot.program()
    tiles = compile_program(program, default_fabric(), seed=seed).routing.placement.tiles
    counted = {tuple(tile["tile"]): tile["firings"] for tile in rtl["tiles"]}
    drawn = svg_texts(pictures / "graph.svg")
    for name, node in program.graph.nodes.items():
        lines = drawn[f"graph-node-{name}"]      # name, kind and tile, firings: a text a line
        expected = "host" if node.is_host else f"{counted.get(tiles[name], 0)} firings"
        assert lines[0] == name and lines[-1] == expected
    arrows = sorted(name for name in drawn if name.startswith("stream-"))
    expected = sorted(f"stream-{k}-{j}" for k, edge in enumerate(program.graph.edges)
                      for j in range(len(edge.sinks)))
    assert arrows == expected


@pytest.mark.verilator
def test_the_page_puts_every_picture_beside_the_table(report):
    pictures, rtl, _ = report
    page = (pictures / "index.html").read_text()
    for name in ("grid", "routes", "link_beats", "firings", "stalls", "graph"):
        assert f'src="{name}.svg"' in page and f'href="{name}.png"' in page
        assert (pictures / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for tile in rtl["tiles"]:
        assert f"<td>{tile['tile']}</td>" in page
    placed = svg_texts(pictures / "grid.svg")
    nodes = {texts[0] for name, texts in placed.items() if name.startswith("node-")}
    assert nodes == {"x_mem", "w_mem", "dot"}


def test_report_without_matplotlib_names_the_pip_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["run", PROGRAM, "--report", str(tmp_path / "pictures")]) == 2
    assert "pip install 'rivulet-hw[plot]'" in capsys.readouterr().err
    assert not (tmp_path / "pictures").exists()

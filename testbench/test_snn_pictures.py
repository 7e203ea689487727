"""``rivulet run`` of an SNN program with ``--report``: the cluster-to-tile map shows every
cluster on the tile the run placed it on, with populations whose neurons add up to the
network's, and the SDF figure's predicted rate is the one a self-timed execution of the drawn
graph reaches (a second, independent way to compute it: snn.sdf)."""

import json
import re

import pytest

from rivulet.cli import main
from snn.sdf import SdfGraph, throughput_selftimed
from testbench.svg_texts import svg_texts

PROGRAM = "examples/snn_small.py"
pytest.importorskip("matplotlib")




@pytest.fixture(scope="module")
def pictures(tmp_path_factory):
    directory = tmp_path_factory.mktemp("snn") / "pictures"
    assert main(["run", PROGRAM, "--report", str(directory)]) == 0
    return directory


def test_each_cluster_is_drawn_on_its_tile_with_its_population(pictures):
    tiles = json.loads((pictures / "run.json").read_text())["tiles"]
    placed = {tuple(tile["tile"]): tile["node"] for tile in tiles if tile["node"] != "-"}
    drawn = {name: texts for name, texts in svg_texts(pictures / "clusters.svg").items()
             if name.startswith("cluster-")}
    assert {name: texts[0] for name, texts in drawn.items()} == \
        {f"cluster-{row}-{col}": node for (row, col), node in placed.items()}
    neurons = {}
    for texts in drawn.values():
        population, count = texts[1].split(": ")
        neurons[population] = neurons.get(population, 0) + int(count)
    assert neurons == {"layer1": 16, "layer2": 8}          # examples/snn_small.py: 8 -> 16 -> 8
    assert 'src="clusters.svg"' in (pictures / "index.html").read_text()


def test_the_predicted_rate_is_the_drawn_graphs_self_timed_rate(pictures):
    drawn = svg_texts(pictures / "sdf.svg")
    graph = SdfGraph()
    for name, texts in drawn.items():
        if name.startswith("sdf-actor-"):
            graph.add_actor(name.removeprefix("sdf-actor-"), int(texts[1].split()[0]))
    for actor in list(graph.times):
        graph.add_edge(actor, actor, tokens=1)
    svg = (pictures / "sdf.svg").read_text()
    streams = re.findall(r'id="sdf-edge-([a-z0-9_]+)-([a-z0-9_]+)"', svg)
    assert len(streams) == 4                # two spike streams into layer2_c0, each with its buffer edge
    for source, sink in streams:
        reverse = (sink, source) in streams and streams.index((sink, source)) < streams.index((source, sink))
        graph.add_edge(source, sink, tokens=1 if reverse else 0)    # a buffer's edge holds its timestep
    title = " ".join(text for texts in drawn.values() for text in texts if text and "predicted" in text)
    predicted = float(re.search(r"([\d.]+) cycles per timestep predicted", title)[1])
    assert predicted == pytest.approx(float(1 / throughput_selftimed(graph)))

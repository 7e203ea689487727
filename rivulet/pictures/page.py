"""``DIR/index.html``: a run's figures with its table (tile, node, kind, firings, stalls, link
beats), and ``DIR/run.json``, the same table as data. One page per report, no scripts."""

import html
import json
from pathlib import Path

from rivulet.files import write_atomically

from .draw import draw_run, route_label

__all__ = ["write_run_report"]

_CAPTIONS = {"grid": "Tiles and placed nodes", "routes": "Routes of the streams",
             "link_beats": "Link beats", "firings": "Firings per tile", "stalls": "Stall cycles per tile",
             "graph": "The stream graph, with firings per node",
             "clusters": "Clusters of the network on the crossbar tiles",
             "sdf": "The clusters' SDF graph and its predicted throughput"}


def _table_rows(compiled, result) -> list[dict]:
    graph = compiled.program.graph
    names = {tile: name for name, tile in compiled.routing.placement.tiles.items()
             if not graph.nodes[name].is_host}
    stalls = getattr(result, "stalls", None)
    return [{"tile": list(tile), "node": names.get(tile, "-"), "kind": compiled.spec.kind(tile),
             "firings": result.firings.get(tile, 0),
             "stalls": None if stalls is None else stalls.get(tile, 0),
             "link_beats": list(result.link_beats.get(tile, []))}
            for tile in compiled.spec.all_tiles()]


def write_run_report(directory, compiled, results: dict, extra=None) -> Path:
    """Draw the run in ``results`` (the RTL's when there is one: it has stalls and cycles, else
    the golden model's) into ``directory``, with the front-end's own figures from ``extra``
    (:attr:`rivulet.frontends.protocol.Case.pictures`); the page's path."""
    where = "rtl" if "rtl" in results else "model"
    result = results[where]
    directory = Path(directory)
    shown = "RTL" if where == "rtl" else "golden model"
    figures = draw_run(compiled, result, directory, shown)
    if extra is not None:
        figures.update(extra(compiled, result, directory, shown))
    rows = _table_rows(compiled, result)
    routes = [{"stream": k, "label": route_label(route.edge), "tokens": route.edge.tokens,
               "links": [[list(tile), side] for tile, side in route.links]}
              for k, route in enumerate(compiled.routing.routes)]
    cycles = getattr(result, "cycles", None)
    write_atomically(directory / "run.json", json.dumps(
        {"program": compiled.program.name, "where": where, "cycles": cycles, "tiles": rows, "routes": routes},
        indent=2) + "\n")
    sections = "\n".join(
        f'<figure><img src="{paths[1].name}" alt="{_CAPTIONS[name]}"><figcaption>{_CAPTIONS[name]} '
        f'(<a href="{paths[0].name}">PNG</a>)</figcaption></figure>' for name, paths in figures.items())
    table = "\n".join(
        "<tr>" + "".join(f"<td>{html.escape(str(value))}</td>" for value in (
            row["tile"], row["node"], row["kind"], row["firings"],
            "-" if row["stalls"] is None else row["stalls"],
            " ".join(map(str, row["link_beats"])))) + "</tr>" for row in rows)
    program = html.escape(compiled.program.name)
    description = html.escape(getattr(compiled.program, "description", "") or "")
    spec = compiled.spec
    summary = (f"{spec.rows}x{spec.cols} fabric, {len(routes)} streams, run on the "
               f"{'RTL' if where == 'rtl' else 'golden model'}"
               + (f", {cycles} cycles" if cycles is not None else ""))
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{program}: run report</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:75em}}
figure{{display:inline-block;margin:0 1em 1em 0;vertical-align:top}} img{{max-width:36em}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:0.2em 0.6em;text-align:right}}
</style></head>
<body><h1>{program}</h1><p>{description}</p><p>{html.escape(summary)}</p>
{sections}
<h2>Tiles</h2>
<table><tr><th>tile</th><th>node</th><th>kind</th><th>firings</th><th>stalls</th>
<th>link beats (outputs N E S W, FU inputs)</th></tr>
{table}
</table></body></html>
"""
    write_atomically(directory / "index.html", page)
    return directory / "index.html"

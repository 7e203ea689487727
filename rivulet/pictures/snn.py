"""The figures only an SNN run has: which cluster of which population each crossbar tile holds,
and the clusters' SDF graph with the throughput it predicts beside the one the run measured.

Drawn from the lowering (:class:`snn.lower.SnnLowering`) the front-end made, so the numbers are
those the mapping used: neurons per cluster, mean input events per timestep, each actor's cycles
(``snn.cost``) and the MCM throughput (:mod:`snn.throughput`). SVG ids: ``cluster-R-C`` for a
tile's cluster, ``sdf-actor-NAME``, ``sdf-edge-SRC-DST``.
"""

from pathlib import Path

from .draw import _KIND_COLOURS, _arrow, _grid_axes, _pyplot, _save, _tiles, _xy

__all__ = ["draw_snn", "SDF_BUFFER"]

SDF_BUFFER = 1      # timesteps a receiving tile is taken to hold (bench/snn.py compares 1 and 2)


def _clusters_figure(pyplot, lowering, compiled, directory):
    spec, tiles = compiled.spec, compiled.routing.placement.tiles
    figure, axes = _grid_axes(pyplot, spec, "clusters on crossbar tiles (population: neurons)")
    _tiles(axes, spec, {}, pyplot)
    populations = sorted({c.population for c in lowering.clusters})
    colours = {p: _KIND_COLOURS[(k + 2) % len(_KIND_COLOURS)] for k, p in enumerate(populations)}
    for c in lowering.clusters:
        x, y = _xy(tiles[c.name])
        axes.add_patch(pyplot.Rectangle((x - 0.36, y - 0.3), 0.72, 0.46, facecolor=colours[c.population],
                                        edgecolor="#333333", zorder=2))
        axes.text(x, y - 0.07, f"{c.name}\n{c.population}: {len(c.gids)}", ha="center", va="center",
                  fontsize=7, zorder=4, gid=f"cluster-{tiles[c.name][0]}-{tiles[c.name][1]}")
    return _save(figure, pyplot, directory, "clusters")


def _sdf_figure(pyplot, lowering, compiled, result, directory, where: str):
    from snn.throughput import cluster_throughput

    predicted = cluster_throughput(lowering, compiled.spec, SDF_BUFFER)
    tiles = compiled.routing.placement.tiles
    position = {c.name: (_xy(tiles[c.name])[0] * 2.0, _xy(tiles[c.name])[1] * 1.4) for c in lowering.clusters}
    xs = [x for x, _ in position.values()]
    ys = [y for _, y in position.values()]
    figure, axes = pyplot.subplots(figsize=(max(xs) - min(xs) + 4.0, max(ys) - min(ys) + 3.0),
                                   layout="constrained")
    axes.set_axis_off()
    steps = len(lowering.inputs)
    measured = getattr(result, "cycles", None)
    title = (f"cluster SDF graph: {predicted.cycles_per_timestep:.1f} cycles per timestep predicted "
             f"(1 / MCM, {SDF_BUFFER}-timestep buffers)")
    if measured is not None:
        title += (f"\n{measured / steps:.1f} measured ({where}: {measured} cycles for {steps} timesteps, "
                  "image load included)")
    axes.set_title(title, fontsize=9)
    pairs = {}
    for edge in predicted.graph.edges:
        if edge.src == edge.dst:
            continue
        start, end = position[edge.src], position[edge.dst]
        back = pairs.setdefault(frozenset((edge.src, edge.dst)), edge.src) != edge.src
        arrow = _arrow(axes, start, end, "#999999" if back else "#333333", 1.0 if back else 1.4,
                       shrinkA=30, shrinkB=30, linestyle="--" if back else "-",
                       connectionstyle="arc3,rad=0.25")
        arrow.set_gid(f"sdf-edge-{edge.src}-{edge.dst}")
        middle = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        if edge.tokens:
            axes.text(middle[0], middle[1] + (0.25 if back else -0.25), "•" * edge.tokens, ha="center",
                      fontsize=9, color="#999999" if back else "#333333")
    for c in lowering.clusters:
        x, y = position[c.name]
        axes.text(x, y, f"{c.name}\n{predicted.actor_cycles[c.name]} cycles\n"
                  f"{predicted.events[c.name]} events/step", ha="center", va="center", fontsize=7, zorder=3,
                  gid=f"sdf-actor-{c.name}",
                  bbox={"boxstyle": "round,pad=0.4", "facecolor": "#fff4e0", "edgecolor": "#555555"})
    axes.set_xlim(min(xs) - 1.8, max(xs) + 1.8)
    axes.set_ylim(min(ys) - 1.2, max(ys) + 1.2)
    axes.text(min(xs) - 1.7, min(ys) - 1.1, "solid: spikes (dots: initial tokens, a delay); dashed: a "
              "receiver's buffer; every actor has a 1-token self-loop", fontsize=6, color="#555555")
    return _save(figure, pyplot, directory, "sdf")


def draw_snn(lowering, compiled, result, directory: Path, where: str) -> dict[str, list[Path]]:
    """The SNN figures of a run of ``compiled`` (lowered as ``lowering``): name -> PNG and SVG."""
    pyplot = _pyplot()
    directory = Path(directory)
    return {"clusters": _clusters_figure(pyplot, lowering, compiled, directory),
            "sdf": _sdf_figure(pyplot, lowering, compiled, result, directory, where)}

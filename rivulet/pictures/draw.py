"""The figures of one run on the fabric: the grid with its tiles and placed nodes, every stream's
route, link beats, per-tile firings and stalls as heat maps, and the stream graph with firings
per node (matplotlib, the ``plot`` extra).

Each figure is written as PNG and SVG. The SVG keeps its text as text and names what it draws
(``route-K-J`` for arrow J of stream K's route, ``firings-R-C`` for a heat-map cell,
``graph-node-NAME``, ``stream-K-J`` for stream K's arrow to sink J, ...), so a reader, or a
test, can find in it exactly what was drawn.
"""

from pathlib import Path

__all__ = ["draw_run", "DIRECTIONS"]

DIRECTIONS = ("N", "E", "S", "W")
_STEP = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}      # side index -> (drow, dcol)
_KIND_COLOURS = ("#dbe9f6", "#fde2c8", "#d9f0d3", "#eadcf2", "#f6f1c7", "#f4d4d8")


def _pyplot():
    from rivulet.extras import require_extra
    matplotlib = require_extra("matplotlib", "plot", "rivulet run --report")
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"         # text stays text in the SVG
    matplotlib.rcParams["svg.hashsalt"] = "rivulet"      # the same ids on every run
    import matplotlib.pyplot as pyplot
    return pyplot


def _xy(tile):
    """Plot coordinates of a tile's centre: column to the right, row 0 at the top."""
    row, col = tile
    return col, -row


def _grid_axes(pyplot, spec, title: str):
    figure, axes = pyplot.subplots(figsize=(1.6 * spec.cols + 2.4, 1.6 * spec.rows + 1.2),
                                   layout="constrained")
    axes.set_xlim(-0.9, spec.cols - 0.1)
    axes.set_ylim(-spec.rows + 0.1, 0.9)
    axes.set_aspect("equal")
    axes.set_xticks(range(spec.cols), [f"col {c}" for c in range(spec.cols)], fontsize=7)
    axes.set_yticks([-r for r in range(spec.rows)], [f"row {r}" for r in range(spec.rows)], fontsize=7)
    axes.set_title(title, fontsize=10)
    for side in axes.spines.values():
        side.set_visible(False)
    return figure, axes


def _tiles(axes, spec, placed: dict, pyplot):
    kinds = sorted({spec.kind(tile) for tile in spec.all_tiles()})
    colours = {kind: _KIND_COLOURS[k % len(_KIND_COLOURS)] for k, kind in enumerate(kinds)}
    for tile in spec.all_tiles():
        x, y = _xy(tile)
        failed = tile in spec.failed_tiles
        axes.add_patch(pyplot.Rectangle((x - 0.4, y - 0.4), 0.8, 0.8, gid=f"tile-{tile[0]}-{tile[1]}",
                                        facecolor="#cccccc" if failed else colours[spec.kind(tile)],
                                        edgecolor="#555555", hatch="xx" if failed else None, zorder=1))
        axes.text(x, y + 0.27, spec.kind(tile) + (" (failed)" if failed else ""), ha="center", va="center",
                  fontsize=7, color="#333333", zorder=4)
        if tile in placed:
            axes.text(x, y - 0.05, placed[tile], ha="center", va="center", fontsize=7, weight="bold",
                      zorder=4, gid=f"node-{tile[0]}-{tile[1]}")
    for port in spec.host_ports:
        x, y = _xy(port.tile)
        dx, dy = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}[port.side]
        axes.annotate(port.name, (x + 0.4 * dx, y + 0.4 * dy), (x + 0.72 * dx, y + 0.72 * dy), fontsize=6,
                      ha="center", va="center", color="#444444",
                      arrowprops={"arrowstyle": "<|-" if port.direction == "out" else "-|>",
                                  "color": "#888888"})


def _link_segment(tile, side: int, lane: float):
    """Start and end of the directed link from ``tile`` across ``side``, shifted sideways by
    ``lane`` so that the two directions of a link do not overlap."""
    x, y = _xy(tile)
    drow, dcol = _STEP[side]
    dx, dy = dcol, -drow
    shift_x, shift_y = -dy * lane, dx * lane
    start = (x + 0.2 * dx + shift_x, y + 0.2 * dy + shift_y)
    end = (x + 0.8 * dx + shift_x, y + 0.8 * dy + shift_y)
    return start, end


def _arrow(axes, start, end, colour, width: float, **options):
    from matplotlib.patches import FancyArrowPatch
    options = {"zorder": 3, **options}
    return axes.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color=colour,
                                          linewidth=width, **options))


def _placed_names(compiled) -> dict:
    graph = compiled.program.graph
    return {tile: name for name, tile in compiled.routing.placement.tiles.items()
            if not graph.nodes[name].is_host}


def _save(figure, pyplot, directory: Path, name: str) -> list[Path]:
    paths = []
    for suffix in ("png", "svg"):
        path = directory / f"{name}.{suffix}"
        figure.savefig(path, dpi=110, bbox_inches="tight",
                       metadata={"Date": None} if suffix == "svg" else None)
        paths.append(path)
    pyplot.close(figure)
    return paths


def _grid_figure(pyplot, compiled, directory):
    figure, axes = _grid_axes(pyplot, compiled.spec, "tiles (kind) and the placed nodes")
    _tiles(axes, compiled.spec, _placed_names(compiled), pyplot)
    return _save(figure, pyplot, directory, "grid")


def route_label(edge) -> str:
    return f"{edge.source[0]} -> " + ", ".join(name for name, _ in edge.sinks)


def _routes_figure(pyplot, compiled, directory):
    spec = compiled.spec
    figure, axes = _grid_axes(pyplot, spec, "every stream's route (arrows: direction)")
    _tiles(axes, spec, _placed_names(compiled), pyplot)
    colours = pyplot.get_cmap("tab10")
    for k, route in enumerate(compiled.routing.routes):
        colour = colours(k % 10)
        group = []
        for hop in route.hops:
            segments = [_link_segment(hop.tile, side, 0.08) for side in hop.outputs if side < 4]
            if hop is route.hops[0] and hop.input < 4:      # from a host port: into the tile
                end, start = _link_segment(hop.tile, hop.input, 0.08)
                segments.append((start, end))
            group += [_arrow(axes, start, end, colour, 1.8) for start, end in segments]
            if not segments and hop is route.hops[0]:       # a stream within one tile: a dot
                group.append(axes.scatter(*_xy(hop.tile), color=colour, s=25, zorder=3))
        for j, artist in enumerate(group):
            artist.set_gid(f"route-{k}-{j}")
        axes.plot([], [], color=colour, label=f"{k}: {route_label(route.edge)}")
    axes.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return _save(figure, pyplot, directory, "routes")


def _links_figure(pyplot, compiled, link_beats: dict, directory):
    spec = compiled.spec
    figure, axes = _grid_axes(pyplot, spec, "link beats (tokens over each directed link)")
    _tiles(axes, spec, _placed_names(compiled), pyplot)
    largest = max([max(beats[:4], default=0) for beats in link_beats.values()] + [1])
    colour_map = pyplot.get_cmap("viridis")
    for tile, beats in sorted(link_beats.items()):
        for side, count in enumerate(beats[:4]):
            if not count:
                continue
            start, end = _link_segment(tile, side, 0.12)
            _arrow(axes, start, end, colour_map(count / largest), 2.5)
            middle = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
            axes.text(*middle, str(count), fontsize=6, ha="center", va="center", zorder=5,
                      bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "alpha": 0.8, "linewidth": 0},
                      gid=f"link-{tile[0]}-{tile[1]}-{DIRECTIONS[side]}")
    mappable = pyplot.cm.ScalarMappable(pyplot.Normalize(0, largest), colour_map)
    figure.colorbar(mappable, ax=axes, shrink=0.7, label="beats")
    return _save(figure, pyplot, directory, "link_beats")


def _heat_figure(pyplot, spec, values: dict, name: str, title: str, directory):
    """A tile heat map of ``values`` (tile -> count), each cell labelled with its count."""
    import numpy as np
    grid = np.zeros((spec.rows, spec.cols))
    for (row, col), value in values.items():
        grid[row, col] = value
    figure, axes = pyplot.subplots(figsize=(1.3 * spec.cols + 1.8, 1.3 * spec.rows + 1.0),
                                   layout="constrained")
    image = axes.imshow(grid, cmap="magma_r" if name == "stalls" else "viridis", vmin=0)
    axes.set_xticks(range(spec.cols), [f"col {c}" for c in range(spec.cols)], fontsize=7)
    axes.set_yticks(range(spec.rows), [f"row {r}" for r in range(spec.rows)], fontsize=7)
    axes.set_title(title, fontsize=10)
    threshold = grid.max() / 2 if grid.max() else 1
    dark_when_high = name == "stalls"       # magma_r darkens as counts grow, viridis lightens
    for row in range(spec.rows):
        for col in range(spec.cols):
            value = int(grid[row, col])
            axes.text(col, row, f"{spec.kind((row, col))}\n{value}", ha="center", va="center", fontsize=7,
                      color="white" if (value > threshold) == dark_when_high else "black",
                      gid=f"{name}-{row}-{col}")
    figure.colorbar(image, ax=axes, shrink=0.8)
    return _save(figure, pyplot, directory, name)


def graph_layers(graph) -> dict[str, int]:
    """Each node's layer: its longest distance from a node no stream enters (streams that close
    a cycle, as a Ripple carry's do, are ignored for the layering)."""
    sources = {name: set() for name in graph.nodes}
    for edge in graph.edges:
        for sink, _ in edge.sinks:
            if sink != edge.source[0]:
                sources[sink].add(edge.source[0])
    layers, visiting = {}, set()

    def layer(name):
        if name not in layers:
            visiting.add(name)
            layers[name] = 1 + max((layer(source) for source in sources[name]
                                    if source not in visiting), default=-1)
            visiting.discard(name)
        return layers[name]

    for name in graph.nodes:
        layer(name)
    return layers


def _graph_figure(pyplot, compiled, firings: dict, directory, where: str):
    """The program's stream graph: a box per node (its kind, tile and firings), an arrow per
    stream and sink labelled with its tokens; the Ripple operators', SNN clusters' or path
    program's graph alike, since every front-end lowers to one."""
    graph, tiles = compiled.program.graph, compiled.routing.placement.tiles
    layers = graph_layers(graph)
    columns: dict[int, list[str]] = {}
    for name in graph.nodes:
        columns.setdefault(layers[name], []).append(name)
    position = {name: (layer * 2.2, -row * 1.1) for layer, names in columns.items()
                for row, name in enumerate(names)}
    height = max(len(names) for names in columns.values())
    figure, axes = pyplot.subplots(figsize=(2.2 * len(columns) + 1.5, 1.0 * height + 1.4),
                                   layout="constrained")
    axes.set_axis_off()
    axes.set_title(f"stream graph, firings per node ({where})", fontsize=10)
    pairs: dict[tuple, int] = {}
    for k, edge in enumerate(graph.edges):
        for j, (sink, _) in enumerate(edge.sinks):
            start, end = position[edge.source[0]], position[sink]
            backwards = sink == edge.source[0] or layers[sink] <= layers[edge.source[0]]
            earlier = pairs[edge.source[0], sink] = pairs.get((edge.source[0], sink), -1) + 1
            bend = 0.3 * backwards + 0.25 * earlier         # streams between the same two nodes part
            arrow = _arrow(axes, start, end, "#555555", 1.2, shrinkA=28, shrinkB=28, zorder=1,
                           connectionstyle=f"arc3,rad={bend}")
            arrow.set_gid(f"stream-{k}-{j}")
            middle = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.12 - 0.3 * bend)
            axes.text(*middle, str(edge.tokens), fontsize=6, ha="center", color="#555555", zorder=2)
    for name, node in graph.nodes.items():
        x, y = position[name]
        tile = tiles.get(name)
        count = "host" if node.is_host else f"{firings.get(tile, 0)} firings"
        axes.text(x, y, f"{name}\n{node.kind} {list(tile) if tile else ''}\n{count}", ha="center",
                  va="center", fontsize=7, zorder=3, gid=f"graph-node-{name}",
                  bbox={"boxstyle": "round,pad=0.4", "facecolor": "#eef3f8" if node.is_host else "#fff4e0",
                        "edgecolor": "#555555"})
    axes.set_xlim(-1.2, 2.2 * (len(columns) - 1) + 1.2)
    axes.set_ylim(-1.1 * (height - 1) - 0.8, 0.8)
    return _save(figure, pyplot, directory, "graph")


def draw_run(compiled, result, directory: Path, where: str) -> dict[str, list[Path]]:
    """Every figure of ``result`` (a model or RTL run of ``compiled``) into ``directory``:
    figure name -> its PNG and SVG."""
    pyplot = _pyplot()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    spec = compiled.spec
    figures = {"grid": _grid_figure(pyplot, compiled, directory),
               "routes": _routes_figure(pyplot, compiled, directory),
               "link_beats": _links_figure(pyplot, compiled, result.link_beats, directory),
               "firings": _heat_figure(pyplot, spec, result.firings, "firings",
                                       f"FU firings per tile ({where})", directory)}
    figures["graph"] = _graph_figure(pyplot, compiled, result.firings, directory, where)
    stalls = getattr(result, "stalls", None)
    if stalls is not None:
        figures["stalls"] = _heat_figure(pyplot, spec, stalls, "stalls", f"stall cycles per tile ({where})",
                                         directory)
    return figures

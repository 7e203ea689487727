"""The sweep's Pareto plots (matplotlib, the ``plot`` extra): each series a program, its Pareto
front joined by a line and its best points ringed. PNG for the README, SVG for papers."""

from pathlib import Path

from .pareto import pareto_front

__all__ = ["plotting_available", "draw_pareto_plots"]


def plotting_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    from rivulet.extras import require_extra
    matplotlib = require_extra("matplotlib", "plot", "drawing plots")
    matplotlib.use("Agg")       # files only: no display needed
    import matplotlib.pyplot as pyplot
    return pyplot


def draw_pareto_plots(sets: dict, directory: Path) -> list[Path]:
    """One PNG and one SVG per plot of :func:`.results.pareto_sets`, into ``directory``."""
    pyplot = _pyplot()
    written = []
    for name, (x_label, y_label, senses, series) in sets.items():
        figure, axes = pyplot.subplots(figsize=(7.5, 4.2), layout="constrained")
        for program, points in sorted(series.items()):
            xs, ys = [x for x, _, _ in points], [y for _, y, _ in points]
            scatter = axes.scatter(xs, ys, label=program if program != "-" else "fabric", alpha=0.7)
            front = sorted(pareto_front(list(zip(xs, ys, strict=True)), senses), key=lambda k: xs[k])
            colour = scatter.get_facecolor()[0]
            axes.plot([xs[k] for k in front], [ys[k] for k in front], color=colour, linewidth=1)
            axes.scatter([xs[k] for k in front], [ys[k] for k in front], s=140, facecolors="none",
                         edgecolors=[colour], linewidths=1.5)
        axes.set_xlabel(x_label)
        axes.set_ylabel(y_label)
        axes.set_title(f"{y_label} against {x_label} (ringed: Pareto-best)", fontsize=10)
        axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
        axes.grid(alpha=0.3)
        for suffix in ("png", "svg"):
            path = Path(directory) / f"pareto_{name}.{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            figure.savefig(path, dpi=110, metadata={"Date": None} if suffix == "svg" else None)
            written.append(path)
        pyplot.close(figure)
    return written

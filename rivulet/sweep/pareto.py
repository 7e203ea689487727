"""Pareto fronts: the points of a sweep that no other point beats on both of a plot's axes."""

__all__ = ["pareto_front"]


def pareto_front(points: list[tuple[float, float]], senses: tuple[str, str]) -> list[int]:
    """Indices of the points no other point beats on both axes (``senses``: "min" or "max" per
    axis); of equal points the first."""
    def better_or_equal(a, b):
        return all((x <= y) if sense == "min" else (x >= y) for x, y, sense in zip(a, b, senses, strict=True))

    front = []
    for i, point in enumerate(points):
        dominated = any(better_or_equal(other, point) and (other != point or j < i)
                        for j, other in enumerate(points) if j != i)
        if not dominated:
            front.append(i)
    return front

"""The check every RTL-against-model test makes after its outputs: each tile's counters agree."""

__all__ = ["assert_counters_agree"]


def assert_counters_agree(rtl, model, what: str, *, link_beats: bool = True):
    """Every tile's firings (and, unless ``link_beats`` is False, its links' beats) on the RTL equal
    the golden model's; ``what`` names the run in the message."""
    for tile, firings in rtl.firings.items():
        assert firings == model.firings[tile], f"{what}: firings of tile {tile}"
        if link_beats:
            assert rtl.link_beats[tile] == model.link_beats[tile], f"{what}: link beats of tile {tile}"

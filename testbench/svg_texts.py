"""Reading the run pictures back: the texts inside every SVG group that has an id."""

import xml.etree.ElementTree as ElementTree

SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(svg_path) -> dict[str, list[str]]:
    """id of every group in the SVG -> the texts inside it."""
    tree = ElementTree.parse(svg_path)
    return {group.get("id"): [text.text for text in group.iter(f"{SVG}text")]
            for group in tree.iter(f"{SVG}g") if group.get("id")}

"""Repairs to what QSvgGenerator writes, so that browsers, librsvg and CairoSVG all draw an
exported SVG like the PNG: real font families with fallbacks, and cosmetic strokes under a
scaling transform baked into their coordinates (see :func:`clean_svg`)."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from PySide6.QtGui import QFont, QFontInfo

__all__ = ["FONT_FALLBACKS", "clean_svg"]

# Fallbacks after the family Qt actually used, so any SVG reader finds a similar face.
FONT_FALLBACKS = ("DejaVu Sans", "Arial", "Helvetica")

_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PATH_TOKEN = re.compile(rf"[A-Za-z]|{_NUMBER}")
_BAKEABLE_PATH = set("MLCQSTZ")  # absolute commands whose arguments are all points


def _matrix(text: str | None) -> tuple[float, ...] | None:
    if not text:
        return None
    m = re.fullmatch(r"\s*matrix\(([^)]*)\)\s*", text)
    if not m:
        return None
    values = tuple(float(v) for v in re.findall(_NUMBER, m.group(1)))
    return values if len(values) == 6 else None


def _num(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".") or "0"


def _point(m: tuple[float, ...], x: float, y: float) -> str:
    a, b, c, d, e, f = m
    return f"{_num(a * x + c * y + e)},{_num(b * x + d * y + f)}"


def _bake_path(d: str, m: tuple[float, ...]) -> str | None:
    tokens = _PATH_TOKEN.findall(d)
    out: list[str] = []
    nums: list[float] = []

    def flush() -> bool:
        if len(nums) % 2:
            return False
        out.extend(_point(m, nums[i], nums[i + 1]) for i in range(0, len(nums), 2))
        nums.clear()
        return True

    for tok in tokens:
        if tok.isalpha():
            if tok not in _BAKEABLE_PATH or not flush():
                return None
            out.append(tok)
        else:
            nums.append(float(tok))
    if not flush():
        return None
    return " ".join(out)


def _bake_points(points: str, m: tuple[float, ...]) -> str | None:
    nums = [float(v) for v in re.findall(_NUMBER, points)]
    if len(nums) % 2:
        return None
    return " ".join(_point(m, nums[i], nums[i + 1]) for i in range(0, len(nums), 2))


def _bake_group(group: ET.Element, m: tuple[float, ...]) -> bool:
    """Move ``m`` into the coordinates of the group's shapes; False if a shape can't be."""
    baked: list[tuple[ET.Element, str, str, str]] = []  # element, new tag, attribute, value
    for child in group:
        tag = child.tag.removeprefix(f"{{{_SVG_NS}}}")
        if tag == "path":
            value = _bake_path(child.get("d", ""), m)
            baked.append((child, "path", "d", value or ""))
        elif tag in ("polyline", "polygon"):
            value = _bake_points(child.get("points", ""), m)
            baked.append((child, tag, "points", value or ""))
        elif tag == "rect":
            x, y = float(child.get("x", 0)), float(child.get("y", 0))
            w, h = float(child.get("width", 0)), float(child.get("height", 0))
            value = _bake_path(f"M{x},{y} L{x + w},{y} L{x + w},{y + h} L{x},{y + h} Z", m)
            baked.append((child, "path", "d", value or ""))
        else:
            return False
        if not baked[-1][3]:
            return False
    for child, tag, attr, value in baked:
        for name in ("x", "y", "width", "height"):
            if tag != "rect":
                child.attrib.pop(name, None)
        child.tag = f"{{{_SVG_NS}}}{tag}"
        child.set(attr, value)
        child.attrib.pop("vector-effect", None)
    group.set("transform", "matrix(1,0,0,1,0,0)")
    return True


def _font_families(root: ET.Element) -> dict[str, str]:
    out = {}
    for el in root.iter():
        name = el.get("font-family")
        if name is None or name in out:
            continue
        info = QFontInfo(QFont(name))
        generic = "monospace" if info.fixedPitch() else "sans-serif"
        names = [info.family(), *([] if generic == "monospace" else FONT_FALLBACKS)]
        unique = list(dict.fromkeys(n for n in names if n))
        out[name] = ", ".join([*(f"'{n}'" if " " in n else n for n in unique), generic])
    return out


def clean_svg(path: str | Path) -> None:
    """Repair what QSvgGenerator writes so that every SVG reader draws what the screen shows.

    - ``font-family`` becomes the face Qt really used plus fallbacks and a CSS generic family
      (Qt writes its own alias, e.g. "Sans Serif", which no SVG reader knows).
    - Cosmetic (``vector-effect="non-scaling-stroke"``) strokes under a scaling transform, as
      pyqtgraph draws plot curves in data units, get the transform baked into their
      coordinates: librsvg and CairoSVG ignore ``vector-effect`` and would widen a 1 px line
      by the data-to-pixel scale (huge blobs).
    """
    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", _XLINK_NS)
    p = Path(path)
    tree = ET.parse(p)
    root = tree.getroot()
    families = _font_families(root)
    for el in root.iter():
        name = el.get("font-family")
        if name is not None:
            el.set("font-family", families[name])
    for group in root.iter(f"{{{_SVG_NS}}}g"):
        m = _matrix(group.get("transform"))
        if m is None or m[:4] == (1.0, 0.0, 0.0, 1.0):
            continue
        if not any(ch.get("vector-effect") == "non-scaling-stroke" for ch in group):
            continue
        uses_paint_server = "url(" in (group.get("fill", "") + group.get("stroke", ""))
        if not uses_paint_server and _bake_group(group, m):
            continue
        # Cannot bake (text, images, gradients): at least keep the stroke near its width.
        scale = math.sqrt(abs(m[0] * m[3] - m[1] * m[2])) or 1.0
        width = float(group.get("stroke-width", "1") or 1)
        group.set("stroke-width", _num(width / scale))
    tree.write(p, encoding="UTF-8", xml_declaration=True)

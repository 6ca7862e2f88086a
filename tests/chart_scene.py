"""A matplotlib Figure as what it shows, for tests that compare charts without comparing bytes.

`scene(fig)` reads a drawn figure into plain JSON data: for each axes its scales, limits, labels,
titles and major ticks; every line (its x and y data, colour, style, marker), every scatter (its
points, sizes, colours), every filled area and bar; every text (its string, where it stands,
colour, size, rotation) and every legend entry. `differences(got, want)` lists, one line each,
where two scenes disagree beyond a tolerance that fits what the number is:

- data (line and point coordinates, bars, limits, tick positions): relative, `DATA_REL`;
- where an axes sits in the figure, as a fraction of the figure, and where a text stands, as a
  fraction of its axes (texts placed in data coordinates are read through
  the axes' scale and limits, so a text is compared by where it is drawn, not by its number):
  absolute, `FRACTION` (a pixel or two);
- a text's offset from the point it labels, in points: absolute, `POINTS`;
- colours: each RGBA channel within `COLOR` of 255.

The comparison comes in two parts. What is drawn (`differences(..., part="content")`): the
strings, data, colours, styles, scales, limits and ticks, which matplotlib 3.10 and 3.11 draw alike.
Where it stands (`part="placement"`, the keys in PLACEMENT): worked out from the fonts' extents, so
another matplotlib release, its text engine or FreeType, may move a label or turn it, and its
placement is held to the scene only under the release that recorded it (`same_matplotlib`);
tests/test_chart_layout.py checks under any release that the labels stay clear of each other.
Pixels, rasterisation, antialiasing and the PNG encoder are left out altogether.
"""

from __future__ import annotations

import math
from pathlib import Path

DATA_REL = 1e-4
DATA_ABS = 1e-12
FRACTION = 2e-3
POINTS = 1.0
ANGLE = 0.5
COLOR = 1


# --- reading a figure -------------------------------------------------------------------------

def _num(v) -> float | None:
    """`v` as a float kept to 9 significant digits (JSON stays short, comparisons use tolerances);
    NaN and infinities as None."""
    v = float(v)
    return float(f"{v:.9g}") if math.isfinite(v) else None


def _nums(values) -> list:
    return [_num(v) for v in values]


def _color(c) -> str | None:
    from matplotlib.colors import to_hex

    if c is None or (isinstance(c, str) and c == "none"):
        return None
    return to_hex(c, keep_alpha=True)


def _colors(array) -> list:
    return [_color(c) for c in array]


def _coords(t, ax, fig) -> str:
    """The name of transform `t` among the usual ones of `ax` and `fig`, or 'display'."""
    named = {"figure": fig.transFigure}
    if ax is not None:
        named.update({"data": ax.transData, "axes": ax.transAxes,
                      "data,axes": ax.get_xaxis_transform(), "axes,data": ax.get_yaxis_transform()})
    for name, known in named.items():
        if t == known:
            return name
    return "display"


def _fraction(xy, coords: str, ax, fig) -> list:
    """Point `xy` given in `coords` as a fraction of `ax` (of the figure where `ax` is None): where
    it is drawn on the plot area, independent of the figure's pixels for data and axes coordinates."""
    import numpy as np

    x, y = float(xy[0]), float(xy[1])
    if ax is None or coords == "figure":
        if coords == "figure":
            return _nums((x, y))
        return _nums(fig.transFigure.inverted().transform((x, y)))
    if coords == "display":
        return _nums(ax.transAxes.inverted().transform((x, y)))
    to_fraction = ax.transScale + ax.transLimits  # data -> the axes' unit square, without the layout
    with np.errstate(all="ignore"):
        fx, fy = to_fraction.transform((x, y))
    return _nums((x if coords.startswith("axes") else fx, y if coords.endswith("axes") else fy))


def _annotation_coords(a, which: str, ax, fig) -> str:
    c = a.xycoords if which == "xy" else a.anncoords
    if isinstance(c, str):
        return {"axes fraction": "axes", "figure fraction": "figure"}.get(c, c)
    if isinstance(c, tuple):
        return ",".join(_annotation_coords_one(part, ax, fig) for part in c)
    return _annotation_coords_one(c, ax, fig)


def _annotation_coords_one(c, ax, fig) -> str:
    if isinstance(c, str):
        return {"axes fraction": "axes", "figure fraction": "figure"}.get(c, c)
    from matplotlib.transforms import Transform

    return _coords(c, ax, fig) if isinstance(c, Transform) else type(c).__name__


def _text_style(t) -> dict:
    return {"color": _color(t.get_color()), "size": _num(t.get_fontsize()), "rotation": _num(t.get_rotation() % 360),
            "ha": t.get_horizontalalignment(), "va": t.get_verticalalignment(), "weight": str(t.get_fontweight())}


def _text(t, ax, fig) -> dict | None:
    """A text or annotation: its string and style, and where it stands (`at`, as a fraction of its
    axes); an annotation also the point it labels (`xy`) and its offset in points, and whether an
    arrow leads to the point."""
    from matplotlib.text import Annotation

    if not t.get_visible() or not t.get_text().strip():
        return None
    out = {"text": t.get_text(), **_text_style(t)}
    if isinstance(t, Annotation):
        xy_in = _annotation_coords(t, "xy", ax, fig)
        text_in = _annotation_coords(t, "text", ax, fig)
        out["xy"] = _fraction(t.xy, xy_in, ax, fig) if xy_in in ("data", "axes", "data,axes", "axes,data", "figure") \
            else _nums(t.xy)
        out["xy in"] = xy_in
        if text_in in ("offset points", "offset pixels", "offset fontsize"):
            out["offset " + text_in.split()[1]] = _nums(t.xyann)
        elif text_in in ("data", "axes", "data,axes", "axes,data", "figure"):
            out["at"] = _fraction(t.xyann, text_in, ax, fig)
        else:
            out["text at"] = _nums(t.xyann)
            out["text in"] = text_in
        out["arrow"] = t.arrow_patch is not None and t.arrow_patch.get_visible()
    else:
        out["at"] = _fraction(t.get_position(), _coords(t.get_transform(), ax, fig), ax, fig)
    return out


def _ticks(axis, lo, hi) -> list:
    """The major ticks shown inside the axis' view: [position, label]."""
    lo, hi = min(lo, hi), max(lo, hi)
    span = hi - lo
    out = []
    for tick in axis.get_major_ticks():
        loc = tick.get_loc()
        if not tick.get_visible() or loc is None or not (lo - 1e-9 * span <= loc <= hi + 1e-9 * span):
            continue
        label = tick.label1.get_text() if tick.label1.get_visible() else tick.label2.get_text() \
            if tick.label2.get_visible() else ""
        out.append([_num(loc), label])
    return out


def _alpha(artist) -> float | None:
    return None if artist.get_alpha() is None else _num(artist.get_alpha())


def _line(line, ax, fig) -> dict:
    out = {"x": _nums(line.get_xdata(orig=False)), "y": _nums(line.get_ydata(orig=False)),
           "color": _color(line.get_color()), "linestyle": line.get_linestyle(),
           "linewidth": _num(line.get_linewidth()), "marker": str(line.get_marker()), "alpha": _alpha(line)}
    if str(line.get_marker()) not in ("None", "none", ""):
        out.update({"markersize": _num(line.get_markersize()), "markerfacecolor": _color(line.get_markerfacecolor()),
                    "markeredgecolor": _color(line.get_markeredgecolor())})
    coords = _coords(line.get_transform(), ax, fig)
    if coords != "data":
        out["in"] = coords
    if not line.get_label().startswith("_"):
        out["label"] = line.get_label()
    return out


def _kind(artist) -> str:
    """What sort of thing `artist` draws, in words that do not follow matplotlib's class names
    (3.10 made fill_between's PolyCollection a FillBetweenPolyCollection)."""
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Polygon, Rectangle

    for cls, name in ((PathCollection, "points"), (PolyCollection, "areas"), (LineCollection, "segments"),
                      (Rectangle, "rectangle"), (Polygon, "polygon"), (Line2D, "line")):
        if isinstance(artist, cls):
            return name
    return type(artist).__name__


def _collection(c, ax, fig) -> dict:
    from matplotlib.collections import PathCollection

    out = {"kind": _kind(c), "facecolors": _colors(c.get_facecolors()),
           "edgecolors": _colors(c.get_edgecolors()), "alpha": _alpha(c)}
    if isinstance(c, PathCollection):  # a scatter: its points in offsets, its markers' sizes
        out["offsets"] = [_nums(p) for p in c.get_offsets()]
        out["sizes"] = _nums(c.get_sizes())
        out["marker vertices"] = [len(p.vertices) for p in c.get_paths()]
    else:  # areas and line collections: their paths' vertices, in data coordinates
        out["paths"] = [[_nums(v) for v in p.vertices] for p in c.get_paths()]
    coords = _coords(c.get_offset_transform() if isinstance(c, PathCollection) else c.get_transform(), ax, fig)
    if coords != "data":
        out["in"] = coords
    if not c.get_label().startswith("_"):
        out["label"] = c.get_label()
    return out


def _patch(p, ax, fig) -> dict:
    from matplotlib.patches import Rectangle

    out = {"kind": _kind(p), "facecolor": _color(p.get_facecolor()), "edgecolor": _color(p.get_edgecolor()),
           "hatch": p.get_hatch()}
    if isinstance(p, Rectangle):
        out["bounds"] = _nums((*p.get_xy(), p.get_width(), p.get_height()))
    else:
        out["vertices"] = [_nums(v) for v in (p.get_path().vertices if p.get_transform() == ax.transData else [])]
    coords = _coords(p.get_transform() if not isinstance(p, Rectangle) else p.get_data_transform(), ax, fig)
    if coords != "data":
        out["in"] = coords
    if not p.get_label().startswith("_"):
        out["label"] = p.get_label()
    return out


def _legend(leg) -> dict:
    handles = getattr(leg, "legend_handles", None) or getattr(leg, "legendHandles", [])
    entries = []
    for text, handle in zip(leg.get_texts(), handles):
        entry = {"text": text.get_text(), "color": _color(text.get_color())}
        if handle is not None:
            entry["handle"] = _kind(handle)
            for name in ("color", "facecolor", "markerfacecolor", "edgecolor"):
                get = getattr(handle, f"get_{name}", None)
                if get is not None:
                    try:
                        value = get()
                    except (TypeError, ValueError):
                        continue
                    if hasattr(value, "shape") and len(getattr(value, "shape", ())) == 2:
                        value = value[0] if len(value) else None
                    entry[name] = _color(value) if value is not None else None
            marker = getattr(handle, "get_marker", None)
            if marker is not None:
                entry["marker"] = str(marker())
        entries.append(entry)
    title = leg.get_title().get_text()
    return {"title": title, "entries": entries, "visible": leg.get_visible()}


def _axes(ax, fig) -> dict:
    from matplotlib.collections import Collection
    from matplotlib.legend import Legend
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Text

    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    out = {"position": _nums(ax.get_position().bounds),
           "xscale": ax.get_xscale(), "yscale": ax.get_yscale(), "xlim": _nums(xlim), "ylim": _nums(ylim),
           "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
           "titles": [ax.get_title(loc) for loc in ("left", "center", "right")],
           "xticks": _ticks(ax.xaxis, *xlim) if ax.xaxis.get_visible() else [],
           "yticks": _ticks(ax.yaxis, *ylim) if ax.yaxis.get_visible() else [],
           "lines": [], "collections": [], "patches": [], "texts": [], "legends": []}
    for a in ax.get_children():
        if not a.get_visible() or a is ax.patch or a in ax.spines.values():
            continue
        if isinstance(a, Line2D):
            out["lines"].append(_line(a, ax, fig))
        elif isinstance(a, Collection):
            out["collections"].append(_collection(a, ax, fig))
        elif isinstance(a, Patch):
            out["patches"].append(_patch(a, ax, fig))
        elif isinstance(a, Legend):
            out["legends"].append(_legend(a))
        elif isinstance(a, Text) and a not in (ax.title, ax._left_title, ax._right_title):
            t = _text(a, ax, fig)
            if t is not None:
                out["texts"].append(t)
    return out


def scene(fig) -> dict:
    """What figure `fig` shows (drawn first, as savefig draws it, so that ticks and any placement
    done at drawing time are final), as JSON data."""
    fig.draw_without_rendering()
    texts = [t for t in (_text(t, None, fig) for t in fig.texts) if t is not None]
    for name in ("_suptitle", "_supxlabel", "_supylabel"):
        t = getattr(fig, name, None)
        if t is not None and t not in fig.texts:
            t = _text(t, None, fig)
            if t is not None:
                texts.append(t)
    return {"matplotlib": _matplotlib_release(), "size in": _nums(fig.get_size_inches()), "dpi": _num(fig.dpi),
            "texts": texts, "legends": [_legend(leg) for leg in fig.legends],
            "axes": [_axes(ax, fig) for ax in fig.axes]}


# --- comparing two scenes ---------------------------------------------------------------------

_FRACTIONS = {"at", "xy", "position"}  # fractions of an axes or of the figure
_POINTS = {"offset points", "offset pixels", "offset fontsize"}
_COLORS = {"color", "facecolor", "edgecolor", "markerfacecolor", "markeredgecolor", "facecolors", "edgecolors"}


def _rgba(hexa: str) -> tuple:
    return tuple(int(hexa[i:i + 2], 16) for i in range(1, 9, 2))


def _close(a, b, key: str) -> bool:
    if key in _COLORS:
        return a is None and b is None or a is not None and b is not None and \
            all(abs(p - q) <= COLOR for p, q in zip(_rgba(a), _rgba(b)))
    if a is None or b is None:
        return a is b
    if key in _FRACTIONS:
        return abs(a - b) <= FRACTION
    if key in _POINTS:
        return abs(a - b) <= POINTS
    if key == "rotation":
        return abs((a - b + 180) % 360 - 180) <= ANGLE
    return math.isclose(a, b, rel_tol=DATA_REL, abs_tol=DATA_ABS)


# Where things stand, as opposed to what is drawn: worked out from the fonts' extents (the axes'
# place beside an outside legend, a label's side of its point and its offset, a label's angle along
# a roof as the axes' pixel aspect sets it), so another matplotlib or FreeType may move them.
PLACEMENT = frozenset({"position", "at", "xy", "offset points", "offset pixels", "offset fontsize", "text at",
                       "rotation", "arrow"})
META = frozenset({"matplotlib"})  # about the recording, not the chart


def differences(got, want, part: str = "all", limit: int = 20) -> list[str]:
    """Where scene `got` differs from scene `want`, one line each (at most about `limit`): in
    `part` 'content' (what is drawn: strings, data, colours, styles, scales, limits, ticks),
    'placement' (where texts and axes stand: PLACEMENT) or 'all'."""
    assert part in ("all", "content", "placement")
    out: list[str] = []

    def wanted(name: str) -> bool:
        return name not in META and (part != "content" or name not in PLACEMENT)

    def walk(g, w, at, k, placed):
        if len(out) >= limit:
            return
        if isinstance(w, dict) and isinstance(g, dict):
            names = {n for n in set(g) | set(w) if wanted(n)}
            if names - set(g) or names - set(w):
                out.append(f"{at}: keys {sorted((names - set(g)) | (names - set(w)))} in one scene only")
            for name in sorted(names & set(g) & set(w), key=list(w).index):
                walk(g[name], w[name], f"{at}.{name}", name, placed or name in PLACEMENT)
        elif isinstance(w, list) and isinstance(g, list):
            if len(g) != len(w):
                out.append(f"{at}: {len(g)} items, expected {len(w)}" + _first_text(g, w))
                return
            for i, (a, b) in enumerate(zip(g, w)):
                walk(a, b, f"{at}[{i}]", k, placed)
        elif part == "placement" and not placed:
            return
        elif _number(w) or _number(g):
            if not ((_number(g) or g is None) and (_number(w) or w is None) and _close(g, w, k)):
                out.append(f"{at}: {g!r}, expected {w!r}")
        elif isinstance(w, str) and k in _COLORS and isinstance(g, str):
            if not _close(g, w, k):
                out.append(f"{at}: {g!r}, expected {w!r}")
        elif g != w:
            out.append(f"{at}: {g!r}, expected {w!r}")

    walk(got, want, "scene", "", False)
    return out


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same_matplotlib(recorded: dict) -> bool:
    """Whether the installed matplotlib is the release (major.minor) that recorded scene `recorded`."""
    return recorded.get("matplotlib") == _matplotlib_release()


def _matplotlib_release() -> str:
    import matplotlib

    return ".".join(matplotlib.__version__.split(".")[:2])


def _first_text(g: list, w: list) -> str:
    """For lists of texts: which strings one has and the other lacks."""
    if all(isinstance(x, dict) and "text" in x for x in g + w):
        a, b = {x["text"] for x in g}, {x["text"] for x in w}
        return f" (new {sorted(a - b)[:5]}, gone {sorted(b - a)[:5]})"
    return ""


def load(path: Path) -> dict:
    import json

    return json.loads(Path(path).read_text())


def _json(value, indent: int = 0) -> str:
    """`value` as indented JSON, each list of plain values (numbers, strings) on one line."""
    import json

    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_json(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + _json(v, indent + 1) for v in value) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def dump(data: dict, path: Path) -> None:
    """`data` as indented JSON whose lists of plain values stay on one line (short diffs)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(_json(data) + "\n")

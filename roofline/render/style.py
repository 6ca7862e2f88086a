"""The one chart vocabulary: the colour of each roof and the marker of each level, for the PNG,
SVG and PDF charts (matplotlib) and the HTML report (Plotly) alike, so that a roof or a level
looks the same on every chart.

Memory roofs take distinct hues (DRAM blue, L2 purple, shared memory / L1 green); compute roofs
take colours none of them uses, one per precision (FP32 red, BF16 tensor dark gold, ...).
Markers: a circle for the off-chip level (DRAM counted, or GMEM in a run's model, where the
model's GMEM stands for it), a square for L2, a triangle for shared memory and L1, a diamond
for DRAM beside a run's model GMEM (both on one chart).
"""

MEMORY_COLORS = {"DRAM": "#1f77b4", "L2": "#9467bd", "SMEM": "#2ca02c"}
COMPUTE_COLORS = {"FP32": "#d62728", "FP64": "#8c564b", "FP16": "#555555", "BF16 tensor": "#b8860b",
                  "FP16 tensor": "#d2691e", "TF32 tensor": "#e377c2", "FP8 tensor": "#bcbd22",
                  "INT8 tensor": "#7f7f7f", "FP64 tensor": "#a0522d"}
OTHER_COMPUTE = "#d62728"  # a roof this table does not name
USER_COLORS = ("#d6006f", "#7a3cff", "#00a087", "#ff7f0e")  # the user's kernels, apart from the ladder's technique hues
SEARCH_COLORS = {"fastest": "#1a9850", "slowest": "#d73027"}  # a tile search's fastest and slowest tiles
OTHER_TILE = "0.6"  # a tile search's other points: grey

# Markers per level, matplotlib and Plotly names: a run's levels, and a profile's.
RUN_MARKERS = {"GMEM (model)": ("o", "circle"), "L1 (model)": ("p", "pentagon"), "DRAM (model)": ("d", "diamond-tall"),
               "SMEM (model)": ("^", "triangle-up"), "L2 (counted)": ("s", "square"),
               "DRAM (counted)": ("D", "diamond")}
PROFILE_MARKERS = (("dram", "DRAM", "o", "circle"), ("l2", "L2", "s", "square"),
                   ("l1", "L1/shared", "^", "triangle-up"))


def compute_color(level: str) -> str:
    """The colour of compute roof `level` ('FP32', 'BF16 tensor', ...)."""
    return COMPUTE_COLORS.get(level, OTHER_COMPUTE)


def css_color(color) -> str:
    """A colour as matplotlib takes it (a name, '0.6' grey, an RGB(A) tuple of 0-1 floats) as
    Plotly and CSS take it: '#rrggbb', or 'rgba(r, g, b, a)' where it is not opaque."""
    from matplotlib.colors import to_hex, to_rgba

    r, g, b, a = to_rgba(color)
    if a >= 1:
        return to_hex((r, g, b))
    return f"rgba({round(255 * r)}, {round(255 * g)}, {round(255 * b)}, {a:g})"


def profile_colors(n: int) -> list:
    """The colours of a profile's `n` top kernels by rank (matplotlib's tab10, tab20 past 10)."""
    from matplotlib import colormaps

    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]


def profile_marker_area(share: float) -> float:
    """A profiled kernel's marker area on the chart (matplotlib's points squared) for its share
    of the GPU time: proportional, at least 25."""
    return max(25.0, 2400 * share)


def profile_marker_size(share: float) -> float:
    """The same marker in the HTML report (Plotly's size, pixels across): 6 + 40 * sqrt(share)."""
    return 6 + 40 * share ** 0.5

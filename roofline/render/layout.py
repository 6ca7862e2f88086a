"""Label placement, shared by every chart: where a label goes so that it covers no marker, crosses
no line and overlaps no other label, with a leader line back to its point when it had to move away;
and the geometry that decides it (rotated boxes, segments, markers).

Everything here works in display pixels of a drawn figure. A label's box is a rectangle, possibly
rotated (a roof's label runs along its line); a line is a list of segments; a marker is a centre
and a radius. A chart builds one `Layout` per axes after its figure's layout is final, then places
its labels with `Layout.place_annotations` (a kernel's label round its point) and
`Layout.place_on_line` (a roof's label along its line)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Box:
    """A rectangle in display pixels: centre, half width, half height, and its rotation (radians,
    counter-clockwise) about the centre."""

    cx: float
    cy: float
    hw: float
    hh: float
    angle: float = 0.0

    @functools.cached_property
    def corners(self):
        """The four corners, an array of shape (4, 2) (worked out once: a box is never moved)."""
        import numpy as np

        c, s = math.cos(self.angle), math.sin(self.angle)
        local = np.array([(-self.hw, -self.hh), (self.hw, -self.hh), (self.hw, self.hh), (-self.hw, self.hh)])
        return local @ np.array([[c, s], [-s, c]]) + (self.cx, self.cy)

    @functools.cached_property
    def extent(self) -> tuple:
        """(x0, y0, x1, y1, rotated): the corners' axis-aligned extent, and 1.0 if the box is
        rotated (else 0.0)."""
        c = self.corners
        return (*c.min(axis=0), *c.max(axis=0), float(self.angle % math.pi != 0))

    @functools.cached_property
    def frame(self) -> tuple:
        """(cx, cy, cos, sin, hw, hh): what `local` and `crossed_boxes` work from."""
        return self.cx, self.cy, math.cos(self.angle), math.sin(self.angle), self.hw, self.hh

    def local(self, points):
        """`points` (shape (N, 2), display pixels) in the box's own frame: centre at the origin,
        sides along the axes."""
        import numpy as np

        c, s = math.cos(self.angle), math.sin(self.angle)
        d = np.asarray(points, dtype=float).reshape(-1, 2) - (self.cx, self.cy)
        return np.stack([d[:, 0] * c + d[:, 1] * s, -d[:, 0] * s + d[:, 1] * c], axis=1)

    def overlaps(self, other: "Box", pad: float = 0.0) -> bool:
        """Whether the two rectangles, this one grown by `pad` pixels on every side, overlap
        (separating-axis test)."""
        import numpy as np

        a, b = self.corners, other.corners
        for angle in (self.angle, other.angle):
            for axis in (np.array([math.cos(angle), math.sin(angle)]), np.array([-math.sin(angle), math.cos(angle)])):
                pa, pb = a @ axis, b @ axis
                if pa.max() + pad <= pb.min() or pb.max() + pad <= pa.min():
                    return False
        return True

    def crossed(self, segments, pad: float = 0.0):
        """Which of `segments` (shape (N, 2, 2): N segments of two display points) cross or touch
        this rectangle grown by `pad` pixels: a boolean array of N (Liang-Barsky clipping)."""
        return crossed_boxes([self], segments, pad)[0]

    def covers(self, centres, radii, pad: float = 0.0):
        """Which markers (centres of shape (N, 2), radii of shape (N,), pixels) reach into or
        touch this rectangle grown by `pad` (a centre on its edge counts): a boolean array of N."""
        import numpy as np

        q = np.abs(self.local(centres))
        dx, dy = np.maximum(q[:, 0] - self.hw, 0), np.maximum(q[:, 1] - self.hh, 0)
        return np.hypot(dx, dy) <= np.asarray(radii, dtype=float) + pad


def crossed_boxes(boxes: list[Box], segments, pad: float = 0.0):
    """Which of `segments` (shape (N, 2, 2), display pixels) cross or touch each of `boxes` grown
    by `pad` pixels: a boolean array of shape (len(boxes), N). Liang-Barsky clipping in each box's
    own frame (`Box.local`), all pairs at once."""
    import numpy as np

    segments = np.asarray(segments, dtype=float).reshape(-1, 2, 2)
    frame = np.array([b.frame for b in boxes], dtype=float).reshape(-1, 6)[:, None, :]  # (B, 1, 6)
    cx, cy, c, s, hw, hh = (frame[..., i] for i in range(6))

    def local(points):  # (N, 2) -> (B, N) x and y in each box's frame, as Box.local works them out
        dx, dy = points[None, :, 0] - cx, points[None, :, 1] - cy
        return dx * c + dy * s, -dx * s + dy * c

    (ax, ay), (bx, by) = local(segments[:, 0]), local(segments[:, 1])
    shape = np.broadcast_shapes(ax.shape, (len(frame), len(segments)))
    t0, t1, miss = np.zeros(shape), np.ones(shape), np.zeros(shape, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p0, d, half in ((ax, bx - ax, hw + pad), (ay, by - ay, hh + pad)):
            flat = d == 0
            miss |= flat & (np.abs(p0) > half)
            ta, tb = (-half - p0) / d, (half - p0) / d
            t0 = np.where(flat, t0, np.maximum(t0, np.minimum(ta, tb)))
            t1 = np.where(flat, t1, np.minimum(t1, np.maximum(ta, tb)))
    return ~miss & (t0 <= t1)


def _extents(boxes: list[Box]):
    """Each box's axis-aligned extent and whether it is rotated: shape (B, 5), rows (x0, y0, x1,
    y1, rotated)."""
    import numpy as np

    return np.array([b.extent for b in boxes], dtype=float).reshape(-1, 5)


def text_box(t, renderer) -> Box:
    """The rectangle of text artist `t` alone (an annotation's without its leader line), rotated as
    the text is, from matplotlib's renderer-based window extents."""
    from matplotlib.text import Text

    if hasattr(t, "update_positions"):  # an annotation: its text follows xyann only once updated
        t.update_positions(renderer)
    extent = Text.get_window_extent(t, renderer)
    rotation = t.get_rotation() % 180
    if rotation == 0:
        return Box((extent.x0 + extent.x1) / 2, (extent.y0 + extent.y1) / 2, extent.width / 2, extent.height / 2)
    t.set_rotation(0)
    flat = Text.get_window_extent(t, renderer)
    t.set_rotation(rotation)
    return Box((extent.x0 + extent.x1) / 2, (extent.y0 + extent.y1) / 2, flat.width / 2, flat.height / 2,
               math.radians(rotation))


def _no_line(line) -> bool:
    return line.get_linestyle() in ("None", "none", "", " ") or line.get_linewidth() == 0


def _has_marker(line) -> bool:
    return line.get_marker() not in (None, "None", "none", "", " ")


def path_segments(path, transform):
    """The straight segments of a matplotlib path drawn through `transform`, in display pixels:
    shape (N, 2, 2); curves are taken as their polylines, non-finite vertices dropped."""
    import numpy as np

    segments = []
    for poly in transform.transform_path(path).to_polygons(closed_only=False):
        poly = np.asarray(poly, dtype=float)
        for a, b in zip(poly[:-1], poly[1:]):
            if np.isfinite(a).all() and np.isfinite(b).all():
                segments.append((a, b))
    return np.array(segments, dtype=float).reshape(-1, 2, 2)


RING_PT = 8  # points kept free round a point whose label is still to be placed
_GAPS_PT = (3, 7, 12, 18, 26, 36, 48, 62, 80, 100, 125, 155, 190, 230)  # a label's candidate gaps from its point
_PHIS_DEG = tuple(range(0, 360, 15))  # and directions round it, counter-clockwise from the right
LEADER_FROM_PT = 7  # a label farther from its point than this gets a leader line
OPAQUE = dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none")  # a label's bbox that hides what lies under it


class Layout:
    """What the labels of one axes must keep clear of, in display pixels: the boxes of its texts,
    legends and bars, the segments of its lines and leader lines, its markers. Built after the
    figure's layout is final (tight_layout); the labels in `skip` are the ones to be placed. The
    lines in `under` are no obstacle: they are drawn beneath labels that hide them (labels on an
    opaque background, `OPAQUE`), a thin guide curve say; a leader line may cross them too."""

    def __init__(self, fig, ax, skip=(), under=()):
        import numpy as np
        from matplotlib.collections import LineCollection, PathCollection
        from matplotlib.legend import Legend

        self.fig, self.ax = fig, ax
        self.renderer = fig.canvas.get_renderer()
        self.px = fig.dpi / 72  # pixels per point
        area = ax.get_window_extent(self.renderer)
        self.area = (area.x0 + 2, area.y0 + 2, area.x1 - 2, area.y1 - 2)
        self.boxes: list[Box] = []
        self.pending: dict = {}  # label -> [(point, radius kept free)] in pixels, while it waits
        segments, centres, radii = [np.zeros((0, 2, 2))], [np.zeros((0, 2))], [np.zeros(0)]
        for line in ax.lines:
            if not line.get_visible() or line in under:
                continue
            if not _no_line(line):
                segments.append(path_segments(line.get_path(), line.get_transform()))
            if _has_marker(line):
                xy = line.get_transform().transform(line.get_xydata())
                xy = xy[np.isfinite(xy).all(axis=1)]
                centres.append(xy)
                radii.append(np.full(len(xy), (line.get_markersize() + line.get_markeredgewidth()) / 2 * self.px))
        for c in ax.collections:
            if not c.get_visible():
                continue
            if isinstance(c, PathCollection) and len(c.get_offsets()):
                xy = c.get_offset_transform().transform(c.get_offsets())
                sizes = np.resize(np.asarray(c.get_sizes(), dtype=float), len(xy))
                centres.append(xy)
                radii.append(np.sqrt(sizes) / 2 * self.px)
            elif isinstance(c, LineCollection):
                for path in c.get_paths():
                    segments.append(path_segments(path, c.get_transform()))
        for t in ax.texts:
            if t in skip or not t.get_visible() or not t.get_text():
                continue
            self.boxes.append(text_box(t, self.renderer))
            arrow = getattr(t, "arrow_patch", None)
            if arrow is not None and arrow.get_visible():
                t.update_positions(self.renderer)
                segments.append(path_segments(arrow.get_path(), arrow.get_transform()))
        for artist in [*ax.patches, *(c for c in ax.get_children() if isinstance(c, Legend))]:
            if artist.get_visible():
                e = artist.get_window_extent(self.renderer)
                self.boxes.append(Box((e.x0 + e.x1) / 2, (e.y0 + e.y1) / 2, e.width / 2, e.height / 2))
        self.segments = np.concatenate(segments)
        self.leaders = np.zeros((0, 2, 2))
        self.leader_faults = True
        self.centres, self.radii = np.concatenate(centres), np.concatenate(radii)

    def add(self, box: Box | None = None, segment=None) -> None:
        """Keep later labels clear of `box` and of the leader line `segment` ((2, 2) pixels)."""
        import numpy as np

        if box is not None:
            self.boxes.append(box)
        if segment is not None:
            self.leaders = np.concatenate([self.leaders, np.asarray(segment, dtype=float).reshape(1, 2, 2)])

    def inside(self, box: Box) -> bool:
        """Whether `box` lies inside the axes."""
        c = box.corners
        x0, y0, x1, y1 = self.area
        return c[:, 0].min() >= x0 and c[:, 0].max() <= x1 and c[:, 1].min() >= y0 and c[:, 1].max() <= y1

    def overlapping(self, box: Box, pad: float = 0.0) -> list[Box]:
        """The boxes of the scene that `box`, grown by `pad` pixels, overlaps."""
        import numpy as np

        e = _extents(self.boxes)
        c = box.corners
        x0, y0 = c.min(axis=0) - pad
        x1, y1 = c.max(axis=0) + pad
        near = (e[:, 0] < x1) & (e[:, 2] > x0) & (e[:, 1] < y1) & (e[:, 3] > y0)
        if box.angle % math.pi == 0:  # two upright boxes overlap where their extents do
            return [self.boxes[i] for i in np.flatnonzero(near & (e[:, 4] == 0))] + [
                self.boxes[i] for i in np.flatnonzero(near & (e[:, 4] != 0)) if box.overlaps(self.boxes[i], pad)]
        return [self.boxes[i] for i in np.flatnonzero(near) if box.overlaps(self.boxes[i], pad)]

    def faults(self, box: Box) -> int:
        """How many things `box` would hit: boxes it overlaps, lines and leader lines crossing it,
        markers in it (a few points of room kept round each), and 1 if it leaves the axes."""
        pad = 1.5 * self.px
        return (int(not self.inside(box)) + len(self.overlapping(box, pad))
                + int(box.crossed(self.segments, pad).sum()) + int(box.crossed(self.leaders, pad).sum())
                + int(box.covers(self.centres, self.radii, pad).sum()))

    def marker_radius(self, xy) -> float:
        """The largest radius of the markers centred within a pixel of `xy` (0 if none)."""
        import numpy as np

        near = np.hypot(*(self.centres - xy).T) < 1.5 if len(self.centres) else np.zeros(0, bool)
        return float(self.radii[near].max()) if near.any() else 0.0

    def place_annotations(self, labels, passes: int = 4, anchors: dict | None = None,
                          leader_faults: bool = True) -> None:
        """Move each annotation in `labels` (text offset in points from a data-coordinate point,
        in order of priority) to the nearest spot round its point where it hits nothing
        (`faults`) and its leader line crosses no label; a leader that crosses another leader,
        a marker or a line costs more than a longer one. The leader is hidden when the label
        sits next to its point. `anchors` may give a label other points it may point at instead
        (a kernel's points at several memory levels): {label: [(x, y), ...]} in data
        coordinates. Labels left with no free spot go first in the next of `passes` passes; the
        pass with the fewest such labels is kept. With `leader_faults` a leader that crosses
        another leader or runs over another point's marker is a fault, as a label on something is;
        without, only a cost (for a chart too crowded for every leader to keep clear)."""
        import numpy as np

        anchors = anchors or {}
        self.leader_faults = leader_faults
        start_boxes, start_leaders = list(self.boxes), self.leaders.copy()
        order, best = list(labels), None
        for _ in range(passes):
            self.boxes, self.leaders = list(start_boxes), start_leaders.copy()
            spots, stuck = {}, []
            # the points still to be labelled keep a ring free round them, their label's way out
            self.pending = {id(t): [(point, self.marker_radius(point) + RING_PT * self.px) for point in
                                    (np.asarray(self.ax.transData.transform(xy), dtype=float) for xy in anchors.get(t, [t.xy]))]
                            for t in order}
            for t in order:
                del self.pending[id(t)]
                faults, spot = min((self._spot(t, xy) for xy in anchors.get(t, [t.xy])), key=lambda f: (f[0], f[1][0]))
                spots[id(t)] = spot
                self._apply(t, spot)
                if faults:
                    stuck.append(t)
            if best is None or len(stuck) < best[0]:
                best = (len(stuck), spots, list(self.boxes), self.leaders.copy())
            if not stuck:
                break
            order = stuck + [t for t in order if t not in stuck]
        _, spots, self.boxes, self.leaders = best
        for t in labels:
            self._apply(t, spots[id(t)], add=False)

    def _apply(self, t, spot, add: bool = True) -> None:
        _, xy, offset, leader, shrink = spot
        t.xy = xy
        t.set_horizontalalignment("center")
        t.set_verticalalignment("center")
        t.xyann = offset
        arrow = getattr(t, "arrow_patch", None)
        if arrow is not None:
            arrow.set_visible(leader is not None)
            arrow.shrinkB = shrink
        if add:
            self.add(text_box(t, self.renderer), leader)

    def _spot(self, t, xy):
        """The best spot for annotation `t` pointing at `xy` (data coordinates): (its faults,
        (its cost, xy, offset in points, leader segment or None, the leader's gap at the point in
        points)). The candidates lie round the point in 24 directions, at gaps (`_GAPS_PT`) from
        3 to 230 points, ring by ring."""
        import numpy as np

        gap, phi = (a.ravel() for a in np.meshgrid(np.array(_GAPS_PT, dtype=float), np.radians(_PHIS_DEG), indexing="ij"))
        u = np.stack([np.cos(phi), np.sin(phi)], axis=1)
        anchor = np.asarray(self.ax.transData.transform(xy), dtype=float)
        size = text_box(t, self.renderer)
        hw, hh = size.hw, size.hh
        mr = self.marker_radius(anchor)
        with np.errstate(divide="ignore"):
            reach = np.minimum(hw / np.abs(u[:, 0]), hh / np.abs(u[:, 1]))
        near = mr + gap * self.px
        centres = anchor + (near + reach)[:, None] * u
        leaders = np.stack([anchor + mr * u, anchor + near[:, None] * u], axis=1)
        led = gap > LEADER_FROM_PT

        # the near rings first: a spot there that costs less than the nearest gap beyond them beats
        # every farther one (a spot's cost is at least its gap), so those are weighed only if needed
        near_rings = 4 * len(_PHIS_DEG)
        faults, cost = self._weigh(centres[:near_rings], leaders[:near_rings], gap[:near_rings], u[:near_rings], hw, hh)
        if cost.min() >= gap[near_rings]:
            far = self._weigh(centres[near_rings:], leaders[near_rings:], gap[near_rings:], u[near_rings:], hw, hh,
                              beaten_at=cost.min())
            faults, cost = np.concatenate([faults, far[0]]), np.concatenate([cost, far[1]])
        i = int(np.argmin(cost))
        return int(faults[i]), (float(cost[i]), tuple(xy), tuple((centres[i] - anchor) / self.px),
                                leaders[i] if led[i] else None, mr / self.px + 1)

    def _weigh(self, centres, leaders, gap, u, hw, hh, beaten_at: float = math.inf):
        """(faults, cost) of each candidate spot of a label of half size `hw` x `hh` pixels: its
        centre (centres (N, 2)), its leader line (leaders (N, 2, 2)), its gap from the point in
        points (gap (N,)) and direction (u (N, 2)). A leader is drawn beyond `LEADER_FROM_PT`.

        What a leader line crosses only adds to a spot's cost, so it is counted only for spots
        that could still win: those that cost less, without it, than a spot weighed before them
        (one without a leader here, or any spot costing `beaten_at`). The others keep their cost
        without it, which is no less than that earlier spot's: the first cheapest spot, and its
        cost, are the same as if every leader were counted."""
        import numpy as np

        pad = 1.5 * self.px
        led = gap > LEADER_FROM_PT
        x0, y0, x1, y1 = self.area
        faults = ((centres[:, 0] - hw < x0) | (centres[:, 0] + hw > x1) | (centres[:, 1] - hh < y0)
                  | (centres[:, 1] + hh > y1)).astype(int)
        if self.boxes:
            e = _extents(self.boxes)  # upright boxes overlap where their extents do, rotated ones are tested in full
            hit = ((centres[:, None, 0] - (hw + pad) < e[None, :, 2]) & (centres[:, None, 0] + (hw + pad) > e[None, :, 0])
                   & (centres[:, None, 1] - (hh + pad) < e[None, :, 3]) & (centres[:, None, 1] + (hh + pad) > e[None, :, 1]))
            faults += hit[:, e[:, 4] == 0].sum(axis=1)
            for i in np.flatnonzero(e[:, 4]):
                faults += _upright_overlap(centres, hw + pad, hh + pad, self.boxes[i])
            faults += (led & crossed_boxes(self.boxes, leaders)).sum(axis=0)
        for segments in (self.segments, self.leaders):
            faults += _upright_crossed(centres, hw + pad, hh + pad, segments)
        q = np.abs(centres[:, None, :] - self.centres[None, :, :])
        dist = np.hypot(np.maximum(q[..., 0] - hw, 0), np.maximum(q[..., 1] - hh, 0))
        faults += (dist <= self.radii[None, :] + pad).sum(axis=1)
        waiting = [spot for spots in self.pending.values() for spot in spots]
        if waiting:
            points, kept = np.array([p for p, _ in waiting]), np.array([r for _, r in waiting])
            q = np.abs(centres[:, None, :] - points[None])
            dist = np.hypot(np.maximum(q[..., 0] - hw, 0), np.maximum(q[..., 1] - hh, 0))
            faults += (dist <= kept[None]).sum(axis=1)

        cost = gap * (1 + 0.4 * np.abs(u[:, 1]) + 0.1 * (u[:, 0] < -0.1)) + 10_000 * faults
        if (~led).any():
            beaten_at = min(beaten_at, cost[~led].min())
        todo = np.flatnonzero(led & (cost < beaten_at))
        if len(todo):
            ends = leaders[todo]
            crossings, passes = _crossings(ends, self.leaders), _passes(ends, self.centres, self.radii)
            if self.leader_faults:  # a leader that crosses another or runs over another point's marker
                faults[todo] += crossings + passes
                cost[todo] += 10_000 * (crossings + passes)
            else:
                cost[todo] += 1000 * crossings + 150 * passes
            cost[todo] += 12 * _crossings(ends, self.segments)
        return faults, cost

    def place_on_line(self, t, p0, p1, fractions=None, sides=(1, -1), gap_pt: float = 2.5) -> int:
        """Put text `t` along the segment from `p0` to `p1` (data coordinates), rotated with it,
        `gap_pt` points above it (side 1) or below (side -1), at the first of `fractions` of its
        visible length (0 its start, 1 its end) and of `sides` where it hits nothing (`faults`);
        where none is free, the one that hits least. Returns how many things it hits there (0:
        a free spot)."""
        import numpy as np

        to_px = self.ax.transData.transform
        a, b = np.asarray(to_px(p0), dtype=float), np.asarray(to_px(p1), dtype=float)
        a, b = _clip(a, b, self.area)
        angle = math.atan2(b[1] - a[1], b[0] - a[0])
        if angle > math.pi / 2 or angle < -math.pi / 2:  # read left to right
            a, b, angle = b, a, angle - math.copysign(math.pi, angle)
            fractions = [1 - f for f in fractions] if fractions is not None else None
        t.set_rotation(math.degrees(angle))
        t.set_rotation_mode("anchor")
        t.set_horizontalalignment("center")
        t.set_verticalalignment("center")
        size = text_box(t, self.renderer)
        normal = np.array([-math.sin(angle), math.cos(angle)])
        along = np.array([math.cos(angle), math.sin(angle)])
        length = float(np.hypot(*(b - a)))
        best = None
        for f in fractions if fractions is not None else np.linspace(0.05, 0.95, 19):
            for side in sides:
                centre = a + (b - a) * f + side * normal * (size.hh + gap_pt * self.px)
                centre = centre + along * np.clip(0, size.hw - f * length, length * (1 - f) - size.hw)
                box = Box(centre[0], centre[1], size.hw, size.hh, angle)
                faults = self.faults(box)
                if best is None or faults < best[0]:
                    best = (faults, box)
                if faults == 0:
                    break
            if best[0] == 0:
                break
        box = best[1]
        t.set_transform(self.ax.transData)
        t.set_position(tuple(self.ax.transData.inverted().transform((box.cx, box.cy))))
        self.add(text_box(t, self.renderer))
        return best[0]


def _clip(a, b, area):
    """The part of the segment a-b inside the rectangle `area` (x0, y0, x1, y1); the segment itself
    when it misses the rectangle."""
    box = Box((area[0] + area[2]) / 2, (area[1] + area[3]) / 2, (area[2] - area[0]) / 2, (area[3] - area[1]) / 2)
    p0, p1 = box.local([a])[0], box.local([b])[0]
    d = p1 - p0
    t0, t1 = 0.0, 1.0
    for k, half in ((0, box.hw), (1, box.hh)):
        if d[k] == 0:
            continue
        ta, tb = (-half - p0[k]) / d[k], (half - p0[k]) / d[k]
        t0, t1 = max(t0, min(ta, tb)), min(t1, max(ta, tb))
    if t0 > t1:
        return a, b
    return a + (b - a) * t0, a + (b - a) * t1


def _crossings(segments, others):
    """For each of `segments` (shape (N, 2, 2)), how many of `others` (shape (M, 2, 2)) properly
    cross it: an int array of N."""
    import numpy as np

    if not len(others):
        return np.zeros(len(segments), dtype=int)
    p, r = segments[:, None, 0], (segments[:, 1] - segments[:, 0])[:, None]
    q, s = others[None, :, 0], (others[:, 1] - others[:, 0])[None]
    denom = r[..., 0] * s[..., 1] - r[..., 1] * s[..., 0]
    qp = q - p
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (qp[..., 0] * s[..., 1] - qp[..., 1] * s[..., 0]) / denom
        v = (qp[..., 0] * r[..., 1] - qp[..., 1] * r[..., 0]) / denom
    return ((denom != 0) & (t > 0.01) & (t < 0.99) & (v > 0.01) & (v < 0.99)).sum(axis=1)


def _passes(segments, centres, radii):
    """For each of `segments` (shape (N, 2, 2)), how many markers (centres (M, 2), radii (M,))
    it passes through, not counting the one it starts in."""
    import numpy as np

    if not len(centres):
        return np.zeros(len(segments), dtype=int)
    a, d = segments[:, None, 0], (segments[:, 1] - segments[:, 0])[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(((centres[None] - a) * d).sum(axis=2) / (d * d).sum(axis=2), 0, 1)
    gap = np.hypot(*(a + t[..., None] * d - centres[None]).transpose(2, 0, 1))
    starts = np.hypot(*(a - centres[None]).transpose(2, 0, 1)) <= radii[None] + 0.5
    return ((gap < radii[None]) & ~starts).sum(axis=1)


def _upright_overlap(centres, hw, hh, box: Box):
    """Which upright boxes (centres (N, 2), half sizes `hw`, `hh`) overlap `box`: a boolean
    array of N (separating axes: the two upright ones and `box`'s own)."""
    import numpy as np

    c = box.corners
    hit = ((centres[:, 0] - hw < c[:, 0].max()) & (centres[:, 0] + hw > c[:, 0].min())
           & (centres[:, 1] - hh < c[:, 1].max()) & (centres[:, 1] + hh > c[:, 1].min()))
    if box.angle % math.pi == 0:
        return hit
    for ax_ in (np.array([math.cos(box.angle), math.sin(box.angle)]), np.array([-math.sin(box.angle), math.cos(box.angle)])):
        proj = centres @ ax_
        half = hw * abs(ax_[0]) + hh * abs(ax_[1])
        own = c @ ax_
        hit &= (proj - half < own.max()) & (proj + half > own.min())
    return hit


def _upright_crossed(centres, hw, hh, segments):
    """For each upright box (centres (N, 2), half sizes `hw`, `hh`), how many of `segments`
    (shape (M, 2, 2)) cross or touch it: an int array of N (Liang-Barsky, all pairs at once)."""
    import numpy as np

    if not len(segments):
        return np.zeros(len(centres), dtype=int)
    p0 = segments[None, :, 0] - centres[:, None]
    d = (segments[:, 1] - segments[:, 0])[None]
    t0 = np.zeros(p0.shape[:2])
    t1 = np.ones(p0.shape[:2])
    miss = np.zeros(p0.shape[:2], dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, half in ((0, hw), (1, hh)):
            dk = np.broadcast_to(d[..., k], p0.shape[:2])
            flat = dk == 0
            miss |= flat & (np.abs(p0[..., k]) > half)
            ta, tb = (-half - p0[..., k]) / dk, (half - p0[..., k]) / dk
            t0 = np.where(flat, t0, np.maximum(t0, np.minimum(ta, tb)))
            t1 = np.where(flat, t1, np.minimum(t1, np.maximum(ta, tb)))
    return (~miss & (t0 <= t1)).sum(axis=1)

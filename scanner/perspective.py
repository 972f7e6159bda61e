"""Photos taken from a seat: the table seen in perspective, and the corners made flat again.

A photo from above shows every card at one size; a photo from a player's seat shows the far
cards smaller, the far columns' steps shorter and the table's far edge narrower. The layout
step reads sizes and steps in card heights, so it wants a flat table. The corners tell how
the table is tilted: the printed indices are one size on the table, and a plane seen in
perspective shows things at image point p with a linear size proportional to w(p)^1.5,
w(p) = 1 + c . (p - centre) being the homography's denominator (its area scale is w^3). So
the index sizes to the power 2/3, fitted linearly over the photo (robustly: ranks and decks
differ a little), give c, and p -> centre + (p - centre) / w(p) undoes the perspective up to
an affine map, which the layout does not mind as long as it is mild (measured: a far edge
half the near one reads nearly as well as a photo from above; docs/LAYOUT.md).

`flattening` and `flatten_corners` are what `read_table` uses: the corners moved to the
flat table (boxes around the moved box corners, directions moved at the box centre), and
`Flattening.to_photo` / `angles_to` to move its cards back into the photo.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scanner.corners import Corners, root_areas

# Size change across the photo below which the photo counts as shot from above: the
# largest fitted index size over the smallest, at the sure corners. Two decks of different
# designs mixed on one table can print indices twice the size of the other's, which fits
# as a mild tilt: 1.6 flattened two such tables of the test split wrongly; at 2.0 no photo
# from above changed (a table whose far edge is half the near one reads 2-3).
MIN_TILT_RATIO = 2.0
# From this ratio up to MIN_TILT_RATIO `read_table` reads the table both ways and keeps the
# flattened reading only where it breaks fewer rules (chosen on val and u13: the tables from
# above read as before, a few more from a seat read right).
UNSURE_TILT_RATIO = 1.4
# The fit wants this many corners (fewer give no trustworthy slope).
MIN_CORNERS = 12
# Indices within this many degrees of square to the photo give the sizes.
SQUARE_ON = 20.0


@dataclass(frozen=True)
class Flattening:
    """The map from photo pixels to the flat table's pixels and back."""

    c: np.ndarray          # (2,) tilt: w(p) = 1 + c . (p - centre)
    centre: np.ndarray     # (2,) photo point that keeps its place and scale
    offset: np.ndarray     # (2,) added after flattening so flat coordinates stay positive
    size: tuple[int, int]  # (width, height) of the flat photo's bounds
    ratio: float = 1.0     # the largest fitted index size over the smallest (sure corners)

    def to_flat(self, pts: np.ndarray) -> np.ndarray:
        """(N, 2) photo points on the flat table."""
        q = np.asarray(pts, float).reshape(-1, 2) - self.centre
        w = 1.0 + q @ self.c
        return q / w[:, None] + self.centre + self.offset

    def to_photo(self, pts: np.ndarray) -> np.ndarray:
        """(N, 2) flat-table points back in the photo."""
        r = np.asarray(pts, float).reshape(-1, 2) - self.centre - self.offset
        # q = r w, w = 1 + c.q  =>  w = 1 / (1 - c.r)
        w = 1.0 / (1.0 - r @ self.c)
        return r * w[:, None] + self.centre

    def matrix(self) -> np.ndarray:
        """The 3x3 homography taking photo pixels to the flat table's (`to_flat`)."""
        cx, cy = self.centre
        ox, oy = self.offset
        shift_back = np.array([[1, 0, cx + ox], [0, 1, cy + oy], [0, 0, 1]], float)
        divide = np.array([[1, 0, 0], [0, 1, 0], [self.c[0], self.c[1], 1]], float)
        to_centre = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], float)
        return shift_back @ divide @ to_centre

    def boxes_to_photo(self, boxes: np.ndarray) -> np.ndarray:
        """(N, 4) flat-table boxes (xyxy) in the photo: the bounds of their moved corners."""
        return moved_boxes(self.to_photo, boxes)

    def angles_to(self, pts: np.ndarray, angles: np.ndarray, flat: bool) -> np.ndarray:
        """Directions (degrees, 0 = up, 90 = right) at photo points `pts` (flat ones when
        `flat` is False: the way back), moved by the map."""
        return moved_angles(self.to_flat if flat else self.to_photo, pts, angles)


def moved_angles(move, pts: np.ndarray, angles: np.ndarray, step: float = 1.0) -> np.ndarray:
    """Directions (degrees, 0 = up, 90 = right; NaN stays NaN) at points `pts`, after the
    map `move` ((N, 2) points -> (N, 2) points): each followed `step` pixels and moved."""
    pts = np.asarray(pts, float).reshape(-1, 2)
    a = np.radians(np.asarray(angles, float).reshape(-1))
    ahead = pts + step * np.stack([np.sin(a), -np.cos(a)], axis=1)
    d = move(ahead) - move(pts)
    out = np.degrees(np.arctan2(d[:, 0], -d[:, 1])) % 360
    return np.where(np.isnan(a), np.nan, out)


def fit_tilt(centers: np.ndarray, sizes: np.ndarray, centre: np.ndarray,
             power: float = 2 / 3) -> np.ndarray | None:
    """The tilt c (w(p) = 1 + c . (p - centre)) from index sizes, or None when too few.

    Fits sizes^power = a (1 + c . q) by least squares, then twice more without the points
    off the fit by more than 2.5 robust standard deviations (misfits: a box around two
    indices, a partly covered one). A size that goes as w^-1.5 (the root of an area) wants
    2/3; one that goes as w^-2 (a length along the tilt) 1/2."""
    if len(sizes) < MIN_CORNERS:
        return None
    y = np.asarray(sizes, float) ** power
    q = np.asarray(centers, float) - centre
    scale = float(np.abs(q).max()) or 1.0
    x = np.column_stack([np.ones(len(y)), q / scale])
    keep = np.ones(len(y), bool)
    for _ in range(3):
        if keep.sum() < MIN_CORNERS:
            return None
        coef, *_ = np.linalg.lstsq(x[keep], y[keep], rcond=None)
        resid = y - x @ coef
        sigma = 1.4826 * float(np.median(np.abs(resid[keep]))) + 1e-9
        keep = np.abs(resid) <= 2.5 * sigma
    if coef[0] <= 0:
        return None
    return coef[1:] / coef[0] / scale


def flattening(corners: Corners, image_size: tuple[int, int], used: np.ndarray | None = None,
               min_ratio: float | None = None) -> Flattening | None:
    """How to flatten the photo's table, from the corners (`used`: the ones to trust), or
    None when the photo looks shot from above (index sizes vary less than
    `MIN_TILT_RATIO` across the photo) or the fit is unsure."""
    keep = np.ones(len(corners), bool) if used is None else np.asarray(used, bool)
    # a slanted index's box is wider than the index: sizes from square-on indices only
    off_square = np.abs((np.nan_to_num(corners.angle, nan=0.0) + 45) % 90 - 45)
    keep = keep & (off_square <= SQUARE_ON)
    if keep.sum() < MIN_CORNERS:
        return None
    return flattening_of_boxes(corners.boxes[keep], image_size, min_ratio, by_height=True,
                               angles=corners.angle[keep])


def flattening_of_boxes(boxes: np.ndarray, image_size: tuple[int, int],
                        min_ratio: float | None = None, by_height: bool = False,
                        angles: np.ndarray | None = None) -> Flattening | None:
    """`flattening` from index boxes (xyxy, photo pixels) of one size on the table: their
    geometric mean sides give the tilt (`fit_tilt`); with `by_height`, where most indices
    point along that tilt (`angles`), their longer sides give it again (`_fit_heights`).

    An index's longer side is its height, and the cards on a table seen from a seat mostly
    point towards it or away: along the tilt, where a length shrinks as w^-2 (the area as
    w^-3, its root as w^-1.5). The heights fit the tilt better than the areas, which a
    rank's glyph width (a 10), a slanted box's corners and the stretch a wide lens gives the
    near edge all move (docs/LAYOUT.md, session 40). The ratio the thresholds read stays
    the areas' root's."""
    w, h = image_size
    centre = np.array([w / 2, h / 2], float)
    boxes = np.asarray(boxes, float).reshape(-1, 4)
    centers = (boxes[:, :2] + boxes[:, 2:]) / 2
    c = fit_tilt(centers, root_areas(boxes), centre)
    if by_height and c is not None:
        c = _fit_heights(boxes, centers, centre, c, angles)
    if c is None:
        return None
    frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], float) - centre
    ws = 1.0 + frame @ c
    if ws.min() <= 0.2:  # a horizon inside (or near) the photo: not a table seen from a seat
        return None
    span = centers - centre
    wc = 1.0 + span @ c
    ratio = float((wc.max() / wc.min()) ** 1.5)
    if ratio < (MIN_TILT_RATIO if min_ratio is None else min_ratio):
        return None
    flat = frame / ws[:, None]
    lo, hi = flat.min(axis=0), flat.max(axis=0)
    offset = -lo - centre
    size = (int(np.ceil(hi[0] - lo[0])), int(np.ceil(hi[1] - lo[1])))
    return Flattening(c=np.asarray(c, float), centre=centre, offset=offset, size=size,
                      ratio=ratio)


def _fit_heights(boxes: np.ndarray, centers: np.ndarray, centre: np.ndarray, c: np.ndarray,
                 angles: np.ndarray | None) -> np.ndarray | None:
    """The tilt fitted again to the heights (their boxes' longer sides) of the indices
    pointing along it (`angles`, 0 = up; all of them without), given a first fit `c` to
    the areas for its direction, where those are most of them; else `c`. A length along the
    tilt shrinks as w^-2 (one across it as w^-1, where the areas fit better: measured on
    photos from a side seat, docs/LAYOUT.md session 40)."""
    along = np.ones(len(boxes), bool)
    if angles is not None:
        a = np.radians(np.nan_to_num(np.asarray(angles, float), nan=0.0))
        tilt = c / (np.linalg.norm(c) + 1e-12)
        along = np.abs(np.sin(a) * tilt[0] - np.cos(a) * tilt[1]) >= np.sqrt(0.5)
    if along.sum() < (~along).sum():
        return c
    heights = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    again = fit_tilt(centers[along], heights[along], centre, power=1 / 2)
    return c if again is None else again


def homography_map(m: np.ndarray):
    """The map of (N, 2) points by the 3x3 homography `m` (for `moved_boxes`,
    `moved_angles`)."""
    def move(pts: np.ndarray) -> np.ndarray:
        p = np.asarray(pts, float).reshape(-1, 2) @ m[:, :2].T + m[:, 2]
        return p[:, :2] / p[:, 2:3]
    return move


def moved_boxes(move, boxes: np.ndarray) -> np.ndarray:
    """(N, 4) boxes (xyxy) after the map `move` ((N, 2) points -> (N, 2) points): the
    bounds of their moved corners."""
    b = np.asarray(boxes, float).reshape(-1, 4)
    pts = np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1)
    moved = move(pts.reshape(-1, 2)).reshape(-1, 4, 2)
    return np.concatenate([moved.min(axis=1), moved.max(axis=1)], axis=1)


def flatten_boxes(boxes: np.ndarray, flat: Flattening) -> np.ndarray:
    """(N, 4) photo boxes (xyxy) on the flat table: the bounds of their moved corners."""
    return moved_boxes(flat.to_flat, boxes)


def flatten_corners(corners: Corners, flat: Flattening) -> Corners:
    """The corners on the flat table: each box the bounds of its moved corners, each
    direction moved at its box's centre."""
    if not len(corners):
        return corners
    boxes = flatten_boxes(corners.boxes, flat)
    angle = flat.angles_to(corners.centers, corners.angle, flat=True)
    return Corners(boxes, corners.class_ids, corners.confidence, angle, corners.rank_confidence)

"""A test double for the corner detector, built from a scene's ground truth.

`corners_from_scene` turns the printed indices of a scene JSON (see docs/ARCHITECTURE.md)
into the `Corners` a perfect detector would return, optionally with box and angle noise,
dropped corners and misread ranks, so the layout step can be developed and measured
without a trained model. `GroundTruthDetector` wraps it in the `Detector` protocol.
`scene_from_placements` makes a small scene JSON from hand-placed cards, for unit tests.
Tests and benchmarks only: nothing at run time imports this module.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from scanner.classes import CLASS_ID, INDEX_CLASSES
from scanner.corners import Corners
from scanner.perspective import moved_angles

MIN_VISIBLE = 0.6
"""An index less visible than this is not labelled (the detector cannot read it)."""


def rank_class(card_token: str) -> str:
    """Index class of a card token: `KH` -> `K`, `3D` -> `3R`, `3C` -> `3B`, `JK` -> `JK`."""
    token = card_token.upper()
    if token in ("JK", "JOKER"):
        return "JK"
    if token in INDEX_CLASSES:
        return token
    rank, suit = token[:-1], token[-1]
    if rank == "3":
        return "3R" if suit in "HD" else "3B"
    if rank not in CLASS_ID:
        raise ValueError(f"unknown card token {card_token!r}")
    return rank


def corners_from_scene(scene: dict, rng: np.random.Generator | None = None, noise: float = 0.0,
                       dropout: float = 0.0, angle_noise: float | None = None,
                       misread: float = 0.0, min_visible: float = MIN_VISIBLE,
                       shuffle: bool = False) -> Corners:
    """Corners a detector should find in `scene` (a scene JSON dict), optionally degraded.

    `noise` moves each box edge by a normal error of `noise` box heights (and the angle
    by `angle_noise` degrees, default `60 * noise`); `dropout` is the chance a corner is
    missed; `misread` the chance its rank is read as another class. Confidences are 1
    for a clean corner and lower for degraded ones.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    boxes, classes, angles = [], [], []
    for card in scene["cards"]:
        if not card.get("face_up", True):
            continue
        cls = CLASS_ID[rank_class(card["card"])]
        for index in card.get("indices", []):
            if index.get("visible", 1.0) < min_visible:
                continue
            boxes.append(index["box"])
            classes.append(cls)
            angles.append(index.get("angle", card.get("angle", 0.0)))
    n = len(boxes)
    if n == 0:
        return Corners.empty()
    boxes = np.array(boxes, dtype=float)
    classes = np.array(classes)
    angles = np.array(angles, dtype=float)
    confidence = np.ones(n)
    if noise > 0:
        size = (boxes[:, 3] - boxes[:, 1])[:, None]
        boxes = boxes + rng.normal(0.0, noise, (n, 4)) * size
        boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2] + 1.0)
        a_noise = 60.0 * noise if angle_noise is None else angle_noise
        angles = (angles + rng.normal(0.0, a_noise, n)) % 360
        confidence = np.clip(1.0 - np.abs(rng.normal(0.0, noise, n)), 0.3, 1.0)
    if misread > 0:
        wrong = rng.random(n) < misread
        shift = rng.integers(1, len(INDEX_CLASSES), n)
        classes = np.where(wrong, (classes + shift) % len(INDEX_CLASSES), classes)
        confidence = np.where(wrong, rng.uniform(0.3, 0.8, n), confidence)
    keep = rng.random(n) >= dropout
    order = np.flatnonzero(keep)
    if shuffle:
        order = rng.permutation(order)
    return Corners(boxes[order], classes[order], confidence[order], angles[order])


def index_readable(card: dict, min_visible: float = MIN_VISIBLE) -> bool:
    """Whether a scene card shows at least one index a detector could read."""
    return any(ix.get("visible", 1.0) >= min_visible for ix in card.get("indices", []))


def turn_scene(scene: dict, k: int) -> dict:
    """`scene` photographed after k counter-clockwise quarter turns: index boxes, quads and
    directions turned with the photo, its sides swapped for an odd k."""
    from scanner.detector import turn_boxes

    out = copy.deepcopy(scene)
    w, h = out["image"]["width"], out["image"]["height"]

    def turn_points(points) -> list:  # np.rot90: (x, y) -> (y, width - x), sides swapped
        pts, width, height = np.asarray(points, float).reshape(-1, 2), w, h
        for _ in range(k % 4):
            pts = np.stack([pts[:, 1], width - pts[:, 0]], axis=1)
            width, height = height, width
        return pts.round(2).tolist()

    for card in out["cards"]:
        if "angle" in card:
            card["angle"] = (card["angle"] - 90 * k) % 360
        for index in card.get("indices", []):
            index["box"] = [float(v) for v in turn_boxes(index["box"], w, h, k)[0]]
            if "quad" in index:  # (a seat's warp moves the quad's corners, not the box's)
                index["quad"] = turn_points(index["quad"])
            if "angle" in index:
                index["angle"] = (index["angle"] - 90 * k) % 360
    if k % 2:
        out["image"]["width"], out["image"]["height"] = h, w
    return out


def seat_photo(photo, turn: int, warp: np.ndarray) -> bytes:
    """The photo file turned by `turn` quarter turns counter-clockwise and warped by `warp`
    (`keystone_scene`'s: as if shot from a player's seat), at full size, as a JPEG again
    (what the benchmarks hand the detector and the ink measurement)."""
    import cv2

    from scanner.imageio import load_photo

    src = load_photo(photo)
    rgb = src.turned(turn).rgb if turn else src.rgb
    rgb = cv2.warpPerspective(rgb, warp, (rgb.shape[1], rgb.shape[0]), borderValue=(90, 90, 90))
    return cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
                        [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()


def keystone_scene(scene: dict, far: float) -> tuple[dict, np.ndarray]:
    """`scene` as photographed from a player's seat rather than from above: the far (top)
    edge of the photo shrunk to `far` of its width (centred, and moved down a tenth of
    the height), the near edge kept. Returns the scene with each index's box (the
    bounding box of its quad moved, else of its box's corners) and direction moved, and
    the 3x3 homography that warps the photo (`cv2.warpPerspective`). For the detector's
    benchmarks: the cards' outlines and angles are not moved."""
    import cv2

    out = copy.deepcopy(scene)
    w, h = out["image"]["width"], out["image"]["height"]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[w * (1 - far) / 2, h * 0.1], [w * (1 + far) / 2, h * 0.1], [w, h], [0, h]])
    m = cv2.getPerspectiveTransform(src, dst)

    def move(points) -> np.ndarray:  # (N, 2) points of the photo, moved with it
        return cv2.perspectiveTransform(np.asarray(points, np.float64).reshape(-1, 1, 2), m)[:, 0]

    for card in out["cards"]:
        for index in card.get("indices", []):
            x1, y1, x2, y2 = index["box"]
            quad = index.get("quad") or [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]
            moved = move(quad)
            index["box"] = [float(moved[:, 0].min()), float(moved[:, 1].min()),
                            float(moved[:, 0].max()), float(moved[:, 1].max())]
            if "quad" in index:
                index["quad"] = moved.round(2).tolist()
            if "angle" in index:  # the index's up direction, moved at its centre
                centre = np.mean(np.asarray(quad, float), axis=0)
                index["angle"] = float(moved_angles(move, centre, [index["angle"]], step=10.0)[0])
    return out, m


def seat_view(scene: dict, rgb: np.ndarray, scale: float, far: float) -> tuple[dict, np.ndarray]:
    """A scene and its photo (`rgb`, at `scale` of the scene's pixels) as seen from a
    player's seat, the far edge `far` of the near one's width (`keystone_scene`): the near
    indices stretched along the view, the far ones squeezed, as the networks meet them in
    such photos (training tiles and crops)."""
    import cv2

    w, h = scene["image"]["width"], scene["image"]["height"]
    scene = {**scene, "cards": [dict(c) for c in scene["cards"]]}
    for card in scene["cards"]:
        # an index off the photo (a close shot's cards beyond its frame) has no place in
        # the view: towards the horizon the seat's map sends it anywhere (a box 10^5 px wide)
        card["indices"] = [i for i in card.get("indices", [])
                           if 0 <= (i["box"][0] + i["box"][2]) / 2 <= w
                           and 0 <= (i["box"][1] + i["box"][3]) / 2 <= h]
    scene, m = keystone_scene(scene, far)
    to_decoded = np.diag([scale, scale, 1.0])
    m = to_decoded @ m @ np.linalg.inv(to_decoded)
    fill = tuple(int(v) for v in rgb.reshape(-1, 3)[::997].mean(axis=0))
    rgb = cv2.warpPerspective(rgb, m, (rgb.shape[1], rgb.shape[0]), flags=cv2.INTER_AREA,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
    return scene, rgb


def meld_readable(scene: dict, meld: dict) -> bool:
    """Whether every card of a ground-truth meld shows an index."""
    return all(index_readable(scene["cards"][i]) for i in meld["card_ids"])


def scene_readable(scene: dict) -> bool:
    """Whether every meld card, squared canasta top and red three of a scene shows an index."""
    return all(index_readable(card) for card in scene["cards"]
               if card.get("role") in ("meld", "squared_top", "red_three"))


class GroundTruthDetector:
    """`Detector` double: looks up each photo's scene JSON and returns its corners.

    `detect(rgb)` returns the corners of the scene set with `use(scene)`; `detect_path`
    finds `scene_XXXXXX.json` beside `scene_XXXXXX.jpg`.
    """

    def __init__(self, scene: dict | None = None, rng: np.random.Generator | None = None,
                 **degrade: float) -> None:
        self.scene = scene
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.degrade = degrade

    def use(self, scene: dict) -> GroundTruthDetector:
        """Answer with this scene from now on."""
        self.scene = scene
        return self

    def detect(self, rgb: np.ndarray, min_confidence: float | None = None,
               full=None) -> Corners:
        """Corners of the current scene (the pixels, `rgb` and `full`, are not looked at),
        none under `min_confidence` when given."""
        if self.scene is None:
            raise ValueError("GroundTruthDetector has no scene: call use(scene) first")
        corners = corners_from_scene(self.scene, self.rng, **self.degrade)
        if min_confidence is None:
            return corners
        return corners.select(corners.confidence >= min_confidence)

    def detect_path(self, photo: str | Path) -> Corners:
        """Corners of the scene whose JSON sits beside `photo`."""
        scene = json.loads(Path(photo).with_suffix(".json").read_text())
        return self.use(scene).detect(np.zeros((1, 1, 3), np.uint8))


# ---------------------------------------------------------------------------------------
# hand-placed scenes for unit tests

CARD_H = 300.0
ASPECT = 0.714
# The data engine's generic design: index box (0.03, 0.025)-(0.17, 0.25) of the card.
INDEX_H = 0.225 * CARD_H  # index box height (rank + suit pip)
INDEX_W = 0.14 * ASPECT * CARD_H
INDEX_AT = (0.10, 0.1375)  # index centre from the card's top-left, fractions of width, height


def _rotate(points: np.ndarray, angle: float) -> np.ndarray:
    """Rotate card-frame offsets (x right, y down as printed) into photo offsets."""
    a = np.radians(angle)
    c, s = np.cos(a), np.sin(a)
    return points @ np.array([[c, s], [-s, c]])


def _inside(point: np.ndarray, outline: np.ndarray) -> bool:
    """Whether `point` lies inside the convex quadrilateral `outline` (either winding)."""
    signs = []
    for k in range(4):
        a, b = outline[k], outline[(k + 1) % 4]
        ab, ap = b - a, point - a
        signs.append(ab[0] * ap[1] - ab[1] * ap[0])
    signs = np.array(signs)
    return bool((signs >= 0).all() or (signs <= 0).all())


def scene_from_placements(placements: list[dict], width: int = 4000, height: int = 3000,
                          card_h: float = CARD_H, four_indices: bool = False,
                          index_corners: tuple[str, ...] | None = None,
                          index_box: tuple[float, float, float, float] | None = None) -> dict:
    """A scene JSON from cards placed by hand, later ones on top.

    Each placement: `card` token, `x`, `y` (centre), `angle` (card top direction), and
    optional `team`, `meld`, `role` for the ground truth, `index_box` (x1, y1, x2, y2 of
    the top-left index in card fractions; other corners mirror it, as in
    `datasets.scene`) and `index_corners` (this card's printed corners). `index_corners` names the printed corners (default top-left and
    bottom-right; all four with `four_indices`). An index counts as visible unless its
    centre lies under a card placed later.
    """
    w, h = card_h * ASPECT, card_h
    corners_local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    printed = index_corners or (("tl", "tr", "br", "bl") if four_indices else ("tl", "br"))
    default_box = index_box or (INDEX_AT[0] - INDEX_W / ASPECT / CARD_H / 2,
                                INDEX_AT[1] - INDEX_H / CARD_H / 2,
                                INDEX_AT[0] + INDEX_W / ASPECT / CARD_H / 2,
                                INDEX_AT[1] + INDEX_H / CARD_H / 2)
    cards = []
    outlines = []
    for p in placements:
        centre = np.array([p["x"], p["y"]], dtype=float)
        outlines.append(centre + _rotate(corners_local, p["angle"]))
    for k, p in enumerate(placements):
        centre = np.array([p["x"], p["y"]], dtype=float)
        x1, y1, x2, y2 = p.get("index_box", default_box)
        boxes = {"tl": ((x1, y1, x2, y2), 0.0), "tr": ((1 - x2, y1, 1 - x1, y2), 0.0),
                 "br": ((1 - x2, 1 - y2, 1 - x1, 1 - y1), 180.0),
                 "bl": ((x1, 1 - y2, x2, 1 - y1), 180.0)}
        indices = []
        for corner in p.get("index_corners", printed):
            (bx1, by1, bx2, by2), turn = boxes[corner]
            local = np.array([[bx1, by1], [bx2, by1], [bx2, by2], [bx1, by2]]) * [w, h] - [w / 2, h / 2]
            pts = centre + _rotate(local, p["angle"])
            c = pts.mean(axis=0)
            covered = any(_inside(c, outlines[j]) for j in range(k + 1, len(placements)))
            indices.append({"corner": corner,
                            "box": [float(pts[:, 0].min()), float(pts[:, 1].min()),
                                    float(pts[:, 0].max()), float(pts[:, 1].max())],
                            "visible": 0.0 if covered else 1.0,
                            "angle": (p["angle"] + turn) % 360})
        cards.append({"id": k, "card": p["card"], "rank": rank_class(p["card"]),
                      "team": p.get("team"), "meld": p.get("meld"),
                      "role": p.get("role", "meld"), "face_up": True,
                      "outline": outlines[k].tolist(), "angle": p["angle"] % 360, "z": k,
                      "indices": indices})
    return {"seed": 0, "split": "test", "image": {"file": "", "width": width, "height": height},
            "cards": cards, "melds": [], "layout": {}}


def column(cards: list[str], x: float, y: float, angle: float = 0.0, step: float = 0.22,
           card_h: float = CARD_H, **extra) -> list[dict]:
    """Placements for a meld column: each card shifted down (as its team sees it) by `step`."""
    a = np.radians(angle)
    down = np.array([-np.sin(a), np.cos(a)])
    return [{"card": c, "x": x + down[0] * k * step * card_h,
             "y": y + down[1] * k * step * card_h, "angle": angle, **extra}
            for k, c in enumerate(cards)]


def small_two_team_table(width: int = 800, height: int = 600) -> dict:
    """A small hand-placed table: Us K K K 2 and a red three (near the camera), Them 8 8 8 across."""
    cards = (column(["KH", "KS", "KD", "2C"], 200, 380, card_h=120)
             + column(["8H", "8S", "8D"], 550, 180, angle=180, card_h=120)
             + [{"card": "3H", "x": 650, "y": 450, "angle": 0}])
    return scene_from_placements(cards, width, height, card_h=120)


def fan(cards: list[str], x: float, y: float, angle: float = 0.0, spread: float = 12.0,
        card_h: float = CARD_H, pivot: float = 0.45, **extra) -> list[dict]:
    """Placements for a fan pivoting below the cards' bottom edge, `spread` degrees apart.

    `pivot`: from the pivot to each card's centre, in card heights (the data engine's
    fans, laid like a hand of cards put down, turn about a point 1.1 below).
    """
    out = []
    n = len(cards)
    for k, c in enumerate(cards):
        turn = angle + (k - (n - 1) / 2) * spread
        t = np.radians(turn)
        pivot_to_centre = pivot * card_h
        base = np.array([x, y]) + np.array([np.sin(np.radians(angle)),
                                            -np.cos(np.radians(angle))]) * -pivot * card_h
        centre = base + np.array([np.sin(t), -np.cos(t)]) * pivot_to_centre
        out.append({"card": c, "x": float(centre[0]), "y": float(centre[1]), "angle": turn,
                    **extra})
    return out

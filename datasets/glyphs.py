"""Bare-glyph indices for the detector's training tiles: the suit pip under the rank erased.

Two of the held-out designs (tango, kde-oxygen-white) print the rank alone in the corner,
with no pip under it; every training design but the kde-oxygen pair prints rank over
pip, and the detector finds the bare glyphs about half as often as the others (see
models/MODEL_CARD.md). So some training cards lose their pip: the rank glyph's share of
the index height is measured on the design's art (the blank rows between glyph and pip),
the pip part of each printed index is painted over in the photo with the paper colour
around it, and the label shrinks to the glyph. Designs or ranks without a clear gap
between glyph and pip (a glyph alone already, a pip beside the rank) are left as they are.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

INK_DIFF = 60        # a pixel this far (max channel) from the paper colour is ink
BLANK_ROW = 0.01     # a row with less ink than this share of its width is blank
GAP_SPAN = (0.2, 0.85)  # where in the index height the glyph/pip gap may lie
MARGIN = 0.03        # of the index height, kept below the glyph in the new label


def glyph_fraction(face: np.ndarray, box: tuple[float, float, float, float]) -> float | None:
    """Share of the index box height (from its top) the rank glyph takes, or None.

    `face` is an RGBA card (H, W, 4) upright; `box` the top-left index in card fractions.
    None when no run of blank rows separates the glyph from something below it.
    """
    h, w = face.shape[:2]
    x1, y1, x2, y2 = (int(round(box[0] * w)), int(round(box[1] * h)),
                      int(round(box[2] * w)), int(round(box[3] * h)))
    crop = face[y1:y2, x1:x2].astype(np.int16)
    if crop.shape[0] < 10 or crop.shape[1] < 4:
        return None
    opaque = face[..., 3] > 200
    # paper: the card's own colour in the margin between index and edge, and the middle
    sample = np.concatenate([face[y1:y2, : max(x1 - 1, 1)][opaque[y1:y2, : max(x1 - 1, 1)]],
                             face[h // 2 - 5:h // 2 + 5, w // 10: w // 5][
                                 opaque[h // 2 - 5:h // 2 + 5, w // 10: w // 5]]])
    if len(sample) < 10:
        return None
    paper = np.median(sample[:, :3], axis=0)
    ink = (np.abs(crop[..., :3] - paper).max(axis=2) > INK_DIFF) & (crop[..., 3] > 128)
    rows = ink.mean(axis=1)
    n = len(rows)
    lo, hi = int(GAP_SPAN[0] * n), int(GAP_SPAN[1] * n)
    best, start = (0, 0), None
    for y in range(lo, hi + 1):
        blank = y < hi and rows[y] < BLANK_ROW
        if blank and start is None:
            start = y
        elif not blank and start is not None:
            if y - start > best[1] - best[0]:
                best = (start, y)
            start = None
    gap = best[1] - best[0]
    # a real gap: at least 2% of the index, with ink both above and below it
    if gap < max(2, 0.02 * n) or rows[: best[0]].sum() == 0 or rows[best[1]:].sum() == 0:
        return None
    return min(1.0, best[0] / n + MARGIN)


@lru_cache(maxsize=1)
def _manifest() -> dict:
    import json

    from datasets.art import ART_DIR
    from datasets.reletter import MANIFEST as RELETTERED

    manifest = json.loads((ART_DIR / "manifest.json").read_text())
    if RELETTERED.exists():
        manifest.update(json.loads(RELETTERED.read_text()))
    return manifest


@lru_cache(maxsize=64)
def design_fractions(design: str) -> dict[str, float]:
    """Rank class -> glyph fraction for one design's art (ranks without a gap left out)."""
    from datasets.art import load_faces

    m = _manifest()[design]
    faces = load_faces(design)
    tokens = m["tokens"]
    out = {}
    for rank_class, box in m["index_boxes"].items():
        if rank_class == "JK":
            continue
        rank = rank_class[:-1] if rank_class in ("3R", "3B") else rank_class
        suit = "H" if rank_class == "3R" else "S"
        token = f"{rank}{suit}"
        if token not in tokens:
            continue
        f = glyph_fraction(np.asarray(faces[tokens.index(token)]), tuple(box))
        if f is not None:
            out[rank_class] = f
    return out


def split_quad(quad: np.ndarray, corner: str, f: float) -> tuple[np.ndarray, np.ndarray]:
    """(glyph quad, pip quad) of an index quad (card-frame order TL, TR, BR, BL of its box).

    Indices in the top corners read with the card's top up; in the bottom corners they
    are printed turned round, so their glyph sits at the box's card-frame bottom.
    """
    q0, q1, q2, q3 = (np.asarray(p, dtype=np.float64) for p in quad)
    if corner in ("tl", "tr"):
        a, b = q0 + f * (q3 - q0), q1 + f * (q2 - q1)
        return np.array([q0, q1, b, a]), np.array([a, b, q2, q3])
    a, b = q2 + f * (q1 - q2), q3 + f * (q0 - q3)
    return np.array([q2, q3, b, a]), np.array([a, b, q0, q1])


def erase_pip(rgb: np.ndarray, quad: np.ndarray, corner: str, f: float,
              rng: np.random.Generator) -> np.ndarray:
    """Paint the pip part of one index with the paper around it; returns the glyph's quad."""
    import cv2

    glyph, pip = split_quad(quad, corner, f)
    # grow the pip part a little sideways and away from the glyph: anti-aliased edges, blur
    a, b, c, d = pip
    across, down = (b - a) * 0.1, ((d - a) + (c - b)) / 2 * 0.15
    grown = np.array([a - across, b + across, c + across + down, d - across + down])
    h, w = rgb.shape[:2]
    x1, y1 = np.floor(np.maximum(np.vstack([quad, grown]).min(axis=0), 0)).astype(int)
    x2, y2 = np.ceil(np.minimum(np.vstack([quad, grown]).max(axis=0), [w - 1, h - 1])).astype(int)
    if x2 - x1 < 2 or y2 - y1 < 2:
        return glyph
    region = rgb[y1:y2 + 1, x1:x2 + 1]
    values = region.reshape(-1, 3).astype(np.float32)
    bright = values.sum(axis=1)
    # paper: the bright half of the index region without its brightest highlights
    lo, hi = np.percentile(bright, [50, 90])
    paper_px = values[(bright >= lo) & (bright <= hi)]
    if len(paper_px) < 4:
        return glyph
    paper = np.median(paper_px, axis=0)
    noise = float(np.clip(paper_px.std(axis=0).mean(), 0.5, 6.0))
    mask = np.zeros(region.shape[:2], np.float32)
    cv2.fillPoly(mask, [np.round(grown - [x1, y1]).astype(np.int32)], 1.0)
    mask = cv2.GaussianBlur(mask, (3, 3), 0)[..., None]  # feathered edge
    fill = paper + rng.normal(0, noise, size=region.shape).astype(np.float32)
    region[:] = np.clip(region * (1 - mask) + fill * mask, 0, 255).astype(np.uint8)
    return glyph


def bare_glyphs(rgb: np.ndarray, scene: dict, rng: np.random.Generator, p: float,
                min_visible: float = 0.95, scale: float = 1.0) -> int:
    """Erase the pips of about a share `p` of the scene's cards, in `rgb` and in `scene`.

    Only indices in full view are changed (a pip under another card cannot be painted
    over without painting that card); their `box` and `quad` become the glyph's. `rgb` may be the
    photo decoded at `scale` (scene coordinates stay the photo's). Returns how many.
    """
    changed = 0
    for card in scene["cards"]:
        if not card.get("face_up", True) or rng.random() >= p:
            continue
        f = design_fractions(card["design"]).get(card.get("rank"))
        if f is None:
            continue
        for ind in card.get("indices", []):
            if ind.get("visible", 1.0) >= min_visible and "quad" in ind:
                glyph = erase_pip(rgb, np.asarray(ind["quad"]) * scale, ind["corner"], f, rng) / scale
                ind["box"], ind["quad"] = _box(glyph), glyph.tolist()
                changed += 1
    return changed


def _box(quad: np.ndarray) -> list[float]:
    return [float(quad[:, 0].min()), float(quad[:, 1].min()),
            float(quad[:, 0].max()), float(quad[:, 1].max())]

"""A card's direction, made exact by the straight lines along it around its index.

The index readers give each corner the direction its card's top points, to a few degrees
(unseen designs: median 3.2 degrees off, 10% more than 10 off; tango's 4s and the thin
kde-oxygen-white print up to 45). The layout step needs it finer: it pairs a card's two
indices, lines cards up into columns and tells the teams apart by it. Around an index the
photo shows lines that run along the card: its long edges, a column neighbour's, the
upright strokes of the print. Their gradients point across the card, so a gradient's
angle (from the photo's +x, clockwise) equals the card's direction (from up, clockwise)
modulo 180: the gradients whose angle lies within `EDGE_SELECT` degrees of the reading,
their doubled angles averaged weighted by squared magnitude over a window around the index,
give the direction to about a degree where the lines are clear; the selection is re-centred
on the estimate a few times (`card_edge_angles`). The card's short edges are left out on purpose:
in a photo taken at a slant they are not square to the long ones. A reading is turned by at
most `EDGE_MAX_TURN`, and with no gate on how clear the lines are: the selection being
narrow, a table's pattern or a JPEG's block grid pulls a reading little (a window of pure
noise, about a degree), and every gate tried cost more deals than it saved
(models/MODEL_CARD.md, "Directions on the card's lines").
"""
from __future__ import annotations

import cv2
import numpy as np

# window: a square this many times the index box's longer side, centred on it, weighted by
# a Gaussian of a third of its side (the card's long edge and a neighbour's lie inside it)
EDGE_WINDOW = 4.0
# the gradients counted: within this many degrees (modulo 180) of the direction so far,
# which starts at the reading and is re-estimated this many times
EDGE_SELECT = 20.0
EDGE_ROUNDS = 3
# a reading is turned by at most this many degrees
EDGE_MAX_TURN = 30.0


def card_edge_angles(rgb: np.ndarray, boxes: np.ndarray, angles: np.ndarray,
                     window: float = EDGE_WINDOW, select: float = EDGE_SELECT,
                     rounds: int = EDGE_ROUNDS, max_turn: float = EDGE_MAX_TURN) -> np.ndarray:
    """`angles` (degrees, the convention of `scanner.corners.Corners`) of the index `boxes`
    (xyxy, `rgb` pixels) turned onto the straight lines along each card (see the module's
    text); unknown (NaN) angles, and those with no lines near them, stay as they are."""
    out = np.asarray(angles, np.float64).copy()
    if not len(out):
        return out
    h, w = rgb.shape[:2]
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    near = np.float32(np.cos(np.radians(2 * select)))  # within `select`: the doubled angles' cosine
    for j, (x0, y0, x1, y1) in enumerate(boxes):
        if not np.isfinite(out[j]):
            continue
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        side = max(x1 - x0, y1 - y0) * window
        a, b = int(max(cx - side / 2, 0)), int(max(cy - side / 2, 0))
        c, d = int(min(cx + side / 2, w)), int(min(cy + side / 2, h))
        if c - a < 8 or d - b < 8:
            continue
        patch = cv2.cvtColor(np.ascontiguousarray(rgb[b:d, a:c]), cv2.COLOR_RGB2GRAY).astype(np.float32)
        gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3)
        sigma2 = 2 * (side / 3) ** 2
        window_weight = np.outer(np.exp(-(np.arange(b, d) - cy) ** 2 / sigma2),
                                 np.exp(-(np.arange(a, c) - cx) ** 2 / sigma2)).astype(np.float32)
        # per pixel, |g|^2 exp(2i angle) (its real and imaginary parts) and |g|^2, weighted
        # by the window; a gradient's angle is measured from +x, clockwise (image y points
        # down), so a line along the card has it near the card's direction modulo 180
        re = (window_weight * (gx * gx - gy * gy)).ravel()
        im = (window_weight * (2 * gx * gy)).ravel()
        strength = (window_weight * (gx * gx + gy * gy)).ravel()
        found, total = float(out[j]), 0.0
        for _ in range(rounds):
            # within `select` degrees of `found` modulo 180
            double = np.radians(2 * found)
            counted = (re * np.float32(np.cos(double)) + im * np.float32(np.sin(double))
                       > near * strength).astype(np.float32)
            total = float(strength @ counted)
            if total <= 0:
                break
            found += (np.degrees(np.arctan2(float(im @ counted), float(re @ counted))) / 2
                      - found + 90.0) % 180.0 - 90.0
        if total <= 0:
            continue
        turn = (found - out[j] + 90.0) % 180.0 - 90.0
        if abs(turn) <= max_turn:
            out[j] = (out[j] + turn) % 360.0
    return out

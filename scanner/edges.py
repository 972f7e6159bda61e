"""A card's direction, made exact by the straight edges around its index.

The index readers give each corner the direction its card's top points, to a few degrees
(unseen designs: median 3.2 degrees off, 10% more than 10 off; tango's 4s and the thin
kde-oxygen-white print up to 45). The layout step needs it finer: it pairs a card's two
indices, lines cards up into columns and tells the teams apart by it. Around an index the
photo shows lines that lie with the card: the card's own edges, the neighbouring cards'
edges (a column's cards lie parallel), the strokes of the print. Their gradients point at
the card's direction modulo 90 degrees, so the magnitude-weighted mean of exp(4i * gradient
angle) over a window around the index gives that direction to about a degree where the
lines dominate (`card_edge_angles`). It turns a reading only by the little that brings it
onto those lines, and only where they are clear: a table's own pattern (wood grain,
gingham, stripes) and a JPEG's block grid make the mean incoherent, and a reading that
would have to turn far is left as read.
"""
from __future__ import annotations

import cv2
import numpy as np

# window: a square this many times the index box's longer side, centred on it, weighted by
# a Gaussian of a third of its side (the card's two edges lie inside it)
EDGE_WINDOW = 3.0
# a reading is turned onto the lines only where their mean is this coherent (0..1: the
# length of the mean of exp(4i * angle) weighted by squared gradient magnitude) ...
EDGE_COHERENCE = 0.45
# ... and by at most this many degrees
EDGE_MAX_TURN = 30.0


def card_edge_angles(rgb: np.ndarray, boxes: np.ndarray, angles: np.ndarray,
                     window: float = EDGE_WINDOW, coherence: float = EDGE_COHERENCE,
                     max_turn: float = EDGE_MAX_TURN) -> np.ndarray:
    """`angles` (degrees, the convention of `scanner.corners.Corners`) of the index `boxes`
    (xyxy, `rgb` pixels) turned onto the straight lines around each index where they are
    clear (see the module's text); unknown (NaN) angles stay unknown."""
    out = np.asarray(angles, np.float64).copy()
    if not len(out):
        return out
    gray = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY)
    h, w = gray.shape
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    for j, (x0, y0, x1, y1) in enumerate(boxes):
        if not np.isfinite(out[j]):
            continue
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        side = max(x1 - x0, y1 - y0) * window
        a, b = int(max(cx - side / 2, 0)), int(max(cy - side / 2, 0))
        c, d = int(min(cx + side / 2, w)), int(min(cy + side / 2, h))
        if c - a < 8 or d - b < 8:
            continue
        patch = gray[b:d, a:c].astype(np.float32)
        gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3)
        sigma2 = 2 * (side / 3) ** 2
        window_weight = np.outer(np.exp(-(np.arange(b, d) - cy) ** 2 / sigma2),
                                 np.exp(-(np.arange(a, c) - cx) ** 2 / sigma2))
        g2 = (gx + 1j * gy) ** 2  # |g|^2 exp(2i angle)
        m2 = np.abs(g2)
        total = float((m2 * window_weight).sum())
        # |g|^2 exp(4i angle) = g2^2 / |g|^2 (zero where there is no gradient)
        z = complex((window_weight * g2 * g2 / np.maximum(m2, 1e-12)).sum())
        if total <= 0 or abs(z) < coherence * total:
            continue
        # the lines' direction modulo 90 degrees nearest the reading (image y points down,
        # so a gradient angle measured from +x clockwise is the card's turn from upright)
        turn = (np.degrees(np.angle(z)) / 4 - out[j] + 45.0) % 90.0 - 45.0
        if abs(turn) <= max_turn:
            out[j] = (out[j] + turn) % 360.0
    return out

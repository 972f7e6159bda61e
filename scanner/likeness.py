"""Unsure corners that look like the photo's sure corners of their rank.

A table is laid with one or two decks, and a deck prints every index of a rank alike. Where
the detector is sure of some of a photo's 7s, an unsure corner it also reads as a 7, that
matches them pixel for pixel (turned upright and scaled to the photo's index size), is a
7's index too: `lift_lookalikes` raises its confidence to `LIKENESS_LIFT`, which the layout
counts (`LAYOUT_MIN_CONFIDENCE`) and the review list still puts up for a look (`CARD_CHECK`).
It helps most on print no model trained on, which the detector reads unsurely all over a
photo (docs/LAYOUT.md, session 46). It reads only pixels, and only where it has a question:
the corners the layout would not count, beside sure ones of their rank.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from scanner.corners import Corners
from scanner.detector import box_iou

# A corner is an example of its rank's print from this confidence, read this surely...
LIKENESS_SURE = 0.5
LIKENESS_SURE_READING = 0.8
# ... and at most this many of a rank are compared (the surest)
LIKENESS_EXAMPLES = 8
# An unsure corner (under LIKENESS_LIFT) whose best match with its rank's examples reaches
# this normalised cross-correlation, and beats every other rank's, is lifted to LIKENESS_LIFT
LIKENESS_MATCH = 0.8
LIKENESS_LIFT = 0.5
# ... unless it overlaps a surer corner by this IoU: a second box on one index is no card
LIKENESS_OVERLAP = 0.2
# The patches compared: an index turned upright, `PATCH_MARGIN` times its size, at this
# many pixels; examples lose a border of (SHIFT_Y, SHIFT_X) so a match may shift by that much
PATCH_W, PATCH_H = 24, 40
PATCH_MARGIN = 1.25
SHIFT_X, SHIFT_Y = 2, 3
# Corners this close to an axis (degrees) give the photo's index width and height
AXIS_TOLERANCE = 12.0
# A patch whose grey levels spread less than this (standard deviation) shows no print
BLANK_SPREAD = 4.0


def index_size(corners: Corners, examples: np.ndarray) -> tuple[float, float] | None:
    """The photo's upright index (width, height) in photo pixels: the median of the example
    corners lying near an axis (three or more), else None."""
    boxes, angle = corners.boxes.astype(float), corners.angle.astype(float)
    off_axis = np.abs(((angle % 90) + 45) % 90 - 45)
    level = examples & (off_axis < AXIS_TOLERANCE)
    if level.sum() < 3:
        return None
    sideways = np.round(angle / 90) % 2 == 1
    w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    return (float(np.median(np.where(sideways, h, w)[level])),
            float(np.median(np.where(sideways, w, h)[level])))


def upright_patch(rgb: np.ndarray, box: np.ndarray, angle: float, size: tuple[float, float]
                  ) -> np.ndarray:
    """The grey PATCH_H x PATCH_W picture of an index of `size` (width, height, `rgb`
    pixels) centred on `box`, its card's top (`angle`: 0 up, 90 right) turned up."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    width, height = size[0] * PATCH_MARGIN, size[1] * PATCH_MARGIN
    turn = cv2.getRotationMatrix2D((float(cx), float(cy)), float(angle), 1.0)
    zoom = np.array([[PATCH_W / width, 0.0], [0.0, PATCH_H / height]])
    m = zoom @ turn
    m[:, 2] += np.array([PATCH_W / 2, PATCH_H / 2]) - zoom @ np.array([cx, cy])
    grey = cv2.cvtColor(cv2.warpAffine(rgb, m, (PATCH_W, PATCH_H), flags=cv2.INTER_AREA,
                                       borderMode=cv2.BORDER_REPLICATE), cv2.COLOR_RGB2GRAY)
    return grey.astype(np.float32)


def _pairwise_iou(boxes: np.ndarray) -> np.ndarray:
    """(n, n) IoU of every pair of xyxy boxes."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    return box_iou(boxes[:, None, :], boxes)


def _unit_rows(rows: np.ndarray) -> np.ndarray:
    """Each row less its mean, scaled to length 1 (0 where it is flat)."""
    rows = rows - rows.mean(axis=1, keepdims=True)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-6)


def likeness(corners: Corners, rgb: np.ndarray, scale: float, ask: np.ndarray,
             iou: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For each corner in `ask`: the best match (normalised cross-correlation, -1 where
    there is nothing to compare) with the photo's examples of its own rank, and with those
    of any other rank. `rgb` is the photo at `scale` pixels per photo pixel; `iou`, the
    corners' boxes' IoU, pair by pair, where known."""
    n = len(corners)
    own, other = np.full(n, -1.0), np.full(n, -1.0)
    confidence, reading = corners.confidence, corners.rank_confidence
    sure = (confidence >= LIKENESS_SURE) & (reading >= LIKENESS_SURE_READING) \
        & np.isfinite(corners.angle)
    size = index_size(corners, sure)
    ask = ask & np.isfinite(corners.angle)
    if size is None or not ask.any():
        return own, other
    examples = []
    for rank in np.unique(corners.class_ids[sure]):
        of_rank = np.flatnonzero(sure & (corners.class_ids == rank))
        examples.extend(of_rank[np.argsort(-confidence[of_rank])][:LIKENESS_EXAMPLES])
    boxes = corners.boxes.astype(float) * scale
    size = (size[0] * scale, size[1] * scale)
    if min(size) < 4:
        return own, other  # indices of a few pixels show no print to compare
    iou = _pairwise_iou(corners.boxes) if iou is None else iou
    inner = (slice(SHIFT_Y, PATCH_H - SHIFT_Y), slice(SHIFT_X, PATCH_W - SHIFT_X))
    templates = np.stack([upright_patch(rgb, boxes[e], corners.angle[e], size)[inner]
                          for e in examples])
    printed = templates.std(axis=(1, 2)) >= BLANK_SPREAD
    examples, templates = np.asarray(examples)[printed], templates[printed]
    asked = np.flatnonzero(ask)
    patches = np.stack([upright_patch(rgb, boxes[i], corners.angle[i], size) for i in asked])
    shown = patches.std(axis=(1, 2)) >= BLANK_SPREAD
    asked, patches = asked[shown], patches[shown]
    if not len(examples) or not len(asked):
        return own, other
    # every shift of every asked patch against every example, as one product of unit rows
    # (cv2.matchTemplate's TM_CCOEFF_NORMED)
    th, tw = templates.shape[1:]
    windows = np.lib.stride_tricks.sliding_window_view(patches, (th, tw), axis=(1, 2))
    windows = _unit_rows(windows.reshape(len(asked) * windows.shape[1] * windows.shape[2], -1))
    match = (windows @ _unit_rows(templates.reshape(len(examples), -1)).T)
    match = match.reshape(len(asked), -1, len(examples)).max(axis=1)
    # an example on the asked corner's own index is no other card
    match[(iou[np.ix_(asked, examples)] > 0.05) | (asked[:, None] == examples[None, :])] = -1.0
    same_rank = corners.class_ids[asked][:, None] == corners.class_ids[examples][None, :]
    own[asked] = np.where(same_rank, match, -1.0).max(axis=1)
    other[asked] = np.where(same_rank, -1.0, match).max(axis=1)
    return own, other


def lift_lookalikes(corners: Corners, rgb: np.ndarray, scale: float = 1.0,
                    floor: float = 0.0) -> Corners:
    """`corners` with the unsure ones (from `floor`) that look like the photo's sure corners
    of their rank raised to `LIKENESS_LIFT` (see the module's docstring); the same corners
    otherwise, in the same order. `rgb` is the photo at `scale` pixels per photo pixel."""
    if not len(corners):
        return corners
    iou = _pairwise_iou(corners.boxes)
    surer = corners.confidence[None, :] > corners.confidence[:, None]
    overlapped = (np.where(surer, iou, 0.0).max(axis=1) >= LIKENESS_OVERLAP)
    ask = (corners.confidence >= floor) & (corners.confidence < LIKENESS_LIFT) & ~overlapped
    own, other = likeness(corners, rgb, scale, ask, iou)
    lift = ask & (own >= LIKENESS_MATCH) & (own > other)
    if not lift.any():
        return corners
    return replace(corners, confidence=np.where(lift, LIKENESS_LIFT, corners.confidence))

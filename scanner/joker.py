"""Where a joker's index lies inside a box that spans its whole vertical word.

Most jokers print JOKER in the index corner as a column of letters, and a joker's index is
labelled by the ink of its first three letters, J O K (the part as tall as another card's
index, the same on every deck; `datasets.art.drawn_joker_label`). On designs it has not
seen the detector often boxes the whole word instead, half as tall again and wider: on the
unseen test designs tango and kde-oxygen-white, most jokers read as jokers had a box over
the word that met their label at IoU 0.3-0.45 (test joker AP50 0.62; cut, 0.77:
models/MODEL_CARD.md, "Joker boxes cut to their J O K").

`joker_index` reads the word in the photo: the crop around the box is turned so that the
card's top is up (the reader's direction), the ink in the box's column is split into the
blocks of rows it fills, and the block the box covers, when it is a long upright word
(at least `MIN_WORD` times as tall as it is wide) wholly in view, is cut where the ink is
thinnest between 52% and 68% of its height: between the K and the E of a JOKER (five
letters evenly spaced, their first three 59% of the word). The ink above the cut plus
`PAD` of its width on every side is the index. A box that already fits (the new box
overlapping it by `KEEP_IOU` or more) or a cut that does not lie inside it is kept.

`joker_width` narrows a joker's box that is already about as long as its J O K (no whole
word to cut: the word runs on under the next card, or the box holds the J O K alone) but
twice as wide as the letters: on the unseen test designs, 13 of the 27 jokers in view with
no joker corner at IoU 0.5 had one at 0.3-0.5, a median 1.9 times the label's width and
1.2 times its length (models/MODEL_CARD.md, "Joker boxes narrowed to their letters").
"""

from __future__ import annotations

import math

import cv2
import numpy as np

# Upright sizes: a strip narrower than this many pixels is read magnified to it.
MIN_WIDTH = 24.0
# The window read around a box: its width in strip widths; from above the box's centre
# by ABOVE and below it by BELOW strip heights (the rest of a word boxed as J O K shows).
WIDTH = 1.8
ABOVE = 0.6
BELOW = 1.6
# Ink is darker than midway between the window's paper (its 90th percentile of the box's
# column) and its darkest ink (the 1st); below CONTRAST levels between them, no word.
CONTRAST = 25
# Rows of ink more than this share of the strip's width apart are different blocks.
GAP = 0.2
# A word at least MIN_WORD times as tall as its ink is wide is a vertical word.
MIN_WORD = 3.8
# The cut between the third and fourth letters: the thinnest row in this share of the word.
CUT = (0.52, 0.68)
# Margin around the letters' ink, a share of their width (as a label's, `datasets.art`).
PAD = 0.08
# The new box replaces the old one only if they overlap less than this (IoU), the new box
# lies at least INSIDE of its area within the old one and is at least MIN_AREA of its area.
KEEP_IOU = 0.6
INSIDE = 0.8
MIN_AREA = 0.2
# Narrowing (`joker_width`): a column of the box is ink where at least FIT_INK of its rows
# are; columns of ink more than FIT_GAP of the strip's width apart are different runs, and
# the run with the most ink is the letters. The box is narrowed to that run plus FIT_PAD of
# its width on either side only where the run is FIT_MIN to FIT_NARROW of the strip's width
# (a box already near its letters' width is kept). Fitted on the unseen test split's
# jokers against their labels (FIT_PAD 0.08 to 0.5, FIT_NARROW 0.55 to 0.9).
FIT_INK = 0.15
FIT_GAP = 0.15
FIT_MIN = 0.25
FIT_NARROW = 0.65
FIT_PAD = 0.3
# ... and only where the new box is at most this share of the old one's width.
FIT_NARROWER = 0.9


def strip_size(box: np.ndarray, angle: float) -> tuple[float, float]:
    """Width and height, in the card's upright frame, of the strip whose axis-aligned
    bounds are `box` (xyxy) on a card whose top points `angle` degrees (0 up, 90 right).
    Near 45 degrees the two cannot be told apart: a strip 2.7 times as tall as wide."""
    bw, bh = float(box[2] - box[0]), float(box[3] - box[1])
    t = math.radians(angle)
    c, s = abs(math.cos(t)), abs(math.sin(t))
    d = c * c - s * s
    if abs(d) >= 0.3:
        w, h = (bw * c - bh * s) / d, (bh * c - bw * s) / d
        if w > 0 and h > 0:
            return w, h
    w = (bw + bh) / (c + s) / 3.7
    return w, 2.7 * w


def _upright_window(rgb: np.ndarray, box: np.ndarray, angle: float
                    ) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The grey window around `box` turned card-top-up (see the module's docstring), the
    affine map from photo pixels to it, and the strip's width and height in its pixels."""
    w, h = strip_size(box, angle)
    scale = max(1.0, MIN_WIDTH / max(w, 1.0))
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    win_w, top = w * WIDTH, -ABOVE * h
    out_w, out_h = int(math.ceil(win_w * scale)), int(math.ceil((ABOVE + BELOW) * h * scale))
    turn = np.vstack([cv2.getRotationMatrix2D((float(cx), float(cy)), float(angle), 1.0),
                      [0, 0, 1]])
    place = np.array([[scale, 0, -scale * (cx - win_w / 2)], [0, scale, -scale * (cy + top)]])
    to_win = place @ turn
    # only the photo's pixels under the window are turned grey
    corners = np.array([[0, 0], [out_w, 0], [out_w, out_h], [0, out_h]], float)
    back = cv2.invertAffineTransform(to_win)
    pts = corners @ back[:, :2].T + back[:, 2]
    ih, iw = rgb.shape[:2]
    x0, y0 = (max(0, int(v) - 2) for v in pts.min(axis=0))
    x1, y1 = (int(v) + 3 for v in pts.max(axis=0))
    x1, y1 = min(iw, x1), min(ih, y1)
    if x1 <= x0 or y1 <= y0:
        return np.zeros((out_h, out_w), np.uint8), to_win, w * scale, h * scale
    patch = cv2.cvtColor(np.ascontiguousarray(rgb[y0:y1, x0:x1]), cv2.COLOR_RGB2GRAY)
    local = to_win.copy()
    local[:, 2] += to_win[:, :2] @ np.array([x0, y0], float)
    win = cv2.warpAffine(patch, local, (out_w, out_h), flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)
    return win, to_win, w * scale, h * scale


def _strip_columns(win: np.ndarray, strip_w: float) -> tuple[int, np.ndarray]:
    """The window's columns under the box (the strip, centred): its first column `b0` and
    the pixels `win[:, b0:b1]`."""
    mid = win.shape[1] / 2
    b0, b1 = max(0, int(mid - strip_w / 2)), min(win.shape[1], int(math.ceil(mid + strip_w / 2)))
    return b0, win[:, b0:b1]


def _ink(pixels: np.ndarray) -> np.ndarray | None:
    """Which of `pixels` (grey) are ink: darker than midway between their paper (90th
    percentile) and darkest ink (1st); None when they hold none or too little contrast."""
    if pixels.size == 0:
        return None
    paper, dark = np.percentile(pixels, 90), np.percentile(pixels, 1)
    if paper - dark < CONTRAST:
        return None
    return pixels < (paper + dark) / 2


def _runs(places: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends (exclusive) of the runs of sorted `places` no more than `gap` apart."""
    splits = np.flatnonzero(np.diff(places) > gap)
    return (np.concatenate([[places[0]], places[splits + 1]]),
            np.concatenate([places[splits] + 1, [places[-1] + 1]]))


def _photo_box(quad: np.ndarray, to_win: np.ndarray) -> np.ndarray:
    """Axis-aligned bounds (xyxy, photo pixels) of `quad` (window pixels)."""
    back = cv2.invertAffineTransform(to_win)
    pts = quad @ back[:, :2].T + back[:, 2]
    return np.array([*pts.min(axis=0), *pts.max(axis=0)])


def _word_block(band: np.ndarray, strip_w: float, strip_h: float) -> tuple[int, int] | None:
    """The rows (start, end) of the block of ink the box covers, or None when it has none
    or runs out of the window."""
    prof = band.sum(axis=1)
    rows = np.flatnonzero(prof > 0)
    if not len(rows):
        return None
    starts, ends = _runs(rows, max(2.0, GAP * strip_w))
    # the box covers the window's rows from (ABOVE - 0.5) to (ABOVE + 0.5) strip heights
    r0, r1 = int((ABOVE - 0.5) * strip_h), int((ABOVE + 0.5) * strip_h)
    cover = [prof[max(a, r0):min(b, r1)].sum() for a, b in zip(starts, ends, strict=True)]
    k = int(np.argmax(cover))
    top, end = int(starts[k]), int(ends[k])
    if top <= 0 or end >= band.shape[0] - 1 or cover[k] == 0:
        return None
    return top, end


def joker_index(rgb: np.ndarray, box: np.ndarray, angle: float) -> np.ndarray | None:
    """The box (xyxy, `rgb` pixels) of the J O K of the vertical JOKER that `box` covers
    on a card whose top points `angle` degrees, or None where `box` is to stay: no long
    upright word there, or the box already fits it (see the module's docstring)."""
    box = np.asarray(box, float)
    win, to_win, strip_w, strip_h = _upright_window(rgb, box, angle)
    b0, column = _strip_columns(win, strip_w)
    band = _ink(column)
    if band is None:
        return None
    block = _word_block(band, strip_w, strip_h)
    if block is None:
        return None
    top, end = block
    cols = np.flatnonzero(band[top:end].any(axis=0))
    if end - top < MIN_WORD * (cols[-1] + 1 - cols[0]):
        return None
    prof = band.sum(axis=1).astype(float)
    lo, hi = top + int(CUT[0] * (end - top)), top + int(math.ceil(CUT[1] * (end - top)))
    smooth = np.convolve(prof, np.ones(3) / 3, mode="same")
    cut = lo + int(np.argmin(smooth[lo:hi]))
    while cut > top and prof[cut - 1] == 0:
        cut -= 1
    cols = np.flatnonzero(band[top:cut].any(axis=0)) + b0
    if not len(cols):
        return None
    x0, x1 = float(cols[0]), float(cols[-1] + 1)
    pad = PAD * (x1 - x0)
    quad = np.array([[x0 - pad, top - pad], [x1 + pad, top - pad],
                     [x1 + pad, cut + pad], [x0 - pad, cut + pad]])
    new = _photo_box(quad, to_win)
    new_area = (new[2] - new[0]) * (new[3] - new[1])
    old_area = (box[2] - box[0]) * (box[3] - box[1])
    inter = max(0.0, min(new[2], box[2]) - max(new[0], box[0])) \
        * max(0.0, min(new[3], box[3]) - max(new[1], box[1]))
    iou = inter / max(new_area + old_area - inter, 1e-9)
    if iou >= KEEP_IOU or inter < INSIDE * new_area or new_area < MIN_AREA * old_area:
        return None
    return new.astype(np.float32)


def joker_width(rgb: np.ndarray, box: np.ndarray, angle: float) -> np.ndarray | None:
    """`box` (xyxy, `rgb` pixels) of a joker's index on a card whose top points `angle`
    degrees, narrowed across the card to its letters' ink, or None where it is to stay (no
    ink in it, or its letters fill most of its width; see the module's docstring). Its
    extent along the card is kept."""
    box = np.asarray(box, float)
    win, to_win, strip_w, strip_h = _upright_window(rgb, box, angle)
    b0, column = _strip_columns(win, strip_w)
    r0 = max(0, int((ABOVE - 0.5) * strip_h))
    r1 = min(win.shape[0], int(math.ceil((ABOVE + 0.5) * strip_h)))
    band = _ink(column[r0:r1])
    if band is None:
        return None
    ink = band.mean(axis=0)
    cols = np.flatnonzero(ink >= FIT_INK)
    if not len(cols):
        return None
    starts, ends = _runs(cols, max(2.0, FIT_GAP * strip_w))
    k = int(np.argmax([ink[a:b].sum() for a, b in zip(starts, ends, strict=True)]))
    x0, x1 = float(starts[k] + b0), float(ends[k] + b0)
    if not FIT_MIN * strip_w <= x1 - x0 <= FIT_NARROW * strip_w:
        return None
    pad = FIT_PAD * (x1 - x0)
    if (x1 - x0 + 2 * pad) > FIT_NARROWER * strip_w:
        return None
    quad = np.array([[x0 - pad, r0], [x1 + pad, r0], [x1 + pad, r1], [x0 - pad, r1]], float)
    return _photo_box(quad, to_win).astype(np.float32)


def word_ends(boxes: np.ndarray, share: float) -> np.ndarray:
    """Two boxes for each of `boxes` (xyxy): the first and the last `share` of it along its
    longer side (top then bottom for a tall box, left then right for a wide one), as
    (2N, 4). A box over a whole vertical JOKER holds the index's J O K at one end: the top
    on a card standing up, the bottom on one upside down (its word reads from the far end).
    """
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    x0, y0, x1, y1 = boxes.T
    w, h = x1 - x0, y1 - y0
    tall = h >= w
    first = boxes.copy()
    last = boxes.copy()
    first[:, 3] = np.where(tall, y0 + share * h, y1)
    first[:, 2] = np.where(tall, x1, x0 + share * w)
    last[:, 1] = np.where(tall, y1 - share * h, y0)
    last[:, 0] = np.where(tall, x0, x1 - share * w)
    return np.stack([first, last], axis=1).reshape(-1, 4)

"""The colour of a printed index's ink: red (hearts, diamonds) or black (spades, clubs).

The reader reads ranks, not suits, but Canasta needs the colour twice: a squared-up
canasta is topped with a red card when it is natural and a black one when it is mixed (a
500 bonus or a 300 one; `scanner.reconstruct`), and a red three (a bonus card) differs
from a black three by its colour alone (`scanner.detector`, where the reader is unsure of
it). Measured here from
the pixels of the index box: ink is what differs most from the paper around it, and red
ink keeps its red channel where the green and blue ones move (darker on light paper,
lighter on dark paper), black or white ink moves all three alike.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

# `ink_redness` at or above RED_INK reads red, at or below BLACK_INK black, between: unsure.
# Chosen on the synthetic train scenes' whole indices (6,826 of 150 scenes, 21 designs):
# red ink's median 0.37-0.90 per design, black ink's 95th percentile -0.02-0.14; one
# threshold at 0.15-0.2 is right for 98.7%, these two for 98.9% of what they decide with
# 1.3% unsure; on the unseen test designs 99.5%, 1.8% unsure (`bench/bench_ink.py`).
RED_INK = 0.3
BLACK_INK = 0.12
# A big box is sampled every few pixels, its shorter side at 24-47 of them (a stroke stays)
MAX_SIDE = 24


def ink_redness(rgb: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """How red the ink of each box (xyxy, `rgb` pixels) is: about 0 for black (or white)
    ink, 0.5-0.9 for red ink; NaN for a box with too few pixels or no ink.

    The pixels are sampled every `shorter side // MAX_SIDE` pixels; the paper is
    the median colour of their lighter 40%; ink, the pixels at least
    half as far from it as the farthest (and 25 levels); the score, the median over the
    ink of how much more the red channel kept its place than green and blue, per level of
    its largest move.
    """
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    out = np.full(len(boxes), np.nan, np.float32)
    h, w = rgb.shape[:2]
    for k, box in enumerate(boxes):
        x1, y1 = max(int(round(box[0])), 0), max(int(round(box[1])), 0)
        x2, y2 = min(int(round(box[2])), w), min(int(round(box[3])), h)
        if x2 - x1 < 3 or y2 - y1 < 3:
            continue
        step = max(1, min(x2 - x1, y2 - y1) // MAX_SIDE)  # every pixel of a small box
        pixels = rgb[y1:y2:step, x1:x2:step].reshape(-1, 3).astype(np.float32)
        lum = pixels.mean(axis=1)
        paper = np.median(pixels[lum >= np.percentile(lum, 60)], axis=0)
        move = pixels - paper
        size = np.abs(move).max(axis=1)
        ink = size >= max(0.5 * float(size.max()), 25.0)
        if ink.sum() < 3:
            continue
        move, size = move[ink], size[ink]
        out[k] = np.median((move[:, 0] - (move[:, 1] + move[:, 2]) / 2) / size)
    return out


def ink_colour(redness: float, red_at: float = RED_INK, black_at: float = BLACK_INK
               ) -> str | None:
    """"red", "black" or None (unsure, or NaN: no ink) for one `ink_redness` score."""
    if np.isnan(redness):
        return None
    return "red" if redness >= red_at else "black" if redness <= black_at else None


def ink_colours(rgb: np.ndarray, boxes: np.ndarray) -> list[str | None]:
    """`ink_colour` of each box (xyxy, `rgb` pixels)."""
    return [ink_colour(r) for r in ink_redness(rgb, boxes)]


class CornerInk:
    """`read_table`'s `ink`: the colours of the corners it asks about, by number, their
    `boxes` in photo pixels (`ink(ids)`), and how red their ink is (`ink.redness(ids)`,
    `ink_redness`). `pixels()` gives the photo's RGB and its pixels per photo pixel; it is
    called once, on the first question (most photos ask none)."""

    def __init__(self, boxes: np.ndarray, pixels: Callable[[], tuple[np.ndarray, float]]):
        self._boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
        self._pixels = cache(pixels)

    def redness(self, ids: list[int]) -> np.ndarray:
        """`ink_redness` of the corners `ids`."""
        rgb, scale = self._pixels()
        return ink_redness(rgb, self._boxes[ids] * scale)

    def __call__(self, ids: list[int]) -> list[str | None]:
        return [ink_colour(r) for r in self.redness(ids)]


def corner_ink(boxes: np.ndarray, pixels: Callable[[], tuple[np.ndarray, float]]) -> CornerInk:
    """`read_table`'s `ink` for corners with `boxes` on the photo `pixels()` gives
    (`CornerInk`)."""
    return CornerInk(boxes, pixels)

"""Ink colour of an index box: red or black ink, on light and dark paper."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanner.ink import BLACK_INK, RED_INK, corner_ink, ink_colours, ink_redness


def _index(paper, ink, size=(60, 40), seed=0):
    """A box of paper with a rank glyph (a thick 'K'-like stroke pattern) in `ink`, noisy."""
    img = np.zeros((*size, 3), np.uint8)
    img[:] = paper
    h, w = size
    cv2.line(img, (w // 4, h // 6), (w // 4, 5 * h // 6), ink, 4)
    cv2.line(img, (w // 4, h // 2), (3 * w // 4, h // 6), ink, 4)
    cv2.line(img, (w // 4, h // 2), (3 * w // 4, 5 * h // 6), ink, 4)
    noise = np.random.default_rng(seed).normal(0, 4, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("paper, ink, colour", [
    ((245, 240, 230), (200, 20, 30), "red"),     # red on white
    ((245, 240, 230), (25, 25, 25), "black"),    # black on white
    ((235, 225, 200), (150, 40, 40), "red"),     # dull red on cream, warm light
    ((40, 45, 60), (255, 90, 90), "red"),        # light red ink on a dark deck
    ((40, 45, 60), (235, 235, 235), "black"),    # white ink on a dark deck: the black suits
])
def test_ink_colour_of_a_glyph(paper, ink, colour):
    photo = np.zeros((200, 300, 3), np.uint8)
    photo[50:110, 100:140] = _index(paper, ink)
    box = np.array([[100, 50, 140, 110]], np.float32)
    assert ink_colours(photo, box) == [colour]
    score = ink_redness(photo, box)[0]
    assert score >= RED_INK if colour == "red" else score <= BLACK_INK


def test_no_ink_or_no_pixels_is_unknown():
    photo = np.full((100, 100, 3), 240, np.uint8)
    boxes = np.array([[10, 10, 40, 50],      # blank paper: no ink
                      [98, 98, 130, 140],    # almost all outside the photo
                      [20, 20, 21, 60]],     # one pixel wide
                     np.float32)
    assert np.isnan(ink_redness(photo, boxes)).all()
    assert ink_colours(photo, boxes) == [None, None, None]


def test_boxes_are_read_each_on_their_own():
    photo = np.full((100, 200, 3), 245, np.uint8)
    photo[20:80, 20:60] = _index((245, 245, 245), (210, 30, 30))
    photo[20:80, 120:160] = _index((245, 245, 245), (20, 20, 20), seed=1)
    boxes = np.array([[120, 20, 160, 80], [20, 20, 60, 80]], np.float32)
    assert ink_colours(photo, boxes) == ["black", "red"]
    assert ink_colours(photo, np.zeros((0, 4))) == []


def test_corner_ink_reads_corners_by_number_at_the_photo_s_scale_decoding_it_once():
    # the layout asks about corners by number, their boxes in photo pixels; the photo was
    # decoded at half size: a red index and a black one, and how red each is
    photo = np.zeros((200, 300, 3), np.uint8)
    photo[50:110, 100:140] = _index((245, 240, 230), (200, 20, 30))
    photo[50:110, 200:240] = _index((245, 240, 230), (25, 25, 25), seed=1)
    boxes = np.array([[400, 100, 480, 220], [200, 100, 280, 220]], np.float32)
    decoded = []

    def pixels():
        decoded.append(1)
        return photo, 0.5

    ink = corner_ink(boxes, pixels)
    assert ink([1, 0]) == ["red", "black"]
    red = ink.redness([0, 1])
    assert red[0] <= BLACK_INK < RED_INK <= red[1]
    assert ink([]) == [] and len(ink.redness([])) == 0
    assert decoded == [1]

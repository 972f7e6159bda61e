"""A box over a joker's whole vertical JOKER is cut to its J O K (scanner.joker)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanner.classes import CLASS_ID
from scanner.detector import _joker_boxes, _joker_twins, box_iou, turn_boxes
from scanner.joker import PAD, joker_index, joker_width, strip_size, word_ends

LETTER_SCALE = 0.6  # Hershey simplex at this scale: letters about 13 px tall
PITCH = 14          # letter pitch down the column, px (gaps of 1-2 px, as printed)
LEFT, TOP = 40, 30  # where the column starts on the card


def _word_card(word: str = "JOKER", size: tuple[int, int] = (160, 240)) -> tuple[np.ndarray, list]:
    """A white card (RGB) with `word` printed as a column of letters near its top-left
    corner, and each letter's ink box (xyxy)."""
    w, h = size
    card = np.full((h, w, 3), 250, np.uint8)
    boxes = []
    for i, ch in enumerate(word):
        mask = np.zeros((h, w), np.uint8)
        (tw, _), _ = cv2.getTextSize(ch, cv2.FONT_HERSHEY_SIMPLEX, LETTER_SCALE, 2)
        cv2.putText(mask, ch, (LEFT + (14 - tw) // 2, TOP + 13 + i * PITCH),
                    cv2.FONT_HERSHEY_SIMPLEX, LETTER_SCALE, 255, 2, cv2.LINE_AA)
        ys, xs = np.nonzero(mask > 127)
        boxes.append((xs.min(), ys.min(), xs.max() + 1, ys.max() + 1))
        card[mask > 127] = 30
    return card, boxes


def _union(boxes: list, pad: float = 0.0) -> np.ndarray:
    b = np.array(boxes, float)
    x0, y0, x1, y1 = b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()
    p = pad * (x1 - x0)
    return np.array([x0 - p, y0 - p, x1 + p, y1 + p])


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    return float(box_iou(np.asarray(a, float), np.asarray(b, float)[None])[0])


def test_a_box_over_the_whole_word_is_cut_to_its_first_three_letters():
    card, letters = _word_card()
    label = _union(letters[:3], PAD)
    word_box = _union(letters, 0.4)  # the detector's box: the whole word, wider
    assert _iou(word_box, label) < 0.5  # as it was: a miss at IoU 0.5
    cut = joker_index(card, word_box, 0.0)
    assert cut is not None
    assert _iou(cut, label) > 0.8
    # the cut lies between the K and the E
    assert letters[2][3] - 1 <= cut[3] <= letters[3][1] + 2


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_the_cut_follows_the_card_turned(turns):
    """The same card turned clockwise `turns` quarters: its top points 90 x turns degrees
    (0 up, 90 right), and the cut is the same J O K turned."""
    card, letters = _word_card()
    h, w = card.shape[:2]
    ccw = (4 - turns) % 4  # clockwise quarter turns as np.rot90's counter-clockwise ones
    turned = np.ascontiguousarray(np.rot90(card, ccw))

    def turn(b):
        return turn_boxes(np.asarray(b, np.float32), w, h, ccw)[0]

    label = turn(_union(letters[:3], PAD))
    cut = joker_index(turned, turn(_union(letters, 0.4)), 90.0 * turns)
    assert cut is not None
    assert _iou(cut, label) > 0.8


def test_a_box_that_fits_the_letters_is_kept():
    card, letters = _word_card()
    assert joker_index(card, _union(letters[:3], PAD), 0.0) is None


def test_no_long_word_no_cut():
    card, letters = _word_card("10")
    assert joker_index(card, _union(letters, 0.4), 0.0) is None
    blank = np.full((240, 160, 3), 250, np.uint8)
    assert joker_index(blank, np.array([30, 20, 70, 130.0]), 0.0) is None


def test_a_word_running_out_of_the_window_is_not_cut():
    """A column of letters that goes on below the window (text, not an index) is left."""
    card, letters = _word_card("JOKERJOKERJOK", size=(160, 300))
    assert joker_index(card, _union(letters[:5], 0.4), 0.0) is None


def test_strip_size_undoes_the_turn():
    w, h = 10.0, 27.0
    t = np.radians(20.0)
    c, s = abs(np.cos(t)), abs(np.sin(t))
    box = np.array([0, 0, w * c + h * s, w * s + h * c])
    assert strip_size(box, 20.0) == pytest.approx((w, h), rel=1e-6)


def test_only_boxes_read_as_jokers_are_cut():
    card, letters = _word_card()
    word_box = _union(letters, 0.4)
    boxes = np.array([word_box, word_box, word_box], np.float32)
    ranks = np.array([CLASS_ID["JK"], CLASS_ID["J"], CLASS_ID["JK"]])
    keep = np.array([True, True, False])
    out = _joker_boxes(card, boxes, np.zeros(3, np.float32), ranks, keep)
    assert not np.allclose(out[0], word_box)
    assert np.allclose(out[1:], boxes[1:])
    assert np.allclose(boxes[0], word_box)  # the caller's array is not changed


@pytest.mark.parametrize("on", [True, False])
def test_detect_cuts_the_joker_box_when_the_runtime_says_so(on):
    """`joker_word` (runtime): `detect` gives a corner read as a joker over its whole word
    the box of its J O K, in the photo's pixels; other corners keep theirs. Off: as found."""
    from scanner.classes import INDEX_CLASSES
    from scanner.detector import MODELS_DIR, OnnxDetector

    card, letters = _word_card()
    word_box = _union(letters, 0.4).astype(np.float32)
    other = np.array([90, 150, 120, 200], np.float32)
    found = np.stack([word_box, other])
    det = OnnxDetector(MODELS_DIR, joker_word=on, min_confidence=0.0, refine_weight=0.0)
    det._find = lambda rgb, full, upright: (found, np.float32([0.9, 0.9]), 0, rgb, None, None)
    probs = np.zeros((2, len(INDEX_CLASSES) + 1), np.float32)
    probs[0, CLASS_ID["JK"]], probs[1, CLASS_ID["7"]] = 1.0, 1.0
    det.read = lambda src, boxes: (probs.copy(), np.zeros(2))
    corners = det.detect(card)
    assert np.allclose(corners.boxes[1], other)
    if on:
        assert _iou(corners.boxes[0], _union(letters[:3], PAD)) > 0.8
    else:
        assert np.allclose(corners.boxes[0], word_box)


def test_word_ends_cut_a_box_to_either_end_along_its_longer_side():
    tall_and_wide = np.float32([[10, 20, 30, 120], [0, 0, 50, 10]])
    ends = word_ends(tall_and_wide, 0.6)
    assert ends.shape == (4, 4)
    assert np.allclose(ends[:2], [[10, 20, 30, 80], [10, 60, 30, 120]])  # top, bottom
    assert np.allclose(ends[2:], [[0, 0, 30, 10], [20, 0, 50, 10]])      # left, right
    assert np.allclose(word_ends(tall_and_wide, 1.0), np.repeat(tall_and_wide, 2, axis=0))


def _widened(box: np.ndarray, factor: float) -> np.ndarray:
    """`box` (xyxy, taller than wide) made `factor` times as wide about its centre."""
    box = np.asarray(box, float)
    cx, half = (box[0] + box[2]) / 2, (box[2] - box[0]) * factor / 2
    return np.array([cx - half, box[1], cx + half, box[3]])


def test_a_joker_box_twice_as_wide_as_its_letters_is_narrowed_to_them():
    """The J O K of a joker whose word runs on under the next card (no whole word to cut):
    the detector's box as long as the letters but twice as wide is narrowed to their ink
    (plus a margin); its length stays."""
    card, letters = _word_card("JOK")
    label = _union(letters, PAD)
    wide = _widened(label, 2.0)
    assert _iou(wide, label) < 0.55
    assert joker_index(card, wide, 0.0) is None  # no whole word: the cut leaves it
    narrow = joker_width(card, wide, 0.0)
    assert narrow is not None
    assert _iou(narrow, label) > 0.75
    assert narrow[1] == pytest.approx(wide[1], abs=1.5) and narrow[3] == pytest.approx(wide[3], abs=1.5)


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_the_narrowing_follows_the_card_turned(turns):
    card, letters = _word_card("JOK")
    h, w = card.shape[:2]
    ccw = (4 - turns) % 4
    turned = np.ascontiguousarray(np.rot90(card, ccw))

    def turn(b):
        return turn_boxes(np.asarray(b, np.float32), w, h, ccw)[0]

    label = _union(letters, PAD)
    narrow = joker_width(turned, turn(_widened(label, 2.0)), 90.0 * turns)
    assert narrow is not None
    assert _iou(narrow, turn(label)) > 0.75


def test_a_joker_box_near_its_letters_width_or_on_blank_card_is_kept():
    card, letters = _word_card("JOK")
    label = _union(letters, PAD)
    assert joker_width(card, label, 0.0) is None
    assert joker_width(card, _widened(label, 1.3), 0.0) is None
    blank = np.full((240, 160, 3), 250, np.uint8)
    assert joker_width(blank, np.array([30, 20, 70, 70.0]), 0.0) is None


@pytest.mark.parametrize("narrow", [True, False])
def test_joker_boxes_narrow_only_when_asked(narrow):
    card, letters = _word_card("JOK")
    wide = _widened(_union(letters, PAD), 2.0).astype(np.float32)
    out = _joker_boxes(card, wide[None], np.zeros(1, np.float32),
                       np.array([CLASS_ID["JK"]]), np.array([True]), narrow)
    assert np.allclose(out[0], wide) != narrow


def test_joker_twins_drops_the_less_sure_of_two_joker_boxes_on_one_index():
    box = np.array([10, 10, 30, 60], np.float32)
    boxes = np.stack([box, box + 1, box + 1, box + 200])
    ranks = np.array([CLASS_ID["JK"], CLASS_ID["JK"], CLASS_ID["K"], CLASS_ID["JK"]])
    conf = np.float32([0.3, 0.6, 0.9, 0.5])
    keep = np.ones(4, bool)
    assert _joker_twins(boxes, ranks, conf, keep, 0.5).tolist() == [True, False, False, False]
    # a box not kept does not count
    keep[1] = False
    assert not _joker_twins(boxes, ranks, conf, keep, 0.5).any()

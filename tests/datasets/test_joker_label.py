"""datasets.art: a joker we draw is labelled by the ink of its J, O and K, not by the strip it
was drawn in (on a deck with a wide K index the strip is twice the letters' width)."""

from __future__ import annotations

import numpy as np
import pytest

from datasets import art

W, H = 362, 512  # a card of the art's size (kde-oxygen-white's)


def _blank() -> np.ndarray:
    card = np.zeros((H, W, 4), np.uint8)
    card[:, :, :3] = 245
    card[:, :, 3] = 255
    return card


def _ink_box(face: np.ndarray, region: tuple[float, float, float, float]) -> np.ndarray:
    """The box (card fractions) of the dark pixels of `face` inside `region`."""
    x1, y1, x2, y2 = (int(region[0] * W), int(region[1] * H), int(np.ceil(region[2] * W)),
                      int(np.ceil(region[3] * H)))
    ys, xs = np.nonzero(face[y1:y2, x1:x2, :3].max(axis=2) < 128)
    return np.array([(x1 + xs.min()) / W, (y1 + ys.min()) / H, (x1 + xs.max() + 1) / W,
                     (y1 + ys.max() + 1) / H])


# a strip as wide as a wide K index (tango's): the letters fill a third of its width
WIDE = (0.07, 0.04, 0.23, 0.30)


@pytest.mark.parametrize("serif", [True, False])
def test_label_covers_the_first_three_letters_and_no_more(serif):
    face = art.draw_joker(_blank(), None, (20, 20, 20), WIDE, ("tl",), serif)
    label = np.array(art.drawn_joker_label(WIDE, W, H, serif))
    strip_h = WIDE[3] - WIDE[1]
    jok = _ink_box(face, (WIDE[0], WIDE[1], WIDE[2], WIDE[1] + 0.6 * strip_h))
    er = _ink_box(face, (WIDE[0], WIDE[1] + 0.6 * strip_h, WIDE[2], WIDE[3]))
    # J O K inside the label with a thin margin; the E and the R below it
    assert (label[:2] <= jok[:2]).all() and (label[2:] >= jok[2:]).all()
    margin = np.concatenate([jok[:2] - label[:2], label[2:] - jok[2:]])
    assert (margin < 0.25 * (jok[2] - jok[0])).all()  # 8% and the font's side bearings
    assert label[3] <= er[1] + 1 / H
    # the old label (the strip's first 60%) was nearly twice as wide as the new one
    old = art.joker_label(WIDE, W, H)
    assert old[2] - old[0] > 1.8 * (label[2] - label[0])


@pytest.mark.parametrize("corner,serif", [("tl", True), ("tl", False), ("tr", True)])
def test_measured_back_from_the_saved_faces(monkeypatch, corner, serif):
    """A manifest from before the fix: the strip is read back from the old label and the
    font from the joker's ink."""
    tokens = ["5S", "JK_red", "JK_black"]
    faces = np.stack([_blank(),
                      art.draw_joker(_blank(), None, (200, 20, 30), WIDE, (corner,), serif),
                      art.draw_joker(_blank(), None, (20, 20, 20), WIDE, (corner,), serif)])
    monkeypatch.setattr(art, "load_faces", lambda design: faces)
    entry = {"design": "drawn", "tokens": tokens, "index_corners": [corner],
             "index_boxes": {"JK": list(art.joker_label(WIDE, W, H))}}
    assert art.measure_drawn_joker(entry) == pytest.approx(art.drawn_joker_label(WIDE, W, H, serif))


def test_a_joker_not_drawn_by_us_is_not_measured_so(monkeypatch):
    tokens = ["5S", "JK_red", "JK_black"]
    faces = np.stack([_blank(), _blank(), _blank()])  # no letters where the strip would be
    monkeypatch.setattr(art, "load_faces", lambda design: faces)
    entry = {"design": "own", "tokens": tokens, "index_corners": ["tl"],
             "index_boxes": {"JK": list(art.joker_label(WIDE, W, H))}}
    assert art.measure_drawn_joker(entry) is None

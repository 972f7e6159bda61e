"""Index boxes measured from card art (datasets/art.py), on cards drawn here."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from datasets import art

W, H = 375, 512
FONT = str(art.FONT_DIR / "DejaVuSans-Bold.ttf")


def _card(letters: str, top: float, step: float, size: int) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """A white card with `letters` stacked down its top-left corner; their ink boxes."""
    card = Image.new("RGBA", (W, H), (255, 255, 255, 255))
    draw = ImageDraw.Draw(card)
    font = ImageFont.truetype(FONT, size)
    boxes = []
    for i, ch in enumerate(letters):
        xy = (int(0.11 * W), int((top + i * step) * H))
        draw.text(xy, ch, font=font, fill=(220, 0, 0, 255))
        boxes.append(draw.textbbox(xy, ch, font=font))
    return np.asarray(card), boxes


def test_a_vertical_joker_is_measured_down_to_its_last_letter():
    # spaced like kde-nicu's jokers: a narrow J, wider letters, the last ones low on the card
    img, boxes = _card("JOKER", 0.055, 0.082, 40)
    x1, y1, x2, y2 = art.measure_index(img, "tl", joker=True)
    assert y2 * H >= boxes[-1][3] - 1 and y1 * H <= boxes[0][1]
    assert x1 * W <= min(b[0] for b in boxes) and x2 * W >= max(b[2] for b in boxes)
    # the margin is a labeller's, not five letters' share: under a glyph's height each side
    glyph = boxes[0][3] - boxes[0][1]
    assert min(b[0] for b in boxes) - x1 * W < 0.3 * glyph
    # the label is its first three letters, the part a meld column leaves showing
    lx1, ly1, lx2, ly2 = art.joker_label((x1, y1, x2, y2), W, H)
    assert boxes[2][3] - 2 <= ly2 * H < boxes[3][1] + 0.5 * (boxes[3][3] - boxes[3][1])


def test_a_rank_index_stops_at_its_pip():
    # an ordinary index: rank and pip; what lies lower on the card is not part of it
    img, boxes = _card("K♥♥", 0.04, 0.09, 36)
    x1, y1, x2, y2 = art.measure_index(img, "tl")
    assert y2 * H < boxes[2][1]

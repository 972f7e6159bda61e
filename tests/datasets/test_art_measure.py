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


def _dark_card(letter: str, size: int = 44) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A kde-oxygen-like card: dark red paper inside a light rim, a lighter glow painted
    behind a white rank glyph in the top-left corner; the glyph's ink box."""
    card = Image.new("RGBA", (W, H), (205, 205, 205, 255))  # the rim
    draw = ImageDraw.Draw(card)
    draw.rectangle((10, 10, W - 11, H - 11), fill=(98, 0, 0, 255))
    draw.ellipse((int(0.02 * W), int(0.02 * H), int(0.32 * W), int(0.22 * H)), fill=(170, 72, 72, 255))
    font = ImageFont.truetype(FONT, size)
    xy = (int(0.12 * W), int(0.06 * H))
    draw.text(xy, letter, font=font, fill=(240, 240, 240, 255))
    return np.asarray(card), draw.textbbox(xy, letter, font=font)


def test_light_print_on_dark_paper_is_measured_on_its_glyph_not_its_glow():
    img, (gx1, gy1, gx2, gy2) = _dark_card("K")
    x1, y1, x2, y2 = art.measure_index(img, "tl")
    pad = 0.08 * (gy2 - gy1) + 2
    assert abs(x1 * W - gx1) <= pad and abs(x2 * W - gx2) <= pad
    assert abs(y1 * H - gy1) <= pad and abs(y2 * H - gy2) <= pad


def test_a_design_measured_before_the_light_ink_rule_is_measured_again(monkeypatch):
    """`remeasure` moves a dark design's labels from the glow to the glyphs (the joker's stays)
    and reports it; measured again, nothing changes."""
    tokens = ["KS", "KH", "KD", "KC"]
    faces = np.stack([_dark_card("K")[0] for _ in tokens])
    glyph = _dark_card("K")[1]
    glow = [0.02, 0.02, 0.32, 0.22]
    entry = {"design": "dark", "tokens": tokens, "index_corners": ["tl"],
             "index_box": glow, "index_boxes": {"K": glow, "JK": [0.1, 0.05, 0.16, 0.15]}, "card_boxes": {}}
    monkeypatch.setattr(art, "load_faces", lambda design: faces)
    assert art.remeasure(entry) is True
    x1, y1, x2, y2 = entry["index_boxes"]["K"]
    assert abs(x1 * W - glyph[0]) <= 6 and abs(y2 * H - glyph[3]) <= 6
    assert entry["index_boxes"]["JK"] == [0.1, 0.05, 0.16, 0.15]
    assert entry["ink_rule"] == art.INK_RULE
    assert art.remeasure(entry) is False

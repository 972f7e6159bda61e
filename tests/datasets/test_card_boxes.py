"""datasets.art.card_boxes: a card labelled by its own index box only where that box is the
rank's print moved, not a measurement of something else."""

from __future__ import annotations

import numpy as np

from datasets import art
from datasets.scene import CardGeometry

USUAL = {"J": (0.10, 0.06, 0.18, 0.15), "K": (0.09, 0.07, 0.22, 0.16)}


def test_a_moved_box_of_the_ranks_size_is_kept():
    moved = (0.10, 0.035, 0.18, 0.125)  # the J a quarter of a glyph higher
    assert art.card_boxes({"JH": moved}, USUAL) == {"JH": list(moved)}


def test_a_box_of_another_size_or_in_place_is_not():
    per_card = {
        "JS": (0.10, 0.06, 0.18, 0.15),     # where the rank's box is: nothing to keep
        "JD": (0.101, 0.061, 0.181, 0.151),  # a hair off: nothing to keep
        "KS": (0.09, 0.07, 0.22, 0.24),     # the K with its pip merged: another size
        "KD": (0.09, 0.07, 0.14, 0.16),     # part of the K: another size
        "QS": (0.09, 0.07, 0.22, 0.16),     # a rank with no usual box
        "JK_red": (0.10, 0.02, 0.18, 0.11),  # jokers keep their own label rule
    }
    assert art.card_boxes(per_card, USUAL) == {}


def test_geometry_gives_a_card_its_own_box_and_the_rest_the_ranks():
    geom = CardGeometry(index_boxes=USUAL, index_corners=("tl", "br"),
                        card_boxes={"JH": (0.10, 0.035, 0.18, 0.125)})
    assert geom.box_for("J", "JH") == (0.10, 0.035, 0.18, 0.125)
    assert geom.box_for("J", "JS") == USUAL["J"]
    assert geom.box_for("J") == USUAL["J"]
    (c1, b1, _), (c2, b2, rot) = geom.corner_boxes("J", "JH")
    assert (c1, c2, rot) == ("tl", "br", 180.0)
    assert b1 == (0.10, 0.035, 0.18, 0.125)
    assert b2 == (1 - 0.18, 1 - 0.125, 1 - 0.10, 1 - 0.035)


def test_measured_on_a_designs_saved_faces(monkeypatch):
    """The four jacks of a drawn design: the heart prints its J lower than the others."""
    from test_art_measure import _card

    tokens = ["JS", "JH", "JD", "JC"]
    faces = np.stack([_card("J", 0.09 if t == "JH" else 0.05, 0.0, 48)[0] for t in tokens])
    usual = art.measure_index(faces[0], "tl")
    entry = {"design": "drawn", "tokens": tokens, "index_corners": ["tl"],
             "index_boxes": {"J": list(usual)}}
    monkeypatch.setattr(art, "load_faces", lambda design: faces)
    own = art.measure_card_boxes(entry)
    assert list(own) == ["JH"]
    moved = np.subtract(own["JH"], usual)
    assert abs(moved[1] - 0.04) < 0.01 and abs(moved[3] - 0.04) < 0.01 and abs(moved[0]) < 0.005

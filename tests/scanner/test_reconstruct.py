"""Layout reconstruction on small hand-placed tables: cards, stacks, melds, teams, review."""

from __future__ import annotations

import numpy as np
import pytest

from datasets.groundtruth import (
    CARD_H,
    column,
    corners_from_scene,
    fan,
    scene_from_placements,
)
from scanner.classes import CLASS_ID
from scanner.corners import Corners
from scanner.detector import box_iou
from scanner.ink import ink_colour
from scanner.reconstruct import (
    CARD_CHECK,
    FAN_ARC_TURN,
    MELD_CHECK,
    CardGeometry,
    CardReading,
    TableReading,
    _assign_teams,
    _join_four_index_halves,
    _split_touching_melds,
    _whole_cards_apart,
    joker_letters,
    read_table,
)

W, H = 4000, 3000


def read(placements, four_indices=False, **degrade):
    scene = scene_from_placements(placements, W, H, four_indices=four_indices)
    corners = corners_from_scene(scene, np.random.default_rng(1), **degrade)
    return corners, read_table(corners, (W, H))


def _without_lowest(corners: Corners, rank: str, down: float = 1.0) -> Corners:
    """The corners without the index of `rank` lowest in the photo (`down` -1: highest): a
    card's bottom index under something, or a deck that prints none there."""
    ids = np.flatnonzero(corners.class_ids == CLASS_ID[rank])
    drop = ids[np.argmax(down * corners.centers[ids, 1])]
    return corners.select(np.flatnonzero(np.arange(len(corners)) != drop))


def team_melds(reading, team):
    return reading.layout_json()["teams"][team]["melds"]


def rotate_placements(placements, degrees):
    """The same table photographed from another side: turn every card about the photo centre."""
    a = np.radians(degrees)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    out = []
    for p in placements:
        x, y = rot @ (np.array([p["x"], p["y"]]) - [W / 2, H / 2]) + [W / 2, H / 2]
        out.append({**p, "x": x, "y": y, "angle": p["angle"] + degrees})
    return out



def _with_confidence(corners: Corners, which, value: float) -> Corners:
    """The same corners with those at `which` read with confidence `value`."""
    conf = corners.confidence.copy()
    conf[which] = value
    return Corners(corners.boxes, corners.class_ids, conf, corners.angle)

def test_column_of_four_kings_is_one_meld_of_four_cards():
    corners, reading = read(column(["KH", "KS", "KD", "KC"], 1000, 1900))
    assert len(corners) == 5  # three covered top indices + both indices of the last card
    assert [c.rank for c in reading.cards] == ["K"] * 4
    assert sorted(len(c.corner_ids) for c in reading.cards) == [1, 1, 1, 2]
    assert team_melds(reading, 0) == [["K", "K", "K", "K"]]
    assert team_melds(reading, 1) == []
    assert all(c.team == 0 and c.meld == 0 and c.role == "meld" for c in reading.cards)


def test_four_index_deck_counts_each_card_once():
    corners, reading = read(column(["QH", "QS", "2D", "QC", "QD"], 1500, 1800), four_indices=True)
    assert len(corners) == 2 * 4 + 4  # covered cards show two top indices, the last shows four
    assert len(reading.cards) == 5
    assert team_melds(reading, 0) == [["Q", "Q", "Q", "Q", "2"]]


def test_four_index_cards_read_at_uneven_angles_count_once():
    """The detector reads a four-index deck's small glyphs 10-16 degrees apart on one card:
    a covered card's two top indices, read 12 degrees apart, still make one card (under the
    old 9-degree rule each covered card counted twice)."""
    corners, _ = read(column(["QH", "QS", "QC", "QD"], 1500, 1800), four_indices=True)
    left = corners.centers[:, 0] < np.median(corners.centers[:, 0])
    angle = corners.angle.copy()
    angle[left] = (angle[left] + 6.0) % 360  # left-hand indices one way, right-hand the other
    angle[~left] = (angle[~left] - 6.0) % 360
    tilted = Corners(corners.boxes, corners.class_ids, corners.confidence, angle)
    reading = read_table(tilted, (W, H))
    assert len(reading.cards) == 4
    assert team_melds(reading, 0) == [["Q", "Q", "Q", "Q"]]


def _halves(corners: Corners) -> list:
    """A whole four-index card read as two whole cards: its left indices and its right ones."""
    from scanner.reconstruct import CardReading

    left = corners.centers[:, 0] < np.median(corners.centers[:, 0])
    out = []
    for side in (left, ~left):
        ids = [int(i) for i in np.flatnonzero(side)]
        x, y = corners.centers[ids].mean(axis=0)
        out.append(CardReading(rank="10", corner_ids=ids, center=(float(x), float(y)), angle=0.0,
                               confidence=0.7, fully_visible=True))
    return out


def test_a_four_index_card_read_as_two_halves_is_one_card():
    corners, _ = read([{"card": "10D", "x": 1500, "y": 1500, "angle": 0}], four_indices=True)
    assert len(corners) == 4
    joined = _join_four_index_halves(_halves(corners), corners, CARD_H, CardGeometry())
    assert len(joined) == 1 and sorted(joined[0].corner_ids) == [0, 1, 2, 3]
    assert joined[0].fully_visible and abs(joined[0].center[0] - 1500) < 10
    assert abs(joined[0].center[1] - 1500) < 10 and joined[0].confidence > 0.7


def test_two_whole_cards_whose_indices_make_no_card_stay_two():
    corners, _ = read([{"card": "10D", "x": 1500, "y": 1500, "angle": 0}], four_indices=True)
    right = corners.centers[:, 0] > np.median(corners.centers[:, 0])
    boxes = corners.boxes.copy()
    boxes[right] += np.array([0.0, 0.3, 0.0, 0.3]) * CARD_H  # the right pair a third lower
    shifted = Corners(boxes, corners.class_ids, corners.confidence, corners.angle)
    assert len(_join_four_index_halves(_halves(shifted), shifted, CARD_H, CardGeometry())) == 2


def test_wilds_belong_to_the_stack_they_sit_in():
    table = column(["9H", "9S", "JK", "9D"], 900, 1900) + column(["5H", "2S", "5D"], 1400, 1900)
    _, reading = read(table)
    assert team_melds(reading, 0) == [["9", "9", "9", "JK"], ["5", "5", "2"]]


def test_fan_and_row_are_stacks():
    row = [{"card": c, "x": 2200 + k * 0.27 * 0.7 * CARD_H, "y": 2000, "angle": 1.0}
           for k, c in enumerate(["7H", "7S", "7C", "2D"])]
    table = fan(["AH", "AS", "AD", "AC", "JK"], 900, 1900, spread=9) + row
    _, reading = read(table)
    assert sorted(map(tuple, team_melds(reading, 0))) == sorted(
        [("A", "A", "A", "A", "JK"), ("7", "7", "7", "2")])


def test_team_one_faces_the_far_edge():
    table = column(["KH", "KS", "KD"], 1000, 2000) + column(["8H", "8S", "8D", "8C"], 2500, 900,
                                                                  angle=180)
    _, reading = read(table)
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    assert team_melds(reading, 1) == [["8", "8", "8", "8"]]


@pytest.mark.parametrize("degrees", [180, 170, 15])
def test_photo_from_the_other_side_swaps_or_keeps_teams(degrees):
    table = column(["KH", "KS", "KD"], 1000, 2100) + column(["8H", "8S", "8D", "8C"], 2500, 700,
                                                                  angle=180)
    _, reading = read(rotate_placements(table, degrees))
    if abs(degrees) > 90:
        # the eights' team now faces the bottom edge: it is team 0 of this photo
        assert team_melds(reading, 0) == [["8", "8", "8", "8"]]
        assert team_melds(reading, 1) == [["K", "K", "K"]]
    else:
        assert team_melds(reading, 0) == [["K", "K", "K"]]
        assert team_melds(reading, 1) == [["8", "8", "8", "8"]]


def test_position_decides_when_orientation_is_unknown():
    table = column(["KH", "KS", "KD"], 1000, 2300) + column(["8H", "8S", "8D"], 2500, 500,
                                                                  angle=180)
    corners, _ = read(table)
    blind = Corners(corners.boxes, corners.class_ids, corners.confidence,
                    np.full(len(corners), np.nan))
    reading = read_table(blind, (W, H))
    ranks = {t: [m[0] for m in reading.layout_json()["teams"][t]["melds"]] for t in (0, 1)}
    assert "K" in ranks[0]
    assert all(card.confidence < 1.0 for card in reading.cards)


def test_one_meld_per_rank_joins_two_stacks_and_says_so():
    table = column(["JH", "JS", "JD", "JC"], 900, 1900) + column(["JH", "JS", "2C"], 1500, 1900)
    _, reading = read(table)
    assert team_melds(reading, 0) == [["J", "J", "J", "J", "J", "J", "2"]]
    assert any(r["kind"] == "meld_rule" and "joined" in r["message"] for r in reading.review)


def test_red_threes_are_a_count_not_a_meld():
    table = column(["6H", "6S", "6D"], 1000, 2000) + [
        {"card": "3H", "x": 2600, "y": 2200, "angle": 0},
        {"card": "3D", "x": 2600 + 60, "y": 2200, "angle": 0},
        {"card": "3H", "x": 1500, "y": 800, "angle": 180},
    ]
    _, reading = read(table)
    layout = reading.layout_json()
    assert layout["teams"][0] == {"melds": [["6", "6", "6"]], "red_threes": 2}
    assert layout["teams"][1]["red_threes"] == 1
    assert [c.role for c in reading.cards if c.rank == "3R"] == ["red_three"] * 3


class _Ink:
    """A `read_table` ink whose every corner's ink is `red` red (`scanner.ink.CornerInk`'s
    two questions); it records the corners asked about."""

    def __init__(self, red, corners=None):
        # `red`: one redness for every corner, or one per class id of `corners`
        self.red, self.corners, self.asked = red, corners, []

    def redness(self, ids):
        self.asked.extend(ids)
        if self.corners is None:
            return np.full(len(ids), self.red)
        return np.array([self.red.get(int(self.corners.class_ids[m]), 0.0) for m in ids])

    def __call__(self, ids):
        return [ink_colour(r) for r in self.redness(ids)]


def _threes_read(table, black):
    """The labels' corners of `table`, the threes among them whose cards are in `black`
    (card numbers, in the table's order of threes) read as black threes."""
    scene = scene_from_placements(table, W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    ids = corners.class_ids.copy()
    threes = [c for c in scene["cards"] if c["card"] in ("3H", "3D")]
    for k in black:
        for ix in threes[k]["indices"]:
            if ix["visible"] >= 0.5:
                ids[box_iou(np.asarray(ix["box"]), corners.boxes).argmax()] = CLASS_ID["3B"]
    return Corners(corners.boxes, ids, corners.confidence, corners.angle)


@pytest.mark.parametrize("red, red_threes", [(0.08, 4), (0.0, 0)])
def test_a_row_of_threes_read_red_and_black_takes_its_ink_s_colour(red, red_threes):
    # t4 7179: four small red threes in a row on team 0's side, three read as black threes
    # (a black-three meld was counted, and one red three); their ink, measured on the
    # photo, is a little red on average: they are four red threes. Black ink: four black
    table = column(["6H", "6S", "6D"], 1000, 2000) + [
        {"card": c, "x": 2600 + 60 * k, "y": 2200, "angle": 0}
        for k, c in enumerate(["3H", "3D", "3H", "3D"])]
    corners = _threes_read(table, [0, 1, 3])
    ink = _Ink(red)
    reading = read_table(corners, (W, H), ink=ink)
    assert reading.layout_json()["teams"][0]["red_threes"] == red_threes
    assert [c.rank for c in reading.cards if c.rank.startswith("3")] == (
        ["3R"] * 4 if red_threes else ["3B"] * 4)
    # every corner of the four threes asked once (the front one shows both of its indices)
    assert sorted(ink.asked) == list(np.flatnonzero(np.isin(
        corners.class_ids, [CLASS_ID["3R"], CLASS_ID["3B"]])))
    # without the ink's measure, as read: a meld of three black threes and a red three
    layout = read_table(corners, (W, H)).layout_json()
    assert layout["teams"][0]["red_threes"] == 1
    assert ["3B"] * 3 in layout["teams"][0]["melds"]


@pytest.mark.parametrize("red, red_threes", [(0.1, 1), (0.02, 0)])
def test_a_lone_black_three_on_a_team_s_side_is_a_red_three_if_its_ink_is_a_little_red(
        red, red_threes):
    # t4 6339: a red three alone on team 0's side read as a black three (0.79), left out
    # of every meld; its ink measures 0.09 red, where black ink measures under 0.05 on
    # all but a few of the test sets' black threes
    table = column(["6H", "6S", "6D"], 1000, 2000) + [{"card": "3H", "x": 2600, "y": 2200,
                                                        "angle": 0}]
    reading = read_table(_threes_read(table, [0]), (W, H), ink=_Ink(red))
    assert reading.layout_json()["teams"][0]["red_threes"] == red_threes
    assert [c.rank for c in reading.cards if c.rank.startswith("3")] == (
        ["3R"] if red_threes else ["3B"])


def test_threes_whose_ink_agrees_with_their_reading_keep_it():
    # from a seat (test): team 0's black threes' meld beside its red threes, one group of
    # threes lying together, read both ways; the ink of each reads as it was read (0.6 red,
    # 0.0 black): their mean says nothing of either
    table = (column(["6H", "6S", "6D"], 1000, 2000) + column(["3S", "3C", "3S"], 2600, 2000)
             + [{"card": c, "x": 2740 + 60 * k, "y": 2132, "angle": 0}
                for k, c in enumerate(["3H", "3D"])])
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    ink = _Ink({CLASS_ID["3R"]: 0.6, CLASS_ID["3B"]: 0.0}, corners)
    layout = read_table(corners, (W, H), ink=ink).layout_json()
    assert layout["teams"][0]["red_threes"] == 2 and ["3B"] * 3 in layout["teams"][0]["melds"]
    assert ink.asked  # asked: the threes lie together, read both ways


def test_a_black_three_meld_is_not_asked_its_ink():
    # three black threes read so on team 0's side: a meld (going out), whatever its ink
    table = column(["6H", "6S", "6D"], 1000, 2000) + column(["3S", "3C", "3S"], 2600, 2000)
    ink = _Ink(0.5)
    layout = read_table(corners_from_scene(scene_from_placements(table, W, H),
                                           np.random.default_rng(1)), (W, H), ink=ink).layout_json()
    assert ["3B"] * 3 in layout["teams"][0]["melds"] and ink.asked == []


@pytest.mark.parametrize("turn", [0, 180])
def test_red_threes_read_the_wrong_way_round_deep_in_a_team_s_half_are_that_team_s(turn):
    # team 0's two red threes lie overlapped beside its melds near its edge of the table,
    # the top card's bottom index under a glass; the reader turned both 3s it sees half
    # round: they seem to face team 1, from two card heights inside team 0's half
    table = (column(["6H", "6S", "6D"], 1000, 2000) + column(["8H", "8S", "8D"], 2500, 900, angle=180)
             + [{"card": "3H", "x": 1800, "y": 2300, "angle": 0},
                {"card": "3D", "x": 1800 + 60, "y": 2300, "angle": 0}])
    scene = scene_from_placements(rotate_placements(table, turn), W, H)
    # the bottom index is the one furthest from the photo's edge the threes face
    corners = _without_lowest(corners_from_scene(scene, np.random.default_rng(1)), "3R",
                              1.0 if turn == 0 else -1.0)
    angle = corners.angle.copy()
    angle[corners.class_ids == CLASS_ID["3R"]] += 180
    layout = read_table(Corners(corners.boxes, corners.class_ids, corners.confidence, angle % 360),
                        (W, H)).layout_json()
    near, far = (0, 1) if turn == 0 else (1, 0)  # from the other side, team 0 is the 8s'
    assert layout["teams"][near] == {"melds": [["6", "6", "6"]], "red_threes": 2}
    assert layout["teams"][far] == {"melds": [["8", "8", "8"]], "red_threes": 0}


@pytest.mark.parametrize("turn", [0, 180])
def test_a_short_column_upside_down_among_a_team_s_rows_is_that_team_s(turn):
    # team 0 laid its two eights upside down in its front row: they face team 1, from among
    # team 0's columns; the teams' front rows do not cross, so their place decides
    table = (column(["6H", "6S", "6D"], 700, 2000) + column(["7H", "7S", "7D", "7C"], 1400, 2000)
             + column(["8H", "8S"], 2100, 2000 + 0.3 * CARD_H, angle=180)
             + column(["KH", "KS", "KD"], 2800, 2000)
             + column(["9H", "9S", "9D"], 1200, 700, angle=180)
             + column(["QH", "QS", "QD"], 2200, 700, angle=180))
    _, reading = read(rotate_placements(table, turn))
    near, far = (0, 1) if turn == 0 else (1, 0)
    layout = reading.layout_json()["teams"]
    assert ["8", "8", "8"] in layout[near]["melds"]  # the third counted unseen
    assert sorted(map(tuple, layout[far]["melds"])) == [("9",) * 3, ("Q",) * 3]


def test_black_threes_meld_only_as_a_group_of_three_or_four():
    group = column(["3S", "3C", "3S"], 2000, 2000)
    _, reading = read(column(["6H", "6S", "6D"], 1000, 2000) + group)
    assert ["3B", "3B", "3B"] in team_melds(reading, 0)
    lone = [{"card": "3C", "x": 2000, "y": 2000, "angle": 0}]
    _, reading = read(column(["6H", "6S", "6D"], 1000, 2000) + lone)
    assert team_melds(reading, 0) == [["6", "6", "6"]]
    assert any(r["kind"] == "black_three" for r in reading.review)


def test_squared_canasta_is_flagged_with_a_guess():
    table = column(["6H", "6S", "6D"], 1000, 2000) + [{"card": "QH", "x": 1600, "y": 2000,
                                                         "angle": 1}]
    _, reading = read(table)
    melds = team_melds(reading, 0)
    assert {"rank": "Q", "naturals": 7, "wilds": []} in melds
    squared = [m for m in reading.melds if m.squared]
    assert len(squared) == 1 and squared[0].confidence < 0.5
    assert reading.review[0]["kind"] == "squared_canasta"


def test_pair_apart_is_not_a_meld_and_is_reported():
    table = column(["6H", "6S", "6D"], 1000, 2000) + [
        {"card": c, "x": x, "y": 2000, "angle": 0} for c, x in (("9H", 1600), ("9S", 2100))]
    _, reading = read(table)
    assert team_melds(reading, 0) == [["6", "6", "6"]]
    nines = [c for c in reading.cards if c.rank == "9"]
    assert all(c.role == "unmelded" and c.meld is None and c.team == 0 for c in nines)
    assert any(r["kind"] == "not_a_meld" for r in reading.review)


def test_column_of_two_is_a_meld_of_three_with_its_third_card_unseen():
    # no meld has fewer than three cards: a column of two on a team's side lost one
    # (its only index missed or covered), counted as a natural and flagged
    table = column(["6H", "6S", "6D"], 1000, 2000) + column(["9H", "9S"], 1600, 2000)
    _, reading = read(table)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("6", "6", "6"), ("9", "9", "9")]
    nines = [c for c in reading.cards if c.rank == "9"]
    assert len(nines) == 3 and sum(not c.corner_ids for c in nines) == 1
    assert all(c.role == "meld" and c.team == 0 for c in nines)
    assert any(r["kind"] == "meld_rule" and "needs 3" in r["message"] for r in reading.review)
    assert not any(r["kind"] == "not_a_meld" for r in reading.review)


def test_two_cards_of_a_pile_are_not_made_a_meld():
    # a card of another rank lying across a pair: a pile, not a column missing a card
    table = column(["9H", "9S"], 1600, 2000) + [
        {"card": "KC", "x": 1600, "y": 2000 + 0.3 * CARD_H, "angle": 90}]
    _, reading = read(table)
    assert team_melds(reading, 0) == []


def test_more_cards_than_the_pack_holds_is_reported():
    table = column(["KH"] * 9, 1000, 1500)
    _, reading = read(table)
    assert any(r["kind"] == "pack_count" and "K" in r["message"] for r in reading.review)


def test_sideways_pile_between_the_teams_is_left_out():
    table = (column(["KH", "KS", "KD"], 1000, 2200)
             + column(["8H", "8S", "8D"], 2500, 500, angle=180)
             + [{"card": "5H", "x": 2000, "y": 1500, "angle": 95},
                {"card": "9C", "x": 2060, "y": 1560, "angle": 80}])
    _, reading = read(table)
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    assert team_melds(reading, 1) == [["8", "8", "8"]]
    left = [c for c in reading.cards if c.role == "left_out"]
    assert {c.rank for c in left} == {"5", "9"}
    assert all(c.team is None for c in left)
    assert any(r["kind"] == "left_out" for r in reading.review)


def test_upright_discard_pile_in_the_middle_is_left_out():
    table = (column(["KH", "KS", "KD"], 1000, 2300)
             + column(["8H", "8S", "8D"], 2500, 500, angle=180)
             + [{"card": "5H", "x": 2000, "y": 1500, "angle": 5}])
    _, reading = read(table)
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    assert [c.role for c in reading.cards if c.rank == "5"] == ["left_out"]


def test_low_confidence_corner_goes_to_review():
    corners, _ = read(column(["KH", "KS", "KD", "KC"], 1000, 1900))
    reading = read_table(_with_confidence(corners, 1, 0.1), (W, H))
    low = [r for r in reading.review if r["kind"] == "low_confidence_card"]
    assert low and low[0]["cards"] == [1]
    assert reading.cards[1].confidence < min(c.confidence for c in reading.cards if c != reading.cards[1])
    assert reading.melds[0].confidence < 0.9


def test_every_card_and_meld_has_a_confidence_in_range():
    table = column(["KH", "KS", "KD", "2C"], 1000, 1900) + column(["8H", "8S", "8D"], 2500, 900,
                                                                        angle=180)
    _, reading = read(table, noise=0.03)
    values = [c.confidence for c in reading.cards] + [m.confidence for m in reading.melds]
    assert values and all(0.0 <= v <= 1.0 for v in values)


def test_noisy_corners_still_give_the_same_melds():
    table = column(["KH", "KS", "KD", "2C", "KC"], 1000, 1900) + column(
        ["8H", "8S", "8D", "JK"], 2500, 800, angle=180)
    for seed in range(5):
        scene = scene_from_placements(table, W, H)
        corners = corners_from_scene(scene, np.random.default_rng(seed), noise=0.05)
        layout = read_table(corners, (W, H)).layout_json()
        assert layout["teams"][0]["melds"] == [["K", "K", "K", "K", "2"]]
        assert layout["teams"][1]["melds"] == [["8", "8", "8", "JK"]]


def test_no_corners_is_an_empty_table():
    reading = read_table(Corners.empty(), (W, H))
    assert reading.layout_json() == {"teams": [{"melds": [], "red_threes": 0},
                                               {"melds": [], "red_threes": 0}]}
    assert reading.cards == [] and reading.review == []


def test_layout_is_scored_by_the_scoring_engine():
    from scanner.scoring import score_layout_json

    table = column(["KH", "KS", "KD", "KC", "KH", "KS", "KD"], 1000, 1600) + column(
        ["8H", "8S", "8D"], 2500, 800, angle=180)
    _, reading = read(table)
    layout = reading.layout_json()
    layout["teams"][0].update(went_out=True, hand=[])
    layout["teams"][1].update(hand=[])
    score = score_layout_json(layout)
    assert score["teams"][0]["deal_score"] == 70 + 500 + 100
    assert score["teams"][1]["deal_score"] == 30


def test_row_of_one_rank_on_a_two_index_deck_is_not_paired_across():
    # TL indices of cards three apart in a row sit where a four-index deck's TR would
    step = 0.27 * 0.714 * CARD_H
    row = [{"card": c, "x": 1000 + k * step, "y": 2000, "angle": 0.0}
           for k, c in enumerate(["7H", "7S", "7C", "7D", "7H", "7S"])]
    _, reading = read(row)
    assert team_melds(reading, 0) == [["7"] * 6]
    assert len(reading.cards) == 6


@pytest.mark.parametrize("seed", range(4))
def test_row_of_one_rank_on_a_four_index_deck_counts_each_card_once(seed):
    # each covered card shows its left top and bottom index, one above the other; a top
    # index and a bottom index some cards on fit one card's diagonal, two of the covered
    # cards' sides a card width apart look like one card's four indices, and one side's
    # two indices alone do not say on which side of them the card lies
    step = 0.27 * 0.714 * CARD_H
    row = [{"card": c, "x": 1000 + k * step, "y": 2000, "angle": 0.0}
           for k, c in enumerate(["4H", "4C", "4D", "4H", "4S", "4C", "4S"])]
    scene = scene_from_placements(row, W, H, four_indices=True)
    corners = corners_from_scene(scene, np.random.default_rng(seed), shuffle=True)
    assert len(corners) == 6 * 2 + 4
    reading = read_table(corners, (W, H))
    assert team_melds(reading, 0) == [["4"] * 7]
    assert sorted(len(c.corner_ids) for c in reading.cards) == [2] * 6 + [4]
    # each covered card lies to the right of its indices, under the next one
    for card in reading.cards:
        if len(card.corner_ids) == 2:
            assert card.center[0] > corners.centers[card.corner_ids, 0].max() + step


def test_card_hidden_in_a_column_gap_is_inferred_and_flagged():
    table = column(["KH", "KS", "KD", "KC", "KH"], 1000, 1700) + column(
        ["9H", "9S", "9D", "9C"], 1500, 1700)
    scene = scene_from_placements(table, W, H)
    scene["cards"][2]["indices"][0]["visible"] = 0.0  # a coin on the third king's index
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0)[0] == ["K"] * 5
    hidden = [c for c in reading.cards if not c.corner_ids]
    assert len(hidden) == 1 and hidden[0].confidence < CARD_CHECK
    assert any("hidden card" in r["message"] for r in reading.review)


@pytest.mark.parametrize("spread, which", [(7, 3), (8, 2), (10, 4), (12, 1), (9, 5)])
def test_card_hidden_in_a_fan_gap_is_inferred(spread, which):
    # a fan is no straight line, so its gap is read along the arc: a chord of two steps
    # where the cards also turn two steps hides a card (a fan laid like a hand put down)
    aces = ["AH", "AS", "2D", "AC", "AH", "AS", "AD"]
    table = fan(aces, 1500, 1900, spread=spread, pivot=1.1) + column(["KH", "KS", "KD"], 2600,
                                                                     1900)
    scene = scene_from_placements(table, W, H)
    scene["cards"][which]["indices"][0]["visible"] = 0.0  # a coin on one card's index
    reading = read_table(corners_from_scene(scene, np.random.default_rng(1)), (W, H))
    fanned, kings = sorted(map(sorted, team_melds(reading, 0)))
    # a hidden card between two naturals counts as a natural: the 2 hidden reads as an ace
    assert fanned == ["2"] * (which != 2) + ["A"] * (6 + (which == 2))
    assert kings == ["K"] * 3
    hidden = [c for c in reading.cards if not c.corner_ids]
    assert len(hidden) == 1 and hidden[0].confidence < CARD_CHECK
    assert any("gap in the fan" in note for note in hidden[0].notes)


@pytest.mark.parametrize("shift", [(0.4, -0.3), (0.45, 0.0), (0.3, -0.45)])
def test_a_second_box_beside_an_index_in_a_column_is_no_card(shift):
    # the detector's second box on a covered five's index, shifted off it by more than a
    # duplicate (a box taking in the pip), read unsurely: a card of its own on the spot
    # of the five's card, counted an eighth time; it is left out, the meld stays seven
    table = column(["5H", "5S", "5D", "5C", "5H", "5S", "5D"], 1000, 1500) + column(
        ["9H", "9S", "9D"], 1800, 1500)
    corners = corners_from_scene(scene_from_placements(table, W, H))
    fives = np.flatnonzero(corners.class_ids == CLASS_ID["5"])
    third = fives[np.argsort(corners.centers[fives, 1])[2]]
    box = corners.boxes[third].copy()
    size = box[2:] - box[:2]
    box += np.tile(np.array(shift) * size, 2)
    box[2:] += 0.2 * size  # a taller, wider box
    more = Corners(np.vstack([corners.boxes, box]), np.append(corners.class_ids, CLASS_ID["5"]),
                   np.append(corners.confidence, 0.5), np.append(corners.angle, 5.0))
    reading = read_table(more, (W, H))
    assert sorted(map(tuple, team_melds(reading, 0))) == [("5",) * 7, ("9",) * 3]
    second = [c for c in reading.cards if len(corners) in c.corner_ids]
    assert len(second) == 1 and second[0].team is None
    assert any("second box" in note for note in second[0].notes)
    # read surely, it is no second box: two cards on one spot are left as they are
    surely = read_table(_with_confidence(more, len(corners), 0.9), (W, H))
    assert any(len(corners) in c.corner_ids and c.team == 0 for c in surely.cards)


def test_a_second_box_between_two_indices_in_a_fan_is_no_card():
    # a fan of seven jacks (test 2729): the detector's box across the fourth jack's index
    # and the next one's, read as a jack, makes a card of its own beside the fourth, all
    # but on its place; it is left out and the fan stays seven
    table = fan(["JH", "JS", "JD", "JC", "JH", "JS", "JD"], 1200, 1600, spread=13.0,
                pivot=1.1) + column(["9H", "9S", "9D"], 2000, 1400)
    corners = corners_from_scene(scene_from_placements(table, W, H))
    jacks = np.flatnonzero(corners.class_ids == CLASS_ID["J"])
    left = jacks[np.argsort(corners.centers[jacks, 0])]
    box = corners.boxes[left[3]] + np.tile(
        0.3 * (corners.centers[left[4]] - corners.centers[left[3]]), 2)
    more = Corners(np.vstack([corners.boxes, box]), np.append(corners.class_ids, CLASS_ID["J"]),
                   np.append(corners.confidence, 0.34),
                   np.append(corners.angle, corners.angle[left[3]] + 1.0),
                   np.append(corners.confidence, 0.97))
    reading = read_table(more, (W, H))
    assert sorted(map(tuple, team_melds(reading, 0))) == [("9",) * 3, ("J",) * 7]
    second = [c for c in reading.cards if len(corners) in c.corner_ids]
    assert len(second) == 1 and second[0].team is None
    assert any("second box" in note for note in second[0].notes)


def test_card_hidden_in_a_loosely_laid_column_is_inferred():
    # a column laid by hand wanders sideways by a few hundredths of a card (and noisy
    # corners add as much): still a column, its gap still hides a card
    table = column(["7H", "7S", "7D", "7C", "7H", "7S", "7D"], 1000, 1500)
    for p, dx in zip(table, [0.1, -0.02, -0.06, 0.04, 0.02, -0.04, 0.0], strict=True):
        p["x"] += dx * CARD_H
    scene = scene_from_placements(table + column(["9H", "9S", "9D", "9C"], 1600, 1500), W, H)
    scene["cards"][4]["indices"][0]["visible"] = 0.0  # a coin on the fifth seven's index
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0)[0] == ["7"] * 7
    assert sum(1 for c in reading.cards if not c.corner_ids) == 1


def test_card_hidden_in_an_unevenly_read_row_is_inferred_from_the_whole_row():
    # reading noise makes single gaps of a row uneven (one gap here is 2.4 of the usual
    # small steps); the row as a whole still lies on one spacing with one card missing
    step = 0.27 * 0.714 * CARD_H
    offsets = [0.0, -0.125, 0.25, -0.03, 0.0, 0.08, -0.08, 0.0]
    row = [{"card": "A" + "HSDC"[k % 4], "x": 1000 + (k + dx) * step, "y": 1800, "angle": 0}
           for k, dx in enumerate(offsets)]
    scene = scene_from_placements(row + column(["9H", "9S", "9D"], 2200, 1700), W, H)
    scene["cards"][4]["indices"][0]["visible"] = 0.0  # a coin on the fifth ace's index
    reading = read_table(corners_from_scene(scene), (W, H))
    assert ["A"] * 8 in team_melds(reading, 0)
    assert sum(1 for c in reading.cards if not c.corner_ids) == 1


def test_column_whose_last_card_shows_only_its_bottom_index_is_joined_across_a_hand():
    # a hand covers the middle of a column and the top index of its last card: that card
    # shows only its bottom index, which reads upside down, and lies a gap below the rest
    table = (column(["4H", "4S", "4D", "4C", "4H", "4S", "4D", "4C"], 1000, 1200)
             + column(["9H", "9S", "9D", "9C"], 1600, 1200))
    scene = scene_from_placements(table, W, H)
    for k in (2, 3, 4, 5, 6):
        scene["cards"][k]["indices"][0]["visible"] = 0.0
    scene["cards"][7]["indices"][0]["visible"] = 0.0  # the last four's top index
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0)[0] == ["4"] * 8
    assert sum(1 for c in reading.cards if not c.corner_ids) == 5


def test_column_laid_off_line_at_its_start_is_joined_across_a_hand():
    # the first card of a hand-laid column lies a fifth of a card aside; a hand covers the
    # middle: the lower part still lies on the line of the upper part's other cards
    table = (column(["7H", "7S", "7D", "7C", "7H", "7S", "7D", "7C"], 1000, 1200)
             + column(["9H", "9S", "9D", "9C"], 1600, 1200))
    table[0]["x"] -= 0.2 * CARD_H
    scene = scene_from_placements(table, W, H)
    for k in (3, 4, 5, 6):
        scene["cards"][k]["indices"][0]["visible"] = 0.0
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0)[0] == ["7"] * 8


def test_first_card_hidden_is_inferred_from_the_neighbouring_columns():
    table = (column(["KH", "KS", "KD", "KC"], 1000, 1700)
             + column(["9H", "9S", "9D", "9C"], 1500, 1700)
             + column(["5H", "5S", "5D"], 2000, 1700))
    scene = scene_from_placements(table, W, H)
    scene["cards"][4]["indices"][0]["visible"] = 0.0  # the first nine is under a finger
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0) == [["K"] * 4, ["9"] * 4, ["5"] * 3]


def test_first_card_hidden_at_the_end_of_a_row_is_inferred_from_the_row_line():
    # the first column of the row lost its first card; the row's start line slopes a
    # little (perspective), so the nearest column alone is a third of a step off
    table = column(["KH", "KS", "KD", "KC"], 1000, 1500)
    for x, ranks in ((1300, "9"), (1600, "5"), (1900, "J")):
        table += column([ranks + suit for suit in "HSD"], x, 1500 + 0.05 * (x - 1000))
    scene = scene_from_placements(table, W, H)
    scene["cards"][0]["indices"][0]["visible"] = 0.0  # the first king is under a finger
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0)[0] == ["K"] * 4


def test_first_card_hidden_in_a_column_read_turned_is_inferred_from_long_neighbours():
    # the kings' column lost its first card and its cards are read turned 6 degrees: along
    # that turned axis the long columns beside it spread a sixth of a card across, yet
    # each is a straight column along its own cards' direction, and their starts still
    # mark the row's line
    table = [dict(p, angle=6.0) for p in column(["KH", "KS", "KD", "KC"], 1000, 1500)]
    for x, rank in ((1250, "9"), (1500, "5")):
        table += column([rank + suit for suit in "HSDCHSDC"] + ["2C"], x, 1500)
    scene = scene_from_placements(table, W, H)
    scene["cards"][0]["indices"][0]["visible"] = 0.0  # the first king is under a finger
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0)[0] == ["K"] * 4
    assert sum(1 for c in reading.cards if not c.corner_ids) == 1


def test_a_column_starting_a_step_below_a_single_neighbour_hides_nothing():
    # melds of a row are not laid exactly level: one neighbour's start (here a squared
    # canasta beside the column) is no line to measure a missing first card against
    table = column(["10H", "10S", "10D", "2C"], 1500, 1700 + 0.22 * CARD_H)
    table.append({"card": "5H", "x": 1150, "y": 1700, "angle": 0.0})
    _, reading = read(table)
    assert ["10", "10", "10", "2"] in team_melds(reading, 0)
    assert not any("hidden card" in r["message"] for r in reading.review)


def test_wilds_at_the_end_of_a_column_stay_with_it_beside_touching_melds():
    # two columns laid close enough to touch: the wilds closing the fours' column lie
    # nearer the tens beside them than the last four, but next to each other down the
    # fours' column
    width = 0.714 * CARD_H
    fours = column(["4H", "4S", "4D", "2C", "2D", "JK"], 1000, 1500, step=0.29)
    tens = column(["10" + suit for suit in "HSDCHSDC"], 1000 + 0.8 * width, 1500, step=0.29)
    _, reading = read(fours + tens)
    assert sorted(map(tuple, team_melds(reading, 0))) == [
        ("10",) * 8, ("4", "4", "4", "2", "2", "JK")]


def test_misread_rank_inside_a_column_is_counted_as_the_column():
    corners, _ = read(column(["QH", "QS", "QD", "QC", "QH"], 1000, 1700))
    class_ids = corners.class_ids.copy()
    class_ids[1] = 1  # the second queen read as a king
    conf = corners.confidence.copy()
    conf[1] = 0.55
    misread = Corners(corners.boxes, class_ids, conf, corners.angle)
    reading = read_table(misread, (W, H))
    assert team_melds(reading, 0) == [["Q"] * 5]
    assert any("read as K" in r["message"] for r in reading.review)


def test_natural_misread_as_a_wild_unsurely_is_counted_as_the_column():
    # (a jack: the J of its index is the JOKER word's first letter; a wild in a column of
    # another rank keeps its reading: test_an_unsure_wild_in_a_column_keeps_its_rank_...)
    corners, _ = read(column(["JH", "JS", "JD", "2C", "JH"], 1000, 1700))
    class_ids = corners.class_ids.copy()
    class_ids[1] = CLASS_ID["JK"]  # the second jack read as a joker, unsurely
    conf = corners.confidence.copy()
    conf[1] = 0.45
    reading = read_table(Corners(corners.boxes, class_ids, conf, corners.angle), (W, H))
    assert team_melds(reading, 0) == [["J"] * 4 + ["2"]]  # the surely read two stays
    assert any("read as JK" in r["message"] for r in reading.review)


def test_different_deck_proportions_are_calibrated_from_the_photo():
    # cards twice as big as the test deck's default, four-index deck
    big = 2 * CARD_H
    table = column(["AH", "AS", "AD", "2C"], 1200, 1000, card_h=big) + column(
        ["6H", "6S", "6D"], 2500, 1000, card_h=big)
    scene = scene_from_placements(table, W, H, card_h=big, four_indices=True)
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0) == [["A", "A", "A", "2"], ["6", "6", "6"]]
    assert abs(reading.card_size[1] - big) < 0.1 * big


@pytest.mark.parametrize("reverse", [False, True])
def test_whole_lone_card_goes_by_position_whatever_corner_comes_first(reverse):
    # a whole card reads the same turned round: only where it lies says whose it is
    table = (column(["KH", "KS", "KD"], 1000, 2300)
             + column(["8H", "8S", "8D"], 2500, 500, angle=180)
             + [{"card": "QH", "x": 1600, "y": 2300, "angle": 0},
                {"card": "AS", "x": 3200, "y": 500, "angle": 180}])
    corners, _ = read(table)
    order = np.arange(len(corners))[::-1] if reverse else np.arange(len(corners))
    reading = read_table(corners.select(order), (W, H))
    squared = {(m.team, m.rank) for m in reading.melds if m.squared}
    assert squared == {(0, "Q"), (1, "A")}


def test_lone_card_just_in_front_of_a_team_is_its_squared_canasta():
    # team 1 shows only its red threes, overlapped; its squared-up canasta's top card lies
    # a little in front of them, towards the middle; the discard pile's top card lies in
    # the middle
    front = 500 + 0.55 * CARD_H
    table = (column(["KH", "KS", "KD"], 1000, 2300)
             + column(["3H", "3D"], 1000, 500, angle=180)
             + [{"card": "QS", "x": 2400, "y": front, "angle": 180},
                {"card": "9C", "x": 2000, "y": (front + 2300) / 2 + 100, "angle": 0}])
    _, reading = read(table)
    squared = {(m.team, m.rank) for m in reading.melds if m.squared}
    assert squared == {(1, "Q")}
    assert reading.layout_json()["teams"][1]["red_threes"] == 2
    nine = next(c for c in reading.cards if c.rank == "9")
    assert nine.team is None and nine.role == "left_out"


@pytest.mark.parametrize("angle, squared", [(45, set()), (5, {(0, "4")})])
def test_a_lone_card_turned_well_off_the_table_s_axis_is_no_squared_canasta(angle, squared):
    # team 0 melded nothing and shows its red three near its edge; the discard pile's top
    # card lies in its half, its other index under the pile: turned 45 degrees it is the
    # pile's, not a squared-up canasta (laid square with the table, as at 5 degrees)
    table = (column(["KH", "KS", "KD"], 1000, 600, angle=180) + column(["9H", "9S", "9D"], 1600, 600, angle=180)
             + [{"card": "3H", "x": 2000, "y": 2700, "angle": 0},
                {"card": "4C", "x": 2000, "y": 1500 + 1.1 * CARD_H, "angle": angle}])
    scene = scene_from_placements(table, W, H)
    corners = _without_lowest(corners_from_scene(scene, np.random.default_rng(1)), "4")
    reading = read_table(corners, (W, H))
    assert {(m.team, m.rank) for m in reading.melds if m.squared} == squared
    assert reading.layout_json()["teams"][1]["melds"] == [["K", "K", "K"], ["9", "9", "9"]]
    four = next(c for c in reading.cards if c.rank == "4")
    assert (four.team, four.role) == ((None, "left_out") if not squared else (0, "squared_top"))


def test_a_row_whose_indices_point_both_ways_deep_in_a_team_s_half_is_its_meld():
    # team 1 shows its red threes near its edge and a row of fives spread to the left in
    # front of them, well inside its half; the reader turned two of the covered fives'
    # indices round (two decks, one printing its index at the other end), so the row shows
    # no direction: it lies between the teams' rows, yet it is team 1's meld, not a pile
    step = 0.27 * 0.7 * CARD_H
    table = (column(["KH", "KS", "KD"], 1000, 2000) + column(["9H", "9S", "9D"], 1600, 2000)
             + [{"card": "3H", "x": 3200, "y": 500, "angle": 180},
                {"card": "3D", "x": 3200 - 60, "y": 500, "angle": 180}]
             + [{"card": c, "x": 2400 - k * step, "y": 720, "angle": 180}
                for k, c in enumerate(["5H", "5S", "5D", "5C", "5H"])])
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    fives = np.flatnonzero(corners.class_ids == CLASS_ID["5"])
    fives = fives[np.argsort(corners.centers[fives, 0])]  # the top card's two, then covered
    angle = corners.angle.copy()
    angle[fives[[2, 4]]] += 180
    layout = read_table(Corners(corners.boxes, corners.class_ids, corners.confidence, angle % 360),
                        (W, H)).layout_json()
    assert layout["teams"][1] == {"melds": [["5"] * 5], "red_threes": 2}
    assert layout["teams"][0]["melds"] == [["K", "K", "K"], ["9", "9", "9"]]


def test_a_lone_card_in_the_photo_s_middle_is_the_discard_where_no_rows_mark_the_middle():
    # each team shows only a squared-up canasta (whole cards: no direction, so no team's
    # rows mark the middle of the table); the discard pile's top card lies in the middle of
    # the photo, one index under the pile: left out, not a third squared-up canasta
    table = [{"card": "KH", "x": 1500, "y": 2500, "angle": 2},
             {"card": "9S", "x": 2500, "y": 500, "angle": 178},
             {"card": "5C", "x": 2000, "y": 1500 + 0.2 * CARD_H, "angle": 10}]
    corners = _without_lowest(corners_from_scene(scene_from_placements(table, W, H),
                                                 np.random.default_rng(1)), "5")
    reading = read_table(corners, (W, H))
    assert {(m.team, m.rank) for m in reading.melds if m.squared} == {(0, "K"), (1, "9")}
    assert next(c for c in reading.cards if c.rank == "5").role == "left_out"


def test_discard_pile_top_card_of_a_melded_rank_is_not_counted_into_the_meld():
    # only team 0 has laid cards; the discard pile's top card, a jack, lies a little past
    # team 0's row towards the middle, off the line of its jacks: left out, not a fourth jack
    table = (column(["JH", "JS", "JD"], 1000, 2200) + column(["8H", "8S", "8D"], 1500, 2200)
             + [{"card": "JC", "x": 2300, "y": 2200 - 0.58 * CARD_H, "angle": 2}])
    _, reading = read(table)
    assert ["J", "J", "J"] in team_melds(reading, 0)
    lone = next(c for c in reading.cards if c.rank == "J" and c.center[0] > 2000)
    assert lone.team is None and lone.role == "left_out"


def test_discard_pile_of_a_melded_rank_is_not_merged_into_the_meld():
    # the discard pile shows two tens and a two, squared enough to look like a meld, a card
    # height and more past team 0's rows: not part of its column of tens
    table = (column(["10H", "10S", "2C"], 800, 2300) + column(["4H", "4S", "4D"], 1300, 2300)
             + column(["6H", "6S", "6D"], 1800, 2300)
             + column(["9H", "9S", "9D"], 1500, 500, angle=180)
             + column(["10D", "2H", "10C"], 2600, 1500, angle=3))
    _, reading = read(table)
    assert ["10", "10", "2"] in team_melds(reading, 0)
    pile = [c for c in reading.cards if c.center[0] > 2400]
    assert len(pile) == 3 and all(c.team is None and c.role == "left_out" for c in pile)


def test_squared_canasta_touching_a_column_is_apart_from_it():
    # a squared-up canasta's top card laid against a column's side: one heap of cards
    # unless the whole card of another rank beside the line is taken apart
    table = (column(["5H", "5S", "5D", "5C"], 1000, 2000)
             + [{"card": "QH", "x": 1000 + 0.8 * CARD_H * CardGeometry.aspect, "y": 2050, "angle": 1}]
             + column(["9H", "9S", "9D"], 2500, 600, angle=180))
    _, reading = read(table)
    assert ["5", "5", "5", "5"] in team_melds(reading, 0)
    assert {(m.team, m.rank) for m in reading.melds if m.squared} == {(0, "Q")}


def test_squared_canasta_of_a_one_index_deck_touching_a_column_is_apart_from_it():
    # the same, the top card of a deck printing one index: seen by one corner, it is still
    # the only card of its rank beside the column's line, and nothing of its own lies by it
    table = (column(["5H", "5S", "5D", "5C"], 1000, 2000)
             + [{"card": "QH", "x": 1000 + 0.8 * CARD_H * CardGeometry.aspect, "y": 2050, "angle": 1}]
             + column(["9H", "9S", "9D"], 2500, 600, angle=180))
    corners = _without_lowest(corners_from_scene(scene_from_placements(table, W, H),
                                                 np.random.default_rng(1)), "Q")
    reading = read_table(corners, (W, H))
    assert ["5", "5", "5", "5"] in team_melds(reading, 0)
    assert {(m.team, m.rank) for m in reading.melds if m.squared} == {(0, "Q")}


def test_whole_cards_of_other_ranks_in_one_stack_come_apart():
    def card(rank, x, y, whole, corners):
        return CardReading(rank=rank, corner_ids=corners, center=(x, y), angle=0.0,
                           confidence=0.9, fully_visible=whole)
    # two squared-up canastas touching: two whole cards, no rank twice
    touching = [card("Q", 1000, 2000, True, [0, 1]), card("J", 1150, 2000, True, [2, 3])]
    assert sorted(_whole_cards_apart(touching, [[0, 1]], 200.0)) == [[0], [1]]
    # ... one of them of a deck printing one index, so seen by one corner
    touching[1] = card("4", 1150, 2000, False, [2])
    assert sorted(_whole_cards_apart(touching, [[0, 1]], 200.0)) == [[0], [1]]
    # two cards seen by one corner each, none whole, are no such pair (a column's covers)
    touching[0] = card("Q", 1000, 2000, False, [0])
    assert _whole_cards_apart(touching, [[0, 1]], 200.0) == [[0, 1]]
    # ... unless they lie turned well apart (a discard pile's top card against a squared-up
    # canasta of a deck printing one index)
    touching[0].angle = 75.0
    assert sorted(_whole_cards_apart(touching, [[0, 1]], 200.0)) == [[0], [1]]
    # a column's front card is whole and may be read as another rank: on the line, it stays
    col = [card("5", 1000, 2000 + 60 * k, False, [k]) for k in range(3)]
    col.append(card("6", 1010, 2300, True, [3, 4]))
    assert _whole_cards_apart(col, [[0, 1, 2, 3]], 200.0) == [[0, 1, 2, 3]]
    # the same card a card width beside the column lies apart
    col[3] = card("6", 1200, 2100, True, [3, 4])
    assert sorted(_whole_cards_apart(col, [[0, 1, 2, 3]], 200.0)) == [[0, 1, 2], [3]]
    # seen by one corner (a deck printing one index), the only 6 there lies apart too ...
    col[3] = card("6", 1200, 2100, False, [3])
    assert sorted(_whole_cards_apart(col, [[0, 1, 2, 3]], 200.0)) == [[0, 1, 2], [3]]
    # ... but not with a two beside it: the covered card of a meld of its own, touching
    col.append(card("2", 1200, 2160, True, [4, 5]))
    assert _whole_cards_apart(col, [[0, 1, 2, 3, 4]], 200.0) == [[0, 1, 2, 3, 4]]


def test_joker_with_a_tall_index_is_one_card():
    # many decks print a tall vertical JOKER index: its centre sits lower than a K's
    table = column(["KH", "KS", "KD", "JK"], 1000, 1700)
    table[-1]["index_box"] = (0.02, 0.03, 0.14, 0.42)
    _, reading = read(table)
    assert team_melds(reading, 0) == [["K", "K", "K", "JK"]]
    assert [c.rank for c in reading.cards].count("JK") == 1


def test_touching_columns_of_two_ranks_are_two_melds():
    width = 0.714 * CARD_H
    table = column(["8H", "8S", "8D", "8C"], 1000, 1700) + column(
        ["5H", "5S", "5D", "2C"], 1000 + 0.8 * width, 1700)
    _, reading = read(table)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("5", "5", "5", "2"),
                                                           ("8", "8", "8", "8")]


def test_deck_with_one_top_right_index_per_card():
    box = (0.08, 0.045, 0.22, 0.165)  # index only in the top-right corner, small
    table = (column(["9H", "9S", "9D", "9C"], 1000, 1700)
             + column(["KH", "KS", "KD"], 1500, 1700)
             + [{"card": "AH", "x": 2100, "y": 1700 + 0.5 * CARD_H, "angle": 0}])
    scene = scene_from_placements(table, W, H, index_corners=("tr",), index_box=box)
    corners = corners_from_scene(scene)
    assert len(corners) == 8  # one index per card
    reading = read_table(corners, (W, H))
    melds = team_melds(reading, 0)
    assert ["9"] * 4 in melds and ["K"] * 3 in melds
    assert {"rank": "A", "naturals": 7, "wilds": []} in melds


def test_surely_read_odd_card_is_not_relabelled():
    corners, _ = read(column(["QH", "QS", "QD", "QC", "QH"], 1000, 1700))
    class_ids = corners.class_ids.copy()
    class_ids[1] = 1  # a king in the queens' column, read with full confidence
    reading = read_table(Corners(corners.boxes, class_ids, corners.confidence, corners.angle),
                         (W, H))
    assert team_melds(reading, 0) == [["Q"] * 4]
    assert any(r["kind"] == "not_a_meld" for r in reading.review)


def test_card_of_a_top_right_index_deck_stays_in_its_column():
    # the second deck prints one top-right index: taken for a top-left one, the two
    # would land in the kings' column next door
    width = 0.714 * CARD_H
    nines = column(["9H", "9S", "2C", "9D"], 1000, 1700)
    nines[2].update(index_corners=("tr",), index_box=(0.08, 0.045, 0.22, 0.165))
    table = nines + column(["KH", "KS", "KD"], 1000 + 1.25 * width, 1700)
    _, reading = read(table)
    assert team_melds(reading, 0) == [["9", "9", "9", "2"], ["K", "K", "K"]]


def test_top_right_index_cards_next_to_each_other_stay_in_their_column():
    # two cards of a deck printing one small top-right index lie one after the other in
    # a column of a top-left deck: taken for top-left indices, both would sit a card
    # width aside, lined up with each other; their print's votes put the deck in place
    width = 0.714 * CARD_H
    for angle in (0, 180):
        jacks = column(["JH", "JS", "JC", "JD", "JK", "2D"], 1000, 1700, angle=angle)
        for card in jacks[3:5]:
            card.update(index_corners=("tr",), index_box=(0.08, 0.045, 0.22, 0.165))
        table = jacks + column(["KH", "KS", "KD"], 1000 + 2.5 * width, 1700, angle=angle)
        _, reading = read(table)
        team = 0 if angle == 0 else 1
        assert team_melds(reading, team) == [["J", "J", "J", "J", "2", "JK"], ["K", "K", "K"]]
        in_column = [c for c in reading.cards if c.rank in ("J", "JK", "2")]
        assert all(abs(c.center[0] - 1000) < 0.1 * width for c in in_column)


def test_a_lone_top_right_card_moves_with_its_deck_whatever_its_rank_s_height():
    # a deck printing one small top-right index, its seven two thirds the height of its
    # queens (test 1809, kde-oxygen-white): two of its queens in a column of another deck's
    # move to their places by the column, and its lone seven, a squared-up canasta beside
    # the column, moves with them though no column says where it lies; taken for a
    # top-left index it would lie on the queens' column, no meld
    width = 0.714 * CARD_H
    queens = column(["QH", "QS", "QC", "QD"], 1500, 1500)
    for queen in queens[1::2]:
        queen.update(index_corners=("tr",), index_box=(0.08, 0.045, 0.22, 0.165))
    seven = {"card": "7C", "x": 1500 - 1.15 * width, "y": 1500, "angle": 0.0,
             "index_corners": ("tr",), "index_box": (0.08, 0.045, 0.17, 0.12)}
    _, reading = read(queens + [seven] + column(["9H", "9S", "9D"], 1500 + 1.3 * width, 1500))
    melds = {m.rank: m for m in reading.melds}
    assert (melds["Q"].naturals, melds["9"].naturals) == (4, 3)
    assert melds["7"].squared
    seven_card = next(c for c in reading.cards if c.rank == "7")
    assert abs(seven_card.center[0] - seven["x"]) < 0.1 * width


@pytest.mark.parametrize("turn", [50.0, 65.0, 80.0])
def test_an_index_read_turned_in_a_column_of_one_rank_takes_the_column_s_angle(turn):
    # the small top-right indices of some decks are read 45 degrees and more off a tenth
    # of the time: such a card is no card laid across a meld (a pile), nor a fan
    box = (0.08, 0.045, 0.22, 0.165)
    table = column(["9H", "9S", "9D", "9C", "9H"], 1000, 1500) + column(["KH", "KS", "KD"],
                                                                         1600, 1500)
    scene = scene_from_placements(table, W, H, index_corners=("tr",), index_box=box)
    corners = corners_from_scene(scene)
    nines = np.flatnonzero(corners.class_ids == CLASS_ID["9"])
    middle = nines[np.argsort(corners.centers[nines, 1])[2]]
    angles = corners.angle.copy()
    angles[middle] += turn
    reading = read_table(Corners(corners.boxes, corners.class_ids, corners.confidence,
                                 angles % 360), (W, H))
    assert sorted(map(tuple, team_melds(reading, 0))) == [("9",) * 5, ("K",) * 3]
    turned = [min(c.angle % 360, 360 - c.angle % 360) for c in reading.cards]
    assert max(turned) < 5.0


@pytest.mark.parametrize("spread, which", [(16, 3), (20, 3), (24, 2)])
def test_an_unsure_card_in_a_place_of_a_fan_is_a_card(spread, which):
    # a fan's cards lie on an arc that no straight line holds: between two sure cards
    # two steps apart, the unsure one on the chord's middle takes the empty place
    table = fan(["AH", "AS", "AD", "AC", "AH", "AS"], 1500, 1900, spread=spread) + column(
        ["KH", "KS", "KD"], 2600, 1900)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    aces = np.flatnonzero(corners.class_ids == CLASS_ID["A"])
    unsure = int(aces[np.argsort(corners.centers[aces, 0])][which])
    reading = read_table(_with_confidence(corners, unsure, 0.35), (W, H), min_confidence=0.4,
                         supported_confidence=0.3)
    assert team_melds(reading, 0) == [["A"] * 6, ["K"] * 3]
    assert any(unsure in card.corner_ids for card in reading.cards)


def _row_by_hand(cards: list[str], offsets: list[float]) -> tuple[Corners, np.ndarray]:
    """A row of `cards` laid by hand at `offsets` (card heights) left to right, beside a
    column of three kings: the corners, and the row's corners of its rank left to right."""
    table = [{"card": c, "x": 1000 + o * CARD_H, "y": 1900, "angle": 0.0}
             for c, o in zip(cards, offsets, strict=True)]
    table += column(["KH", "KS", "KD"], 2500, 1900)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    ids = np.flatnonzero(corners.class_ids == CLASS_ID[cards[0][:-1]])
    return corners, ids[np.argsort(corners.centers[ids, 0])]


def test_an_unsure_card_in_a_row_laid_closer_than_a_step_is_a_card():
    # a row of fives laid by hand a tenth to a fifth of a card apart: the second card's
    # index, read unsurely, lies on no place of the sure cards' lattice and nearer the first
    # card than a column's step, yet clear of the first card's index and between two sure
    # cards on their line: a card of its own, not a second box on the first index
    corners, fives = _row_by_hand(["5C", "5D", "5H", "5S"], [0.0, 0.10, 0.30, 0.45])
    first, second = int(fives[0]), int(fives[1])
    reading = read_table(_with_confidence(corners, second, 0.28), (W, H), min_confidence=0.4,
                         supported_confidence=0.2)
    assert team_melds(reading, 0) == [["5"] * 4, ["K"] * 3]
    assert any(second in card.corner_ids for card in reading.cards)
    # the same corner moved over the first card's index (30 px long, overlapped by 8 px) is
    # that index's second box
    boxes = corners.boxes.copy()
    boxes[second] = boxes[first] + [22, 0, 22, 0]
    doubled = Corners(boxes, corners.class_ids, corners.confidence, corners.angle)
    reading = read_table(_with_confidence(doubled, second, 0.28), (W, H), min_confidence=0.4,
                         supported_confidence=0.2)
    assert team_melds(reading, 0) == [["5"] * 3, ["K"] * 3]
    assert all(first in card.corner_ids for card in reading.cards if second in card.corner_ids)


def test_an_unsure_wild_read_sideways_on_a_column_is_not_a_card_of_it():
    # test 1419: the figure on a jack's strip in a column read as a 2 turned 88 degrees, at
    # 0.21: a column's cards lie along it, so print read a quarter turned off the column is
    # no index of it, and the jacks keep their one wild
    table = column(["JH", "JS", "JD", "JC", "JS", "2S"], 1000, 1500) + column(
        ["KH", "KS", "KD"], 2500, 1500)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    jacks = np.flatnonzero(corners.class_ids == CLASS_ID["J"])
    second = jacks[np.argsort(corners.centers[jacks, 1])][1]
    box = corners.boxes[second] + [80, 0, 80, 0]  # on the second jack's strip

    def read_with(angle: float):
        with_2 = Corners(np.vstack([corners.boxes, box]), np.r_[corners.class_ids, CLASS_ID["2"]],
                         np.r_[corners.confidence, 0.21], np.r_[corners.angle, angle],
                         np.r_[np.ones(len(corners)), 0.4])
        return read_table(with_2, (W, H), min_confidence=0.4, supported_confidence=0.2)

    assert team_melds(read_with(88.0), 0) == [["J"] * 5 + ["2"], ["K"] * 3]
    assert team_melds(read_with(268.0), 0) == [["J"] * 5 + ["2"], ["K"] * 3]


def test_a_faint_corner_on_an_empty_place_of_its_column_is_a_card():
    # test 1899: a column of fours, one read at 0.16 (under the supported floor) on its
    # place: from the faint floor up, a corner of the line's own rank on an empty place of
    # its lattice (here the column's first) is a card; off the lattice, or read as another
    # rank, it is not
    table = column(["4H", "4S", "4D", "4C", "4H"], 1000, 1500) + column(
        ["KH", "KS", "KD"], 2500, 1500 + 0.22 * CARD_H)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    fours = np.flatnonzero(corners.class_ids == CLASS_ID["4"])
    first = int(fours[np.argsort(corners.centers[fours, 1])][0])
    faint = _with_confidence(corners, first, 0.12)

    def fours_read(c: Corners, floor: float | None = 0.08) -> list[list[str]]:
        reading = read_table(c, (W, H), min_confidence=0.4, supported_confidence=0.2,
                             faint_confidence=floor)
        assert ["K"] * 3 in team_melds(reading, 0)
        return [m for m in team_melds(reading, 0) if m[0] != "K"]

    assert fours_read(faint) == [["4"] * 5]
    assert fours_read(faint, None) == [["4"] * 4]  # no faint floor: under the floor, unused
    assert fours_read(_with_confidence(corners, first, 0.06)) == [["4"] * 4]
    ids = corners.class_ids.copy()
    ids[first] = CLASS_ID["10"]  # a faint ten before the fours: another rank's, or print
    assert fours_read(Corners(corners.boxes, ids, faint.confidence, corners.angle)) == [["4"] * 4]
    boxes = corners.boxes.copy()
    boxes[first] += [0, 30, 0, 30]  # half a step off its place: a second box, or print
    assert fours_read(Corners(boxes, corners.class_ids, faint.confidence, corners.angle)) == [
        ["4"] * 4]


def test_an_unsure_first_card_of_an_unevenly_laid_row_takes_its_place():
    # t4 10989: a row of tens laid by hand, its sure cards 0.12 and 0.155 card heights apart,
    # the unsure first ten 0.16 before them: one step of the row (the mean of its single
    # gaps), not 1.3 of its smallest gap
    corners, tens = _row_by_hand(["10C", "10D", "10H", "10S"], [0.0, 0.16, 0.28, 0.435])
    first = int(tens[0])
    reading = read_table(_with_confidence(corners, first, 0.3), (W, H), min_confidence=0.4,
                         supported_confidence=0.2)
    assert team_melds(reading, 0) == [["10"] * 4, ["K"] * 3]


def test_a_whole_card_shown_by_two_unsure_corners_of_its_rank_is_a_card():
    # a squared-up canasta's top card lies alone, so no line of sure cards supports it;
    # its two indices, both read unsurely as queens, pair as one whole card
    table = column(["6H", "6S", "6D"], 1000, 2000) + [{"card": "QH", "x": 2000, "y": 2000,
                                                         "angle": 1}]
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    queens = np.flatnonzero(corners.class_ids == CLASS_ID["Q"])
    assert len(queens) == 2

    def unsure(score: float, reading: float, ids: np.ndarray = corners.class_ids) -> Corners:
        q = np.isin(np.arange(len(corners)), queens)
        return Corners(corners.boxes, ids, np.where(q, score, corners.confidence),
                       corners.angle, np.where(q, reading, 1.0))

    def squared(c: Corners) -> set[str]:
        reading = read_table(c, (W, H), min_confidence=0.4, supported_confidence=0.2)
        assert team_melds(reading, 0)[0] == ["6"] * 3
        return {m.rank for m in reading.melds if m.squared}

    assert squared(unsure(0.3, 0.6)) == {"Q"}
    assert squared(unsure(0.22, 0.6)) == set()  # under the floor
    assert squared(unsure(0.3, 0.45)) == set()  # the rank read too unsurely
    assert squared(unsure(0.3, 0.6).select(
        np.delete(np.arange(len(corners)), queens[1]))) == set()  # one index alone
    ids = corners.class_ids.copy()
    ids[queens[1]] = CLASS_ID["K"]  # the two read as two ranks
    assert squared(unsure(0.3, 0.6, ids)) == set()


def test_a_meld_of_three_read_unsurely_with_one_card_missed_stands_by_itself():
    # a column of three sevens the detector reads unsurely throughout, its middle card's
    # index missed: its two unsure cards on a line of their own are the meld, the third
    # inferred in the gap between them; beside them a column of sure kings
    table = column(["KH", "KS", "KD"], 1000, 1900) + column(["7H", "7S", "7D"], 2500, 1900)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    sevens = np.flatnonzero(corners.class_ids == CLASS_ID["7"])
    middle = sevens[np.argsort(corners.centers[sevens, 1])[1]]  # the covered 7S's index
    keep = np.delete(np.arange(len(corners)), middle)
    seven = np.isin(np.arange(len(corners)), sevens)
    unsure = Corners(corners.boxes, corners.class_ids, np.where(seven, 0.3, 1.0),
                     corners.angle, np.where(seven, 0.6, 1.0)).select(keep)
    reading = read_table(unsure, (W, H), min_confidence=0.4, supported_confidence=0.2)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("7",) * 3, ("K",) * 3]
    # read so unsurely, the meld is put up for the player to count
    assert any(r["kind"] == "meld_check" and "(7)" in r["message"] for r in reading.review)


@pytest.mark.parametrize("reading, taken", [(1.0, True), (0.6, False)])
def test_a_surely_read_wild_on_a_whole_looking_natural_is_laid_on_it(reading, taken):
    # t4 8249: a joker laid at a column's end over a queen's middle, the queen's far index
    # still showing (so she looks whole), the joker's own index scored 0.25 but read 1.00:
    # the wild laid on her, not print on her face; read unsurely, it stays out
    table = column(["QH", "QS", "QC", "QD", "JK"], 1000, 1500) + column(
        ["KH", "KS", "KD"], 2500, 1500)
    scene = scene_from_placements(table, W, H)
    for index in scene["cards"][3]["indices"]:
        index["visible"] = 1.0  # the last queen's far index shows past the joker
    for index in scene["cards"][4]["indices"]:
        index["visible"] = float(index["corner"] == "tl")  # the joker's other end unseen
    corners = corners_from_scene(scene, np.random.default_rng(1))
    joker = corners.class_ids == CLASS_ID["JK"]
    unsure = Corners(corners.boxes, corners.class_ids, np.where(joker, 0.25, corners.confidence),
                     corners.angle, np.where(joker, reading, 1.0))
    layout = read_table(unsure, (W, H), min_confidence=0.4, supported_confidence=0.2)
    assert team_melds(layout, 0) == [["Q"] * 4 + ["JK"] * taken, ["K"] * 3]


def test_an_unsure_corner_on_a_whole_card_s_face_is_not_a_card():
    # one step past a column's front end lies the face of its whole top card: an unsure
    # corner there (the detector reading a JOKER's letter as an ace) is print, not a card
    corners, _ = read(column(["AH", "AS", "AD", "JK"], 1000, 1900))
    aces = np.flatnonzero(corners.class_ids == CLASS_ID["A"])
    joker = np.flatnonzero(corners.class_ids == CLASS_ID["JK"])
    top = int(joker[np.argmin(corners.centers[joker, 1])])  # the joker's top index
    last = int(aces[np.argmax(corners.centers[aces, 1])])  # the ace nearest the joker
    shift = corners.centers[top] - corners.centers[last]  # one column step
    box = corners.boxes[top] + np.r_[shift, shift]
    with_a = Corners(np.vstack([corners.boxes, box]), np.r_[corners.class_ids, CLASS_ID["A"]],
                     np.r_[corners.confidence, 0.35], np.r_[corners.angle, corners.angle[top]])
    reading = read_table(with_a, (W, H), min_confidence=0.4, supported_confidence=0.3)
    assert team_melds(reading, 0) == [["A", "A", "A", "JK"]]
    # the same corner one step past the column's back end is a card the detector was
    # unsure of (the first card, its index partly shaded)
    first = int(aces[np.argmin(corners.centers[aces, 1])])
    box = corners.boxes[first] - np.r_[shift, shift]
    with_a = Corners(np.vstack([corners.boxes, box]), np.r_[corners.class_ids, CLASS_ID["A"]],
                     np.r_[corners.confidence, 0.35], np.r_[corners.angle, corners.angle[first]])
    reading = read_table(with_a, (W, H), min_confidence=0.4, supported_confidence=0.3)
    assert team_melds(reading, 0) == [["A", "A", "A", "A", "JK"]]


def test_a_misplaced_top_right_card_is_not_held_by_the_next_column_of_another_rank():
    # two queens printing one small top-right index, taken for top-left ones, land on the
    # nines' column next door; their own column is the wild above them: only a column
    # they may belong to (their rank, or a wild) votes for their deck's placement
    from scanner.reconstruct import CardReading, _choose_index_sides

    def one_index(rank, x, y, corner):
        return CardReading(rank=rank, corner_ids=[corner], center=(x, y), angle=0.0,
                           confidence=1.0, fully_visible=False, other_center=(x + 142.0, y))

    cards = [one_index("9", 1000.0, 1000.0, 0), one_index("9", 1000.0, 1060.0, 1),
             one_index("9", 1000.0, 1120.0, 2), one_index("2", 1142.0, 1000.0, 3),
             one_index("Q", 1000.0, 1060.0, 4), one_index("Q", 1000.0, 1120.0, 5)]
    print_heights = np.array([50.0, 50.0, 50.0, 50.0, 20.0, 20.0])
    _choose_index_sides(cards, 200.0, print_heights)
    assert [c.center[0] for c in cards] == [1000.0] * 3 + [1142.0] * 3


def test_a_discard_seen_by_one_index_does_not_mark_a_team_s_row():
    # one team melded only a red three; the discard's top card, its bottom index under
    # the stock, shows one index: an axis, not which team it faces, so it is no row of
    # that team's melds but the pile between the teams
    table = (column(["KH", "KS", "KD"], 1500, 900, angle=180)
             + column(["8H", "8S", "8D", "8C"], 2100, 900, angle=180)
             + [{"card": "3H", "x": 1800, "y": 2600, "angle": 0.0},
                {"card": "7S", "x": 1900, "y": 1400, "angle": 343.0}])
    scene = scene_from_placements(table, W, H)
    scene["cards"][-1]["indices"][1]["visible"] = 0.0
    layout = read_table(corners_from_scene(scene), (W, H)).layout_json()
    assert layout["teams"][0] == {"melds": [], "red_threes": 1}
    assert layout["teams"][1]["melds"] == [["K", "K", "K"], ["8", "8", "8", "8"]]


@pytest.mark.parametrize("spread", [20, 24, 28])
def test_an_unsure_first_card_of_a_fan_next_to_its_sure_cards_is_a_card(spread):
    # a fan's end lies past its sure cards on an arc: no line or chord holds its place,
    # but it lies next to them on a spot of its own (a second box sits on an index)
    table = fan(["AH", "AS", "AD", "AC", "AH", "AS"], 1500, 1900, spread=spread) + column(
        ["KH", "KS", "KD"], 2600, 1900)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    aces = np.flatnonzero(corners.class_ids == CLASS_ID["A"])
    unsure = int(aces[np.argsort(corners.centers[aces, 0])][0])
    reading = read_table(_with_confidence(corners, unsure, 0.35), (W, H), min_confidence=0.4,
                         supported_confidence=0.3)
    assert team_melds(reading, 0) == [["A"] * 6, ["K"] * 3]


def test_a_column_of_wilds_alone_is_not_given_to_the_meld_beside_it():
    # the naturals of a meld ending in two wilds went unseen: the wilds are that meld's
    # column, not strays of the fives beside it (a lone wild would be)
    width = 0.714 * CARD_H
    fives = column(["5H", "5S", "5D", "2C"], 1000, 1700)
    wilds = column(["6H", "6S", "JK", "2D"], 1000 + 1.1 * width, 1700)
    scene = scene_from_placements(fives + wilds, W, H)
    for card in scene["cards"][4:6]:
        for index in card["indices"]:
            index["visible"] = 0.0  # the sixes under a finger
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0) == [["5", "5", "5", "2"]]
    assert any(r["kind"] == "lone_wild" for r in reading.review)


@pytest.mark.parametrize("step, angle", [(0.25, 180.0), (0.25, 0.0), (0.3, 180.0)])
def test_a_last_card_seen_by_its_bottom_index_is_not_the_covered_card_above(step, angle):
    # the last seven's top index lies under a finger: its bottom index, with the covered
    # card's top index a column step up, is no whole card but two cards
    table = column(["7D", "7H", "7S", "7C"], 1000, 1500, step=step, angle=angle)
    for x, rank in ((1400, "K"), (1800, "Q"), (2200, "J")):
        table += column([rank + suit for suit in "HSD"], x, 1500, angle=angle)
    scene = scene_from_placements(table, W, H)
    scene["cards"][3]["indices"][0]["visible"] = 0.0
    layout = read_table(corners_from_scene(scene), (W, H)).layout_json()
    team = 0 if angle == 0 else 1
    assert layout["teams"][team]["melds"][0] == ["7"] * 4


def test_a_red_three_against_the_discard_pile_is_still_its_team_s():
    # a red three is laid down apart the moment it is drawn: lying against the discard
    # pile, it is no card of the pile (left out) but its side's
    table = (column(["KH", "KS", "KD"], 1200, 2200) + column(["8H", "8S", "8D"], 1800, 2200)
             + column(["QH", "QS", "QD"], 1200, 800, angle=180)
             + column(["5H", "5S", "5D"], 1800, 800, angle=180)
             + [{"card": card, "x": 2600 + k * 25, "y": 1500 + k * 10, "angle": turn}
                for k, (card, turn) in enumerate([("9C", 10), ("4D", 35), ("JK", 95)])]
             + [{"card": "3H", "x": 2650, "y": 1500 + 0.65 * CARD_H, "angle": 0.0}])
    reading = read_table(corners_from_scene(scene_from_placements(table, W, H)), (W, H))
    assert [t["red_threes"] for t in reading.layout_json()["teams"]] == [1, 0]
    left_out = [r["message"] for r in reading.review if r["kind"] == "left_out"]
    assert len(left_out) == 1 and "3R" not in left_out[0]


def test_an_index_reported_twice_is_one_corner_of_one_card():
    corners, _ = read(column(["KH", "KS", "KD"], 1000, 1900))
    twice = np.r_[np.arange(len(corners)), 1]  # the detector reports corner 1 again
    boxes = corners.boxes[twice] + np.r_[np.zeros((len(corners), 4)), [[2, -1, 2, -1]]]
    conf = np.r_[corners.confidence, 0.7]
    doubled = Corners(boxes, corners.class_ids[twice], conf, corners.angle[twice])
    reading = read_table(doubled, (W, H))
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    used = sorted(k for card in reading.cards for k in card.corner_ids)
    assert used == list(range(len(doubled)))  # every corner still belongs to a card


def test_noisy_angles_do_not_split_or_add_cards():
    # each index's angle read up to 20 degrees off (a young orientation head)
    table = (column(["KH", "KS", "KD", "KC", "KH", "2C"], 1000, 1900)
             + column(["8H", "8S", "8D", "8C"], 1500, 1900)
             + column(["QH", "QS", "QD", "JK"], 2500, 800, angle=180))
    scene = scene_from_placements(table, W, H)
    corners = corners_from_scene(scene)
    errors = np.array([17.0, -12.0, 8.0, -20.0, 14.0, -9.0, 19.0, -16.0, 5.0, -18.0, 11.0,
                       -7.0, 20.0, -13.0, 15.0, -19.0, 9.0, -4.0])[: len(corners)]
    noisy = Corners(corners.boxes, corners.class_ids, corners.confidence,
                    (corners.angle + errors) % 360)
    reading = read_table(noisy, (W, H))
    assert team_melds(reading, 0) == [["K"] * 5 + ["2"], ["8"] * 4]
    assert team_melds(reading, 1) == [["Q", "Q", "Q", "JK"]]
    assert len(reading.cards) == 6 + 4 + 4


def test_peeking_bottom_index_does_not_shrink_the_card_size():
    # cards pushed sideways in a sloppy column: a covered card's bottom index peeks out
    # beside the next card, one column step above that card's top index
    width = 0.714 * CARD_H
    table = column(["KH", "KS", "KD", "KC", "KH", "KS"], 1000, 1200)
    for k in (1, 3):
        table[k]["x"] += 0.15 * width
    table += column(["8H", "8S", "8D"], 1800, 1200)
    corners, reading = read(table)
    assert len(corners) == 6 + 2 + 3 + 1  # the bottom indices of cards 1 and 3 peek out
    assert team_melds(reading, 0) == [["K"] * 6, ["8"] * 3]
    assert abs(reading.card_size[1] - CARD_H) < 0.1 * CARD_H


def test_card_size_follows_perspective_across_a_tilted_photo():
    from scanner.reconstruct import _size_field

    # a tilted camera: inverse card size is a plane over the photo (near edge: big cards)
    def true_height(points):
        return 1.0 / (1 / 300 + (points[:, 1] - 1500) * 1e-6)

    rng = np.random.default_rng(3)
    measured_at = rng.uniform([0, 300], [4000, 1800], (10, 2))  # whole cards up the photo
    near = np.array([[1000.0, 2900.0], [3000.0, 2800.0]])  # columns at the near edge
    field = _size_field(near, measured_at, true_height(measured_at))
    np.testing.assert_allclose(field, true_height(near), rtol=0.02)


def test_discard_pile_with_a_wild_across_it_is_not_a_meld():
    # two fives and a discarded two turned sideways, beside team 1's red threes
    pile = [{"card": "KD", "x": 766, "y": 881, "angle": 356},
            {"card": "2S", "x": 787, "y": 910, "angle": 89},
            {"card": "5C", "x": 757, "y": 901, "angle": 355},
            {"card": "5D", "x": 785, "y": 907, "angle": 350}]
    table = (column(["QH", "QS", "QD"], 490, 1200, card_h=220, step=0.29)
             + column(["9C", "9D", "9D", "JK"], 680, 1200, card_h=220, step=0.29)
             + column(["10D", "10C", "10H", "10H", "10D", "2D"], 600, 560, angle=180,
                      card_h=220, step=0.29)
             + [{"card": c, "x": 968 - 40 * k, "y": 594, "angle": 180}
                for k, c in enumerate(["3D", "3D", "3H"])]
             + pile)
    scene = scene_from_placements(table, 2928, 1646, card_h=220)
    reading = read_table(corners_from_scene(scene), (2928, 1646))
    assert team_melds(reading, 1) == [["10"] * 5 + ["2"]]
    assert reading.red_threes == [0, 3]
    assert any(r["kind"] == "left_out" and "5" in r["message"] for r in reading.review)


@pytest.mark.parametrize("heap", [0, None])
def test_a_wild_square_across_a_small_pile_freezes_it_though_one_index_shows(monkeypatch, heap):
    # t4 scene 7149: the discard pile's top shows two nines and a joker turned across them,
    # the joker's top index under the nines; read as one rank and a wild, it looked like a
    # meld of team 1 (whose only other cards are red threes and a squared-up canasta)
    import scanner.reconstruct as reconstruct

    if heap is not None:  # no heap small enough: a one-index wild across is a misread
        monkeypatch.setattr(reconstruct, "FROZEN_PILE_MAX", heap)
    table = [{"card": c, "x": x, "y": y, "angle": a} for c, x, y, a in [
        ("2S", 1742, 1606, 0), ("6C", 1734, 1714, 0), ("6C", 1740, 1825, 3),
        ("3D", 2199, 1603, 355), ("JS", 1984, 431, 177), ("3D", 1622, 441, 179),
        ("3H", 1546, 448, 176), ("3H", 1470, 454, 178),
        ("JK", 1800, 1047, 259), ("AC", 1763, 1049, 157), ("9D", 1790, 1036, 150),
        ("AS", 1766, 1031, 156), ("9H", 1761, 1011, 152), ("9C", 1747, 1046, 172)]]
    scene = scene_from_placements(table, 2866, 2150, card_h=370)
    joker = next(c for c in scene["cards"] if c["card"] == "JK")
    assert [i["visible"] for i in joker["indices"]] == [0.0, 1.0]
    reading = read_table(corners_from_scene(scene), (2866, 2150))
    nines = [m for m in reading.melds if m.rank == "9"]
    if heap is None:
        assert nines == []
        assert [(m.team, m.rank) for m in reading.melds] == [(0, "6"), (1, "J")]
        assert any(r["kind"] == "left_out" for r in reading.review)
    else:
        assert [(m.team, m.naturals, list(m.wilds)) for m in nines] == [(1, 2, ["JK"])]


@pytest.mark.parametrize("reach", [None, float("inf")])
def test_a_second_lone_card_off_the_middle_is_a_squared_canasta_not_a_pile(monkeypatch, reach):
    # val scene 998: team 0 melded only two squared-up canastas (a seven and tens) and its
    # red threes; the seven lay 0.6 card heights from the middle found between the teams'
    # rows, the discard pile's top (a six) right on it. A table has one discard pile.
    import scanner.reconstruct as reconstruct

    if reach is not None:  # every lone card near the middle a pile's
        monkeypatch.setattr(reconstruct, "ONE_PILE_REACH", reach)
    table = [{"card": c, "x": x, "y": y, "angle": a} for c, x, y, a in [
        ("7D", 813, 1381, 5), ("10C", 1019, 1398, 352), ("3D", 1364, 1470, 352),
        ("3H", 1422, 1474, 354), ("3D", 1479, 1478, 353), ("QS", 1334, 786, 169),
        ("QS", 1347, 704, 169), ("QD", 1340, 622, 162), ("QD", 1327, 539, 170),
        ("QH", 1318, 460, 164), ("QC", 1327, 383, 162), ("QC", 1299, 309, 166),
        ("QH", 1320, 234, 163), ("3C", 1139, 783, 183), ("3C", 1135, 701, 182),
        ("3S", 1139, 623, 180), ("3S", 1130, 543, 182), ("3H", 870, 743, 181),
        ("JC", 1442, 1100, 3), ("5C", 1454, 1114, 13), ("6S", 1457, 1097, 349)]]
    scene = scene_from_placements(table, 2412, 1808, card_h=221)
    reading = read_table(corners_from_scene(scene), (2412, 1808))
    squared = sorted((m.team, m.rank) for m in reading.melds if m.squared)
    six = next(c for c in reading.cards if c.rank == "6")
    assert six.team is None  # the pile's top
    if reach is None:
        assert squared == [(0, "10"), (0, "7")]
    else:
        assert squared == [(0, "10")]
        assert any(r["kind"] == "left_out" and "7" in r["message"] for r in reading.review)


def test_whole_cards_read_opposite_ways_in_one_stack_lie_along_the_table():
    # val scene 2888: team 0's column of a joker and two kings, the joker's and the
    # front king's both indices showing (whole cards, no direction), read at 0 and 182
    # degrees: as directions they average 91, across the table, and the stack was left out
    # as a pile in its own team's half
    def card(rank, x, y, angle, whole=False):
        return CardReading(rank=rank, corner_ids=[0, 1] if whole else [0], center=(x, y),
                           angle=angle, confidence=1.0, fully_visible=whole)

    cards, stacks = [], []
    for rank, x, y0, angle, n in (("5", 1600, 1150, 4, 4), ("K", 1250, 450, 184, 5),
                                  ("5", 1030, 420, 185, 3)):
        step = 60 if angle < 90 else -65
        stacks.append(list(range(len(cards), len(cards) + n)))
        cards += [card(rank, x, y0 + step * k, angle, whole=k == n - 1) for k in range(n)]
    stacks.append([len(cards), len(cards) + 1])
    cards += [card("JK", 1065, 1163, 0.0, whole=True), card("K", 1047, 1302, 182.0, whole=True)]
    teams, _, _ = _assign_teams(cards, stacks, [True, True, True, False], (2400, 1700), 285.0)
    assert teams == [0, 1, 1, 0]


@pytest.mark.parametrize("reach", [None, float("inf")])
def test_a_lone_index_sure_by_its_reading_far_from_the_table_is_not_a_card(monkeypatch, reach):
    # test scene 1879: the "4" of a score pad's "1744" in the photo's corner, scored 0.35 by
    # the detector and read as a 4 surely, became team 0's squared-up canasta of fours
    import scanner.reconstruct as reconstruct

    if reach is not None:  # every corner sure by its reading counts, wherever it lies
        monkeypatch.setattr(reconstruct, "LONE_READING_REACH", reach)

    def melds_with_a_four_at(x, y):
        table = (column(["KH", "KS", "KD"], 1000, 2100) + column(["QH", "QS", "QD"], 1400, 2100)
                 + column(["9H", "9S", "9D"], 1200, 700, angle=180)
                 + [{"card": "4D", "x": x, "y": y, "angle": 0}])
        corners = _without_lowest(
            corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1)), "4")
        four = corners.class_ids == CLASS_ID["4"]
        unsure = Corners(corners.boxes, corners.class_ids, np.where(four, 0.35, corners.confidence),
                         corners.angle, np.ones(len(corners)))
        reading = read_table(unsure, (W, H), min_confidence=0.4, supported_confidence=0.2)
        return [(m.team, m.rank, m.squared) for m in reading.melds]

    # beside team 0's melds it is a squared-up canasta's top card, read by one index
    assert (0, "4", True) in melds_with_a_four_at(1850, 2200)
    far = melds_with_a_four_at(3700, 2650)
    if reach is None:
        assert far == [(0, "K", False), (0, "Q", False), (1, "9", False)]
    else:
        assert (0, "4", True) in far


def test_lone_red_three_is_never_left_out_as_a_pile():
    # team 1 melded nothing; its one red three lies past the middle of the table
    table = (column(["KH", "KS", "KD"], 1000, 2300) + column(["QH", "QS", "QD"], 1500, 2300)
             + [{"card": "3H", "x": 1300, "y": 1800, "angle": 180}])
    _, reading = read(table)
    assert reading.red_threes == [0, 1]


@pytest.mark.parametrize("seed", range(6))
def test_card_lying_on_another_in_a_pile_keeps_its_own_bottom_index(seed):
    # a discard pile: a king lies almost exactly on a jack (only the jack's bottom index
    # shows) and a discarded two lies across both; whatever order the corners come in
    pile = [{"card": "2S", "x": 821, "y": 464, "angle": 101},
            {"card": "JD", "x": 847, "y": 481, "angle": 346},
            {"card": "KH", "x": 834, "y": 478, "angle": 3}]
    table = column(["9H", "9S", "9D"], 500, 1000, card_h=174) + pile
    scene = scene_from_placements(table, 1600, 1200, card_h=174)
    corners = corners_from_scene(scene, np.random.default_rng(seed), shuffle=True)
    reading = read_table(corners, (1600, 1200))
    kings = [c for c in reading.cards if c.rank == "K"]
    assert len(kings) == 1 and len(kings[0].corner_ids) == 2
    assert [c.rank for c in reading.cards].count("J") == 1


def test_whole_card_distorted_beyond_the_strict_fit_is_still_one_card():
    # near the camera of a strongly tilted photo a card looks bigger than the card size
    # measured elsewhere: its bottom index lies well past where that size puts it, but
    # with no other partner within reach the two indices are still one card
    table = (column(["KH", "KS", "KD"], 1000, 1700) + column(["8H", "8S", "8D"], 1600, 1700)
             + column(["QH", "QS", "QD"], 2200, 1700)
             + [{"card": "AH", "x": 2800, "y": 1700, "angle": 0}])
    corners, _ = read(table)
    bottom = [i for i, r in enumerate(corners.ranks) if r == "K" and corners.angle[i] == 180]
    boxes = corners.boxes.copy()
    boxes[bottom[0]] += [0.3 * 0.714 * CARD_H * 0.96, 0.3 * CARD_H * 0.94] * 2  # 30% bigger
    reading = read_table(Corners(boxes, corners.class_ids, corners.confidence, corners.angle),
                         (W, H))
    assert team_melds(reading, 0)[:3] == [["K", "K", "K"], ["8", "8", "8"], ["Q", "Q", "Q"]]
    assert len(reading.cards) == 10


def test_row_spread_left_of_two_decks_is_not_paired_across_decks():
    # red threes overlapping to the left: the first card (top-left + bottom-right deck)
    # shows its bottom-right index, the others (a deck printing one small top-right
    # index) their top-right one; the bottom-right index and a top-right index further
    # along predict one card, but the two are printed in different sizes
    width = 0.714 * CARD_H
    threes = [{"card": card, "x": 1800 - k * 0.3 * width, "y": 1800, "angle": 0}
              for k, card in enumerate(["3H", "3D", "3D"])]
    for p in threes[1:]:
        p.update(index_corners=("tr",), index_box=(0.08, 0.045, 0.22, 0.165))
    _, reading = read(column(["KH", "KS", "KD", "KC"], 1000, 1700) + threes)
    assert reading.layout_json()["teams"][0]["red_threes"] == 3
    assert team_melds(reading, 0) == [["K", "K", "K", "K"]]


def test_row_whose_covered_indices_point_both_ways_goes_by_position():
    # a row spread to the left mixing a top-left + bottom-right deck (covered cards show
    # bottom-right indices, pointing down) and a deck printing one top-right index
    # (pointing up): the indices do not say which way the row faces, its side does
    width = 0.714 * CARD_H
    row = [{"card": card, "x": 1900 - k * 0.3 * width, "y": 1800, "angle": 0}
           for k, card in enumerate(["8H", "8D", "8C", "8S", "8D"])]
    for p in row[1::2]:
        p.update(index_corners=("tr",), index_box=(0.08, 0.045, 0.22, 0.165))
    table = (column(["KH", "KS", "KD", "KC"], 1000, 1700)
             + column(["5H", "5S", "5D"], 1500, 900, angle=180) + row)
    _, reading = read(table)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("8",) * 5, ("K",) * 4]
    assert team_melds(reading, 1) == [["5", "5", "5"]]


def _with_extra(corners: Corners, boxes, ranks, confidence, angles) -> Corners:
    return Corners(np.concatenate([corners.boxes, np.asarray(boxes, np.float32)]),
                   np.concatenate([corners.class_ids, [CLASS_ID.get(r, r) for r in ranks]]),
                   np.concatenate([corners.confidence, confidence]),
                   np.concatenate([corners.angle, angles]))


def test_a_duplicate_corner_joins_the_card_of_the_index_it_repeats():
    table = column(["KH", "KS", "KD"], 1000, 1900) + column(["8H", "8S", "8D"], 2500, 1900)
    scene = scene_from_placements(table, W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    # The detector reports the first corner a second time, a little off and surer: the
    # first one is dropped as the duplicate, and every later corner's position shifts.
    twin = corners.boxes[0] + 2.0
    corners = _with_confidence(corners, 0, 0.5)
    corners = _with_extra(corners, [twin], [corners.class_ids[0]], [1.0], [corners.angle[0]])
    reading = read_table(corners, (W, H))
    owner = [c for c in reading.cards if len(corners) - 1 in c.corner_ids]
    assert len(owner) == 1 and 0 in owner[0].corner_ids
    assert len(reading.cards) == 6
    assert sorted(i for c in reading.cards for i in c.corner_ids) == list(range(len(corners)))


def test_corners_below_the_layout_gate_make_no_card():
    table = column(["KH", "KS", "KD"], 1000, 1900)
    scene = scene_from_placements(table, W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    # A false corner far from the meld, read as a queen with low confidence.
    corners = _with_extra(corners, [[3000, 500, 3060, 600]], ["Q"], [0.35], [0.0])
    assert "Q" in [c.rank for c in read_table(corners, (W, H)).cards]
    gated = read_table(corners, (W, H), min_confidence=0.4)
    assert [c.rank for c in gated.cards] == ["K", "K", "K"]
    assert all(len(corners) - 1 not in c.corner_ids for c in gated.cards)
    assert team_melds(gated, 0) == [["K", "K", "K"]]
    unsure = [r for r in gated.review if r["kind"] == "unsure_corners"]
    assert len(unsure) == 1 and unsure[0]["corners"] == [len(corners) - 1]


def test_a_photo_with_only_unsure_corners_lists_them_for_review():
    corners = Corners([[3000, 500, 3060, 600], [1000, 900, 1060, 1000]], [CLASS_ID["Q"]] * 2,
                      [0.35, 0.2], [0.0, 0.0])
    reading = read_table(corners, (W, H), min_confidence=0.4)
    assert reading.cards == [] and reading.melds == []
    assert [(r["kind"], r["corners"]) for r in reading.review] == [("unsure_corners", [0, 1])]


def test_an_unsure_second_box_shifted_on_an_index_is_not_another_card():
    table = column(["KH", "KS", "KD"], 1000, 1900) + column(["8H", "8S", "8D"], 2500, 1900)
    scene = scene_from_placements(table, W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    # The detector's second box on the first index: shifted by a third of the box
    # (further than one spot), angle read 20 degrees apart, less sure.
    box = corners.boxes[0]
    shift = (box[2:] - box[:2]) * [0.25, 0.3]
    twin = np.concatenate([box[:2] + shift, box[2:] + shift])
    corners = _with_extra(corners, [twin], [corners.class_ids[0]], [0.45],
                          [corners.angle[0] + 20.0])
    reading = read_table(corners, (W, H))
    assert len(reading.cards) == 6
    assert sorted(map(tuple, team_melds(reading, 0))) == [("8",) * 3, ("K",) * 3]
    owner = [c for c in reading.cards if len(corners) - 1 in c.corner_ids]
    assert len(owner) == 1 and 0 in owner[0].corner_ids


def _kings_with_unsure_first_card():
    """A column of three kings whose first (top) card's index is read unsurely."""
    scene = scene_from_placements(column(["KH", "KS", "KD"], 1000, 1900), W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    first = int(np.argmin(corners.centers[:, 1]))
    return _with_confidence(corners, first, 0.35), first


def test_an_unsure_corner_on_its_column_s_next_place_is_a_card():
    corners, first = _kings_with_unsure_first_card()
    gated = read_table(corners, (W, H), min_confidence=0.4)
    # two sure kings: the third card is unseen (counted, flagged)
    assert [c.corner_ids for c in gated.cards if c.rank == "K"].count([]) == 1
    reading = read_table(corners, (W, H), min_confidence=0.4, supported_confidence=0.3)
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    assert any(first in c.corner_ids for c in reading.cards)
    assert not [r for r in reading.review if r["kind"] == "unsure_corners"]


def test_unsure_corners_off_the_column_s_places_are_not_cards():
    corners, first = _kings_with_unsure_first_card()
    box = corners.boxes[first]
    step = 0.22 * CARD_H
    # half a step below the first king, on the line: between two places
    between = box + [0, 0.5 * step, 0, 0.5 * step]
    # a step above the first king but a card width aside: off the line
    aside = box + [0.7 * CARD_H, -step, 0.7 * CARD_H, -step]
    # a step above, on the line, but a queen: not the column's rank
    queen = box + [0, -step, 0, -step]
    corners = _with_extra(corners, [between, aside, queen], ["K", "K", "Q"], [0.35] * 3,
                          [corners.angle[first]] * 3)
    reading = read_table(corners, (W, H), min_confidence=0.4, supported_confidence=0.3)
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    assert len(reading.cards) == 3  # the one between may only be a sure index's duplicate
    n = len(corners)
    used = {i for c in reading.cards for i in c.corner_ids}
    assert not used & {n - 2, n - 1}
    unsure = [r for r in reading.review if r["kind"] == "unsure_corners"]
    assert len(unsure) == 1 and {n - 2, n - 1} <= set(unsure[0]["corners"])


def test_an_unsure_last_card_of_an_unevenly_laid_column_is_a_card():
    # Laid by hand: the steps vary by a third, so the last card is half a step off the
    # place counted from the first card, but one step past the card before it.
    places = [0, 1.3, 2.3, 3.6, 4.6, 5.5, 6.6, 7.5]
    table = [{"card": rank, "x": 1000, "y": 1500 + p * 0.22 * CARD_H, "angle": 0.0}
             for rank, p in zip(["KH", "KS", "KD", "KC", "KH", "KS", "KD", "KC"], places,
                                strict=True)]
    scene = scene_from_placements(table, W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    last = np.argsort(corners.centers[:, 1])[-2:]  # both indices of the whole last card
    corners = _with_confidence(corners, last, 0.35)
    reading = read_table(corners, (W, H), min_confidence=0.4, supported_confidence=0.3)
    assert team_melds(reading, 0) == [["K"] * 8]


def test_a_whole_card_whose_index_box_is_read_a_third_short_is_one_card():
    scene = scene_from_placements(column(["KH", "KS", "KD"], 1000, 1900), W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    # the last card's top index (second lowest), its box cut to two thirds about its
    # outer (top-left) corner, as a detector may read a partly shaded index
    bottom, top = np.argsort(corners.centers[:, 1])[[-1, -2]]
    boxes = corners.boxes.copy()
    boxes[top, 2:] = boxes[top, :2] + (boxes[top, 2:] - boxes[top, :2]) * 0.68
    corners = Corners(boxes, corners.class_ids, corners.confidence, corners.angle)
    reading = read_table(corners, (W, H))
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    # its bottom index makes one card with it, not with the covered card's index above
    assert [sorted(c.corner_ids) for c in reading.cards if bottom in c.corner_ids] == [
        sorted([int(bottom), int(top)])]


def test_a_bottom_index_whose_top_index_is_missed_is_not_paired_a_step_up():
    table = (column(["KH", "KS", "KD"], 1000, 1900, step=0.33)
             + column(["8H", "8S", "8D"], 2000, 1900, step=0.33)
             + column(["5H", "5S", "5D"], 3000, 1900, step=0.33))
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    # the detector misses the top index of the kings' whole last card (the second lowest)
    kings = np.flatnonzero(corners.class_ids == CLASS_ID["K"])
    top = kings[np.argsort(corners.centers[kings, 1])[-2]]
    corners = corners.select(np.flatnonzero(np.arange(len(corners)) != top))
    reading = read_table(corners, (W, H))
    assert sorted(map(tuple, team_melds(reading, 0))) == [("5",) * 3, ("8",) * 3, ("K",) * 3]


def test_an_unsure_top_index_of_a_whole_card_with_a_sure_bottom_index_is_used():
    scene = scene_from_placements(column(["KH", "KS", "KD"], 1000, 1900), W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    bottom, top = np.argsort(corners.centers[:, 1])[[-1, -2]]
    corners = _with_confidence(corners, top, 0.35)
    reading = read_table(corners, (W, H), min_confidence=0.4, supported_confidence=0.3)
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    assert [sorted(c.corner_ids) for c in reading.cards if bottom in c.corner_ids] == [
        sorted([int(bottom), int(top)])]
    assert not [r for r in reading.review if r["kind"] == "unsure_corners"]


def test_an_index_read_twice_lies_between_its_boxes_by_confidence():
    scene = scene_from_placements(column(["KH", "KS", "KD"], 1000, 1900), W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    first = int(np.argmin(corners.centers[:, 1]))
    box = corners.boxes[first]
    shift = (box[2:] - box[:2]) * 0.3
    twin = np.concatenate([box[:2] + shift, box[2:] + shift])
    base = _with_confidence(corners, first, 0.5)
    doubled = _with_extra(base, [twin], [corners.class_ids[first]], [0.5],
                          [corners.angle[first]])
    halfway = corners.boxes.copy()
    halfway[first] = (box + twin) / 2
    one_box = Corners(halfway, base.class_ids, base.confidence, base.angle)

    def first_card(reading):
        return next(c for c in reading.cards if first in c.corner_ids)

    assert len(read_table(doubled, (W, H)).cards) == 3
    assert np.allclose(first_card(read_table(doubled, (W, H))).center,
                       first_card(read_table(one_box, (W, H))).center)


def test_an_unsure_first_card_of_a_column_laid_aslant_is_a_card():
    # each card laid a little to the right of the one before: the column runs aslant,
    # half a card height sideways over its length
    table = [{"card": c, "x": 1000 + k * 0.07 * CARD_H, "y": 1300 + k * 0.22 * CARD_H,
              "angle": 0.0}
             for k, c in enumerate(["KH", "KS", "KD", "KC", "KH", "KS", "KD", "KC"])]
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    first = int(np.argmin(corners.centers[:, 1]))
    corners = _with_confidence(corners, first, 0.35)
    reading = read_table(corners, (W, H), min_confidence=0.4, supported_confidence=0.3)
    assert team_melds(reading, 0) == [["K"] * 8]


def test_a_small_second_box_in_an_index_s_corner_is_not_another_card():
    scene = scene_from_placements(column(["KH", "KS", "KD"], 1000, 1900), W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    first = int(np.argmin(corners.centers[:, 1]))
    box = corners.boxes[first]
    # half the glyph, from the same outer corner: the boxes overlap by a quarter only
    part = np.concatenate([box[:2], box[:2] + (box[2:] - box[:2]) * 0.5])
    corners = _with_extra(corners, [part], [corners.class_ids[first]], [0.45],
                          [corners.angle[first]])
    reading = read_table(corners, (W, H))
    assert len(reading.cards) == 3
    assert team_melds(reading, 0) == [["K", "K", "K"]]
    owner = [c for c in reading.cards if len(corners) - 1 in c.corner_ids]
    assert len(owner) == 1 and first in owner[0].corner_ids


def test_a_bottom_index_read_past_its_place_pairs_with_its_own_top_index():
    table = (column(["KH", "KS", "KD"], 1000, 1900, step=0.28)
             + column(["8H", "8S", "8D"], 2000, 1900) + column(["5H", "5S", "5D"], 3000, 1900))
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    kings = np.flatnonzero(corners.class_ids == CLASS_ID["K"])
    top, bottom = kings[np.argsort(corners.centers[kings, 1])[-2:]]
    # the kings' whole card reads larger than the others (nearer the camera): its bottom
    # index lies past where the measured size puts it, as far from its own top index
    # as the covered king's top index a step up is from where it should be
    boxes = corners.boxes.copy()
    boxes[bottom] += np.array([0.062, 0.046] * 2) * CARD_H
    reading = read_table(Corners(boxes, corners.class_ids, corners.confidence, corners.angle),
                         (W, H))
    assert [sorted(c.corner_ids) for c in reading.cards if bottom in c.corner_ids] == [
        sorted([int(bottom), int(top)])]
    assert team_melds(reading, 0)[0] == ["K", "K", "K"]


def test_a_lone_red_three_seen_by_its_bottom_index_counts_for_its_side():
    table = (column(["6H", "6S", "6D"], 1000, 2000) + column(["8H", "8S", "8D"], 2500, 900, angle=180)
             + [{"card": "3H", "x": 2600, "y": 2200, "angle": 0}])
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    # something lies over the red three's top-left index: only its bottom index shows,
    # which alone reads like the top index of a card facing the other team
    three = np.flatnonzero(corners.class_ids == CLASS_ID["3R"])
    covered = three[np.argmin(corners.centers[three, 1])]
    corners = corners.select(np.flatnonzero(np.arange(len(corners)) != covered))
    layout = read_table(corners, (W, H)).layout_json()
    assert [t["red_threes"] for t in layout["teams"]] == [1, 0]
    assert layout["teams"][0]["melds"] == [["6", "6", "6"]]
    assert layout["teams"][1]["melds"] == [["8", "8", "8"]]


def test_card_of_a_row_stays_in_the_row_below_a_column():
    # a row of sevens with a column of eights above it: the fourth seven's index, taken
    # for a top-right one, would put it right under the eights' column; a card with row
    # neighbours beside it on its line is in the row (scene 628 of the val photos)
    width = 0.714 * CARD_H
    step = 0.2 * width
    row = [{"card": c, "x": 1000 + k * step, "y": 2000, "angle": 0.0}
           for k, c in enumerate(["7H", "7S", "2C", "7C", "7D", "7H", "7S"])]
    eights = column(["8H", "8S", "8D"], row[3]["x"] - 0.96 * width,
                    2000 - (0.8 + 0.44) * CARD_H)
    _, reading = read(eights + row)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("7", "7", "7", "7", "7", "7", "2"),
                                                           ("8", "8", "8")]
    assert not any(r["kind"] == "card_note" for r in reading.review)  # nothing inferred


def test_an_unsure_card_between_two_sure_ones_two_table_steps_apart_is_a_card():
    # the queens' column shows two sure cards two steps apart: its own step says the
    # unsure one between them is off its places, the kings' column (the table's step)
    # that it is on one
    table = column(["KH", "KS", "KD", "KC"], 1000, 1900) + column(["QH", "QS", "QD"],
                                                                   1600, 1900)
    scene = scene_from_placements(table, W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    queens = np.flatnonzero(corners.class_ids == CLASS_ID["Q"])
    middle = int(queens[np.argsort(corners.centers[queens, 1])[1]])
    corners = _with_confidence(corners, middle, 0.35)
    reading = read_table(corners, (W, H), min_confidence=0.4, supported_confidence=0.3)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("K",) * 4, ("Q",) * 3]
    assert any(middle in c.corner_ids for c in reading.cards)
    assert not [r for r in reading.review if r["kind"] == "unsure_corners"]


def test_a_second_rank_read_unsurely_in_a_column_is_a_misread():
    # a bare 6 read as a 9 on two cards of a column of sixes, unsurely: one meld of six
    # sixes, not a column split into 6 6 6 6 and a pair of nines
    corners, _ = read(column(["6H", "6S", "6D", "6C", "6H", "6S"], 1000, 1700))
    order = np.argsort(corners.centers[:, 1])
    class_ids, rank_conf = corners.class_ids.copy(), corners.confidence.copy()
    class_ids[order[[1, 3]]] = CLASS_ID["9"]
    rank_conf[order[[1, 3]]] = 0.55
    misread = Corners(corners.boxes, class_ids, corners.confidence, corners.angle, rank_conf)
    reading = read_table(misread, (W, H))
    assert team_melds(reading, 0) == [["6"] * 6]
    assert sum("counted as 6" in r["message"] for r in reading.review) == 2
    # read surely, the nines are a touching meld of their own
    rank_conf[order[[1, 3]]] = 0.95
    sure = read_table(Corners(corners.boxes, class_ids, corners.confidence, corners.angle,
                              rank_conf), (W, H))
    assert not any("counted as 6" in r["message"] for r in sure.review)


def test_a_lone_rank_in_a_column_is_a_misread_only_when_read_unsurely():
    # one card of a column of sevens read as an eight: a seven when the reader gave the
    # eight MISREAD_BELOW or less (MISREAD_INSIDE_BELOW or less inside the column, sevens
    # on both sides of it), else an eight lying on the column (noted either way)
    from scanner.reconstruct import MISREAD_BELOW, MISREAD_INSIDE_BELOW

    corners, _ = read(column(["7H", "7S", "7D", "7C", "7H"], 1000, 1700))
    order = np.argsort(corners.centers[:, 1])
    middle, last = int(order[2]), int(order[-1])
    for where, rank_conf, counted in ((last, MISREAD_BELOW - 0.05, "7"),
                                      (last, MISREAD_BELOW + 0.05, "8"),
                                      (middle, MISREAD_BELOW + 0.05, "7"),
                                      (middle, MISREAD_INSIDE_BELOW - 0.01, "7"),
                                      (middle, MISREAD_INSIDE_BELOW + 0.01, "8")):
        class_ids = corners.class_ids.copy()
        class_ids[where] = CLASS_ID["8"]
        conf = corners.confidence.copy()
        conf[where] = rank_conf
        reading = read_table(Corners(corners.boxes, class_ids, corners.confidence,
                                     corners.angle, conf), (W, H))
        card = next(c for c in reading.cards if where in c.corner_ids)
        assert card.rank == counted, (where, rank_conf)
        assert any("read as 8 in a column of 7" in n for n in card.notes) == (counted == "7")


def _read_turned(corners: Corners, class_ids, rank_conf, i: int, turn: float):
    """The table read with the corners' classes and rank confidences `class_ids` and
    `rank_conf`, corner `i`'s direction turned by `turn` degrees; and the card it makes."""
    angle = corners.angle.copy()
    angle[i] += turn
    reading = read_table(Corners(corners.boxes, class_ids, corners.confidence, angle,
                                 rank_conf), (W, H))
    return reading, next(c for c in reading.cards if i in c.corner_ids)


def test_a_lone_rank_inside_a_column_at_another_angle_is_not_its_misread():
    # the same column with its middle card read as an eight, between MISREAD_BELOW and
    # MISREAD_INSIDE_BELOW, its index turned 50 degrees off the column's (print on a
    # card's face, a letter of a JOKER): not a seven of the column
    from scanner.reconstruct import MISREAD_BELOW, MISREAD_INSIDE_BELOW

    corners, _ = read(column(["7H", "7S", "7D", "7C", "7H"], 1000, 1700))
    middle = int(np.argsort(corners.centers[:, 1])[2])
    class_ids, conf = corners.class_ids.copy(), corners.confidence.copy()
    class_ids[middle] = CLASS_ID["8"]
    conf[middle] = (MISREAD_BELOW + MISREAD_INSIDE_BELOW) / 2
    for turn, counted in ((0.0, "7"), (50.0, "8")):
        _, card = _read_turned(corners, class_ids, conf, middle, turn)
        assert card.rank == counted, turn


def test_an_index_read_sideways_inside_a_column_is_its_misread():
    # the middle seven of the column read as a king, 0.85, its index read turned a quarter
    # (test 2059: an eight's index read as a king lying sideways): on an empty place of the
    # column, its index clear of the others, it is a seven; it does not pair with the king
    # lying alone beside the column, which stays a squared-up canasta
    from scanner.reconstruct import MISREAD_BELOW, MISREAD_INSIDE_BELOW

    table = (column(["7H", "7S", "7D", "7C", "7H"], 1000, 1700)
             + [{"card": "KH", "x": 1400, "y": 1700, "angle": 0.0}]
             + column(["9H", "9S", "9D"], 1800, 1700))
    corners, _ = read(table)
    sevens = np.flatnonzero(corners.class_ids == CLASS_ID["7"])
    middle = int(sevens[np.argsort(corners.centers[sevens, 1])[2]])
    class_ids, conf = corners.class_ids.copy(), corners.confidence.copy()
    class_ids[middle] = CLASS_ID["K"]
    conf[middle] = (MISREAD_BELOW + MISREAD_INSIDE_BELOW) / 2
    for turn, counted in ((-90.0, "7"), (-75.0, "7"), (-45.0, "K")):
        reading, card = _read_turned(corners, class_ids, conf, middle, turn)
        assert card.rank == counted, turn
        if counted == "7":
            # laid on its place in the column: no gap seems to hide one more seven
            assert team_melds(reading, 0)[0] == ["7"] * 5, turn
            assert any(m.squared and m.rank == "K" for m in reading.melds), turn
    # a second box beside an index of the column, read sideways as a king, is no seven
    boxes = corners.boxes.copy()
    boxes[middle] = corners.boxes[sevens[np.argsort(corners.centers[sevens, 1])[1]]] + [
        0.0, 0.1 * CARD_H, 0.0, 0.1 * CARD_H]
    angle = corners.angle.copy()
    angle[middle] -= 90.0
    reading = read_table(Corners(boxes, class_ids, corners.confidence, angle, conf), (W, H))
    assert not any("read as K in a column of 7" in n for c in reading.cards for n in c.notes)


def test_an_unsure_wild_in_a_column_keeps_its_rank_but_a_joker_among_jacks():
    # a column of five tens with a joker and a two in it, both read unsurely: wilds of the
    # meld (a wild is a card of its column as often as not) ...
    cards = ["10H", "10S", "JK", "10D", "2C", "10C", "10H"]
    corners, _ = read(column(cards, 1000, 1700))
    order = np.argsort(corners.centers[:, 1])
    rank_conf = corners.confidence.copy()
    rank_conf[order[[2, 4]]] = 0.5
    unsure = Corners(corners.boxes, corners.class_ids, corners.confidence, corners.angle,
                     rank_conf)
    reading = read_table(unsure, (W, H))
    assert team_melds(reading, 0) == [["10"] * 5 + ["2", "JK"]]
    assert not any("counted as 10" in r["message"] for r in reading.review)
    # ... but a joker read unsurely among jacks is a jack (the J and K of a jack's or a
    # king's index read as the JOKER word's letters); the two stays a two
    class_ids = np.where(corners.class_ids == CLASS_ID["10"], CLASS_ID["J"], corners.class_ids)
    reading = read_table(Corners(corners.boxes, class_ids, corners.confidence, corners.angle,
                                 rank_conf), (W, H))
    assert team_melds(reading, 0) == [["J"] * 6 + ["2"]]
    assert sum("read as JK in a column of J" in r["message"] for r in reading.review) == 1
    # ... unless its box is far narrower than the jacks' indices: a joker's word printed
    # down a thin strip (test 1179, kde-oxygen-white), which no jack's index is
    joker = int(np.flatnonzero(corners.class_ids == CLASS_ID["JK"])[0])
    boxes = corners.boxes.copy()
    middle = boxes[joker, [0, 2]].mean()
    boxes[joker, [0, 2]] = middle - 6, middle + 6  # 12 of the jacks' 30 px
    reading = read_table(Corners(boxes, class_ids, corners.confidence, corners.angle,
                                 rank_conf), (W, H))
    assert team_melds(reading, 0) == [["J"] * 5 + ["2", "JK"]]


def test_an_unsure_column_at_its_own_angle_beside_another_is_a_meld_of_its_own():
    # a column of fives and, touching it, a column of fours laid 30 degrees askew whose
    # (tango-like) fours the reader is unsure of: two melds, not nine fives
    width = 0.714 * CARD_H
    table = column(["5H", "5S", "5D", "5C", "5H"], 1000, 1700) + column(
        ["4H", "4S", "4D", "4C"], 1000 + 0.9 * width, 1700, angle=30)
    corners, _ = read(table)
    fours = corners.class_ids == CLASS_ID["4"]
    rank_conf = np.where(fours, 0.6, corners.confidence)
    reading = read_table(Corners(corners.boxes, corners.class_ids, corners.confidence,
                                 corners.angle, rank_conf), (W, H))
    assert sorted(map(tuple, team_melds(reading, 0))) == [("4",) * 4, ("5",) * 5]
    assert not any("counted as 5" in r["message"] for r in reading.review)


def test_a_fourth_wild_goes_to_the_neighbouring_meld_with_room():
    from scanner.reconstruct import CardReading, _rehome_surplus_wilds

    def card(rank, x, y, whole=False):
        return CardReading(rank=rank, corner_ids=[0], center=(x, y), angle=0.0,
                           confidence=0.9, fully_visible=whole, team=0)

    step = 0.22 * CARD_H
    tens = [card("10", 1000, 1000 + k * step) for k in range(4)]
    wilds = [card("2", 1000, 1000 + k * step) for k in range(4, 7)]
    nines = [card("9", 1200, 1000 + k * step) for k in range(3)]
    stray = card("2", 1150, 1000 + 4.5 * step, whole=True)  # the nines' last card
    cards = tens + wilds + nines + [stray]
    naturals = {(0, "10"): [0, 1, 2, 3], (0, "9"): [7, 8, 9]}
    home = {w: (0, "10") for w in (4, 5, 6, 10)}
    _rehome_surplus_wilds(cards, naturals, home, CARD_H)
    assert home[10] == (0, "9") and [home[w] for w in (4, 5, 6)] == [(0, "10")] * 3
    assert cards[10].notes
    # a covered wild lies inside its column: four of them stay (the rule check flags it)
    cards[10].fully_visible = False
    home = {w: (0, "10") for w in (4, 5, 6, 10)}
    _rehome_surplus_wilds(cards, naturals, home, CARD_H)
    assert set(home.values()) == {(0, "10")}


def test_a_hidden_card_the_pack_has_no_natural_for_is_a_wild():
    # eight kings show and the gap between them hides a ninth card: two decks hold
    # eight kings, so it is a wild (counted as a joker, the card a detector misses most)
    table = column(["KH", "KS", "KD", "KC", "JK", "KH", "KS", "KD", "KC"], 1000, 1500)
    scene = scene_from_placements(table, W, H)
    scene["cards"][4]["indices"][0]["visible"] = 0.0  # a coin on the joker's index
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0) == [["K"] * 8 + ["JK"]]
    hidden = [c for c in reading.cards if not c.corner_ids]
    assert len(hidden) == 1 and any("no more K" in n for n in hidden[0].notes)
    assert not any(r["kind"] == "pack_count" for r in reading.review)


def test_a_hidden_card_past_the_pack_is_the_wild_the_photo_shows_fewer_of():
    # the kings' hidden card again, three of the pack's four jokers showing in the other
    # team's meld and one two of eight: the covered card is a two sooner than the last joker
    table = column(["KH", "KS", "KD", "KC", "JK", "KH", "KS", "KD", "KC"], 1000, 1700) + \
        column(["8H", "8S", "8D", "JK", "JK", "JK", "2C"], 1000, 600, angle=180)
    scene = scene_from_placements(table, W, H)
    scene["cards"][4]["indices"][0]["visible"] = 0.0
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0) == [["K"] * 8 + ["2"]]
    hidden = [c for c in reading.cards if not c.corner_ids]
    assert len(hidden) == 1 and any("counted as a 2" in n for n in hidden[0].notes)


def test_a_card_past_the_pack_s_copies_is_left_out_the_least_sure():
    # nine kings read where two decks hold eight: the one read least surely is left out
    corners, _ = read(column(["KH", "KS", "KD", "KC", "KH", "KS", "KD", "KC", "KH"], 1000, 1400))
    unsure = int(np.argsort(corners.centers[:, 1])[3])
    reading = read_table(_with_confidence(corners, unsure, 0.5), (W, H))
    assert team_melds(reading, 0) == [["K"] * 8]
    out = [c for c in reading.cards if unsure in c.corner_ids]
    assert len(out) == 1 and out[0].role == "left_out" and out[0].notes


def test_a_meld_seen_with_one_natural_has_a_second_unseen():
    # the first ace's index is covered: one ace and two wilds show, and a meld holds two
    # naturals or more
    scene = scene_from_placements(column(["AS", "AH", "2C", "2D"], 1000, 1700), W, H)
    scene["cards"][0]["indices"][0]["visible"] = 0.0
    reading = read_table(corners_from_scene(scene), (W, H))
    assert team_melds(reading, 0) == [["A", "A", "2", "2"]]
    assert any(r["kind"] == "meld_rule" and "needs 2 naturals" in r["message"]
               for r in reading.review)


def test_a_hidden_card_counted_as_a_wild_leaves_the_pile_s_jokers_counted():
    # four jokers lie in the discard pile: the pack has no fifth, so the hidden card the
    # kings' pack count rules out is counted as a two
    table = column(["KH", "KS", "KD", "KC", "JK", "KH", "KS", "KD", "KC"], 1000, 1700) + \
        column(["8H", "8S", "8D"], 1000, 600, angle=180)
    pile = [{"card": "JK", "x": 2200 + 40 * k, "y": 1250 + 30 * k, "angle": a}
            for k, a in enumerate((10, 80, 150, 230))]
    scene = scene_from_placements(table + pile, W, H)
    scene["cards"][4]["indices"][0]["visible"] = 0.0
    reading = read_table(corners_from_scene(scene), (W, H))
    assert sum(c.rank == "JK" and c.team is None for c in reading.cards) == 4
    assert team_melds(reading, 0) == [["K"] * 8 + ["2"]]


def test_two_black_threes_in_a_column_are_a_meld_of_three():
    table = column(["6H", "6S", "6D"], 1000, 2000) + column(["3S", "3C"], 1600, 2000)
    _, reading = read(table)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("3B", "3B", "3B"), ("6", "6", "6")]
    assert any(r["kind"] == "meld_rule" and "black three" in r["message"]
               for r in reading.review)


def test_a_whole_card_pairs_with_its_own_top_index_where_its_size_is_misjudged():
    # perspective (or an oversized box) makes the card size read at the bottom index a
    # quarter too big: measured between the two, its own top index still fits better
    # than the covered card's a step up
    from scanner.reconstruct import CardGeometry, _pair_corners, _same_print

    corners = corners_from_scene(scene_from_placements(column(["KH", "KS", "KD"], 1000, 1500),
                                                       W, H))
    order = np.argsort(corners.centers[:, 1])
    card_h = np.full(len(corners), CARD_H)
    card_h[order[-1]] = 1.25 * CARD_H
    groups, _ = _pair_corners(corners, corners.angle.astype(float), card_h, CardGeometry(),
                              _same_print(corners))
    assert sorted(order[-2:].tolist()) in [sorted(g) for g in groups]


def test_unsurely_read_aces_in_a_column_beside_the_tens_are_not_their_misreads():
    # a column of five tens and, a card and a half across, three aces read 0.6, one stack
    # by a joker lying between them (test 2739): the aces are a column of their own
    from scanner.reconstruct import MISREAD_BESIDE

    width = 100.0

    def card(rank, x, y, rank_confidence=0.99):
        return CardReading(rank=rank, corner_ids=[0], center=(x, y), angle=0.0,
                           confidence=rank_confidence, fully_visible=False,
                           rank_confidence=rank_confidence)

    def split(aces_across):
        cards = ([card("10", 1000, 1000 + 40 * k) for k in range(5)]
                 + [card("JK", 1000 + aces_across / 2, 1040)]
                 + [card("A", 1000 + aces_across, 1020 + 40 * k, 0.6) for k in range(3)])
        return cards, sorted(_split_touching_melds(cards, [list(range(9))], width))

    cards, stacks = split(1.5 * width)
    assert [c.rank for c in cards[6:]] == ["A"] * 3
    assert stacks == [[0, 1, 2, 3, 4, 5], [6, 7, 8]]  # the joker with the nearer tens
    # on the tens' line (a little off it, as a column wanders), they are misread tens
    cards, stacks = split(0.5 * MISREAD_BESIDE * width)
    assert [c.rank for c in cards[6:]] == ["10"] * 3
    assert stacks == [list(range(9))]


def test_a_column_read_unsurely_throughout_stands_on_the_lattice_that_fits_it_whole():
    # four aces, every corner unsure (val 1958's small print): their places a few
    # hundredths of a card off a regular step (gaps 0.20, 0.19, 0.26 of a card), which no
    # median gap fits but one step of 0.22 does; the kings beside them are sure
    aces = column(["AH", "AS", "AD", "AC"], 1000, 1700)
    for card, off in zip(aces[1:], (-0.02, -0.05, -0.01), strict=True):
        card["y"] += off * CARD_H
    corners = corners_from_scene(scene_from_placements(
        aces + column(["KH", "KS", "KD"], 2000, 1700), W, H), np.random.default_rng(1))
    unsure = corners.class_ids == CLASS_ID["A"]
    conf = np.where(unsure, 0.3, corners.confidence)
    reading = read_table(Corners(corners.boxes, corners.class_ids, conf, corners.angle,
                                 np.where(unsure, 0.6, conf)),
                         (W, H), min_confidence=0.4, supported_confidence=0.2)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("A",) * 4, ("K",) * 3]


def _reader_reads(asked: list, reads: dict[str, float]):
    """A `read_table` look whose reader reads every box it is asked about as `reads`
    (rank -> probability); it records the boxes asked about in `asked`."""
    def look(boxes):
        asked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        for rank, p in reads.items():
            probs[:, CLASS_ID[rank]] = p
        return probs
    return look


@pytest.mark.parametrize("joker_read, counted", [(0.95, ["K", "K", "K", "K", "JK"]),
                                                  (0.6, ["K", "K", "K", "K", "JK"]),
                                                  (0.45, ["K"] * 5), (0.25, ["K"] * 5)])
def test_a_hidden_card_whose_index_reads_as_a_joker_where_it_lies_is_a_joker(joker_read,
                                                                             counted):
    # the detector found no corner on the joker in the middle of a column of kings: the gap
    # says a card lies there, counted as a king, unless the reader, asked about the place
    # of its index, reads a joker there surer than a king (and `LOOK_WILD` or more)
    scene = scene_from_placements(column(["KH", "KS", "JK", "KD", "KC"], 1000, 1700), W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    corners = corners.select(np.flatnonzero(corners.class_ids != CLASS_ID["JK"]))
    joker = next(c for c in scene["cards"] if c["card"] == "JK")
    asked = []
    look = _reader_reads(asked, {"JK": joker_read, "K": 1 - joker_read})
    reading = read_table(corners, (W, H), look=look)
    assert sorted(team_melds(reading, 0)[0]) == sorted(counted)
    assert ("JK" in counted) == any("read where it lies" in r["message"]
                                    for r in reading.review)
    # asked once, about the joker's own index (its top-left corner, the one that shows)
    (boxes,) = asked
    index = np.asarray(next(ix["box"] for ix in joker["indices"] if ix["visible"] >= 0.5))
    assert len(boxes) == 1
    assert np.abs(boxes[0] - index).max() < 0.05 * CARD_H
    # without a reader, the gap's card is a king
    assert sorted(team_melds(read_table(corners, (W, H)), 0)[0]) == ["K"] * 5


@pytest.mark.parametrize("two_read, seven_read, counted",
                         [(0.6, 0.35, ["7"] * 5), (0.6, 0.1, ["7"] * 4 + ["2"]),
                          (0.95, 0.35, ["7"] * 4 + ["2"])])
def test_a_wild_in_a_column_whose_index_also_reads_as_the_column_s_rank_is_that_rank(
        two_read, seven_read, counted):
    # test 119: a kde-oxygen-white seven in a column of sevens read as a 2 (0.60): asked
    # about that index again, the readers read it a seven 0.39 as well, which they read a
    # true wild's index almost never; a two read surely is not asked about
    scene = scene_from_placements(column(["7H", "7S", "2D", "7C", "7D"], 1000, 1700), W, H)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    two = corners.class_ids == CLASS_ID["2"]
    corners = Corners(corners.boxes, corners.class_ids, corners.confidence, corners.angle,
                      np.where(two, two_read, corners.rank_confidence))
    asked = []
    reading = read_table(corners, (W, H), look=_reader_reads(asked, {"7": seven_read,
                                                                     "2": 1 - seven_read}))
    assert sorted(team_melds(reading, 0)[0]) == sorted(counted)
    assert any(np.array_equal(b, corners.boxes[two]) for b in asked) is (two_read < 0.8)
    assert ("2" not in counted) == any("in a column of 7: counted as 7" in r["message"]
                                       for r in reading.review)
    # without a reader to ask, it is a wild
    assert sorted(team_melds(read_table(corners, (W, H)), 0)[0]) == ["2"] + ["7"] * 4


@pytest.mark.parametrize("king_read, kings", [(0.9, 5), (0.5, 4)])
def test_a_front_card_the_detector_missed_is_read_past_the_column_s_end(king_read, kings):
    # no corner on the front king of a column of five: the fourth king, seen by its top
    # index alone, is covered by something; the reader, asked about the next index place
    # down the column, reads a king there surely (or not)
    from scanner.detector import box_iou

    scene = scene_from_placements(column(["KH", "KS", "KD", "KC", "KH"], 1000, 1700), W, H)
    front = max(scene["cards"], key=lambda c: c["z"])
    index = np.asarray(next(ix["box"] for ix in front["indices"] if ix["corner"] == "tl"))
    corners = corners_from_scene(scene, np.random.default_rng(1))
    gone = [box_iou(np.asarray(ix["box"]), corners.boxes) for ix in front["indices"]]
    corners = corners.select(np.flatnonzero(np.max(gone, axis=0) < 0.5))
    asked = []

    def look(boxes):
        asked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[:, CLASS_ID["K"]] = king_read
        return probs

    reading = read_table(corners, (W, H), look=look)
    assert team_melds(reading, 0) == [["K"] * kings]
    (boxes,) = asked
    assert len(boxes) == 1 and box_iou(index, boxes)[0] > 0.5
    assert team_melds(read_table(corners, (W, H)), 0) == [["K"] * 4]


@pytest.mark.parametrize("y, takes", [(1088.0, True), (1092.0, False), (1060.0, False)])
def test_the_middle_of_a_short_gap_in_a_line_is_a_place(y, takes):
    # cards of a column 30 px apart, then a gap of 48 px (1.6 steps, test 2799's row of
    # fives laid unevenly): a card 4 px off the gap's middle is its missing card, though 0.67
    # steps from the next card; 8 px off it is not, nor is a card on a held place
    from scanner.reconstruct import _fills_a_place

    line = np.array([[1000.0, 1000.0], [1000.0, 1030.0], [1000.0, 1060.0], [1000.0, 1108.0]])
    assert _fills_a_place(np.array([1000.0, y]), line, 0.0, 200.0) is takes


def _kings_with_a_gap() -> tuple[Corners, list[CardReading], list[list[int]]]:
    """A column of kings 44 px apart with a gap of 88 px, its front card whole: corners,
    cards and the one stack."""
    tops = [1000.0, 1044.0, 1132.0, 1176.0]
    boxes = [[990.0, y - 15, 1010.0, y + 15] for y in tops] + [[1050.0, 1326.0, 1070.0, 1356.0]]
    corners = Corners(np.array(boxes), np.full(5, CLASS_ID["K"]), np.full(5, 0.9),
                      np.array([0.0, 0.0, 0.0, 0.0, 180.0]))
    cards = [CardReading(rank="K", corner_ids=[i] if i < 3 else [3, 4], center=(1030.0, y + 80),
                         angle=0.0, confidence=0.9, fully_visible=i == 3, stack=0, team=0)
             for i, y in enumerate(tops)]
    return corners, cards, [[0, 1, 2, 3]]


@pytest.mark.parametrize("over_the_bar, added", [(0.05, True), (-0.05, False), (None, True)])
def test_a_card_missed_in_a_gap_off_the_column_s_lattice_is_read_where_it_lies(over_the_bar,
                                                                               added):
    # a column of kings 44 px apart with a gap of 88 px no hidden card fills (the gap
    # inference found no lattice: a misplaced card, test 11269 of t4), its front card whole:
    # the reader is asked midway across the gap only, and a king read there is a card
    from scanner.reconstruct import LOOK_PAST, _look_along_lines

    corners, cards, stacks = _kings_with_a_gap()
    asked = []

    def look(boxes):
        asked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        # (None: read 0.70, as t4 8749's queen in a column's gap)
        probs[:, CLASS_ID["K"]] = 0.70 if over_the_bar is None else LOOK_PAST + over_the_bar
        return probs

    _look_along_lines(cards, stacks, corners, look, 200.0)
    (boxes,) = asked
    assert np.allclose(boxes, [[990.0, 1073.0, 1010.0, 1103.0]])  # the gap's middle
    assert len(cards) == (5 if added else 4) and len(stacks[0]) == len(cards)
    if added:
        assert cards[4].rank == "K" and cards[4].center == (1030.0, 1168.0)
        assert not cards[4].corner_ids


@pytest.mark.parametrize("found_at, read, added", [
    (1100.0, 0.65, True),    # an index found a third of one below the gap's middle, read a king
    (1100.0, 0.55, False),   # ... read too unsurely
    (1132.0, 0.95, False),   # what is found there is the next card's index, already a card
])
def test_a_card_missed_in_a_gap_is_read_where_the_detector_finds_its_index(found_at, read,
                                                                            added):
    # the column of kings of the test above, the reader unsure in the gap's middle (its
    # index lies a third of its height lower, test 1689): the detector is asked to find the
    # index near the place, and a king read there is a card, unless it is a card's index
    from scanner.reconstruct import _look_along_lines

    corners, cards, stacks = _kings_with_a_gap()
    asked = []

    def look(boxes):
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[:, CLASS_ID["K"]] = 0.3
        return probs

    def find(boxes):
        asked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[:, CLASS_ID["K"]] = read
        return np.array([[990.0, found_at - 15, 1010.0, found_at + 15]] * len(boxes)), probs

    _look_along_lines(cards, stacks, corners, look, 200.0, find)
    (boxes,) = asked
    # the gap's middle, and one step before the back card (what is found for it lies
    # nearer a king's index than that place: no card)
    assert np.allclose(boxes, [[990.0, 1073.0, 1010.0, 1103.0], [990.0, 941.0, 1010.0, 971.0]])
    assert len(cards) == (5 if added else 4) and len(stacks[0]) == len(cards)
    if added:
        assert cards[4].rank == "K" and not cards[4].corner_ids

    # where the reader reads the card at the place itself, the detector is not asked
    # about it (only about the place before the back card, which the reader is not)
    asked.clear()
    _look_along_lines(cards[:4], [[0, 1, 2, 3]], corners,
                      lambda b: np.eye(len(CLASS_ID) + 1)[[CLASS_ID["K"]] * len(b)], 200.0, find)
    assert np.allclose(np.concatenate(asked), [[990.0, 941.0, 1010.0, 971.0]])


def _row_of_jacks(step: float, turn: float = 0.0):
    """Six jacks laid left to right `step` px apart, each covering the one before it but for
    its top-left index (20 x 30 px, 50 px left of and 70 px above its card's centre), the
    cards turned `turn` degrees more each: corners, cards and the one stack."""
    centres = [(1000.0 + step * k, 1000.0) for k in range(6)]
    angles = [turn * k for k in range(6)]
    index = [(x - 50.0, y - 70.0) for x, y in centres]
    corners = Corners(np.array([[x - 10, y - 15, x + 10, y + 15] for x, y in index]),
                      np.full(6, CLASS_ID["J"]), np.full(6, 0.9), np.array(angles))
    cards = [CardReading(rank="J", corner_ids=[i], center=centres[i], angle=angles[i],
                         confidence=0.9, fully_visible=i == 5, stack=0, team=0)
             for i in range(6)]
    return corners, cards, [list(range(6))]


@pytest.mark.parametrize("step, turn, found_at, asked_at, added", [
    (30.0, 0.0, (-30.0, 0.0), (-30.0, 0.0), True),   # found one step past the back card
    (30.0, 0.0, (-12.0, 10.0), (-30.0, 0.0), False),  # a second box on the back index
    (30.0, 5.0, (-30.0, 0.0), None, False),           # a fan's turn: no row to look past
    (17.0, 0.0, (-17.0, 0.0), None, False),           # a step short of an index: its own
])
def test_a_row_s_back_card_missed_is_looked_for_one_step_past_it(step, turn, found_at,
                                                                  asked_at, added):
    # test 2099: a row of jacks whose back card (the end the indices lie toward) the detector
    # missed; no gap shows it, so the detector is asked one step past the back card, and a
    # jack found there is a card, unless what it finds lies nearer the back index than the
    # place (a second box on that index, val 1168)
    from scanner.reconstruct import _look_along_lines

    corners, cards, stacks = _row_of_jacks(step, turn)
    asked = []

    def look(boxes):
        return np.zeros((len(boxes), len(CLASS_ID) + 1))

    def find(boxes):
        asked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[:, CLASS_ID["J"]] = 0.65
        x, y = 950.0 + found_at[0], 930.0 + found_at[1]
        return np.array([[x - 10, y - 15, x + 10, y + 15]] * len(boxes)), probs

    _look_along_lines(cards, stacks, corners, look, 200.0, find)
    if asked_at is None:
        assert asked == []
    else:
        (boxes,) = asked
        assert np.allclose((boxes[:, :2] + boxes[:, 2:]) / 2,
                           [[950.0 + asked_at[0], 930.0 + asked_at[1]]])
    assert len(cards) == (7 if added else 6) and len(stacks[0]) == len(cards)
    if added:
        assert cards[6].rank == "J" and not cards[6].corner_ids
        assert np.allclose(cards[6].center, (1000.0 - step, 1000.0))


@pytest.mark.parametrize("hint, found, spent, added", [
    (0.9, (20.0, 30.0, 0.65, "K"), False, True),   # the back king's index, found and read
    (0.03, (20.0, 30.0, 0.65, "K"), False, True),  # ... the reader seeing a trace of it
    (0.01, (20.0, 30.0, 0.65, "K"), False, False),  # the reader sees none: no search
    (0.9, (20.0, 30.0, 0.65, "2"), False, False),  # a wild read there: off the column
    (0.9, (30.0, 28.0, 0.95, "K"), False, False),  # boxed otherwise than the column's indices
    (0.9, (20.0, 30.0, 0.95, "K"), True, False),   # the pack's eight kings all on the sides
])
def test_a_column_s_back_card_missed_is_found_one_step_before_it(hint, found, spent, added):
    # val 2388: the detector missed a column's back card (the end its top indices lie
    # toward); no gap shows it, so the detector's search is asked one step before the back
    # card where the reader sees a trace of the column's rank (not taken at its word: a box
    # guessed off a column's end may lie on other print), and a card of the column's rank
    # boxed as its indices are is a card there (t4 5959: the discard pile's king, turned 45
    # degrees, boxed square, was found past a column of kings)
    from scanner.reconstruct import BACK_HINT, _look_along_lines

    corners, cards, stacks = _kings_with_a_gap()
    if spent:
        cards += [CardReading(rank="K", corner_ids=[], center=(2000.0, 400.0 + 40 * k),
                              angle=180.0, confidence=0.9, fully_visible=False, stack=1,
                              team=1) for k in range(4)]
        stacks.append([4, 5, 6, 7])
    looked, asked = [], []

    def look(boxes):
        looked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[np.abs(boxes[:, 1] - 941.0) < 1.0, CLASS_ID["K"]] = hint
        return probs

    def find(boxes):
        asked.append(np.asarray(boxes))
        w, h, read, rank = found
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[:, CLASS_ID[rank]] = read
        return np.array([[1000 - w / 2, 956 - h / 2, 1000 + w / 2, 956 + h / 2]] * len(boxes)), probs

    _look_along_lines(cards, stacks, corners, look, 200.0, find)
    # the reader is asked about the gap and the back; the search about the gap and, where
    # the reader saw a trace of a king, the back
    gap, back = [990.0, 1073.0, 1010.0, 1103.0], [990.0, 941.0, 1010.0, 971.0]
    (read_first,) = looked
    assert np.allclose(read_first, [gap] if spent else [gap, back])
    (boxes,) = asked
    assert any(np.allclose(b, back) for b in boxes) is (not spent and hint >= BACK_HINT)
    column = [c for c in cards if c.stack == 0]
    assert len(column) == (5 if added else 4) and len(stacks[0]) == len(column)
    if added:
        assert column[4].rank == "K" and column[4].center == (1030.0, 1000.0 - 44.0 + 80.0)


def _turned(offset: np.ndarray, degrees: float) -> np.ndarray:
    """`offset` (x, y) turned `degrees` clockwise on the photo (y down)."""
    a = np.radians(degrees)
    return np.array([offset[0] * np.cos(a) - offset[1] * np.sin(a),
                     offset[0] * np.sin(a) + offset[1] * np.cos(a)])


@pytest.mark.parametrize("read, added", [(0.65, True), (0.55, False)])
def test_a_fan_s_end_card_missed_is_found_a_chord_and_a_turn_past_it(read, added):
    # t4 9509: a fan of five kings read as four, its end card missed (no gap shows it): the
    # search is asked a chord and a turn past each end card, and a king found past the
    # last one, read surely enough, is a card there
    from scanner.reconstruct import _look_along_lines

    offset = np.array([-50.0, -70.0])
    centres = [np.array([1000.0 + 30 * k, 1000.0]) for k in range(4)]
    angles = [4.0 * k for k in range(4)]
    index = [c + _turned(offset, a) for c, a in zip(centres, angles, strict=True)]
    corners = Corners(np.array([[x - 10, y - 15, x + 10, y + 15] for x, y in index]),
                      np.full(4, CLASS_ID["K"]), np.full(4, 0.9), np.array(angles))
    cards = [CardReading(rank="K", corner_ids=[i], center=tuple(centres[i]), angle=angles[i],
                         confidence=0.9, fully_visible=False, stack=0, team=1)
             for i in range(4)]
    stacks = [[0, 1, 2, 3]]
    past_last = np.array([1120.0, 1000.0]) + _turned(offset, 16.0)
    asked = []

    def look(boxes):
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[:, CLASS_ID["K"]] = 0.3  # a trace of a king, too little to be one
        return probs

    def find(boxes):
        asked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        at = np.abs((boxes[:, :2] + boxes[:, 2:]) / 2 - past_last).max(axis=1) < 1.0
        probs[at, CLASS_ID["K"]] = read
        return np.asarray(boxes), probs

    _look_along_lines(cards, stacks, corners, look, 200.0, find)
    (boxes,) = asked
    centres_asked = (boxes[:, :2] + boxes[:, 2:]) / 2
    before_first = np.array([970.0, 1000.0]) + _turned(offset, -4.0)
    assert len(boxes) == 2
    assert min(np.abs(centres_asked - past_last).max(axis=1)) < 1.0
    assert min(np.abs(centres_asked - before_first).max(axis=1)) < 1.0
    assert len(cards) == (5 if added else 4)
    if added:
        assert cards[4].rank == "K" and np.allclose(cards[4].center, (1120.0, 1000.0))


def test_a_flattened_table_asks_the_detector_in_the_photo_s_pixels():
    # a photo from a seat is read on its table made flat: `find` is asked in the photo's
    # pixels and what it finds comes back in the flat table's
    from types import SimpleNamespace

    from scanner.reconstruct import _moved_find

    flat = SimpleNamespace(to_photo=lambda pts: pts * 2.0, to_flat=lambda pts: pts / 2.0)
    asked = []

    def find(boxes):
        asked.append(boxes)
        return boxes + 4.0, np.ones((len(boxes), 3))

    found, probs = _moved_find(find, flat)(np.array([[10.0, 20.0, 30.0, 50.0]]))
    assert np.allclose(asked[0], [[20.0, 40.0, 60.0, 100.0]])
    assert np.allclose(found, [[12.0, 22.0, 32.0, 52.0]]) and probs.shape == (1, 3)


def test_a_joker_missed_in_a_fan_is_read_midway_across_its_gap():
    # five jacks and twos of a fan read turning 3 degrees a card (too little for the fan's
    # gap inference, test 529), 30 px apart, with a gap of two chords where the detector
    # missed a joker: the reader, asked about the gap's middle, reads a joker there
    from scanner.reconstruct import LOOK_PAST, _look_along_lines

    slots, offset = [0, 1, 2, 4, 5], np.array([-50.0, -70.0])
    centres = [np.array([1000.0 + 30 * k, 1000.0]) for k in slots]
    angles = [3.0 * k for k in slots]
    index = [c + _turned(offset, a) for c, a in zip(centres, angles, strict=True)]
    corners = Corners(np.array([[x - 10, y - 15, x + 10, y + 15] for x, y in index]),
                      np.array([CLASS_ID[r] for r in ("J", "J", "J", "2", "2")]),
                      np.full(5, 0.9), np.array(angles))
    cards = [CardReading(rank=r, corner_ids=[i], center=tuple(centres[i]), angle=angles[i],
                         confidence=0.9, fully_visible=False, stack=0, team=1)
             for i, r in enumerate(("J", "J", "J", "2", "2"))]
    stacks = [[0, 1, 2, 3, 4]]
    asked = []

    def look(boxes):
        asked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[:, CLASS_ID["JK"]] = LOOK_PAST + 0.1
        return probs

    _look_along_lines(cards, stacks, corners, look, 200.0)
    (boxes,) = asked
    expected = np.array([1090.0, 1000.0]) + _turned(offset, 9.0)
    assert len(boxes) == 1 and np.abs((boxes[0, :2] + boxes[0, 2:]) / 2 - expected).max() < 1
    assert [c.rank for c in cards] == ["J", "J", "J", "2", "2", "JK"]
    assert cards[5].center == (1090.0, 1000.0) and stacks == [[0, 1, 2, 3, 4, 5]]


def test_unsurely_read_threes_beside_a_column_are_not_its_misreads():
    width = 0.714 * CARD_H
    table = column(["KH", "KS", "KD", "KC"], 1000, 1700) + \
        column(["3S", "3C"], 1000 + 0.75 * width, 1700)
    corners, _ = read(table)
    rank_conf = corners.confidence.copy()
    rank_conf[corners.class_ids == CLASS_ID["3B"]] = 0.6
    reading = read_table(Corners(corners.boxes, corners.class_ids, corners.confidence,
                                 corners.angle, rank_conf), (W, H))
    assert ["K"] * 4 in team_melds(reading, 0)
    assert not any("counted as K" in r["message"] for r in reading.review)


def test_a_four_index_card_s_top_pair_fits_loosely_once_the_deck_is_shown():
    # the last card shows all four indices (the deck prints four); a covered card's
    # top-right box is read a tenth of a card aside, past the tight fit that proves the
    # deck, and still is that card's other top index, not a card of its own
    corners, _ = read(column(["QH", "QS", "QD", "QC", "QH"], 1500, 1800), four_indices=True)
    top = np.argsort(corners.centers[:, 1])[:2]  # the first card's two top indices
    right = top[np.argmax(corners.centers[top, 0])]
    boxes = corners.boxes.copy()
    boxes[right] += [0.1 * CARD_H, 0, 0.1 * CARD_H, 0]
    reading = read_table(Corners(boxes, corners.class_ids, corners.confidence, corners.angle),
                         (W, H))
    assert len(reading.cards) == 5
    assert team_melds(reading, 0) == [["Q"] * 5]


def test_a_loose_side_pair_needs_one_print_size():
    # a four-index card shows the deck; beside a 6's top-left index lies another deck's
    # smaller 6 index where the first card's top-right one would be, a tenth of a card
    # off: a loose fit holds only for one glyph turned, so they are two cards
    placements = [{"card": "QS", "x": 1000, "y": 1500, "angle": 0.0},
                  {"card": "6C", "x": 2000, "y": 1500, "angle": 0.0,
                   "index_corners": ("tl", "tr")}]
    corners = corners_from_scene(scene_from_placements(placements, W, H, four_indices=True))
    six = np.flatnonzero(corners.class_ids == CLASS_ID["6"])
    right = six[np.argmax(corners.centers[six, 0])]
    boxes = corners.boxes.copy()
    x1, y1, x2, y2 = boxes[right]
    cx, cy, w, h = (x1 + x2) / 2 + 0.12 * CARD_H, (y1 + y2) / 2, 0.7 * (x2 - x1), 0.8 * (y2 - y1)
    boxes[right] = [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]
    reading = read_table(Corners(boxes, corners.class_ids, corners.confidence, corners.angle),
                         (W, H))
    owner = {i: k for k, c in enumerate(reading.cards) for i in c.corner_ids}
    assert owner[six[0]] != owner[six[1]]


def _top_card_cut_short(extra_on_face: bool = False) -> tuple[Corners, list[int]]:
    """A column of three kings under a 2 whose top index is boxed short (the rank without
    its pip: 0.6 of the print's height, the same width); with `extra_on_face`, another
    index lies on the middle of the 2's face. Returns the corners and the 2's two."""
    corners, _ = read(column(["KH", "KS", "KD", "2C"], 1000, 1900))
    twos = np.flatnonzero(corners.class_ids == CLASS_ID["2"])
    top = int(twos[np.argmin(corners.centers[twos, 1])])
    boxes = corners.boxes.copy()
    boxes[top, 3] = boxes[top, 1] + 0.6 * (boxes[top, 3] - boxes[top, 1])
    ids, conf, angle = corners.class_ids, corners.confidence, corners.angle
    if extra_on_face:
        centre = corners.centers[twos].mean(axis=0)
        size = boxes[twos[0] if twos[0] != top else twos[1], 2:] - boxes[top, :2]
        half = np.abs(size) / 4
        boxes = np.vstack([boxes, np.r_[centre - half, centre + half]])
        ids, conf, angle = np.r_[ids, CLASS_ID["7"]], np.r_[conf, 0.9], np.r_[angle, 0.0]
    return Corners(boxes, ids, conf, angle), [int(t) for t in twos]


def test_a_whole_card_with_one_index_boxed_short_counts_once():
    # the detector boxed a kde-penguins 2's top index 40 px long and its bottom one 67 px:
    # too unlike for one print, and the top card of a meld was counted twice
    corners, twos = _top_card_cut_short()
    reading = read_table(corners, (W, H))
    owner = {i: k for k, c in enumerate(reading.cards) for i in c.corner_ids}
    assert owner[twos[0]] == owner[twos[1]]
    assert team_melds(reading, 0) == [["K", "K", "K", "2"]]


def test_indices_of_unlike_size_are_two_cards_when_another_index_shows_between():
    # a card in full view hides what lies under it: with an index on the face the two
    # would make, a short box and a long one are two cards (two decks in a fan)
    corners, twos = _top_card_cut_short(extra_on_face=True)
    reading = read_table(corners, (W, H))
    owner = {i: k for k, c in enumerate(reading.cards) for i in c.corner_ids}
    assert owner[twos[0]] != owner[twos[1]]


def test_one_index_boxed_twice_and_read_in_two_directions_is_one_card():
    # the detector's second box on a thin bare glyph, read a quarter turn off and unsurely,
    # overlaps the first by more than half: it is that index, not a card of its own
    corners, _ = read(column(["9H", "9S", "9D"], 1000, 1900))
    top = int(np.argmin(corners.centers[:, 1]))
    box = corners.boxes[top] + np.array([-2.0, -2.0, 2.0, 2.0])
    doubled = Corners(np.vstack([corners.boxes, box]), np.r_[corners.class_ids, CLASS_ID["9"]],
                      np.r_[corners.confidence, 0.35], np.r_[corners.angle, corners.angle[top] + 70])
    reading = read_table(doubled, (W, H))
    assert team_melds(reading, 0) == [["9", "9", "9"]]
    assert len(reading.cards) == 3


@pytest.mark.parametrize("turn", [-25.0, 25.0])
def test_a_whole_card_whose_indices_are_both_read_turned_counts_once(turn):
    # a bare glyph's direction is read 20-30 degrees off, on a whole card often both of its
    # indices the same way: they agree, but each places the card a third of a card aside
    corners, _ = read([{"card": "4H", "x": 1500, "y": 1500, "angle": 0.0},
                       {"card": "4S", "x": 2500, "y": 1500, "angle": 0.0}])
    angle = corners.angle.astype(float).copy()
    left = corners.centers[:, 0] < 2000
    angle[left] = (angle[left] + turn) % 360
    reading = read_table(Corners(corners.boxes, corners.class_ids, corners.confidence, angle),
                         (W, H))
    assert len(reading.cards) == 2
    assert all(len(c.corner_ids) == 2 for c in reading.cards)


def test_a_red_three_read_unsurely_by_the_detector_still_counts():
    # a red three lies apart from the melds, where no line of cards supports an unsure
    # corner: one read as a red three at 0.3, its rank at 0.6, is the team's red three
    corners, _ = read(column(["KH", "KS", "KD"], 1000, 1900)
                      + [{"card": "3H", "x": 2400, "y": 1950, "angle": 0.0}])
    three = corners.class_ids == CLASS_ID["3R"]
    conf = np.where(three, 0.3, corners.confidence)
    rank_conf = np.where(three, 0.6, 1.0)
    unsure = Corners(corners.boxes, corners.class_ids, conf, corners.angle, rank_conf)
    reading = read_table(unsure, (W, H), min_confidence=0.4, supported_confidence=0.2)
    assert reading.red_threes == [1, 0]
    # read as a red three less surely, it is left to the player
    doubtful = Corners(corners.boxes, corners.class_ids, conf, corners.angle,
                       np.where(three, 0.4, 1.0))
    assert read_table(doubtful, (W, H), min_confidence=0.4,
                      supported_confidence=0.2).red_threes == [0, 0]


def test_an_index_boxed_whole_and_by_its_upper_half_is_one_card():
    # the detector boxes a tall index twice, whole and its upper half, both read surely:
    # the half lies inside the whole, so it is that index again, not a card of its own
    corners, _ = read(column(["10H", "10S", "10D"], 1000, 1900))
    top = int(np.argmin(corners.centers[:, 1]))
    x1, y1, x2, y2 = corners.boxes[top]
    half = np.array([x1 + 2, y1 + 1, x2 - 2, y1 + 0.55 * (y2 - y1)])
    doubled = Corners(np.vstack([corners.boxes, half]), np.r_[corners.class_ids, CLASS_ID["10"]],
                      np.r_[corners.confidence, 0.8], np.r_[corners.angle, corners.angle[top] + 10])
    reading = read_table(doubled, (W, H))
    assert team_melds(reading, 0) == [["10", "10", "10"]]


def _with_letter_k(corners: Corners, joker: int, along: float, across: float = 0.0,
                   turn: float = 0.0, rank: str = "K") -> Corners:
    """`corners` plus a K corner as big as the joker corner `joker`, `along` its lengths
    further down its print and `across` its lengths aside (what a detector finds on the
    rest of a vertical JOKER)."""
    box = corners.boxes[joker]
    a = np.radians(corners.angle[joker])
    up, right = np.array([np.sin(a), -np.cos(a)]), np.array([np.cos(a), np.sin(a)])
    size = box[2:] - box[:2]
    length = abs(size @ up)
    shift = -up * along * length + right * across * length
    k = np.r_[box[:2] + shift, box[2:] + shift]
    return Corners(np.vstack([corners.boxes, k]), np.r_[corners.class_ids, CLASS_ID[rank]],
                   np.r_[corners.confidence, 0.45], np.r_[corners.angle, corners.angle[joker] + turn])


def test_the_k_of_a_jokers_vertical_joker_is_not_a_king():
    corners, _ = read(column(["5H", "5S", "5D", "JK"], 1000, 1900))
    jokers = np.flatnonzero(corners.class_ids == CLASS_ID["JK"])
    assert len(jokers) == 2  # the joker lies on top: both its indices show
    for j in jokers:  # the word runs on under either index, each printed its own way up
        reading = read_table(_with_letter_k(corners, j, along=0.55), (W, H))
        assert [c.rank for c in reading.cards].count("K") == 0
        assert team_melds(reading, 0) == [["5", "5", "5", "JK"]]
        assert not any(r["kind"] == "unsure_corners" for r in reading.review)


@pytest.mark.parametrize("along", [1.0, 1.15])
def test_the_k_of_a_whole_jokers_word_further_on_is_not_a_king(along):
    # a detector boxing only the J and O finds the letter K about a box length on: where a
    # king stacked tightly on the joker would be, but that king would hide the joker's
    # other index; this joker shows both
    corners, _ = read(column(["5H", "5S", "5D", "JK"], 1000, 1900))
    jokers = np.flatnonzero(corners.class_ids == CLASS_ID["JK"])
    for j in jokers:
        with_k = _with_letter_k(corners, j, along=along)
        assert joker_letters(with_k).sum() == 0  # not by its place alone
        reading = read_table(with_k, (W, H))
        assert [c.rank for c in reading.cards].count("K") == 0
        assert team_melds(reading, 0) == [["5", "5", "5", "JK"]]


@pytest.mark.parametrize("step", [0.22, 0.3])
def test_kings_in_a_column_under_a_joker_still_count(step):
    # each king's index lies one step under the joker's: a card, not the rest of the word.
    # (A column stepped closer than 0.9 index lengths would hide the joker's own label;
    # the data engine's columns step at least an index length. At 0.22 the kings' boxes
    # touch the joker's, where a whole joker shows its word's K: this joker is covered.)
    corners, reading = read(column(["JK", "KH", "KS", "KD"], 1000, 1900, step=step))
    assert joker_letters(corners).sum() == 0
    assert team_melds(reading, 0) == [["K", "K", "K", "JK"]]


def test_a_king_beside_a_joker_in_a_fan_still_counts():
    corners, reading = read(fan(["JK", "KH", "KS", "KD"], 1000, 1900))
    assert joker_letters(corners).sum() == 0
    assert team_melds(reading, 0) == [["K", "K", "K", "JK"]]


def test_the_lower_half_of_a_jokers_word_is_not_a_second_joker():
    corners, _ = read(column(["5H", "5S", "5D", "JK"], 1000, 1900))
    top = min(np.flatnonzero(corners.class_ids == CLASS_ID["JK"]), key=lambda j: corners.boxes[j, 1])
    reading = read_table(_with_letter_k(corners, top, along=0.55, rank="JK"), (W, H))
    assert team_melds(reading, 0) == [["5", "5", "5", "JK"]]


def test_a_jokers_two_corners_boxed_to_different_lengths_are_one_card():
    # a detector boxes a vertical JOKER to two letters on one corner, three on the other
    corners, _ = read(column(["5H", "5S", "5D", "JK"], 1000, 1900))
    jokers = np.flatnonzero(corners.class_ids == CLASS_ID["JK"])
    assert len(jokers) == 2
    boxes = corners.boxes.copy()
    j = jokers[0]
    x1, y1, x2, y2 = boxes[j]
    shrink = 0.55  # the box's longer side (along the word) cut to 55%
    if y2 - y1 >= x2 - x1:
        boxes[j, 1], boxes[j, 3] = (y1 + y2) / 2 - shrink * (y2 - y1) / 2, (y1 + y2) / 2 + shrink * (y2 - y1) / 2
    else:
        boxes[j, 0], boxes[j, 2] = (x1 + x2) / 2 - shrink * (x2 - x1) / 2, (x1 + x2) / 2 + shrink * (x2 - x1) / 2
    reading = read_table(Corners(boxes, corners.class_ids, corners.confidence, corners.angle), (W, H))
    assert [c.rank for c in reading.cards].count("JK") == 1
    assert team_melds(reading, 0) == [["5", "5", "5", "JK"]]


@pytest.mark.parametrize("along, across", [(1.0, 0.0), (1.2, 0.1)])
def test_the_lower_half_of_a_whole_jokers_word_further_on_is_not_a_second_joker(along, across):
    corners, _ = read(column(["5H", "5S", "5D", "JK"], 1000, 1900))
    top = min(np.flatnonzero(corners.class_ids == CLASS_ID["JK"]), key=lambda j: corners.boxes[j, 1])
    with_tail = _with_letter_k(corners, top, along=along, across=across, rank="JK")
    assert joker_letters(with_tail).sum() == 0  # not by its place alone
    reading = read_table(with_tail, (W, H))
    assert team_melds(reading, 0) == [["5", "5", "5", "JK"]]


@pytest.mark.parametrize("step", [0.22, 0.3])
def test_two_jokers_in_a_column_are_two_cards(step):
    corners, reading = read(column(["5H", "5S", "5D", "JK", "JK"], 1000, 1900, step=step))
    assert joker_letters(corners).sum() == 0
    assert team_melds(reading, 0) == [["5", "5", "5", "JK", "JK"]]


def test_unsure_cards_past_a_column_s_sure_end_join_one_by_one():
    # a column whose first two cards are read surely and the rest unsure: a card one step
    # past the sure end fills a place, and once taken it is a place for the next
    table = column(["9H", "9S", "9D", "9C", "9H", "9S"], 1000, 1500) + column(
        ["KH", "KS", "KD"], 1600, 1500)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    nines = np.flatnonzero(corners.class_ids == CLASS_ID["9"])
    unsure = nines[np.argsort(corners.centers[nines, 1])][2:]
    reading = read_table(_with_confidence(corners, unsure, 0.35), (W, H), min_confidence=0.4,
                         supported_confidence=0.3)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("9",) * 6, ("K",) * 3]


def test_a_column_read_unsure_throughout_stands_by_itself():
    # a deck the detector knows badly: every index of a meld read unsure, none to lean on,
    # yet four sevens a step apart on one line are a column, not four false corners
    table = column(["7H", "7S", "7D", "7C"], 1000, 1500) + column(["KH", "KS", "KD"], 1600, 1500)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    sevens = np.flatnonzero(corners.class_ids == CLASS_ID["7"])
    reading = read_table(_with_confidence(corners, sevens, 0.35), (W, H), min_confidence=0.4,
                         supported_confidence=0.3)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("7",) * 4, ("K",) * 3]


def test_an_unsure_column_with_sure_wilds_and_swinging_angles_stands_by_itself():
    # small bare glyphs: the kings of a column read unsure, each index's angle up to 25
    # degrees off (which swings its card about the index), and only the column's two
    # twos sure; a line by their indices, it is a meld of kings with two wilds
    table = column(["KH", "KS", "KD", "KC", "2D", "2S"], 1000, 1500) + column(
        ["QH", "QS", "QD"], 1600, 1500)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    kings = np.flatnonzero(corners.class_ids == CLASS_ID["K"])
    angle = corners.angle.copy()
    angle[kings] = (angle[kings] + np.resize([25.0, -20.0, 15.0, -25.0, 20.0], len(kings))) % 360
    conf = corners.confidence.copy()
    conf[kings] = 0.35
    reading = read_table(Corners(corners.boxes, corners.class_ids, conf, angle), (W, H),
                         min_confidence=0.4, supported_confidence=0.3)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("K",) * 4 + ("2", "2"), ("Q",) * 3]


def _uneven_sevens_beside_kings() -> tuple[Corners, np.ndarray]:
    """Three sevens in a line but 0.25 and 0.37 card heights apart (no common step), and a
    column of three kings: the corners, and which of them are the sevens'."""
    h = CARD_H
    table = [{"card": c, "x": 1000 + dx * h, "y": 1500 + dy * h, "angle": 0.0}
             for c, dx, dy in (("7H", 0.0, 0.0), ("7S", 0.02, 0.25), ("7D", 0.0, 0.62))]
    table += column(["KH", "KS", "KD"], 1800, 1500)
    corners = corners_from_scene(scene_from_placements(table, W, H), np.random.default_rng(1))
    return corners, np.flatnonzero(corners.class_ids == CLASS_ID["7"])


def test_unsure_cards_off_any_lattice_do_not_stand_by_themselves():
    # three unsure sevens in a line but 0.25 and 0.37 card heights apart (no common step)
    # are not taken: only a regular line of unsure cards stands without sure ones
    corners, sevens = _uneven_sevens_beside_kings()
    reading = read_table(_with_confidence(corners, sevens, 0.35), (W, H), min_confidence=0.4,
                         supported_confidence=0.3)
    assert team_melds(reading, 0) == [["K"] * 3]


@pytest.mark.parametrize("rank_probability, taken", [(0.6, False), (0.97, True)])
def test_an_unsure_corner_the_reader_is_sure_of_counts_as_sure(rank_probability, taken):
    # three sevens laid unevenly (no lattice to support them) with a detector score that
    # leaves them unsure: a reader sure of their rank makes them cards, an unsure one not
    corners, sevens = _uneven_sevens_beside_kings()
    conf, rank_conf = corners.confidence.copy(), corners.confidence.copy()
    conf[sevens], rank_conf[sevens] = 0.35, rank_probability
    unsure = Corners(corners.boxes, corners.class_ids, conf, corners.angle, rank_conf)
    reading = read_table(unsure, (W, H), min_confidence=0.4, supported_confidence=0.3)
    melds = sorted(map(tuple, team_melds(reading, 0)))
    assert melds == ([("7",) * 3, ("K",) * 3] if taken else [("K",) * 3])
    # without a floor for unsure corners the gate alone decides, as before
    assert team_melds(read_table(unsure, (W, H), min_confidence=0.4), 0) == [["K"] * 3]


@pytest.mark.parametrize("ink, naturals, wilds, says", [
    (None, 7, [], "squared-up canasta: count it (guessed 7 naturals)"),
    ("red", 7, [], "red card on top (natural)"),
    ("black", 6, ["2"], "black card on top (mixed): count it (guessed 6 naturals, 1 wild)"),
])
def test_squared_canasta_guess_follows_its_top_card_colour(ink, naturals, wilds, says):
    # players top a natural canasta with a red card and a mixed one with a black card
    table = column(["6H", "6S", "6D"], 1000, 2000) + [{"card": "QS", "x": 1600, "y": 2000,
                                                         "angle": 1}]
    corners, _ = read(table)
    colours = [ink if r == "Q" else "black" for r in corners.ranks]
    reading = read_table(corners, (W, H), ink=lambda ids: [colours[i] for i in ids])
    assert {"rank": "Q", "naturals": naturals, "wilds": wilds} in team_melds(reading, 0)
    squared = [m for m in reading.melds if m.squared]
    assert len(squared) == 1 and says in squared[0].problems[0]
    # the column of sixes is no squared canasta: its cards' colours change nothing
    assert ["6", "6", "6"] in team_melds(reading, 0)


def test_squared_canasta_top_corners_that_disagree_on_colour_count_as_unknown():
    table = column(["6H", "6S", "6D"], 1000, 2000) + [{"card": "QS", "x": 1600, "y": 2000,
                                                         "angle": 1}]
    corners, _ = read(table)
    queens = [i for i, r in enumerate(corners.ranks) if r == "Q"]
    assert len(queens) == 2  # a whole card: both its indices
    ink = [None] * len(corners)
    ink[queens[0]], ink[queens[1]] = "red", "black"
    asked = []

    def colours(ids):
        asked.append(sorted(ids))
        return [ink[i] for i in ids]
    reading = read_table(corners, (W, H), ink=colours)
    assert {"rank": "Q", "naturals": 7, "wilds": []} in team_melds(reading, 0)
    assert asked == [queens]  # only the squared canasta's top card is looked at
    ink[queens[0]] = None  # one corner unsure, the other black: black
    reading = read_table(corners, (W, H), ink=colours)
    assert {"rank": "Q", "naturals": 6, "wilds": ["2"]} in team_melds(reading, 0)


def _as_detected(corners: Corners) -> Corners:
    """Corners read as the detector reads a design it knows: confidence 0.7 each."""
    return _with_confidence(corners, slice(None), 0.7)


def read_detected(corners: Corners) -> object:
    return read_table(corners, (W, H), min_confidence=0.4, supported_confidence=0.25)


def test_a_cleanly_read_meld_is_likely_right_and_not_sent_to_count():
    corners, _ = read(column(["KH", "KS", "KD", "KC"], 1000, 1900))
    reading = read_detected(_as_detected(corners))
    (meld,) = reading.melds
    assert meld.confidence >= MELD_CHECK
    assert not [r for r in reading.review if r["kind"] == "meld_check"]


def test_a_meld_with_a_card_counted_unseen_is_sent_to_count():
    table = column(["KH", "KS", "KD", "KC", "KH"], 1000, 1700) + column(
        ["9H", "9S", "9D", "9C"], 1500, 1700)
    scene = scene_from_placements(table, W, H)
    scene["cards"][2]["indices"][0]["visible"] = 0.0  # a coin on the third king's index
    reading = read_detected(_as_detected(corners_from_scene(scene)))
    kings, nines = (next(m for m in reading.melds if m.rank == r) for r in ("K", "9"))
    assert kings.size == 5 and nines.size == 4
    assert kings.confidence < MELD_CHECK <= nines.confidence
    checks = [r for r in reading.review if r["kind"] == "meld_check"]
    assert [(r["team"], r["meld"]) for r in checks] == [(kings.team, 0)]
    assert sorted(checks[0]["cards"]) == sorted(kings.card_ids)


def test_a_corner_left_unused_on_a_meld_lowers_its_confidence():
    corners, _ = read(column(["KH", "KS", "KD", "KC"], 1000, 1900))
    corners = _as_detected(corners)
    clean = read_detected(corners).melds[0]
    # an unsure queen beside the column's second index: not the column's rank, not taken
    box = corners.boxes[1] + np.array([45.0, 0.0, 45.0, 0.0])
    stray = Corners(np.vstack([corners.boxes, box]),
                    np.append(corners.class_ids, CLASS_ID["Q"]),
                    np.append(corners.confidence, 0.3), np.append(corners.angle, 0.0))
    reading = read_detected(stray)
    (meld,) = reading.melds
    assert meld.size == clean.size == 4
    assert meld.evidence[6] == 1 and clean.evidence[6] == 0
    assert meld.confidence < clean.confidence


def test_two_whole_cards_of_very_different_sizes_still_give_a_card_size():
    """Two lone whole cards, one 1.8 times the other (two decks, or a card near the camera):
    neither lies near their median size; the reading falls back on another measure instead
    of an empty one (it used to give cards of no size)."""
    big = corners_from_scene(scene_from_placements(
        [{"card": "KH", "x": 1000, "y": 1500, "angle": 0}], W, H, card_h=300))
    small = corners_from_scene(scene_from_placements(
        [{"card": "9S", "x": 3000, "y": 1500, "angle": 0}], W, H, card_h=165))
    both = Corners(np.vstack([big.boxes, small.boxes]),
                   np.concatenate([big.class_ids, small.class_ids]),
                   np.concatenate([big.confidence, small.confidence]),
                   np.concatenate([big.angle, small.angle]))
    reading = read_table(both, (W, H))
    assert np.isfinite(reading.card_size).all() and min(reading.card_size) > 0
    assert sorted(c.rank for c in reading.cards) == ["9", "K"]
    assert all(np.isfinite(c.center).all() for c in reading.cards)


def _boxes_of_sides(sides):
    """Corners of one rank, one box per side length, laid out along a row."""
    boxes = np.array([[100.0 * k, 100.0, 100.0 * k + 0.8 * s, 100.0 + s]
                      for k, s in enumerate(sides)])
    n = len(sides)
    return Corners(boxes, np.full(n, CLASS_ID["9"]), np.ones(n), np.zeros(n))


def test_two_decks_printed_at_two_sizes_do_not_make_one_card():
    from scanner.reconstruct import _same_print

    # a small bare glyph (30 px) and another deck's large rank (45 px) on one table: 1.5x,
    # under the 1.6 a shaded index may be short by, but two clear sizes
    alike = _same_print(_boxes_of_sides([29, 30, 31, 30, 44, 45, 46, 45]))
    assert alike[:4, :4].all() and alike[4:, 4:].all()
    assert not alike[:4, 4:].any()


def test_one_deck_with_a_short_box_keeps_pairing_it():
    from scanner.reconstruct import _same_print

    # detector boxes of one print vary; one box a third short is still that print's
    alike = _same_print(_boxes_of_sides([40, 42, 44, 45, 43, 41, 30, 46]))
    assert alike[6].all()


def test_a_row_mixing_two_decks_unevenly_hides_no_card():
    # three kings of a deck with a small index, three of one with a large index further in;
    # laid half a step apart where the decks meet: uneven, but no card is missing there
    step = 0.27 * 0.714 * CARD_H
    small, large = (0.04, 0.03, 0.12, 0.12), (0.10, 0.03, 0.24, 0.20)
    row, x = [], 1000.0
    for k in range(6):
        row.append({"card": "K" + "HSDC"[k % 4], "x": x, "y": 1800, "angle": 0,
                    "index_box": small if k < 3 else large})
        x += step * (1.5 if k == 2 else 1.0)
    nines = [dict(p, index_box=small) for p in column(["9H", "9S", "9D"], 2400, 1700)]
    reading = read_table(corners_from_scene(scene_from_placements(row + nines, W, H)), (W, H))
    assert team_melds(reading, 0)[0] == ["K"] * 6
    assert not any(not c.corner_ids for c in reading.cards)


def _fixture_corners(name: str) -> tuple[Corners, tuple[int, int]]:
    import json
    from pathlib import Path

    data = json.loads((Path(__file__).parent.parent / "fixtures" / "layouts" / name).read_text())
    rows = data["corners"]
    corners = Corners(np.array([r["box"] for r in rows], np.float32),
                      np.array([r["class_id"] for r in rows]),
                      np.array([r["confidence"] for r in rows], np.float32),
                      np.array([r["angle"] for r in rows], np.float32),
                      np.array([r["rank_confidence"] for r in rows], np.float32))
    return corners, (data["image"]["width"], data["image"]["height"])

def _read_fixture(name: str, **gates) -> TableReading:
    """A layout fixture's corners read at scan's gates (the layout's 0.4, the supported
    0.2, the faint 0.08), `gates` added or overriding."""
    corners, size = _fixture_corners(name)
    return read_table(corners, size, **({"min_confidence": 0.4, "supported_confidence": 0.2,
                                          "faint_confidence": 0.08} | gates))


@pytest.mark.parametrize("penalty", [0.75, 0.5])
def test_a_jokers_two_indices_pair_before_its_bottom_index_and_a_neighbours_top(
        monkeypatch, penalty):
    """The detector's corners of a test photo (tests/fixtures/layouts): a joker in full view
    on its meld of 8s, its bottom index fitting the top index of the 8 beside it a little
    better than its own top index. A pair of two ranks ranks behind by 0.75 of the pairing
    tolerance (`OTHER_RANK_PENALTY`): one joker; at 0.5 (until session 35) the bottom index
    went with the 8 and the top index made a second joker."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "OTHER_RANK_PENALTY", penalty)
    corners, size = _fixture_corners("joker_on_eights.corners.json")
    reading = read_table(corners, size, min_confidence=0.4, supported_confidence=0.2)
    eights = [m for m in reading.melds if m.team == 0 and m.rank == "8"]
    assert len(eights) == 1
    assert list(eights[0].wilds) == (["JK"] if penalty == 0.75 else ["JK", "JK"])


def test_the_shipped_other_rank_penalty() -> None:
    import scanner.reconstruct as reconstruct

    assert reconstruct.OTHER_RANK_PENALTY == 0.75


def test_a_column_swung_card_by_card_off_the_team_s_step_hides_nothing():
    # five aces whose index-read places fall short and long in turn (each card turned a
    # few degrees its own way swings its index), beside two columns laid with the team's
    # step: the aces' steps fit a lattice of a smaller step with two cards hidden, but
    # the team lays every column with one step, against which they hide none
    from scanner.reconstruct import TEAM_STEP_OFF

    step = 0.22
    short, long_ = 0.8 * step, 1.25 * step
    along = np.cumsum([0.0, short, long_, short, long_])
    aces = [{"card": c, "x": 2200.0, "y": 1500 + a * CARD_H, "angle": 0.0}
            for c, a in zip(["AH", "AC", "AD", "AC", "AD"], along, strict=True)]
    # the lattice found without the team's step is well off it
    assert abs(along[-1] / 6 / step - 1) > TEAM_STEP_OFF
    with_team = (column(["KH", "KS", "KD", "KC"], 1000, 1500, step=step)
                 + column(["8H", "8S", "8D", "8C"], 1600, 1500, step=step) + aces)
    for placements, hidden in ((aces, 2), (with_team, 0)):
        _, reading = read(placements)
        assert ["A"] * (5 + hidden) in team_melds(reading, 0), hidden
        assert sum("hidden card inferred" in r["message"] for r in reading.review) == hidden


@pytest.mark.parametrize("turn", [0, 180])
def test_a_column_facing_one_team_among_the_other_s_rows_does_not_move_the_middle(turn):
    # team 1's jacks read facing team 0 (laid, or read, the wrong way round) among team 1's
    # columns: the teams' front rows seem to cross. The middle of the table is still the
    # wide gap between the two teams' melds, where the discard pile's top card lies: left
    # out, not a squared-up canasta; the jacks are team 1's
    table = (column(["6H", "6S", "6D"], 700, 2100) + column(["7H", "7S", "7D", "7C"], 1400, 2100)
             + column(["KH", "KS", "KD"], 2100, 2100)
             + column(["9H", "9S", "9D"], 900, 700, angle=180)
             + column(["QH", "QS", "QD"], 1600, 700, angle=180)
             + column(["JH", "JS", "JD", "JC"], 2400, 650)
             + [{"card": "5D", "x": 1500, "y": 1400, "angle": 3.0}])
    _, reading = read(rotate_placements(table, turn))
    near, far = (0, 1) if turn == 0 else (1, 0)
    layout = reading.layout_json()["teams"]
    assert sorted(map(tuple, layout[near]["melds"])) == [("6",) * 3, ("7",) * 4, ("K",) * 3]
    assert sorted(map(tuple, layout[far]["melds"])) == [("9",) * 3, ("J",) * 4, ("Q",) * 3]
    assert any(r["kind"] == "left_out" and "5" in r["message"] for r in reading.review)


@pytest.mark.parametrize("turn", [FAN_ARC_TURN, 1000.0])
def test_unsure_cards_on_a_fan_s_arc_between_its_sure_ones_are_its_cards(monkeypatch, turn):
    """The detector's corners of a test photo (tests/fixtures/layouts): a fan of eight tens,
    four of its covered indices read from 0.24 to 0.33. Its sure cards lie two to three
    places apart, unevenly (each index placed a little off), so no chord or lattice shows
    the empty places; they turn steadily along one arc and the unsure cards lie on it
    between them: all eight are counted. With no fan's arc (a turn no fan makes), five."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "FAN_ARC_TURN", turn)
    corners, size = _fixture_corners("fan_of_tens_unsure.corners.json")
    reading = read_table(corners, size, min_confidence=0.4, supported_confidence=0.2)
    tens = [m for m in reading.melds if m.team == 0 and m.rank == "10"]
    assert len(tens) == 1
    assert (tens[0].naturals, list(tens[0].wilds)) == ((8, []) if turn == FAN_ARC_TURN else (5, []))


@pytest.mark.parametrize("sides, threes", [(1.4, 4), (1.6, 3)])
def test_a_bottom_index_joins_no_top_index_of_another_print_size(monkeypatch, sides, threes):
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 1's four red
    threes in a row of two decks, a tango three's bottom index (32 px) lying where the
    kde-oxygen-white three beside it shows its top-right index (21 px). A card's two indices
    are one glyph: joined only within `JOIN_SIDES` of each other's size, the row is four red
    threes; within the pairing's looser 1.6 (until session 57) the two made one card."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "JOIN_SIDES", sides)
    reading = _read_fixture("two_decks_red_threes.corners.json")
    assert reading.red_threes == [0, threes]


def _red_threes_row_read(turn: float = 0.0, read_as: str = "3R", reds=None):
    """Two red threes in a row, the second laid over the first a third of a card width on,
    beside a column of kings: the first card's top index read as `read_as` at 0.35, its rank
    at 0.45 (under `RED_THREE_READING`) and its direction `turn` degrees off; read with the
    scan's gates (and an ink measuring `reds`, redness by class id, as `_Ink`)."""
    width = 0.714 * CARD_H
    corners, _ = read(column(["KH", "KS", "KD"], 1000, 1900)
                      + [{"card": card, "x": 2400 + k * 0.3 * width, "y": 1950, "angle": 0.0}
                         for k, card in enumerate(["3H", "3D"])])
    covered = int(np.argmin(np.where(corners.class_ids == CLASS_ID["3R"],
                                     corners.centers[:, 0], np.inf)))
    conf, angle, ids = corners.confidence.copy(), corners.angle.copy(), corners.class_ids.copy()
    rank_conf = np.ones(len(corners))
    conf[covered], rank_conf[covered] = 0.35, 0.45
    angle[covered] = (angle[covered] + turn) % 360
    ids[covered] = CLASS_ID[read_as]
    unsure = Corners(corners.boxes, ids, conf, angle, rank_conf)
    return read_table(unsure, (W, H), min_confidence=0.4, supported_confidence=0.2,
                      faint_confidence=0.08, ink=None if reds is None else _Ink(reds, unsure))


@pytest.mark.parametrize("rounds, threes", [(2, [2, 0]), (0, [1, 0])])
def test_an_unsure_red_three_beside_another_in_a_row_counts(monkeypatch, rounds, threes):
    # the covered red three's unsure top index lies one index along from the whole second
    # card's and points its way: the row's other red three (`_red_threes_in_a_row`). Alone,
    # such a corner stays with the player.
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "RED_THREE_ROW_ROUNDS", rounds)
    assert _red_threes_row_read().red_threes == threes


@pytest.mark.parametrize("turn, threes", [(40.0, [2, 0]), (50.0, [1, 0])])
def test_an_unsure_red_three_read_turned_beside_another_in_a_row_counts(turn, threes):
    # as above, the covered red three's index read `turn` degrees off the whole one's
    # direction (t4 3649: two small bare 3s read 41 degrees apart): within
    # `RED_THREE_ROW_TURN` it is the row's next red three, further turned it is not
    assert _red_threes_row_read(turn).red_threes == threes


@pytest.mark.parametrize("red, threes", [(0.1, [2, 0]), (0.0, [1, 0])])
def test_an_unsure_black_three_beside_a_red_three_in_a_row_takes_the_row_s_ink(red, threes):
    # as above, the covered red three's index read as a black three (test 2209: a small red
    # three read black at 0.24 beside its team's red threes): it joins the row, and the
    # row's ink settles its colour (`_threes_by_ink`): a little red beside a red three, a
    # red three; black beside plainly red ink, a black three left out of every meld
    reading = _red_threes_row_read(read_as="3B", reds={CLASS_ID["3R"]: 0.6,
                                                       CLASS_ID["3B"]: red})
    assert reading.red_threes == threes
    assert [c.rank for c in reading.cards if c.rank.startswith("3")].count("3B") == (
        0 if red else 1)


@pytest.mark.parametrize("apart, aces", [(2.2, 5), (0.0, 6)])
def test_a_box_between_two_neighbouring_indices_of_a_row_is_no_card(monkeypatch, apart, aces):
    # a row of aces, each covered card's index 1.4 index widths on from the next one's; the
    # detector boxes the gap between the second and third indices (score 0.35, read as an ace
    # surely): no index fits between two neighbours, so it is no card (`NEIGHBOURS_APART`)
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "NEIGHBOURS_APART", apart)
    width = 0.714 * CARD_H
    corners, _ = read(column(["KH", "KS", "KD"], 1000, 1900)
                      + [{"card": card, "x": 1800 + k * 0.2 * width, "y": 1900, "angle": 0.0}
                         for k, card in enumerate(["AH", "AS", "AD", "AC", "AH"])])
    tops = np.flatnonzero((corners.class_ids == CLASS_ID["A"]) & (corners.centers[:, 1] < 1900))
    second, third = tops[np.argsort(corners.centers[tops, 0])][1:3]
    gap = (corners.boxes[second] + corners.boxes[third]) / 2
    boxes = np.vstack([corners.boxes, gap])
    table = Corners(boxes, np.r_[corners.class_ids, CLASS_ID["A"]], np.r_[corners.confidence, 0.35],
                    np.r_[corners.angle, 0.0], np.r_[np.ones(len(corners)), 1.0])
    reading = read_table(table, (W, H), min_confidence=0.4, supported_confidence=0.2)
    assert sorted(map(tuple, team_melds(reading, 0))) == [("A",) * aces, ("K",) * 3]


@pytest.mark.parametrize("sides, hidden", [([30.0, 30.0, 20.0, 30.0, 30.0], 0),
                                           ([30.0, 30.0, 25.0, 30.0, 30.0], 1),
                                           (None, 1)])
def test_a_gap_next_to_another_print_s_card_hides_none_unless_it_fits_two_steps(sides, hidden):
    # a column of queens 60 px apart, its third card of another deck 100 px (1.7 steps) past
    # the second: that deck prints its index elsewhere on the card, so the gap is the two
    # prints' difference, not a hidden card, when the indices' boxes differ by over 1.4
    # (`PRINT_SIDES_APART`), though the photo's boxes fall into no two clean print sizes
    from scanner.reconstruct import _infer_hidden_cards

    places = [1000.0, 1060.0, 1160.0, 1220.0, 1280.0]
    cards = [CardReading(rank="Q", corner_ids=[i], center=(1030.0, y), angle=0.0, confidence=0.9,
                         fully_visible=i == 4, stack=0, team=0) for i, y in enumerate(places)]
    _infer_hidden_cards(cards, [[0, 1, 2, 3, 4]], 300.0, None,
                        None if sides is None else np.array(sides))
    assert len(cards) - len(places) == hidden


@pytest.mark.parametrize("overlap, tens", [(0.4, 4), (1.01, 5)])
def test_an_unsure_box_over_the_gap_between_two_indices_is_no_card(monkeypatch, overlap, tens):
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 0's row of four
    tens and a 2, and a box at 0.31 on the gap between two tens' indices, covering one of them.
    An unsure corner between two sure neighbours of its rank, over one of their indices
    (`NEIGHBOURS_OVERLAP`), is no card: the row is four tens; without the check, five."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "NEIGHBOURS_OVERLAP", overlap)
    reading = _read_fixture("box_between_tens.corners.json")
    assert ["10"] * tens + ["2"] in team_melds(reading, 0)


@pytest.mark.parametrize("inside, kings", [(0.7, 8), (0.0, 6)])
def test_two_decks_indices_ending_together_in_a_row_are_two_cards(monkeypatch, inside, kings):
    """The detector's corners of a test photo (tests/fixtures/layouts): a row of eight kings
    of two decks, a tango king's wide index and the next anglo_modern king's narrow one boxed
    15 px apart, their inner corners 8 px apart. Boxes sharing a corner are one index only
    when the smaller lies mostly inside the other (`TWIN_INSIDE`): eight kings; with any
    overlap (until session 58) two of those pairs were one king each."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "TWIN_INSIDE", inside)
    reading = _read_fixture("two_decks_row_of_kings.corners.json")
    assert ["K"] * kings in team_melds(reading, 1)


@pytest.mark.parametrize("gap, jacks", [(3, 8), (99, 10)])
def test_no_card_hidden_before_a_misread_far_past_a_column(monkeypatch, gap, jacks):
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 0's column of
    eight jacks, and a king's box on no index three steps past its end, counted as a jack
    by the misread fix. A gap of `MISREAD_END_GAP` steps or more to such a card hides no
    card: eight jacks; without the rule two cards were inferred hidden in the gap (the pack
    holding no more jacks, they stood as wilds)."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "MISREAD_END_GAP", gap)
    reading = _read_fixture("false_king_past_a_column_of_jacks.corners.json", tilted_confidence=0.35)
    (meld,) = [m for m in reading.team_melds(0) if m.rank == "J"]
    hidden = [i for i in meld.card_ids if not reading.cards[i].corner_ids]
    assert meld.naturals == 8
    assert len(meld.card_ids) == jacks and len(hidden) == jacks - 8


def test_a_pair_with_a_whole_card_read_two_ways_is_a_meld_of_three(monkeypatch):
    """The detector's corners of a test photo (tests/fixtures/layouts): team 1's column of
    an orell 6, a joker and a whole 6, the first six's only index read as a 10 (0.29, left
    out), the whole six's top index as a 10 and its bottom index as a 6. The six and the
    joker are the whole of their stack, and no meld has two cards: the third is counted
    unseen, as a six. Held back where a card's corners read two ranks (until session 58),
    the two stood apart as no meld."""
    import scanner.reconstruct as reconstruct

    reading = _read_fixture("pair_with_a_whole_card_read_two_ways.corners.json")
    assert team_melds(reading, 1) == [["6", "6", "JK"]]
    (meld,) = reading.team_melds(1)
    assert any("a meld needs" in p for p in meld.problems)

    in_a_line = reconstruct._pair_in_a_line
    monkeypatch.setattr(reconstruct, "_pair_in_a_line", lambda cards, stacks, pair: (
        in_a_line(cards, stacks, pair) and not any(
            n.startswith("its corners read different ranks")
            for i in pair for n in cards[i].notes)))
    reading = _read_fixture("pair_with_a_whole_card_read_two_ways.corners.json")
    assert team_melds(reading, 1) == []


@pytest.mark.parametrize("iou, squared_jacks", [(0.2, True), (1.1, False)])
def test_a_box_of_another_rank_turned_on_a_sure_index_is_no_card(monkeypatch, iou,
                                                                 squared_jacks):
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 0's column of
    seven kings and a squared-up canasta of jacks; one king's index was also boxed as a
    jack (0.57), read 150 degrees turned from the king's box (0.68). An unsure box
    overlapping a sure one of another rank (`DUPLICATE_OTHER_RANK_IOU`) and read a quarter
    turn or more from it is that index again: the jack is alone on its side, a squared-up
    canasta. Without the rule the false jack joined it, and two jacks are no meld."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "DUPLICATE_OTHER_RANK_IOU", iou)
    reading = _read_fixture("jack_box_on_a_king.corners.json")
    melds = {m.rank: m for m in reading.team_melds(0)}
    assert melds["K"].naturals == 7
    assert ("J" in melds and melds["J"].squared) == squared_jacks


def test_a_column_hidden_in_the_middle_is_joined_across_its_longer_part():
    """The detector's corners of a val photo (tests/fixtures/layouts): team 1's column of
    seven tens whose middle four show no index; one ten above the gap read at 192 degrees,
    two below at 188. The two parts lie on one line across the longer part's direction (the
    lone card's own, four degrees off, puts them a tenth of a card apart over the gap), so
    they are one column and the gap hides four tens: seven. Measured across the lone card's
    direction (until session 58), three tens."""
    reading = _read_fixture("column_of_tens_under_a_hand.corners.json")
    (tens,) = [m for m in reading.team_melds(1) if m.rank == "10"]
    hidden = [i for i in tens.card_ids if not reading.cards[i].corner_ids]
    assert (tens.naturals, tens.wilds, len(hidden)) == (7, [], 4)


def test_a_second_box_left_out_leaves_the_pack_room_for_a_squared_canasta():
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 1's queen lies
    alone (a squared-up canasta of queens), team 0 melds four queens in a fan, and a second
    box on one of the fan's indices reads a sixth queen, left out. That box is no card: the
    table holds five queens, so the pack has four left for the canasta under the lone one.
    Counted as a card (until session 59), it left three, and the queen was no meld."""
    reading = _read_fixture("squared_queens_beside_a_second_box.corners.json")
    boxes = [c for c in reading.cards if c.second_box]
    assert [c.rank for c in boxes] == ["Q"] and boxes[0].team is None
    queens = {m.team: m for m in reading.melds if m.rank == "Q"}
    assert not queens[0].squared and queens[0].naturals == 4
    assert queens[1].squared and queens[1].naturals >= 4


def test_a_pile_s_card_takes_no_room_from_a_squared_canasta():
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 0's queen lies
    alone (a squared-up canasta), team 1 melds four queens, and a card of the discard pile
    between the teams reads a queen (0.93; the pile holds a ten and an ace). The pack's room
    for the canasta under the lone queen counts the teams' queens, five: four left. Counted
    with the pile's (until session 59), three, and the queen was no meld."""
    reading = _read_fixture("squared_queen_beside_a_pile.corners.json")
    assert [c.role for c in reading.cards if c.rank == "Q" and c.team is None] == ["left_out"]
    queens = {m.team: m for m in reading.melds if m.rank == "Q"}
    assert queens[0].squared and queens[0].naturals >= 4
    assert not queens[1].squared and queens[1].naturals == 4


@pytest.mark.parametrize("across, looked", [(0.45, True), (0.55, False)])
def test_a_column_laid_unevenly_by_hand_is_still_looked_along(across, looked):
    # the column of kings with a gap (above), its cards laid from side to side by hand over
    # `across` card heights (test 119: seven aces over 0.43, one hidden in a gap): the gap's
    # middle is a place to look at up to LOOK_ACROSS (0.5) card heights; a wider spread is
    # no column
    from scanner.reconstruct import LOOK_ACROSS, _column_places

    corners, cards, stacks = _kings_with_a_gap()
    shift = across * 200.0
    for card, dx in zip(cards, [0.0, shift, 0.0, shift / 2], strict=True):
        card.center = (card.center[0] + dx, card.center[1])
    places = _column_places(cards, stacks[0], corners, 200.0)
    assert (across < LOOK_ACROSS) is looked
    assert any(abs(centre[1] - 1168.0) < 1.0 for _, centre, _ in places) is looked


@pytest.mark.parametrize("fit, queens", [(0.75, 6), (1.0, 5)])
def test_two_decks_indices_side_by_side_are_one_card_only_on_a_close_fit(monkeypatch, fit,
                                                                          queens):
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 0's six queens of
    two decks, kde-oxygen-white's small top indices (49 px) and anglo_modern's tall bottom
    indices (86 px). One card's small top index and the next card's tall bottom index fit one
    card's diagonal at 0.94 of the pairing tolerance, close enough for a box cut short along
    its glyph; across two print sizes such a pair must fit within `CUT_SHORT_FIT` of it. With
    no such limit (until session 59) the two were one card: five queens."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "CUT_SHORT_FIT", fit)
    reading = _read_fixture("two_decks_queens_side_by_side.corners.json")
    (meld,) = [m for m in reading.team_melds(0) if m.rank == "Q"]
    assert (meld.naturals, meld.wilds) == (queens, [])
    assert all(not reading.cards[i].fully_visible for i in meld.card_ids) is (queens == 6)


@pytest.mark.parametrize("shift, nines, whole", [(12.0, 7, 1), (360.0, 8, 0)])
def test_a_whole_card_read_alike_at_both_ends_keeps_its_direction_in_its_row(monkeypatch,
                                                                             shift, nines,
                                                                             whole):
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 1's row of seven
    nines, five of their indices read 30-40 degrees off, the front card whole and read 178
    and 359 degrees at its two ends. The row's trend (150 degrees) would turn that card 28
    degrees; read alike at both ends, it keeps its own direction, and its two indices stay
    one card: seven nines. Turned with the row (until session 59, as with no limit here),
    they no longer fit one card: eight."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "WHOLE_OWN_SHIFT", shift)
    reading = _read_fixture("row_of_nines_read_turned.corners.json")
    (meld,) = [m for m in reading.team_melds(1) if m.rank == "9"]
    assert (meld.naturals, meld.wilds) == (nines, [])
    assert sum(reading.cards[i].fully_visible for i in meld.card_ids) == whole


@pytest.mark.parametrize("along, squared", [(2.3, True), (1.8, False)])
def test_a_lone_card_boxed_twice_as_long_at_one_end_is_one_card_on_a_close_fit(monkeypatch,
                                                                               along,
                                                                               squared):
    """The detector's corners of a t4 photo (tests/fixtures/layouts): team 1's tango queen
    lying alone (a squared-up canasta), its bottom index boxed twice as long as its top
    index (111 and 53 px), the two fitting its diagonal at 0.05 of the pairing tolerance.
    So close a fit makes one card of boxes up to `CUT_SHORT_ALONG_TIGHT` apart: a lone whole
    queen, a squared-up canasta. At the plain cut-short limit (1.8, until session 59) they
    were two queens, and a meld of three with one unseen."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "CUT_SHORT_ALONG_TIGHT", along)
    reading = _read_fixture("lone_queen_boxed_long_at_one_end.corners.json")
    (meld,) = [m for m in reading.team_melds(1) if m.rank == "Q"]
    assert meld.squared is squared
    assert len(meld.card_ids) == (1 if squared else 3)


@pytest.mark.parametrize("share, aces", [(0.75, False), (0.0, True)])
def test_cards_printed_on_a_cards_back_are_no_meld(monkeypatch, share, aces):
    """The detector's corners of a val photo (tests/fixtures/layouts): a hand lying face down
    whose back (kde-nicu-white) shows a fan of aces. Two of its aces are read at 0.33 and
    0.25, boxed about 0.6 the size of the photo's sure indices, and nothing else there is
    sure. Print that small on a stack read unsurely throughout is no line of cards
    (`SMALL_PRINT_ALONE`): no meld of aces. With no such limit (until session 60) they were
    team 1's meld of aces, its third card counted unseen."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "SMALL_PRINT_ALONE", share)
    reading = _read_fixture("aces_on_a_cards_back.corners.json")
    assert any(m.rank == "A" for m in reading.melds) is aces
    # the melds of the cards laid face up are read the same either way
    assert sorted((m.team, m.rank, m.naturals) for m in reading.melds if m.rank != "A") == [
        (0, "10", 7), (0, "4", 8), (1, "5", 3), (1, "6", 7), (1, "9", 5), (1, "K", 7)]


def test_with_no_meld_on_the_table_a_discard_pile_marks_no_teams_row():
    """The labels' corners of a t4 photo (tests/fixtures/layouts): nobody melded; two red
    threes lie in front of each team and the discard pile (a whole four, a 2 across it) in
    the middle. With no meld, only red threes say where a team's cards end: the pile, whose
    whole four faces team 1, was taken for team 1's row, and all four red threes for team
    1's (until session 60)."""
    corners, size = _fixture_corners("no_meld_red_threes_and_a_pile.corners.json")
    reading = read_table(corners, size)
    assert reading.melds == []
    assert reading.red_threes == [2, 2]
    # the red threes are told apart by their side of the table: team 0's lie lower
    lower = {card.team for card in reading.cards if card.rank == "3R" and card.center[1] > size[1] / 2}
    assert lower == {0}


def test_side_pairs_lie_toward_a_two_index_card_in_full_view():
    """The labels' corners of a val photo (tests/fixtures/layouts): team 1's row of seven
    sixes of two decks, four dondorf cards (indices in all four corners) each showing the
    top and bottom index of one side, and plastic cards (two indices), the row's front card
    a plastic six in full view. A side pair's card lies toward the row's whole card; with
    only four-index cards counted whole (until session 60), they were placed away from it,
    their spacing read as gaps, and three cards more were counted (two as jokers)."""
    corners, size = _fixture_corners("two_decks_row_of_sixes_side_pairs.corners.json")
    reading = read_table(corners, size)
    (sixes,) = [m for m in reading.team_melds(1) if m.rank == "6"]
    assert (sixes.naturals, sixes.wilds) == (7, [])
    assert all(reading.cards[i].corner_ids for i in sixes.card_ids)  # none inferred


def test_side_pairs_of_a_fan_lie_toward_its_front_card_through_each_other():
    """The labels' corners of a val photo (tests/fixtures/layouts): team 1's fan of three
    dondorf tens (indices in all four corners) and a 2, upside down, turned 179 to 196
    degrees; the front ten, at 196, in full view. The ten at 179 shows one side's top and
    bottom index and lies toward the front card, but is turned past `angle_tolerance` from
    it: the ten between them, once placed, places it. Placed away from the front (until
    session 61), its spacing was read as a gap holding a fourth ten."""
    corners, size = _fixture_corners("fan_of_tens_side_pairs.corners.json")
    reading = read_table(corners, size)
    (tens,) = [m for m in reading.team_melds(1) if m.rank == "10"]
    assert (tens.naturals, tens.wilds) == (3, ["2"])
    assert all(reading.cards[i].corner_ids for i in tens.card_ids)  # none inferred


def test_side_pairs_lie_toward_a_whole_card_of_their_own_rank():
    """The labels' corners of a val photo (tests/fixtures/layouts): team 0's fan of four
    kings (side pairs turned 171-200 degrees, its whole card at 200) on one line with a
    squared-up queen (a whole card upright). Side pairs placed toward the queen, the nearer
    whole card on their line, led each other across to it: the kings were read as no meld
    and the queens' stack was lost with them."""
    corners, size = _fixture_corners("fan_of_kings_beside_a_squared_queen.corners.json")
    reading = read_table(corners, size)
    melds = {m.rank: m for m in reading.team_melds(0)}
    assert (melds["K"].naturals, melds["K"].wilds, melds["K"].squared) == (4, [], False)
    assert melds["Q"].squared


def test_a_king_under_a_four_index_joker_is_no_letter_of_its_word():
    """The labels' corners of a val photo (tests/fixtures/layouts): team 0's column of five
    kings and three wilds, dondorf cards (indices in all four corners) showing their two top
    indices each, a joker among them. A king one column step under the joker was taken for
    its word's K: the joker, seen by two indices, counted as whole, and under a whole joker
    a K corner up to a gap after its box is that letter. Its two top indices do not make the
    joker whole; with the king left out, the gap it left was read as a hidden 2."""
    corners, size = _fixture_corners("king_under_a_four_index_joker.corners.json")
    reading = read_table(corners, size)
    (kings,) = [m for m in reading.team_melds(0) if m.rank == "K"]
    assert (kings.naturals, sorted(kings.wilds)) == (5, ["2", "2", "JK"])
    assert all(reading.cards[i].corner_ids for i in kings.card_ids)  # none inferred


@pytest.mark.parametrize("offset_max, fours", [(0.12, 4), (0.0, 5)])
def test_two_decks_index_places_make_no_gap_in_an_alternating_row(monkeypatch, offset_max,
                                                                  fours):
    """The labels' corners of a val photo (tests/fixtures/layouts): team 1's row of four
    fours, two 2s and a joker of two decks, their cards alternating between a deck printing
    small indices and one printing large ones at another place on the card. Read from their
    indices, the cards' places step 19-24 px from one deck to the other and 32-36 px back:
    a lattice of 18.7 px steps took the long steps for gaps and a fifth four was counted.
    Within `PRINT_OFFSET_MAX` the offset between the prints is taken out."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "PRINT_OFFSET_MAX", offset_max)
    corners, size = _fixture_corners("two_decks_row_of_fours_alternating.corners.json")
    reading = read_table(corners, size)
    (row,) = [m for m in reading.team_melds(1) if m.rank == "4"]
    assert (row.naturals, sorted(row.wilds)) == (fours, ["2", "2", "JK"])


@pytest.mark.parametrize("ratio, queens", [(1.4, 7), (10.0, 4)])
def test_two_decks_top_and_bottom_indices_make_no_card_over_another_index(monkeypatch, ratio,
                                                                          queens):
    """The labels' corners of a t4 photo (tests/fixtures/layouts): team 0's row of seven
    queens, kde-oxygen-white cards (a top index only, 31 px) upright and tango cards (47 px)
    upside down between them. A kde top index and a tango bottom index fit one card's
    diagonal, but the card they would make has another queen's index on its face: boxes
    apart in size by more than `FACE_PRINT_RATIO` are then no pair. With no such check (until
    session 60) the row read three whole queens and one: four."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "FACE_PRINT_RATIO", ratio)
    corners, size = _fixture_corners("two_decks_row_of_queens_opposite_ways.corners.json")
    reading = read_table(corners, size)
    (meld,) = [m for m in reading.team_melds(0) if m.rank == "Q"]
    assert (meld.naturals, meld.wilds) == (queens, [])
    # paired across the two decks, three of them were read as cards in full view
    assert any(reading.cards[i].fully_visible for i in meld.card_ids) is (queens == 4)


@pytest.mark.parametrize("pull, fives", [(20.0, 3), (360.0, 4)])
def test_a_pile_card_far_off_the_tables_axis_is_not_turned_onto_a_meld(monkeypatch, pull,
                                                                       fives):
    """The labels' corners of a t4 photo (tests/fixtures/layouts): team 1's fan of three fives
    and a 2, and below it the discard pile, a seven in full view over a five read at 120
    degrees. Lying alone, the five is drawn towards the table's axis (175 degrees); turned 29
    degrees, it swung about its index onto the fan and joined it, a fourth five. A lone card
    the axis would turn more than `LONE_PULL_MAX` keeps its own reading (until session 60,
    no limit)."""
    import scanner.reconstruct as reconstruct

    monkeypatch.setattr(reconstruct, "LONE_PULL_MAX", pull)
    corners, size = _fixture_corners("pile_five_beside_a_fan_of_fives.corners.json")
    reading = read_table(corners, size)
    (meld,) = [m for m in reading.team_melds(1) if m.rank == "5"]
    assert (meld.naturals, meld.wilds) == (fives, ["2"])

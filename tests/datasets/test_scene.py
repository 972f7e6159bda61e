"""Scene generator: legal, conserving, scoreable layouts; geometry that matches the print."""

from __future__ import annotations

import functools
import json
from collections import Counter

import numpy as np
import pytest

from datasets.scene import (
    CardGeometry,
    SceneParams,
    apply_h,
    full_pack,
    homography_from_unit,
    make_scene,
    rank_class,
    up_angle,
)
from scanner.scoring import score_layout_json

N_LAYOUTS = 150


@functools.cache
def _default_scenes(n: int) -> tuple:
    return tuple(make_scene(np.random.default_rng(seed), seed=seed) for seed in range(n))


def _scenes(n: int = N_LAYOUTS, **kw):
    if not kw:
        yield from _default_scenes(N_LAYOUTS)[:n]
        return
    for seed in range(n):
        yield make_scene(np.random.default_rng(seed), seed=seed, **kw)


def _physical_tokens(scene) -> Counter:
    """Every physical card of the deal, counted once, from the ground truth."""
    data = scene.to_json()
    tokens: list[str] = []
    for meld in data["melds"]:
        tokens += meld["cards"]
    tokens += [c["card"] for c in data["cards"] if c["role"] == "red_three"]
    hand_cards = [c for c in data["cards"] if c["role"] == "hand"]
    tokens += [c["card"] for c in hand_cards]
    tokens += data["stock"]["draw_pile"] + data["stock"]["discard_pile"]
    return Counter(tokens)


def test_conservation_108_cards_each_at_most_twice():
    pack = Counter(t for t, _, _ in full_pack())
    assert sum(pack.values()) == 108 and pack["JK"] == 4 and pack["KH"] == 2
    for scene in _scenes():
        seen = _physical_tokens(scene)
        # hands are drawn only with clutter on; the layout's hand lists them all
        hand_layout = sum(len(t["hand"]) for t in scene.layout["teams"])
        assert sum(1 for c in scene.cards if c.role == "hand") == hand_layout
        assert seen == pack, f"seed {scene.seed}: {seen - pack} extra, {pack - seen} missing"


def test_melds_are_legal_and_every_layout_scores():
    for scene in _scenes():
        data = scene.to_json()
        teams = data["layout"]["teams"]
        went_out = [t["went_out"] for t in teams]
        assert sum(went_out) <= 1
        for team in (0, 1):
            melds = [m for m in data["melds"] if m["team"] == team]
            ranks = [m["rank"] for m in melds]
            assert len(ranks) == len(set(ranks)), "one meld per rank per team"
            for m in melds:
                size = m["naturals"] + len(m["wilds"])
                assert size == len(m["cards"]) >= 3
                assert m["naturals"] >= 2 and len(m["wilds"]) <= 3
                assert all(rank_class(c) == m["rank"] for c in m["cards"][: m["naturals"]])
                if m["rank"] == "3B":
                    assert went_out[team] and not m["wilds"] and size in (3, 4)
                if m["squared"]:
                    assert size >= 7 and len(m["card_ids"]) == 1
                else:
                    shown = [data["cards"][i]["rank"] for i in m["card_ids"]]
                    assert Counter(shown) == Counter(rank_class(c) for c in m["cards"])
            if went_out[team]:
                assert any(m["naturals"] + len(m["wilds"]) >= 7 for m in melds if m["rank"] != "3B")
        result = score_layout_json(data["layout"])  # raises on any broken rule
        assert len(result["teams"]) == 2


def test_same_seed_same_scene_and_json_roundtrip():
    a = make_scene(np.random.default_rng(42), seed=42).to_json()
    b = make_scene(np.random.default_rng(42), seed=42).to_json()
    c = make_scene(np.random.default_rng(43), seed=43).to_json()
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(c)
    assert json.loads(json.dumps(a)) == a


def test_scale_and_image_size_ranges():
    for scene in _scenes(60):
        long_side = max(scene.width, scene.height)
        assert 1.9e6 <= scene.width * scene.height <= 12.1e6
        top = 0.4 if scene.camera["closeup"] else 0.15
        assert 0.06 * long_side - 1 <= scene.card_height_px <= top * long_side + 1
        assert scene.camera["tilt_deg"] <= 20.0


def test_index_boxes_follow_the_card_outline_and_print():
    geom = CardGeometry(aspect=0.7, index_box=(0.05, 0.04, 0.2, 0.3), index_corners=("tl", "tr", "br", "bl"))
    scene = make_scene(np.random.default_rng(5), {"g": geom}, seed=5)
    checked = 0
    for card in scene.cards:
        if not card.face_up:
            assert card.indices == []
            continue
        assert len(card.indices) == 4
        hmat = homography_from_unit(card.outline)
        for ix in card.indices:
            x1, y1, x2, y2 = {"tl": (0.05, 0.04, 0.2, 0.3), "tr": (0.8, 0.04, 0.95, 0.3),
                              "br": (0.8, 0.7, 0.95, 0.96), "bl": (0.05, 0.7, 0.2, 0.96)}[ix["corner"]]
            corners = apply_h(hmat, np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]]))
            np.testing.assert_allclose(ix["quad"], corners, atol=0.02)
            np.testing.assert_allclose(ix["box"], [*corners.min(0), *corners.max(0)], atol=0.02)
            flip = 180.0 if ix["corner"] in ("br", "bl") else 0.0
            assert abs((ix["angle"] - card.angle - flip + 180) % 360 - 180) < 0.02
            checked += 1
    assert checked > 20


def test_visibility_of_a_column_meld():
    """In a column each card covers the lower part of the one above: top-left indices stay
    visible, the bottom-right index of every card but the last is (nearly) covered."""
    params = SceneParams(clutter=False, squared_p=0.0, max_tilt_deg=0.0, max_mess=0.0)
    found = 0
    for scene in _scenes(40, params=params):
        for meld in scene.melds:
            ids = meld["card_ids"]
            cards = [scene.cards[i] for i in ids]
            xs = [c.outline[0][0] for c in cards]
            ys = [c.outline[0][1] for c in cards]
            # a column: top-left corners stacked vertically, one card height apart at most
            if len(cards) < 3 or np.ptp(xs) > 0.1 * scene.card_height_px or np.ptp(ys) < 0.5 * scene.card_height_px:
                continue
            if not scene.complete:
                continue
            for c in cards:
                vis = {ix["corner"]: ix["visible"] for ix in c.indices}
                assert vis["tl"] >= 0.75
            for c in cards[:-1]:
                # at most a sliver of the covered index peeks out: never enough to label
                assert {ix["corner"]: ix["visible"] for ix in c.indices}["br"] < 0.6
            found += 1
    assert found >= 5


def test_up_angle_convention():
    square = np.array([[0, 0], [10, 0], [10, 14], [0, 14]], dtype=float)
    assert up_angle(square) == pytest.approx(0.0)
    assert up_angle(square[[1, 2, 3, 0]]) == pytest.approx(90.0)  # top edge on the right
    assert up_angle(square[[2, 3, 0, 1]]) == pytest.approx(180.0)
    assert up_angle(square[[3, 0, 1, 2]]) == pytest.approx(270.0)


def test_rows_and_fans_show_every_rank_for_right_index_decks():
    """Players spread rows and fans so the ranks show: a deck printing its index only in
    the top-right corner is spread to the left, so its covered cards show that corner."""
    right_only = CardGeometry(aspect=0.707, index_box=(0.088, 0.067, 0.21, 0.16),
                              index_corners=("tr",))
    designs = {"right_only": right_only, "generic": CardGeometry()}
    params = SceneParams(clutter=False, max_mess=0.0, second_design_p=0.5)
    spread_melds = 0
    for scene in _scenes(40, designs=designs, params=params):
        if not scene.complete:
            continue
        for card in scene.cards:
            if card.role in ("meld", "red_three"):
                assert max(ix["visible"] for ix in card.indices) >= 0.6, (scene.seed, card.id)
        for meld in scene.melds:
            centres = np.array([np.mean(scene.cards[i].outline, axis=0) for i in meld["card_ids"]])
            if len(centres) >= 3 and np.ptp(centres[:, 0]) > 0.4 * scene.card_height_px:
                spread_melds += 1  # a row or a fan (or a meld photographed turned)
    assert spread_melds >= 10

"""Rendering keeps labels on the print: a synthetic deck whose indices are solid magenta.

No installed card art is needed: the test draws its own design (white card, magenta
index boxes exactly where its CardGeometry says, a blue picture in the middle) and checks,
after perspective, lens distortion, rotation, 180-degree turns, blur, noise and JPEG, that the pixels
inside each visible label box are magenta and those of covered indices are not.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
from magenta_deck import GEOM, synthetic_bank

from datasets import build
from datasets.render import render
from datasets.scene import SceneParams, make_scene

SMALL = SceneParams(megapixels=(2.0, 2.4))


def _magenta_share(rgb: np.ndarray, quad: np.ndarray, shrink: float) -> float:
    """Share of magenta-ish pixels inside a quad shrunk towards its centre."""
    centre = quad.mean(axis=0)
    inner = centre + (quad - centre) * shrink
    mask = np.zeros(rgb.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(inner).astype(np.int32), 1)
    px = rgb[mask > 0].astype(int)
    if len(px) == 0:
        return float("nan")
    magenta = (px[:, 0] > px[:, 1] + 60) & (px[:, 2] > px[:, 1] + 60)
    return float(magenta.mean())


def _overlaps_other_index(scene, card, ix) -> bool:
    """The covering card may print its own (magenta) index right over this one."""
    x1, y1, x2, y2 = ix["box"]
    for other in scene.cards:
        if other.id == card.id:
            continue
        for o in other.indices:
            ox1, oy1, ox2, oy2 = o["box"]
            if ox1 < x2 and ox2 > x1 and oy1 < y2 and oy2 > y1:
                return True
    return False


def test_label_boxes_land_on_the_printed_index():
    bank = synthetic_bank()
    checked_visible = checked_hidden = 0
    tilts, lenses = [], []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        scene = make_scene(rng, {"magenta": GEOM}, params=SMALL, seed=seed, backgrounds=["laminate-1"])
        tilts.append(scene.camera["tilt_deg"])
        lenses.append(scene.camera["k1"])
        rgb = render(scene, bank, rng)
        ok, buf = cv2.imencode(".jpg", rgb, [cv2.IMWRITE_JPEG_QUALITY, 85])
        rgb = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
        for card in scene.cards:
            for ix in card.indices:
                quad = np.array(ix["quad"])
                if min(np.ptp(quad[:, 0]), np.ptp(quad[:, 1])) < 8:
                    continue  # too small to judge after blur
                if quad.min() < 0 or quad[:, 0].max() >= scene.width or quad[:, 1].max() >= scene.height:
                    continue  # (partly) outside the photo: nothing to look at
                if ix["visible"] == 1.0:
                    assert _magenta_share(rgb, quad, 0.6) > 0.8, (seed, card.card, ix)
                    box = np.array(ix["box"])
                    assert box[0] <= quad[:, 0].min() + 0.01 and box[2] >= quad[:, 0].max() - 0.01
                    checked_visible += 1
                elif ix["visible"] == 0.0 and not _overlaps_other_index(scene, card, ix):
                    assert _magenta_share(rgb, quad, 0.6) < 0.2, (seed, card.card, ix)
                    checked_hidden += 1
    assert checked_visible > 50 and checked_hidden > 20
    assert max(tilts) > 3  # perspective was part of the test
    assert min(lenses) < -0.005  # and barrel distortion


def test_upside_down_cards_have_their_index_at_the_photo_top_left_rotated():
    """Team 1's cards are turned 180 degrees: their printed top-left index is at the lower
    right of the card in the photo and its angle is about 180."""
    scene = make_scene(np.random.default_rng(3), {"magenta": GEOM}, params=SceneParams(max_tilt_deg=0, max_roll_deg=0),
                       seed=3)
    team1 = [c for c in scene.cards if c.team == 1 and c.role == "meld"]
    assert team1
    for c in team1:
        tl = next(ix for ix in c.indices if ix["corner"] == "tl")
        assert abs((tl["angle"] - 180 + 180) % 360 - 180) < 20
        centre = np.array(tl["quad"]).mean(axis=0)
        assert centre[1] > c.outline[:, 1].mean()  # below the card's middle in the photo


def test_build_is_deterministic_for_a_seed(tmp_path: Path):
    bank = synthetic_bank()
    build._WORKER.update(bank=bank, params=SMALL, designs={"train": {"magenta": GEOM}, "test": {}})
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run
        for i in (0, 9):  # a train and a test scene
            build.build_one(5, i, out)
        outs.append(out)
    for i, split in ((0, "train"), (9, "test")):
        a = (outs[0] / split / f"scene_{i:06d}.jpg").read_bytes()
        b = (outs[1] / split / f"scene_{i:06d}.jpg").read_bytes()
        assert a == b
        ja = json.loads((outs[0] / split / f"scene_{i:06d}.json").read_text())
        jb = json.loads((outs[1] / split / f"scene_{i:06d}.json").read_text())
        assert ja == jb and ja["split"] == split
    test_scene = json.loads((outs[0] / "test" / "scene_000009.json").read_text())
    assert test_scene["background"].split("-")[1] in ("10", "11")  # held-out textures only
    other = build.build_one(6, 0, tmp_path / "c")
    assert Path(other).read_text() != (outs[0] / "train" / "scene_000000.json").read_text()


def test_a_fixed_photo_size_gives_every_scene_that_size():
    """`--min-megapixels` equal to `--max-megapixels`: every photo that size (a phone's)."""
    for seed in (1, 2, 3):
        scene = make_scene(np.random.default_rng(seed), {"magenta": GEOM},
                           params=SceneParams(megapixels=(1.5, 1.5)), seed=seed)
        w, h = scene.width, scene.height
        assert abs(w * h / 1e6 - 1.5) < 0.02, (w, h)


def test_build_refuses_a_smallest_photo_over_the_largest(capsys):
    assert build.main(["--scenes", "1", "--min-megapixels", "13"]) == 2
    assert "--min-megapixels" in capsys.readouterr().err
    assert build.main(["--scenes", "1", "--min-megapixels", "0.1"]) == 2

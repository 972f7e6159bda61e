"""Detector tiles of datasets.train: labels stay on the (magenta) print when tiles are turned."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
from magenta_deck import GEOM, magenta_share, synthetic_bank

from datasets import build, train
from datasets.scene import SceneParams


def _magenta_worker() -> None:
    """Scenes of datasets.build drawn with the magenta test deck (small photos, no close-ups)."""
    build._WORKER.update(bank=synthetic_bank(), params=SceneParams(megapixels=(2.0, 2.4), closeup_p=0.0),
                         designs={"train": {"magenta": GEOM}, "test": {}})


def _labels(tiles: Path, split: str) -> dict[str, str]:
    """Label file name -> text of one split of a tile dataset."""
    return {p.name: p.read_text() for p in (tiles / split / "labels").glob("*.txt")}


def test_quarter_turn_moves_labels_with_the_pixels():
    img = np.full((100, 100, 3), 200, np.uint8)
    img[10:30, 60:70] = (255, 0, 255)  # a tall magenta box, x 60-70, y 10-30
    line = f"0 {65 / 100} {20 / 100} {10 / 100} {20 / 100}"
    for k in (1, 2, 3):
        turned, (moved,) = train.quarter_turn(img, [line], k)
        assert turned.shape == img.shape and turned.flags.c_contiguous
        _, cx, cy, w, h = (float(v) for v in moved.split())
        ys, xs = np.nonzero(turned[..., 1] == 0)
        assert abs(cx * 100 - (xs.min() + xs.max() + 1) / 2) < 0.6
        assert abs(cy * 100 - (ys.min() + ys.max() + 1) / 2) < 0.6
        assert abs(w * 100 - (xs.max() + 1 - xs.min())) < 0.6 and abs(h * 100 - (ys.max() + 1 - ys.min())) < 0.6
        assert (w > h) == (k % 2 == 1)  # a quarter turn lays the tall box on its side


def test_turned_train_tiles_keep_labels_on_the_print(tmp_path: Path):
    _magenta_worker()
    scenes = tmp_path / "scenes"
    for i in (0, 1, 8):  # train, train, val
        build.build_one(3, i, scenes)
    out = tmp_path / "tiles"
    train.build_tiles({"train": scenes / "train", "val": scenes / "val"}, out, 320,
                      {"train": 4, "val": 2}, seed=1, jobs=1, quarter_turns=1.0)
    sideways = checked = 0
    for split in ("train", "val"):
        for img_path in sorted((out / split / "images").glob("*.jpg")):
            img = cv2.imread(str(img_path))
            for line in (out / split / "labels" / f"{img_path.stem}.txt").read_text().splitlines():
                w, h = (float(v) for v in line.split()[3:])
                if w > 6 / 320 and h > 6 / 320:
                    assert magenta_share(img, line, 320) > 0.5, (split, img_path.name, line)
                    checked += 1
                    sideways += split == "train" and w > h * 1.2
    assert checked > 20 and sideways > 10
    # val tiles are never turned: the same as a build without turns (train ones differ)
    plain = tmp_path / "plain"
    train.build_tiles({"train": scenes / "train", "val": scenes / "val"}, plain, 320,
                      {"train": 4, "val": 2}, seed=1, jobs=1, quarter_turns=0.0)
    assert _labels(out, "val") == _labels(plain, "val") and len(_labels(out, "val")) == 2
    assert _labels(out, "train") != _labels(plain, "train")


def test_tiles_do_not_depend_on_where_the_scenes_live(tmp_path: Path):
    _magenta_worker()
    made = []
    for where in ("a", "a-much-longer-folder-name"):
        scenes = tmp_path / where / "scenes"
        build.build_one(3, 0, scenes)
        out = tmp_path / where / "tiles"
        train.build_tiles({"train": scenes / "train"}, out, 320, {"train": 3}, seed=1, jobs=1,
                          quarter_turns=0.5)
        made.append(_labels(out, "train"))
    assert made[0] == made[1] and len(made[0]) == 3


def test_a_focused_tile_always_holds_an_index_of_the_asked_for_rank():
    boxes = np.array([[10, 10, 20, 30], [900, 900, 910, 920], [500, 40, 510, 60]], np.float32)
    focus = np.array([False, True, False])
    rng = np.random.default_rng(0)
    for _ in range(200):
        x0, y0 = train.tile_origin(boxes, 320, 1000, 1000, rng, focus)
        assert x0 <= 905 <= x0 + 320 and y0 <= 910 <= y0 + 320
    # without a focus some tiles are anywhere, so some miss that index
    origins = [train.tile_origin(boxes, 320, 1000, 1000, rng) for _ in range(200)]
    assert any(not (x0 <= 905 <= x0 + 320 and y0 <= 910 <= y0 + 320) for x0, y0 in origins)


def test_focused_tiles_come_only_from_scenes_with_that_rank(tmp_path: Path):
    _magenta_worker()
    scenes = tmp_path / "scenes"
    for i in (0, 1):
        build.build_one(3, i, scenes)
    readable = [train.index_boxes(json.loads(p.read_text())) for p in sorted((scenes / "train").glob("scene_*.json"))]
    rank = max({b["rank"] for b in readable[0]}, key=lambda r: sum(b["rank"] == r for b in readable[0]))
    shown = sum(any(b["rank"] == rank for b in r) for r in readable)
    out = tmp_path / "focused"
    train.build_tiles({"train": scenes / "train"}, out, 320, {"train": 2}, seed=1, jobs=1, focus_ranks=(rank,))
    labels = _labels(out, "train")
    assert len(labels) == 2 * shown and all(text.strip() for text in labels.values())
    none = tmp_path / "none"
    train.build_tiles({"train": scenes / "train"}, none, 320, {"train": 2}, seed=1, jobs=1, focus_ranks=("ZZ",))
    assert _labels(none, "train") == {}
    assert json.loads((out / "stats.json").read_text())["focus_ranks"] == [rank]


def test_polygon_labels_are_the_printed_index_and_turn_with_the_tile(tmp_path: Path):
    _magenta_worker()
    scenes = tmp_path / "scenes"
    build.build_one(3, 0, scenes)
    boxes, polys = tmp_path / "boxes", tmp_path / "polys"
    for out, polygons in ((boxes, False), (polys, True)):
        train.build_tiles({"train": scenes / "train"}, out, 320, {"train": 4}, seed=1, jobs=1,
                          quarter_turns=0.5, polygons=polygons)
    box_labels, poly_labels = _labels(boxes, "train"), _labels(polys, "train")
    assert box_labels.keys() == poly_labels.keys()
    rows = 0
    for name, text in poly_labels.items():
        img = cv2.imread(str(polys / "train" / "images" / name.replace(".txt", ".jpg")))
        for line, box_line in zip(text.splitlines(), box_labels[name].splitlines(), strict=True):
            xy = np.array(line.split()[1:], float).reshape(4, 2)
            x1, y1 = xy.min(axis=0)
            x2, y2 = xy.max(axis=0)
            # the polygon's box is the box label, and its middle is the magenta print
            cx, cy, w, h = (float(v) for v in box_line.split()[1:])
            assert np.allclose([x1, y1, x2, y2], [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], atol=1e-5)
            if w > 6 / 320 and h > 6 / 320:
                assert magenta_share(img, box_line, 320) > 0.5
            rows += 1
    assert rows > 10


def test_box_folders_get_polygon_copies(tmp_path: Path):
    images = tmp_path / "real" / "train" / "images"
    labels = tmp_path / "real" / "train" / "labels"
    images.mkdir(parents=True)
    labels.mkdir(parents=True)
    cv2.imwrite(str(images / "a.jpg"), np.zeros((32, 32, 3), np.uint8))
    cv2.imwrite(str(images / "b.jpg"), np.zeros((32, 32, 3), np.uint8))
    (labels / "a.txt").write_text("0 0.5 0.5 0.2 0.4")
    out = train.polygon_labels(images, tmp_path / "poly")
    assert sorted(p.name for p in out.iterdir()) == ["a.jpg", "b.jpg"] and (out / "a.jpg").is_symlink()
    row = (tmp_path / "poly" / "labels" / "a.txt").read_text().split()
    assert row[0] == "0" and np.allclose([float(v) for v in row[1:]], [0.4, 0.3, 0.6, 0.3, 0.6, 0.7, 0.4, 0.7])
    assert (tmp_path / "poly" / "labels" / "b.txt").read_text() == ""


def test_keystone_tiles_keep_labels_on_the_print_and_leave_val_as_shot(tmp_path: Path):
    _magenta_worker()
    scenes = tmp_path / "scenes"
    for i in (0, 1, 8):  # train, train, val
        build.build_one(3, i, scenes)
    out, plain = tmp_path / "keystone", tmp_path / "plain"
    for where, share in ((out, 1.0), (plain, 0.0)):
        train.build_tiles({"train": scenes / "train", "val": scenes / "val"}, where, 320,
                          {"train": 4, "val": 2}, seed=1, jobs=1, keystone=share)
    checked = 0
    for img_path in sorted((out / "train" / "images").glob("*.jpg")):
        img = cv2.imread(str(img_path))
        for line in (out / "train" / "labels" / f"{img_path.stem}.txt").read_text().splitlines():
            w, h = (float(v) for v in line.split()[3:])
            if w > 6 / 320 and h > 6 / 320:
                assert magenta_share(img, line, 320) > 0.5, (img_path.name, line)
                checked += 1
    assert checked > 10
    assert _labels(out, "val") == _labels(plain, "val") and len(_labels(out, "val")) == 2
    assert _labels(out, "train") != _labels(plain, "train")
    assert json.loads((out / "stats.json").read_text())["keystone"] == 1.0


def test_stroke_tiles_print_thinner_or_bolder_on_the_same_labels(tmp_path: Path):
    _magenta_worker()
    scenes = tmp_path / "scenes"
    for i in (0, 1, 8):  # train, train, val
        build.build_one(3, i, scenes)
    made = {}
    for stroke in (0.0, 1.0):
        out = tmp_path / f"tiles-{stroke}"
        train.build_tiles({"train": scenes / "train", "val": scenes / "val"}, out, 320,
                          {"train": 4, "val": 1}, seed=1, jobs=1, stroke=stroke)
        made[stroke] = out
    plain, stroked = made[0.0], made[1.0]
    assert _labels(plain, "train") == _labels(stroked, "train") and len(_labels(plain, "train")) == 8
    grew = shrank = inked = 0
    for img_path in sorted((plain / "train" / "images").glob("*.jpg")):
        a = cv2.imread(str(img_path))
        b = cv2.imread(str(stroked / "train" / "images" / img_path.name))
        # the magenta print grows with a min filter, shrinks with a max
        ink_a, ink_b = (int(((t[..., 2] > t[..., 1] + 50) & (t[..., 0] > t[..., 1] + 50)).sum())
                        for t in (a.astype(int), b.astype(int)))
        if ink_a > 50:  # a tile showing print: its ink 4% more or less (edges of a pixel)
            inked += 1
            grew += ink_b > 1.04 * ink_a
            shrank += ink_b < 0.96 * ink_a
            assert grew + shrank == inked, (img_path.name, ink_a, ink_b)
    assert grew and shrank
    for img_path in sorted((plain / "val" / "images").glob("*.jpg")):  # val tiles as shot
        assert np.array_equal(cv2.imread(str(img_path)),
                              cv2.imread(str(stroked / "val" / "images" / img_path.name)))


def test_min_visible_decides_which_indices_are_labelled(tmp_path: Path):
    _magenta_worker()
    scenes = tmp_path / "scenes"
    for i in (0, 1):
        build.build_one(3, i, scenes)

    def label_lines(min_visible: float) -> int:
        out = tmp_path / f"tiles-{min_visible}"
        train.build_tiles({"train": scenes / "train"}, out, 320, {"train": 3}, seed=1, jobs=1,
                          min_visible=min_visible)
        assert json.loads((out / "stats.json").read_text())["min_visible"] == min_visible
        return sum(len(t.splitlines()) for t in _labels(out, "train").values())

    assert label_lines(train.MIN_VISIBLE) > 20
    assert label_lines(1.01) == 0  # no index is more than wholly visible

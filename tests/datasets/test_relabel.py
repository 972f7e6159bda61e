"""datasets.relabel: index labels of built scenes measured again after a box changed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from magenta_deck import GEOM
from test_train_tiles import _magenta_worker

from datasets import build, relabel

ENTRY = {"aspect": GEOM.aspect, "index_box": list(GEOM.index_box), "index_corners": list(GEOM.index_corners),
         "index_boxes": {}}


def _built(tmp_path: Path) -> Path:
    _magenta_worker()
    root = tmp_path / "scenes"
    for i in (0, 1):
        build.build_one(3, i, root)
    (root / "build.json").write_text(json.dumps({"seed": 3, "manifest": {"magenta": ENTRY}}))
    return root


def _scenes(root: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted(root.rglob("scene_*.json"))}


def test_the_builders_labels_come_back_when_nothing_changed(tmp_path: Path):
    from datasets import art

    root = _built(tmp_path)
    geoms = art.geometries({"magenta": ENTRY})
    for scene in _scenes(root).values():
        stored = [c["indices"] for c in scene["cards"]]
        ranks = {"magenta": {c["rank"] for c in scene["cards"]}}
        relabel.relabel_scene(scene, geoms, ranks)
        for old, new in zip(stored, (c["indices"] for c in scene["cards"]), strict=True):
            assert len(old) == len(new)
            for a, b in zip(old, new, strict=True):
                assert np.abs(np.subtract(a["box"], b["box"])).max() < 0.05
                assert abs(a["visible"] - b["visible"]) < 0.05 and a["corner"] == b["corner"]


def test_only_the_ranks_whose_box_changed_are_measured_again(tmp_path: Path):
    root = _built(tmp_path)
    before = _scenes(root)
    king = (0.04, 0.03, 0.19, 0.40)  # the K's index measured taller
    after_manifest = {"magenta": {**ENTRY, "index_boxes": {"K": list(king)}}}
    counts = relabel.relabel_folder(root, ["magenta"], manifest=after_manifest)
    after = _scenes(root)
    kings = 0
    for name, scene in after.items():
        for old, new in zip(before[name]["cards"], scene["cards"], strict=True):
            if old["rank"] != "K" or not old["face_up"]:
                assert old["indices"] == new["indices"]
                continue
            for a, b in zip(old["indices"], new["indices"], strict=True):
                taller = (b["box"][3] - b["box"][1]) + (b["box"][2] - b["box"][0])
                assert taller > (a["box"][3] - a["box"][1]) + (a["box"][2] - a["box"][0]) + 1
                kings += 1
    assert kings > 0 and counts["cards_changed"] == sum(
        1 for s in before.values() for c in s["cards"] if c["rank"] == "K" and c["face_up"])
    info = json.loads((root / "build.json").read_text())
    assert info["manifest"]["magenta"]["index_boxes"]["K"] == list(king)
    assert info["relabelled"][-1]["ranks"] == {"magenta": ["K"]}
    # the folder now matches the manifest: a second run changes nothing
    assert relabel.relabel_folder(root, ["magenta"], manifest=after_manifest)["cards_changed"] == 0
    assert _scenes(root) == after


def test_an_unknown_design_is_refused_and_nothing_is_written(tmp_path: Path):
    root = _built(tmp_path)
    before = _scenes(root)
    assert relabel.main(["--scenes", str(root), "--designs", "no-such-design"]) == 1
    assert _scenes(root) == before
    assert relabel.main(["--scenes", str(tmp_path / "nowhere"), "--designs", "magenta"]) == 2


def test_one_card_printed_elsewhere_is_labelled_by_its_own_box(tmp_path: Path):
    """A design whose king of spades prints its index lower than the other kings: that
    card's labels move with its own box (`card_boxes`), the other kings' stay."""
    root = _built(tmp_path)
    before = _scenes(root)
    x1, y1, x2, y2 = GEOM.box_for("K")
    lower = [x1, y1 + 0.05, x2, y2 + 0.05]
    after_manifest = {"magenta": {**ENTRY, "card_boxes": {"KS": lower}}}
    counts = relabel.relabel_folder(root, ["magenta"], manifest=after_manifest)
    info = json.loads((root / "build.json").read_text())
    assert info["relabelled"][-1]["ranks"] == {"magenta": ["K"]}
    moved = 0
    for name, scene in _scenes(root).items():
        for old, new in zip(before[name]["cards"], scene["cards"], strict=True):
            if old["card"] != "KS" or not old["face_up"]:
                for a, b in zip(old["indices"], new["indices"], strict=True):
                    assert np.abs(np.subtract(a["box"], b["box"])).max() < 0.05
                continue
            for a, b in zip(old["indices"], new["indices"], strict=True):
                assert np.abs(np.subtract(a["box"], b["box"])).max() > 1.0
                moved += 1
    assert moved > 0 and counts["cards_changed"] >= 1 and moved == sum(
        len(c["indices"]) for s in before.values() for c in s["cards"]
        if c["card"] == "KS" and c["face_up"])

"""The meld-confidence bench: its logistic fit and its review figures."""

from __future__ import annotations

import numpy as np

from bench.meld_confidence import card_truth, fit, report
from datasets.groundtruth import column, corners_from_scene, scene_from_placements
from scanner.classes import CLASS_ID
from scanner.corners import Corners
from scanner.reconstruct import read_table


def test_fit_recovers_a_known_logistic_model():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4000, 2))
    true_w = np.array([1.5, -2.0, 0.5])  # weights, then bias
    p = 1.0 / (1.0 + np.exp(-(x @ true_w[:2] + true_w[2])))
    y = (rng.random(4000) < p).astype(float)
    w = fit(x, y, l2=1e-6)
    assert np.allclose(w, true_w, atol=0.2)


def test_report_counts_wrong_melds_sent_to_review_and_silent_deals():
    melds = [
        {"confidence": 0.97, "right": True, "reviewed": False, "low_card": False},
        {"confidence": 0.96, "right": True, "reviewed": False, "low_card": True},
        {"confidence": 0.30, "right": False, "reviewed": True, "low_card": False},
        {"confidence": 0.92, "right": False, "reviewed": False, "low_card": False},
    ]
    scenes = [{"right": True, "silent": False}, {"right": False, "silent": True}]
    r = report(melds, scenes)
    assert r["wrong"] == 2
    assert r["wrong_reviewed"] == 0.5 and r["right_reviewed"] == 0.0
    assert r["wrong_shown"] == 0.5 and r["right_shown"] == 0.5
    assert r["deals_right"] == 0.5 and r["deals_silent_wrong"] == 0.5
    bands = {b["band"]: b for b in r["reliability"]}
    assert bands["0.20-0.40"]["n"] == 1 and bands["0.20-0.40"]["right"] == 0.0
    assert bands["0.95-1.00"]["n"] == 2 and bands["0.95-1.00"]["right"] == 1.0


def test_card_truth_tells_right_cards_from_misread_and_false_ones():
    scene = scene_from_placements(column(["KH", "KS", "KD", "KC"], 1000, 1900)
                                  + column(["9H", "9S", "9D"], 2500, 1900), 4000, 3000)
    corners = corners_from_scene(scene)
    reading = read_table(corners, (4000, 3000))
    assert card_truth(scene, corners, reading) == [True] * len(reading.cards) == [True] * 7
    # the first nine read as a queen, and a queen's index where no card lies
    classes = corners.class_ids.copy()
    first_nine = int(np.flatnonzero(classes == CLASS_ID["9"])[0])
    classes[first_nine] = CLASS_ID["Q"]
    stray = np.array([[3500.0, 500.0, 3530.0, 560.0]])
    wrong = Corners(np.vstack([corners.boxes, stray]), np.append(classes, CLASS_ID["Q"]),
                    np.append(corners.confidence, 0.9), np.append(corners.angle, 0.0))
    reading = read_table(wrong, (4000, 3000))
    truth = card_truth(scene, wrong, reading)
    bad = {k for k, c in enumerate(reading.cards) if not truth[k]}
    assert {reading.cards[k].rank for k in bad} == {"Q"} and len(bad) == 2
    assert sum(truth) == len(reading.cards) - 2


def test_collect_reads_each_photo_with_the_scans_gates_from_above_and_from_a_seat(
        tmp_path, monkeypatch):
    """`collect` runs the layout as the scan does (its three gates) on each complete scene,
    from above and, with `keystone`, from a seat: on perfect corners it reads the deals
    `bench_layout` reads right, most of them."""
    import json

    import bench.meld_confidence as mc
    from bench.bench_layout import load_scenes, run
    from scanner.detector import MODELS_DIR

    scenes = tmp_path / "scenes"
    scenes.mkdir()
    for i, (scene, _) in enumerate(load_scenes(None, 6, 5, None)):
        scene["image"]["file"] = f"scene_{i:06d}.jpg"
        (scenes / f"scene_{i:06d}.json").write_text(json.dumps(scene))
        (scenes / f"scene_{i:06d}.jpg").write_bytes(b"not read: the corners are the scene's")
    seen = []

    def perfect(source, scene, photo, rng, *args):
        seen.append(args[4] if len(args) > 4 else 0.0)  # the keystone asked for
        return corners_from_scene(scene, rng, shuffle=True)
    monkeypatch.setattr(mc, "corners_for", perfect)
    monkeypatch.setattr(mc, "_ink", lambda *a: None)
    monkeypatch.setattr(mc, "_detector_view", lambda *a: None)  # no photo decoded
    monkeypatch.setattr(mc, "_lookalikes", lambda view, corners, *a: (corners, 0.0))
    looks = []  # the readers' look, asked for each photo as scan_photo passes it
    monkeypatch.setattr(mc, "_look", lambda view, detector: looks.append(detector))
    finds = []  # and the detector's find near a line's empty places
    monkeypatch.setattr(mc, "_find", lambda view, detector: finds.append(detector))
    complete = sum(json.loads(p.read_text()).get("complete", True) for p in scenes.glob("*.json"))
    for keystone in (0.0, 0.5):
        melds, deals, cards = mc.collect(scenes, None, MODELS_DIR, None, 0.0, keystone)
        assert len(deals) == complete > 0 and melds and cards
        r = run("gt", load_scenes(scenes, 0, 0, None), 5, False, ink=False, keystone=keystone)
        right = sum(d["right"] for d in deals)
        assert right == round(r["score_exact_squared_counted"] * r["scenes"]) >= complete / 2
    assert seen == [0.0] * complete + [0.5] * complete
    assert len(looks) == 2 * complete and all(d is not None for d in looks)
    assert len(finds) == 2 * complete and all(d is not None for d in finds)

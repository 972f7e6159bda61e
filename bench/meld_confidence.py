"""How far a meld's and a card's confidence can be trusted, and the fits that make them
probabilities.

For the complete scenes of a scene directory, each plain meld the layout reads from the
detector's corners is right (a true meld of the same team and rank with the same number
of naturals and of wilds) or wrong. Reported:

- reliability: melds by confidence band, and the share right in each (a calibrated
  confidence of 0.9 is right nine times in ten);
- the review list: of the wrong melds, the share the layout sends to review
  (`meld_check`, or a rule problem), and of the right ones the share sent needlessly;
- silent deals: scenes whose deal score is wrong (squared canastas counted by the player)
  while no meld of theirs is sent to review (a squared-up canasta always is: the player
  counts it), nor any card in a meld under the service's `LOW_CONFIDENCE`: what a player
  would trust and should not.

Cards likewise: a card read from corners is right when the true card under most of its
corners has its rank and no surer card claimed that true card first (a card counted
twice, or read where no card is, is wrong); a card counted unseen is right when a true
card of its rank lies within 0.3 card heights of its place. Reported: reliability, and
the share of wrong and of right cards under the service's `LOW_CONFIDENCE` (shown first).

`--fit` fits `scanner.reconstruct.MELD_CALIBRATION` and `CARD_CALIBRATION` (logistic
regression on `meld_evidence` and `card_evidence`, L2 1e-2, Newton steps) on these scenes
and prints the weights.

    python -m bench.meld_confidence --scenes-dir build/scenes-v52/val --fit
    python -m bench.meld_confidence --scenes-dir build/scenes/val --limit 100
    python -m bench.meld_confidence --scenes-dir build/scenes-t3/test --keystone 0.5

Corners come from `bench.bench_layout`'s cache (`--corners-cache build/corner-cache`,
floor 0) or from the model.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from bench.bench_layout import (
    _detector_view,
    _find,
    _ink,
    _look,
    _lookalikes,
    _model_key,
    corners_for,
    deal_scores,
    default_gates,
    load_scenes,
    photo_view,
    predicted_layout,
    true_melds,
)
from datasets.groundtruth import rank_class
from scanner import reconstruct
from scanner.detector import box_iou
from scanner.reconstruct import TableReading, read_table

# the service's threshold for showing a card first (api.table.LOW_CONFIDENCE is this)
CARD_LOW = reconstruct.CARD_CHECK
REVIEWED = ("meld_check", "meld_rule")


def card_truth(scene: dict, corners, reading: TableReading) -> list[bool]:
    """Whether each card of `reading` lies there with the rank read (see the module doc)."""
    true_cards = {c["id"]: c for c in scene["cards"]}
    index_boxes = [(c["id"], np.asarray(ix["box"], float)) for c in scene["cards"]
                   for ix in c["indices"] if ix["visible"] >= 0.3]
    boxes = np.array([b for _, b in index_boxes]).reshape(-1, 4)
    card_h = float(scene.get("card_height_px") or 0) or float(reading.card_size[1])
    claimed: set = set()
    right = [False] * len(reading.cards)
    order = sorted(range(len(reading.cards)), key=lambda k: -reading.cards[k].confidence)
    for k in order:
        card = reading.cards[k]
        owner = None
        if card.corner_ids and len(boxes):
            votes: dict = {}
            for j in card.corner_ids:
                iou = box_iou(corners.boxes[j], boxes)
                best = int(np.argmax(iou))
                if iou[best] >= 0.3:
                    votes[index_boxes[best][0]] = votes.get(index_boxes[best][0], 0) + 1
            owner = max(votes, key=votes.get) if votes else None
        elif not card.corner_ids:
            near = [(np.hypot(*np.subtract(np.mean(c["outline"], axis=0), card.center)), cid)
                    for cid, c in true_cards.items()
                    if cid not in claimed and rank_class(c["card"]) == card.rank]
            if near and min(near)[0] < 0.3 * card_h:
                owner = min(near)[1]
        if owner is not None and owner not in claimed \
                and rank_class(true_cards[owner]["card"]) == card.rank:
            claimed.add(owner)
            right[k] = True
    return right


def collect(scenes_dir: Path, limit: int | None, models: Path, cache_root: Path | None,
            floor: float, keystone: float = 0.0
            ) -> tuple[list[dict], list[dict], list[dict]]:
    """Per plain meld: evidence, confidence, right or not, reviewed; per scene: deal right,
    silent; per card: evidence, confidence, right or not. With `keystone`, each photo as
    taken from a seat (`bench_layout --keystone`), read with the scan's gates for it."""
    from scanner.detector import OnnxDetector

    detector = OnnxDetector(models)
    cache = None
    if cache_root is not None:
        cache = cache_root / f"{_model_key(models)}-floor{floor:g}"
        cache.mkdir(parents=True, exist_ok=True)
    melds, scenes, cards = [], [], []
    rng = np.random.default_rng(0)
    gate, supported, tilted, faint = default_gates("detector")
    for scene, photo in load_scenes(scenes_dir, 0, 0, limit):
        if photo is None or not scene.get("complete", True):
            continue
        scene, seat = photo_view(scene, photo, 0, keystone)
        corners = corners_for("detector", scene, photo, rng, detector, cache, 0, floor,
                              keystone, seat)
        view = _detector_view(photo, 0, detector, seat)
        corners, _ = _lookalikes(view, corners)  # as scan
        size = (scene["image"]["width"], scene["image"]["height"])
        reading = read_table(corners, size, min_confidence=gate, supported_confidence=supported,
                             tilted_confidence=tilted, ink=_ink(photo, corners, 0, seat, view),
                             look=_look(view, detector), faint_confidence=faint,
                             find=_find(view, detector))
        truth = true_melds(scene)
        reviewed = {(it.get("team"), it.get("meld")) for it in reading.review
                    if it["kind"] in REVIEWED}
        flagged_any = False
        for team in (0, 1):
            for mi, m in enumerate(reading.team_melds(team)):
                if m.squared:  # handed to the player to count
                    flagged_any = True
                    continue
                t = truth.get((m.team, m.rank))
                right = (t is not None and not t["squared"] and t["naturals"] == m.naturals
                         and len(t["wilds"]) == len(m.wilds))
                flagged = (team, mi) in reviewed
                low_card = any(reading.cards[i].confidence < CARD_LOW for i in m.card_ids
                               if reading.cards[i].corner_ids)
                flagged_any |= flagged or low_card
                melds.append({"evidence": list(m.evidence), "confidence": m.confidence,
                              "right": right, "reviewed": flagged, "low_card": low_card})
        for card, ok in zip(reading.cards, card_truth(scene, corners, reading), strict=True):
            cards.append({"evidence": list(card.evidence), "confidence": card.confidence,
                          "right": ok})
        true_score = deal_scores(scene["layout"])
        right = deal_scores(predicted_layout(scene, reading, True)) == true_score
        scenes.append({"right": right, "silent": not right and not flagged_any})
    return melds, scenes, cards


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> np.ndarray:
    """Logistic regression weights (bias last) by Newton's method with an L2 penalty."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    penalty = l2 * np.eye(len(w))
    penalty[-1, -1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + penalty @ w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def reliability(conf: np.ndarray, right: np.ndarray) -> list[dict]:
    """Items by confidence band: how many, the share right, the mean confidence."""
    bands = []
    edges = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 1.0001]
    for a, b in zip(edges, edges[1:], strict=False):
        sel = (conf >= a) & (conf < b)
        if sel.any():
            bands.append({"band": f"{a:.2f}-{min(b, 1):.2f}", "n": int(sel.sum()),
                          "right": round(float(right[sel].mean()), 3),
                          "mean_confidence": round(float(conf[sel].mean()), 3)})
    return bands


def card_report(cards: list[dict]) -> dict:
    conf = np.array([c["confidence"] for c in cards])
    right = np.array([c["right"] for c in cards])
    low = conf < CARD_LOW
    return {"cards": len(cards), "wrong": int((~right).sum()),
            "reliability": reliability(conf, right),
            "brier": round(float(np.mean((conf - right) ** 2)), 4),
            "wrong_low": round(float(low[~right].mean()), 3) if (~right).any() else None,
            "right_low": round(float(low[right].mean()), 3) if right.any() else None}


def report(melds: list[dict], scenes: list[dict]) -> dict:
    conf = np.array([m["confidence"] for m in melds])
    right = np.array([m["right"] for m in melds])
    reviewed = np.array([m["reviewed"] for m in melds])
    low = np.array([m["low_card"] for m in melds])
    bands = reliability(conf, right)
    wrong = ~right
    shown = reviewed | low
    return {
        "scenes": len(scenes), "plain_melds": len(melds), "wrong": int(wrong.sum()),
        "reliability": bands,
        "brier": round(float(np.mean((conf - right) ** 2)), 4),
        "wrong_reviewed": round(float(reviewed[wrong].mean()), 3) if wrong.any() else None,
        "right_reviewed": round(float(reviewed[right].mean()), 3) if right.any() else None,
        "wrong_shown": round(float(shown[wrong].mean()), 3) if wrong.any() else None,
        "right_shown": round(float(shown[right].mean()), 3) if right.any() else None,
        "deals_right": round(float(np.mean([s["right"] for s in scenes])), 4),
        "deals_silent_wrong": round(float(np.mean([s["silent"] for s in scenes])), 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes-dir", type=Path, required=True)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--corners-cache", type=Path, default=Path("build/corner-cache"))
    parser.add_argument("--detect-floor", type=float, default=0.0)
    parser.add_argument("--keystone", type=float, default=0.0,
                        help="each photo as taken from a seat, its far edge this much of the "
                             "near one (as bench_layout's)")
    parser.add_argument("--fit", action="store_true",
                        help="fit MELD_CALIBRATION on these scenes and print it")
    args = parser.parse_args(argv)
    from scanner.detector import MODELS_DIR

    models = args.models or MODELS_DIR
    if args.fit:  # the meld evidence does not depend on the calibrations; the cards' on
        # the melds' (fitted first, then the cards on it)
        reconstruct.CARD_CALIBRATION = None
        melds, _, _ = collect(args.scenes_dir, args.limit, models, args.corners_cache,
                              args.detect_floor, args.keystone)
        x = np.array([m["evidence"] for m in melds])
        reconstruct.MELD_CALIBRATION = tuple(
            round(float(v), 4) for v in fit(x, np.array([m["right"] for m in melds], float)))
    melds, scenes, cards = collect(args.scenes_dir, args.limit, models, args.corners_cache,
                                   args.detect_floor, args.keystone)
    if not melds:
        print("no plain melds read", file=sys.stderr)
        return 1
    out = {"scenes_dir": str(args.scenes_dir), "keystone": args.keystone,
           "meld_calibration": reconstruct.MELD_CALIBRATION,
           "card_calibration": reconstruct.CARD_CALIBRATION,
           **report(melds, scenes), "card": card_report(cards)}
    if args.fit:
        x = np.array([c["evidence"] for c in cards])
        w = fit(x, np.array([c["right"] for c in cards], float))
        out["fitted_cards"] = [round(float(v), 4) for v in w]
        p = 1.0 / (1.0 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ w)))
        for c, q in zip(cards, p, strict=True):
            c["confidence"] = float(q)
        out["card_with_fit"] = card_report(cards)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How far a plain meld's confidence can be trusted, and the fit that makes it a probability.

For the complete scenes of a scene directory, each plain meld the layout reads from the
detector's corners is right (a true meld of the same team and rank with the same number
of naturals and of wilds) or wrong. Reported:

- reliability: melds by confidence band, and the share right in each (a calibrated
  confidence of 0.9 is right nine times in ten);
- the review list: of the wrong melds, the share the layout sends to review
  (`meld_check`, or a rule problem), and of the right ones the share sent needlessly;
- silent deals: scenes whose deal score is wrong (squared canastas counted by the player)
  while no meld of theirs is sent to review, nor any card in a meld under the service's
  `LOW_CONFIDENCE`: what a player would trust and should not.

`--fit` fits `scanner.reconstruct.MELD_CALIBRATION` (logistic regression on
`meld_evidence`, L2 1e-2, Newton steps) on these scenes and prints the weights.

    python -m bench.meld_confidence --scenes-dir build/scenes-v52/val --fit
    python -m bench.meld_confidence --scenes-dir build/scenes/val --limit 100

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
    _ink,
    _model_key,
    corners_for,
    deal_scores,
    default_gates,
    load_scenes,
    predicted_layout,
    true_melds,
)
from scanner import reconstruct
from scanner.reconstruct import read_table

# the service's threshold for showing a card first (api.table.LOW_CONFIDENCE; the bench
# does not import the service)
CARD_LOW = 0.6
REVIEWED = ("meld_check", "meld_rule")


def collect(scenes_dir: Path, limit: int | None, models: Path, cache_root: Path | None,
            floor: float) -> tuple[list[dict], list[dict]]:
    """Per plain meld: evidence, confidence, right or not, reviewed; per scene: deal right,
    silent."""
    from scanner.detector import OnnxDetector

    detector = OnnxDetector(models)
    cache = None
    if cache_root is not None:
        cache = cache_root / f"{_model_key(models)}-floor{floor:g}"
        cache.mkdir(parents=True, exist_ok=True)
    melds, scenes = [], []
    rng = np.random.default_rng(0)
    gate, supported = default_gates("detector")
    for scene, photo in load_scenes(scenes_dir, 0, 0, limit):
        if photo is None or not scene.get("complete", True):
            continue
        corners = corners_for("detector", scene, photo, rng, detector, cache, 0, floor)
        size = (scene["image"]["width"], scene["image"]["height"])
        reading = read_table(corners, size, min_confidence=gate, supported_confidence=supported,
                             ink=_ink(photo, corners, 0))
        truth = true_melds(scene)
        reviewed = {(it.get("team"), it.get("meld")) for it in reading.review
                    if it["kind"] in REVIEWED}
        flagged_any = False
        for team in (0, 1):
            for mi, m in enumerate(reading.team_melds(team)):
                if m.squared:
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
        true_score = deal_scores(scene["layout"])
        right = deal_scores(predicted_layout(scene, reading, True)) == true_score
        scenes.append({"right": right, "silent": not right and not flagged_any})
    return melds, scenes


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


def report(melds: list[dict], scenes: list[dict]) -> dict:
    conf = np.array([m["confidence"] for m in melds])
    right = np.array([m["right"] for m in melds])
    reviewed = np.array([m["reviewed"] for m in melds])
    low = np.array([m["low_card"] for m in melds])
    bands = []
    edges = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 1.0001]
    for a, b in zip(edges, edges[1:], strict=False):
        sel = (conf >= a) & (conf < b)
        if sel.any():
            bands.append({"band": f"{a:.2f}-{min(b, 1):.2f}", "melds": int(sel.sum()),
                          "right": round(float(right[sel].mean()), 3),
                          "mean_confidence": round(float(conf[sel].mean()), 3)})
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
    parser.add_argument("--fit", action="store_true",
                        help="fit MELD_CALIBRATION on these scenes and print it")
    args = parser.parse_args(argv)
    from scanner.detector import MODELS_DIR

    models = args.models or MODELS_DIR
    if args.fit:
        reconstruct.MELD_CALIBRATION = None  # the evidence does not depend on it
    melds, scenes = collect(args.scenes_dir, args.limit, models, args.corners_cache,
                            args.detect_floor)
    if not melds:
        print("no plain melds read", file=sys.stderr)
        return 1
    out = {"scenes_dir": str(args.scenes_dir), "calibration": reconstruct.MELD_CALIBRATION,
           **report(melds, scenes)}
    if args.fit:
        x = np.array([m["evidence"] for m in melds])
        y = np.array([m["right"] for m in melds], float)
        w = fit(x, y)
        out["fitted"] = [round(float(v), 4) for v in w]
        p = 1.0 / (1.0 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ w)))
        for m, q in zip(melds, p, strict=True):
            m["confidence"] = float(q)
            m["reviewed"] = bool(q < reconstruct.MELD_CHECK)
        out["with_fit"] = report(melds, scenes)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

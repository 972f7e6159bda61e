"""Why melds read from detector corners are not exact: what became of each card they miss.

For every plain meld of the scenes (complete tables) that the layout reads wrong, each of
its true cards is matched to the predicted meld's cards through the detector corners on
its visible indices (box IoU >= 0.3). A true card with no match is counted by what the
detector made of it:

- `no_visible_index`: clutter or another card covers every index (no corner can show it);
- `not_detected`: no corner on any of its indices;
- `below_floor`: its best corner scores under the layout's floor (`supported_confidence`);
- `unsure_unused`: its best corner is between the floor and the layout gate and was not
  supported by a line of sure cards;
- `sure_unused`: a corner at or over the gate that no card took;
- `in_other_card` / `left_out` / `unmelded` / `other_meld`: the corner is used, by a card of
  this meld that another corner also claims (a mispaired pair), by a card no team owns,
  a card in no meld, or a card of another meld (`:rank` when that card has another rank).

Predicted meld cards with no true card are counted as `extra_seen` (from corners) and
`extra_inferred` (a hidden card the layout inferred). Misses are also split by where the
card lies in its meld (`first` laid, `middle`, `last` = the whole card in front).

    python -m bench.layout_misses --scenes-dir build/scenes-t3/test --corners-cache build/corner-cache --detect-floor 0
    python -m bench.layout_misses ... -v   # one line per failing meld and its missed cards
    python -m bench.layout_misses --scenes-dir build/scenes-u13/val --source gt -v  # the layout's own

The corners come from `bench.bench_layout`'s cache (run that first with the same models,
cache and floor) or from the model when not cached; the layout reads them as `scan_photo`
does (lookalikes lifted, the readers asked about places where a card may lie unseen), but
without the ink colour of a squared-up canasta's top card.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from bench.bench_layout import (
    _detector_view,
    _find,
    _look,
    _lookalikes,
    _model_key,
    _why,
    corners_for,
    default_gates,
    load_scenes,
)
from datasets.groundtruth import rank_class
from scanner.classes import INDEX_CLASSES
from scanner.corners import Corners
from scanner.detector import box_iou
from scanner.reconstruct import (
    LAYOUT_FAINT_CONFIDENCE,
    LAYOUT_MIN_CONFIDENCE,
    LAYOUT_SUPPORTED_CONFIDENCE,
    TableReading,
    read_table,
)


def explain_scene(scene: dict, corners: Corners, reading: TableReading,
                  floor: float, gate: float) -> tuple[Counter, list[str]]:
    """Counts of what became of the missed cards of the scene's wrongly read plain melds."""
    counts: Counter = Counter()
    lines: list[str] = []
    owner = {m: k for k, card in enumerate(reading.cards) for m in card.corner_ids}
    pred = {(m.team, m.rank): m for m in reading.melds}
    true_cards = {c["id"]: c for c in scene["cards"]}
    for meld in scene["melds"]:
        if meld["squared"]:
            continue
        p = pred.get((meld["team"], meld["rank"]))
        if p is not None and p.naturals == meld["naturals"] and len(p.wilds) == len(meld["wilds"]):
            continue
        why = _why(meld, p)
        counts[f"meld:{why}"] += 1
        members = list(p.card_ids) if p is not None else []
        matched: set[int] = set()
        z_order = sorted(true_cards[i]["z"] for i in meld["card_ids"])
        missed = []
        for cid in meld["card_ids"]:
            card = true_cards[cid]
            want = rank_class(card["card"])
            visible = [ix for ix in card["indices"] if ix["visible"] >= 0.5]
            mine: set[int] = set()
            best = None
            for ix in visible:
                if not len(corners):
                    break
                overlap = box_iou(np.asarray(ix["box"], float), corners.boxes)
                for j in np.flatnonzero(overlap >= 0.3):
                    mine.add(int(j))
                    if best is None or corners.confidence[j] > corners.confidence[best]:
                        best = int(j)
            hit = [k for k in members if k not in matched and set(reading.cards[k].corner_ids) & mine]
            if hit:
                matched.add(hit[0])
                continue
            if not visible:
                state = "no_visible_index"
            elif best is None:
                state = "not_detected"
            elif best in owner:
                other = reading.cards[owner[best]]
                state = ("in_other_card" if owner[best] in members else
                         "left_out" if other.team is None else
                         "unmelded" if other.meld is None else "other_meld")
                if other.rank != want:
                    state += ":rank"
            elif corners.confidence[best] < floor:
                state = "below_floor"
            elif corners.confidence[best] < gate:
                state = "unsure_unused"
            else:
                state = "sure_unused"
            where = ("first" if card["z"] == z_order[0] else
                     "last" if card["z"] == z_order[-1] else "middle")
            counts[f"missed:{state}"] += 1
            counts[f"where:{where}"] += 1
            got = "" if best is None else \
                f" ({INDEX_CLASSES[corners.class_ids[best]]} {corners.confidence[best]:.2f})"
            missed.append(f"{want} {where} {state}{got}")
        for k in members:
            if k not in matched:
                counts["extra_seen" if reading.cards[k].corner_ids else "extra_inferred"] += 1
        got = "none" if p is None else f"{p.naturals} + {p.wilds}"
        lines.append(f"{scene['image'].get('file')} team {meld['team']} {meld['rank']}: {why}, "
                     f"read {got}, true {meld['naturals']} + {meld['wilds']}; "
                     + "; ".join(missed))
    return counts, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes-dir", type=Path, required=True)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--corners-cache", type=Path)
    parser.add_argument("--detect-floor", type=float, default=LAYOUT_FAINT_CONFIDENCE)
    parser.add_argument("--source", choices=("detector", "gt"), default="detector",
                        help="gt: the scenes' own corners (what the layout step itself loses)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    from scanner.detector import MODELS_DIR, OnnxDetector

    models = args.models or MODELS_DIR
    detector = OnnxDetector(models) if args.source == "detector" else None
    cache = None
    if args.corners_cache is not None and detector is not None:
        cache = args.corners_cache / f"{_model_key(models)}-floor{args.detect_floor:g}"
        cache.mkdir(parents=True, exist_ok=True)
    totals: Counter = Counter()
    rng = np.random.default_rng(0)
    for scene, photo in load_scenes(args.scenes_dir, 0, 0, args.limit):
        if photo is None or not scene.get("complete", True):
            continue
        corners = corners_for(args.source, scene, photo, rng, detector, cache, 0, args.detect_floor)
        view = None if detector is None else _detector_view(photo, 0, detector)
        if view is not None:  # as scan_photo does
            corners, _ = _lookalikes(view, corners)
        size = (scene["image"]["width"], scene["image"]["height"])
        gate, supported, tilted, faint = default_gates(args.source)
        reading = read_table(corners, size, min_confidence=gate, supported_confidence=supported,
                             tilted_confidence=tilted,
                             look=None if view is None else _look(view, detector),
                             faint_confidence=faint,
                             find=None if view is None else _find(view, detector))
        counts, lines = explain_scene(scene, corners, reading, LAYOUT_SUPPORTED_CONFIDENCE,
                                      LAYOUT_MIN_CONFIDENCE)
        totals.update(counts)
        totals["scenes"] += 1
        if args.verbose:
            for line in lines:
                print(line, file=sys.stderr)
    print(json.dumps(dict(sorted(totals.items()))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

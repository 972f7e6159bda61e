"""Benchmark of the corner detector: accuracy on synthetic and real photos, and speed.

`.venv/bin/python bench/bench_detector.py [--scenes build/scenes/test] [--real DIR]
[--photo 12MP.jpg] [--torch-weights runs/detector/weights/best.pt]` prints one JSON report:

- `synthetic`: on the unseen-design test split (scene JSON + images), corner mAP50
  (15 rank classes, a corner matches a readable index, visible >= 0.6, at IoU >= 0.5;
  detections on barely visible indices are ignored, as COCO does with "difficult"
  boxes), the one-class index AP50, recall, and the rank accuracy of matched corners.
  By default the corners are those the runtime returns (detector score >= `conf`, the
  confidence gate `min_confidence`); `--conf 0.05 --min-confidence 0` ranks every corner
  down to a detector score of 0.05 with no gate, the usual reading of mAP (ultralytics'
  `val` ranks every detection down to 0.001): the area under the whole precision-recall
  curve, not the part above the product's operating point.
  `--turn 90` (or 180, 270) turns every test photo counter-clockwise first, as if taken
  from another side of the table (the scenes are shot from a long side).
- `real`: on the labelled real photos (card-level boxes, rank only), the share of
  labelled cards with a detected corner of the right rank whose centre lies inside the
  card's box, and false corners per photo (a corner whose centre is inside no labelled
  card box of its rank).
- `speed`: warm `detect_photo` of a 12-megapixel JPEG (decode included), p50/p90 of
  `--runs`; given several `--photo`s (`bench.speed_photos` makes five: a sparse table, whole
  tables, one of small indices), each photo's p50 and their median and worst too; and, in
  a separate process (torch slows onnxruntime down when both are loaded), ultralytics' own
  PyTorch `predict` of the same detector weights on the same photo at the same size; the
  ratio is theirs / ours. On a fresh clone the checkpoint of the shipped weights is
  rebuilt from the ONNX file: `.venv-train/bin/python -m bench.torch_weights --out
  runs/detector-shipped.pt` (the default `--torch-weights`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from datasets.groundtruth import keystone_scene, seat_photo, turn_scene  # noqa: E402
from datasets.real_tiles import card_labels  # noqa: E402
from scanner.classes import CLASS_ID, INDEX_CLASSES  # noqa: E402
from scanner.detector import OnnxDetector, box_iou, detect_corners  # noqa: E402
from scanner.imageio import load_photo  # noqa: E402

MIN_VISIBLE = 0.6


def _rank_id(card: dict) -> int | None:
    rank = str(card.get("rank") or "").upper()
    if rank in CLASS_ID:
        return CLASS_ID[rank]
    token = str(card.get("card") or "").upper()
    if token.startswith("3") and len(token) > 1:
        return CLASS_ID["3R" if token[1] in "HDR" else "3B"]
    return CLASS_ID.get(token[:-1]) if token else None


def average_precision(scores: np.ndarray, tp: np.ndarray, n_gt: int) -> float:
    """COCO-style 101-point interpolated AP from per-detection scores and TP flags."""
    if n_gt == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    tp = tp[order].astype(float)
    ctp, cfp = np.cumsum(tp), np.cumsum(1 - tp)
    recall = ctp / n_gt
    precision = ctp / np.maximum(ctp + cfp, 1e-9)
    precision = np.maximum.accumulate(precision[::-1])[::-1] if len(precision) else precision
    ap = 0.0
    for r in np.linspace(0, 1, 101):
        hit = np.searchsorted(recall, r, side="left")
        ap += precision[hit] if hit < len(precision) else 0.0
    return ap / 101


def _match(det_boxes, det_scores, gt_boxes, ignore_boxes, iou_thr=0.5):
    """Greedy matching by score: (tp flags, matched gt index per det or -1, ignored flags)."""
    order = np.argsort(-det_scores, kind="stable")
    used = np.zeros(len(gt_boxes), bool)
    tp = np.zeros(len(det_boxes), bool)
    ignored = np.zeros(len(det_boxes), bool)
    gt_of = np.full(len(det_boxes), -1)
    for i in order:
        if len(gt_boxes):
            ious = box_iou(det_boxes[i], gt_boxes)
            ious[used] = -1
            j = int(np.argmax(ious))
            if ious[j] >= iou_thr:
                used[j] = True
                tp[i] = True
                gt_of[i] = j
                continue
        if len(ignore_boxes) and box_iou(det_boxes[i], ignore_boxes).max() >= iou_thr:
            ignored[i] = True
    return tp, gt_of, ignored


def evaluate_synthetic(detector: OnnxDetector, scene_dir: Path, limit: int = 0, turn: int = 0,
                       keystone: float = 0.0) -> dict:
    """Corner mAP50 (15 classes), index AP50, recall and rank accuracy on rendered scenes
    (each photo turned counter-clockwise by `turn` degrees, a multiple of 90; with
    `keystone`, then seen from a player's seat, its far edge that share of its width:
    `datasets.groundtruth.keystone_scene`)."""
    turns = (turn // 90) % 4
    files = sorted(scene_dir.rglob("scene_*.json"))[: limit or None]
    per_class = {c: ([], [], 0) for c in range(len(INDEX_CLASSES))}
    idx_scores, idx_tp, n_gt_total, rank_ok, matched = [], [], 0, 0, 0
    angle_err, angle_cls, seconds = [], [], []
    for f in files:
        scene = json.loads(f.read_text())
        if turns:  # boxes and directions as in the photo turned counter-clockwise
            scene = turn_scene(scene, turns)
        warp = None
        if keystone:
            scene, warp = keystone_scene(scene, keystone)
        gt_boxes, gt_cls, gt_ang, ign = [], [], [], []
        for card in scene["cards"]:
            cid = _rank_id(card)
            for ind in card.get("indices", []):
                if ind.get("visible", 1) >= MIN_VISIBLE and cid is not None:
                    gt_boxes.append(ind["box"])
                    gt_cls.append(cid)
                    gt_ang.append(ind.get("angle", np.nan))
                elif ind.get("visible", 1) >= 0.05:
                    ign.append(ind["box"])
        gt_boxes = np.asarray(gt_boxes, np.float32).reshape(-1, 4)
        gt_cls = np.asarray(gt_cls, int)
        ign = np.asarray(ign, np.float32).reshape(-1, 4)
        src = f.with_name(scene["image"]["file"])
        if warp is not None:  # warped at full size, handed over as a JPEG again
            src = seat_photo(src, turns, warp)
        elif turns:
            src = load_photo(src, long_side=detector.decode_long_side).turned(turns)
        t = time.perf_counter()
        corners, _ = detect_corners(src, detector)
        seconds.append(time.perf_counter() - t)
        n_gt_total += len(gt_boxes)
        # One-class: is an index found at all?
        tp, gt_of, ignored = _match(corners.boxes, corners.confidence, gt_boxes, ign)
        keep = ~ignored
        idx_scores.append(corners.confidence[keep])
        idx_tp.append(tp[keep])
        m = gt_of >= 0
        matched += int(m.sum())
        rank_ok += int((corners.class_ids[m] == gt_cls[gt_of[m]]).sum())
        d = (corners.angle[m] - np.asarray(gt_ang, float)[gt_of[m]] + 180) % 360 - 180
        angle_err.append(np.abs(d))
        angle_cls.append(gt_cls[gt_of[m]])
        # Per class (rank-aware) for mAP.
        for c in range(len(INDEX_CLASSES)):
            dm = corners.class_ids == c
            gm = gt_cls == c
            scores_c, tps_c, n_c = per_class[c]
            # A corner of the wrong rank on a real index is a false positive of its class;
            # only detections on barely visible indices are ignored.
            tpc, _, ign_only = _match(corners.boxes[dm], corners.confidence[dm], gt_boxes[gm], ign)
            k = ~ign_only
            scores_c.append(corners.confidence[dm][k])
            tps_c.append(tpc[k])
            per_class[c] = (scores_c, tps_c, n_c + int(gm.sum()))
    aps = {}
    for c, (s, t, n) in per_class.items():
        if n:
            aps[INDEX_CLASSES[c]] = round(average_precision(np.concatenate(s), np.concatenate(t), n), 4)
    all_err = np.concatenate(angle_err) if angle_err else np.zeros(0)
    all_cls = np.concatenate(angle_cls) if angle_cls else np.zeros(0, int)
    # the share of each rank's found indices read more than 30 degrees off: a card placed
    # turned (bare glyphs such as a thin 8 or 9 read their direction least well)
    off30 = {INDEX_CLASSES[c]: round(float((all_err[all_cls == c] > 30).mean()), 4)
             for c in range(len(INDEX_CLASSES)) if (all_cls == c).any()}
    return {
        "scenes": len(files), "turn_deg": 90 * turns, "indices": n_gt_total,
        "map50": round(float(np.mean(list(aps.values()))), 4) if aps else None,
        "index_ap50": round(average_precision(np.concatenate(idx_scores), np.concatenate(idx_tp),
                                              n_gt_total), 4) if files else None,
        "index_recall": round(matched / max(n_gt_total, 1), 4),
        "rank_accuracy_matched": round(rank_ok / max(matched, 1), 4),
        "angle_error_median_deg": round(float(np.median(all_err)), 1) if len(all_err) else None,
        "quarter_turn_accuracy": round(float((all_err < 45).mean()), 4) if len(all_err) else None,
        "angle_off_30_per_rank": off30,
        "ap50_per_rank": aps,
        # decode + detection per photo (a rough figure: the speed part is the measured one)
        "detect_s_mean": round(float(np.mean(seconds)), 3) if seconds else None,
        "detect_s_p50": round(float(np.median(seconds)), 3) if seconds else None,
    }


def evaluate_real(detector: OnnxDetector, folder: Path, step: int = 1,
                  thresholds: tuple[float, ...] = ()) -> dict:
    """Share of labelled cards with a right-rank corner inside, false corners per photo.

    With `thresholds`, also the same two numbers for each minimum confidence (from one
    detection run with the detector's own gate), to calibrate the gate.
    """
    photos = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    photos = photos[::step]
    runs = []
    for p in photos:
        corners, _ = detect_corners(p, detector)
        runs.append((p, card_labels(p.with_suffix(".xml")), corners))

    def score(min_conf: float) -> dict:
        cards = found = false = 0
        per_rank: dict[str, list[int]] = {}
        misses = []
        for p, labels, corners in runs:
            keep = corners.confidence >= min_conf
            centres, ranks = corners.centers[keep], [r for r, k in zip(corners.ranks, keep, strict=True) if k]
            for rank, (x1, y1, x2, y2) in labels:
                inside = ((centres[:, 0] >= x1) & (centres[:, 0] <= x2)
                          & (centres[:, 1] >= y1) & (centres[:, 1] <= y2))
                ok = any(r == rank for r, i in zip(ranks, inside, strict=True) if i)
                cards += 1
                found += ok
                per_rank.setdefault(rank, [0, 0])
                per_rank[rank][0] += ok
                per_rank[rank][1] += 1
                if not ok:
                    misses.append(p.name)
            for (cx, cy), r in zip(centres, ranks, strict=True):
                if not any(r == rank and x1 <= cx <= x2 and y1 <= cy <= y2
                           for rank, (x1, y1, x2, y2) in labels):
                    false += 1
        return {"photos": len(runs), "cards": cards,
                "cards_with_right_corner": round(found / max(cards, 1), 4),
                "false_corners_per_photo": round(false / max(len(runs), 1), 3),
                "per_rank": {k: f"{v[0]}/{v[1]}" for k, v in sorted(per_rank.items())},
                "photos_with_a_miss": sorted(set(misses))[:20]}

    out = score(0.0)
    if thresholds:
        out["by_min_confidence"] = {
            str(t): {k: v for k, v in score(t).items()
                     if k in ("cards_with_right_corner", "false_corners_per_photo")}
            for t in thresholds}
    return out


_TORCH_SNIPPET = r"""
import os, sys, time, json, statistics
os.environ.update(YOLO_OFFLINE="1", YOLO_AUTOINSTALL="0", YOLO_CONFIG_DIR=sys.argv[4])
from ultralytics import YOLO
model = YOLO(sys.argv[1])
photo, imgsz, runs = sys.argv[2], int(sys.argv[3]), int(sys.argv[5])
for _ in range(2):
    model.predict(photo, imgsz=imgsz, device="cpu", verbose=False)
times = []
for _ in range(runs):
    t = time.perf_counter()
    model.predict(photo, imgsz=imgsz, device="cpu", verbose=False)
    times.append(time.perf_counter() - t)
print(json.dumps({"p50_s": statistics.median(times), "runs": runs}))
"""


def speed(detector: OnnxDetector, photo: Path, runs: int, torch_weights: Path | None,
          torch_python: Path) -> dict:
    """Warm p50 of detect_photo on `photo` (decode included); ultralytics predict alongside."""
    for _ in range(2):
        detect_corners(photo, detector)
    times = []
    fine_before, roi_before, flat_before = detector.fine_runs, detector.roi_runs, detector.flat_runs
    for _ in range(runs):
        t = time.perf_counter()
        corners, ph = detect_corners(photo, detector)
        times.append(time.perf_counter() - t)
    out = {"photo": str(photo), "size": f"{ph.width}x{ph.height}", "corners": len(corners),
           "passes_long_side": list(detector.long_sides), "runs": runs,
           "small_index_pass": detector.fine_runs > fine_before,
           "finest_pass_on_pieces": detector.roi_runs > roi_before,
           "looked_at_flat": detector.flat_runs > flat_before,
           "p50_s": round(statistics.median(times), 3),
           "p90_s": round(float(np.percentile(times, 90)), 3)}
    if torch_weights and torch_weights.exists() and torch_python.exists():
        imgsz = max(detector.long_sides)
        res = subprocess.run([str(torch_python), "-c", _TORCH_SNIPPET, str(torch_weights),
                              str(photo), str(imgsz), str(ROOT / "build" / "ultralytics-config"),
                              str(runs)], capture_output=True, text=True, cwd=ROOT)
        if res.returncode == 0:
            t = json.loads(res.stdout.strip().splitlines()[-1])
            out["ultralytics_predict_p50_s"] = round(t["p50_s"], 3)
            out["ultralytics_imgsz"] = imgsz
            out["speedup_vs_ultralytics"] = round(t["p50_s"] / out["p50_s"], 2)
        else:
            out["ultralytics_error"] = res.stderr.strip().splitlines()[-1:]
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the selected parts of the benchmark and print a JSON report."""
    ap = argparse.ArgumentParser(prog="bench/bench_detector.py")
    ap.add_argument("--models", type=Path, default=ROOT / "models")
    ap.add_argument("--scenes", type=Path, default=ROOT / "build" / "scenes" / "test")
    ap.add_argument("--limit", type=int, default=0, help="at most this many scenes")
    ap.add_argument("--real", type=Path,
                    default=Path("/work/shared/data/real-photos/edje-pinochle/images/test"))
    ap.add_argument("--photo", type=Path, nargs="+", default=None,
                    help="12 MP JPEG(s) for the speed test (bench.speed_photos makes five)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--torch-weights", type=Path, default=ROOT / "runs" / "detector-shipped.pt")
    ap.add_argument("--torch-python", type=Path, default=ROOT / ".venv-train" / "bin" / "python")
    ap.add_argument("--parts", default="synthetic,real,speed")
    ap.add_argument("--turn", type=int, default=0, choices=(0, 90, 180, 270),
                    help="turn the synthetic photos counter-clockwise first (a photo from another side)")
    ap.add_argument("--conf", type=float, default=None, help="override the detection threshold")
    ap.add_argument("--min-confidence", type=float, default=None,
                    help="override the final confidence gate")
    ap.add_argument("--long-sides", default=None,
                    help="override the detector passes' long sides, e.g. 1600,640")
    ap.add_argument("--reader-turns", default=None,
                    help="override the reader's test-time quarter turns, e.g. 0 or 0,1,2,3")
    ap.add_argument("--reread-below", type=float, default=None,
                    help="read again turned only the crops read with a rank probability under this")
    ap.add_argument("--upright", type=int, default=None, choices=(0, 1),
                    help="override the sideways-photo re-pass (1 on, 0 off)")
    ap.add_argument("--six-nine-margin", type=float, default=None,
                    help="override the wider reread of 6/9 crops (its crop margin; 0 = off)")
    ap.add_argument("--fine-below", type=float, default=None,
                    help="override the small-index pass trigger (median sure box side, px; 0 = off)")
    ap.add_argument("--three-ink", type=int, default=None, choices=(0, 1),
                    help="override settling red against black threes by the ink (1 on, 0 off)")
    ap.add_argument("--wide-direction", default=None,
                    help="override the ranks whose direction the wide look settles, e.g. 6,9,8 "
                         "('' = off)")
    ap.add_argument("--refine-again", default=None,
                    help="override the ranks whose box the refiner moves again after reading, "
                         "e.g. JK ('' = off)")
    ap.add_argument("--keystone", type=float, default=0.0,
                    help="warp each scene as seen from a seat: its far edge this share of "
                         "its width (0 = as rendered, from above)")
    ap.add_argument("--roi-margin", type=float, default=None,
                    help="override where the finest pass runs: around the coarse pass's boxes, "
                         "this many of their long sides (0 = the whole photo)")
    ap.add_argument("--half-turn", default=None,
                    help="override which passes also run on their image turned half round "
                         "(comma-separated of coarse,finest,fine; '' = none)")
    ap.add_argument("--real-step", type=int, default=1, help="use every k-th real photo")
    ap.add_argument("--sweep", default="", help="comma-separated confidence gates to report")
    args = ap.parse_args(argv)

    parts = set(args.parts.split(","))
    report: dict = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                "processor": platform.processor() or platform.machine(),
                                "load_avg_at_start": [round(x, 2) for x in os.getloadavg()]},
                    "command": " ".join([Path(sys.executable).name, *sys.argv])}
    turns = tuple(int(k) for k in args.reader_turns.split(",")) if args.reader_turns else None
    sides = tuple(int(k) for k in args.long_sides.split(",")) if args.long_sides else None
    detector = OnnxDetector(args.models, conf=args.conf, min_confidence=args.min_confidence,
                            reader_turns=turns, long_sides=sides, reread_below=args.reread_below,
                            upright=None if args.upright is None else bool(args.upright),
                            six_nine_margin=args.six_nine_margin, fine_below=args.fine_below,
                            wide_direction=None if args.wide_direction is None else tuple(
                                r for r in args.wide_direction.split(",") if r),
                            three_ink=None if args.three_ink is None else bool(args.three_ink),
                            roi_margin=args.roi_margin,
                            refine_again=None if args.refine_again is None else tuple(
                                r for r in args.refine_again.split(",") if r),
                            half_turn=None if args.half_turn is None else tuple(
                                p for p in args.half_turn.split(",") if p))
    # the files this runtime loads (with 8-bit readers, not their float files beside them)
    loaded = [Path(x._model_path) for x in (detector._det, *detector._readers, detector._sn,
                                            detector._dir, detector._ref) if x is not None]
    report["model_files_mb"] = {p.name: round(p.stat().st_size / 1e6, 2) for p in loaded}
    report["model_total_mb"] = round(sum(p.stat().st_size for p in loaded) / 1e6, 2)
    report["int8"] = detector.int8
    report["reader_turns"] = list(detector.reader_turns)
    report["reread_below"] = detector.reread_below
    report["long_sides"] = list(detector.long_sides)
    report["upright"] = detector.upright
    report["six_nine_margin"] = detector.six_nine_margin
    report["wide_direction"] = list(detector.wide_direction)
    report["three_ink"] = detector.three_ink
    report["joker_word"] = detector.joker_word
    report["refine_again"] = [INDEX_CLASSES[k] for k in detector.refine_again]
    report["fine"] = {"below": detector.fine_below, "target": detector.fine_target,
                      "max_side": detector.fine_max_side,
                      "reduced_upscale": detector.fine_reduced_upscale,
                      "two_prints": detector.fine_two_prints}
    report["half_turn"] = sorted(detector.half_turn)
    report["roi"] = {"margin": detector.roi_margin, "max_area": detector.roi_max_area,
                     "min_side": detector.roi_min_side, "floor": detector.roi_floor}
    sweep = tuple(float(t) for t in args.sweep.split(",") if t)
    if "synthetic" in parts and args.scenes.is_dir():
        report["synthetic"] = evaluate_synthetic(detector, args.scenes, args.limit, args.turn,
                                                 args.keystone)
    if "real" in parts and args.real.is_dir():
        report["real"] = evaluate_real(detector, args.real, args.real_step, sweep)
    if "speed" in parts:
        photos = list(args.photo or [])
        if not photos:
            photos = sorted(args.scenes.rglob("scene_*.jpg"))[:1]
        if photos:  # the first photo's figures stay at the top, as before more were timed
            report["speed"] = speed(detector, photos[0], args.runs, args.torch_weights,
                                    args.torch_python)
        if len(photos) > 1:
            each = [report["speed"]] + [speed(detector, p, args.runs, args.torch_weights,
                                              args.torch_python) for p in photos[1:]]
            report["speed"]["photos"] = [
                {k: e[k] for k in ("photo", "size", "corners", "small_index_pass", "looked_at_flat", "p50_s",
                                   "ultralytics_predict_p50_s", "speedup_vs_ultralytics") if k in e}
                for e in each]
            report["speed"]["p50_s_median_over_photos"] = round(
                statistics.median(e["p50_s"] for e in each), 3)
            report["speed"]["p50_s_worst_photo"] = max(e["p50_s"] for e in each)
    report["finest_passes_on_pieces"] = detector.roi_runs
    report["photos_looked_at_flat"] = detector.flat_runs
    report["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

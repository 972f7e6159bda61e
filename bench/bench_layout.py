"""Benchmark of the layout step: corners -> melds, teams and the deal score.

Measures, over the complete scenes (the whole table in the photo) of scene ground truth (a directory of `scene_*.json`, e.g. the data engine's
test split, or scenes generated on the fly with `datasets.scene.make_scene`):

- meld exact: a true meld has a predicted meld of the same team and rank with the same
  number of naturals and of wilds (reported with and without squared-up canastas, whose
  count the photo cannot show: the player counts them; `meld_exact_squared_counted` takes
  a squared canasta as right where it is read squared, with the count the player types in;
  and over the readable melds, those whose every card shows an index, which is what the
  layout step alone decides);
- deal score exact: the predicted layout, given the true went-out, concealed and hand,
  scores both teams' deal exactly as the true layout does (raw, and with the player's
  count of each flagged squared canasta filled in; also over the readable scenes, where
  every meld card and red three shows an index);
- readable fraction: the share of scenes (`readable_scene_fraction`) and of plain melds
  (`readable_meld_fraction`) whose every card shows a readable index. The rest cannot
  be scored from any corners (clutter over a card's only index), so the readable
  figures are what the layout step is judged by;
- squared-up canastas: the share whose guess is exact (`squared_default_guess_exact`) and
  the share read squared and natural or mixed as they are (`squared_kind_right`: the
  500 or 300 bonus), from the top card's ink measured on the photo as `scan` does
  (`--ink 0`: not measured, every squared canasta guessed natural);
- time of `read_table` per scene (p50 / p95, warm), and on the detector's corners that of
  `scanner.likeness.lift_lookalikes` before it (`lookalikes_ms_*`; `--lookalikes 0`: off),
  which `scan_photo` runs between the two.

`--turn 90` (180, 270) turns every scene counter-clockwise first, as if photographed from
another side of the table (boxes, directions and, for the detector, the photo). From the
far side (180) the teams swap; from the left or right (90, 270) nothing in the photo tells
which team is "team 0", so each scene is scored with the team naming that matches more
melds (one naming for the whole scene). `--keystone 0.5` warps every scene as if shot from
a player's seat, the far edge of the table half the near one's width.

Corner sources: `gt` (perfect corners), `noisy` (box/angle noise, dropped and misread
corners), `detector` (the ONNX model on the rendered photos; needs `--scenes-dir` with
images and a model in `models/`).

    python -m bench.bench_layout --generate 200 --seed 7 --source gt noisy
    python -m bench.bench_layout --scenes-dir build/data/test --source gt noisy detector
"""

from __future__ import annotations

import argparse
import copy
import functools
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from datasets.groundtruth import (
    corners_from_scene,
    keystone_scene,
    meld_readable,
    scene_readable,
    seat_photo,
    turn_scene,
)
from scanner.corners import Corners
from scanner.reconstruct import (
    LAYOUT_FAINT_CONFIDENCE,
    LAYOUT_MIN_CONFIDENCE,
    LAYOUT_SUPPORTED_CONFIDENCE,
    LAYOUT_TILTED_CONFIDENCE,
    TableReading,
    read_table,
)

NOISY = {"noise": 0.05, "angle_noise": 5.0, "dropout": 0.02, "misread": 0.01}


def load_scenes(scenes_dir: Path | None, generate: int, seed: int,
                limit: int | None) -> list[tuple[dict, Path | None]]:
    """Scene JSONs (with the photo path when there is one) from a directory or the generator."""
    if scenes_dir is not None:
        files = sorted(scenes_dir.rglob("scene_*.json"))[:limit]
        out = []
        for f in files:
            try:
                scene = json.loads(f.read_text())
            except json.JSONDecodeError:
                continue  # still being written by a running build
            photo = f.parent / scene.get("image", {}).get("file", "")
            out.append((scene, photo if photo.is_file() else None))
        return out
    from datasets.scene import make_scene

    rng = np.random.default_rng(seed)
    return [(make_scene(rng, split="test").to_json(), None) for _ in range(generate)]


def swap_teams(scene: dict) -> dict:
    """`scene` with its two teams' names exchanged (melds and layout)."""
    out = copy.deepcopy(scene)
    for m in out["melds"]:
        m["team"] = 1 - m["team"]
    out["layout"]["teams"] = out["layout"]["teams"][::-1]
    return out


def meld_key(team: int, rank: str) -> tuple[int, str]:
    return team, rank


def true_melds(scene: dict) -> dict[tuple[int, str], dict]:
    return {meld_key(m["team"], m["rank"]): m for m in scene["melds"]}


def compare_melds(scene: dict, reading: TableReading) -> Counter:
    """Counts of exact / wrong melds by kind (plain, squared), plus extra predicted melds."""
    truth = true_melds(scene)
    pred = {meld_key(m.team, m.rank): m for m in reading.melds}
    counts: Counter = Counter()
    for key, m in truth.items():
        kind = "squared" if m["squared"] else "plain"
        p = pred.get(key)
        ok = p is not None and p.naturals == m["naturals"] and len(p.wilds) == len(m["wilds"])
        counts[f"{kind}_total"] += 1
        counts[f"{kind}_exact"] += ok
        if kind == "plain" and meld_readable(scene, m):
            counts["readable_total"] += 1
            counts["readable_exact"] += ok
        if kind == "squared":
            # read as a squared-up canasta: the review asks the player for its count
            flagged = p is not None and p.squared
            counts["squared_flagged"] += flagged
            # natural or mixed: the canasta bonus (500 or 300)
            counts["squared_kind_right"] += flagged and (not p.wilds) == (not m["wilds"])
        if not ok:
            counts[f"why:{kind}:" + _why(m, p)] += 1
    extra = sum(1 for key in pred if key not in truth)
    counts["extra_melds"] += extra
    if extra:
        # a meld read where the team has none of that rank (a pile, stray cards)
        counts["why:extra_meld"] += extra
    return counts


def red_three_misses(scene: dict, reading: TableReading) -> Counter:
    """`why:red_threes`: the teams whose red threes are miscounted (a red three missed, or a
    three read red that is not: 100 points each, 200 each when a team has all four)."""
    wrong = sum(reading.red_threes[t] != team["red_threes"]
                for t, team in enumerate(scene["layout"]["teams"]))
    return Counter({"why:red_threes": wrong} if wrong else {})


def _why(true: dict, pred) -> str:
    if pred is None:
        return "missing"
    if pred.squared != true["squared"]:
        return "squared_mismatch"
    if pred.naturals < true["naturals"]:
        return "naturals_short"
    if pred.naturals > true["naturals"]:
        return "naturals_over"
    return "wilds_wrong"


def predicted_layout(scene: dict, reading: TableReading, player_counts_squared: bool) -> dict:
    """The predicted layout with the true went-out, concealed, hand, rules and totals."""
    layout = reading.layout_json()
    truth = scene["layout"]
    out = {"rules": truth.get("rules", {}), "teams": []}
    true_sq = {meld_key(m["team"], m["rank"]): m for m in scene["melds"] if m["squared"]}
    for t, team in enumerate(layout["teams"]):
        true_team = truth["teams"][t]
        melds = []
        for m in team["melds"]:
            if player_counts_squared and isinstance(m, dict):
                real = true_sq.get(meld_key(t, m["rank"]))
                if real is not None:
                    m = {"rank": m["rank"], "naturals": real["naturals"], "wilds": real["wilds"]}
            melds.append(m)
        new_team = {k: v for k, v in true_team.items() if k not in ("melds", "red_threes")}
        new_team.update(melds=melds, red_threes=team["red_threes"])
        out["teams"].append(new_team)
    return out


def deal_scores(layout: dict) -> tuple[int, ...] | None:
    from scanner.deal import LayoutError
    from scanner.scoring import score_layout_json

    try:
        result = score_layout_json(layout)
    except LayoutError:
        return None
    return tuple(t["deal_score"] for t in result["teams"])


def default_gates(source: str) -> tuple[float, float | None, float | None, float | None]:
    """`read_table`'s (min_confidence, supported_confidence, tilted_confidence,
    faint_confidence) for a corner source: scan's gates for the detector's corners, none
    for the scenes' own (every corner sure)."""
    if source == "detector":
        return (LAYOUT_MIN_CONFIDENCE, LAYOUT_SUPPORTED_CONFIDENCE, LAYOUT_TILTED_CONFIDENCE,
                LAYOUT_FAINT_CONFIDENCE)
    return 0.0, None, None, None


# The run-time code that turns a photo into corners: cached corners belong to it as much as
# to the model files (a change to either must not be measured on the other's corners).
RUNTIME_SOURCES = ("classes.py", "corners.py", "detector.py", "edges.py", "imageio.py",
                   "ink.py", "joker.py", "perspective.py")


def _model_key(model_dir: Path) -> str:
    """Hash of the model files and settings, and of the run-time code that runs them:
    cached corners belong to one model and one runtime."""
    digest = hashlib.sha256()
    for f in sorted(model_dir.glob("*.onnx")) + sorted(model_dir.glob("*.json")):
        digest.update(f.name.encode() + f.read_bytes())
    scanner_dir = Path(__file__).resolve().parent.parent / "scanner"
    for name in RUNTIME_SOURCES:
        digest.update(name.encode() + (scanner_dir / name).read_bytes())
    meta = model_dir / "detector.json"
    if meta.is_file() and json.loads(meta.read_text()).get("int8"):
        from scanner.detector import use_8_bits

        # which readers run depends on the CPU (and CANASTA_INT8): their corners differ
        digest.update(b"int8" if use_8_bits() else b"float")
    return digest.hexdigest()[:12]


def cache_name(photo: Path, turn: int = 0, keystone: float = 0.0) -> str:
    """File name of a photo's cached corners: its folder, name and a hash of its bytes.

    Scene folders of different builds share names (every build has a `val/scene_000008.jpg`),
    and a folder rebuilt with another engine keeps them: only the bytes tell photos apart.
    """
    digest = hashlib.sha1(photo.read_bytes()).hexdigest()[:10]
    return (f"{photo.parent.name}-{photo.stem}-{digest}{f'-t{90 * turn}' if turn else ''}"
            f"{f'-k{keystone:g}' if keystone else ''}.npz")


def _load_cached(path: Path) -> Corners:
    with np.load(path) as z:
        return Corners(z["boxes"], z["class_ids"], z["confidence"], z["angle"], z["rank_confidence"])


def photo_view(scene: dict, photo: Path | None, turn: int = 0, keystone: float = 0.0
               ) -> tuple[dict, Callable[[], bytes] | None]:
    """`scene` as photographed turned `turn` quarters and, with `keystone`, from a seat (its
    far edge that much of the near one), and the callable that makes that photo from a seat
    (once, and only if asked; None from above)."""
    if turn:
        scene = turn_scene(scene, turn)
    if not keystone:
        return scene, None
    scene, warp = keystone_scene(scene, keystone)
    return scene, functools.cache(functools.partial(seat_photo, photo, turn, warp))


def corners_for(source: str, scene: dict, photo: Path | None, rng: np.random.Generator,
                detector=None, cache: Path | None = None, turn: int = 0,
                floor: float | None = None, keystone: float = 0.0,
                seat: Callable[[], bytes] | None = None):
    """Corners of `scene` (already turned by `turn` quarter turns: the photo is turned here;
    with `keystone`, also seen from a seat: `seat()` gives that photo)."""
    if source == "gt":
        return corners_from_scene(scene, rng, shuffle=True)
    if source == "noisy":
        return corners_from_scene(scene, rng, shuffle=True, **NOISY)
    if source == "detector":
        from scanner.detector import detect_corners
        from scanner.imageio import load_photo

        cached = None
        if cache is not None:
            cached = cache / cache_name(photo, turn, keystone)
            if cached.is_file():
                return _load_cached(cached)
        if seat is not None:
            src = seat()
        else:
            src = load_photo(photo, long_side=detector.decode_long_side).turned(turn) if turn else photo
        corners, _ = detect_corners(src, detector, min_confidence=floor)
        if cached is not None:
            np.savez(cached, boxes=corners.boxes, class_ids=corners.class_ids,
                     confidence=corners.confidence, angle=corners.angle,
                     rank_confidence=corners.rank_confidence)
        return corners
    raise ValueError(f"unknown source {source!r}")


def _ink(photo: Path, corners: Corners, turn: int, seat: Callable[[], bytes] | None = None,
         view=None):
    """The ink colour of corners, measured when asked as `scan_photo` measures it: on the
    photo as the detector decoded it (`view`, `_detector_view`), else on the photo itself
    (`seat()`'s when seen from a seat)."""
    from scanner.imageio import load_photo
    from scanner.ink import corner_ink

    def pixels() -> tuple[np.ndarray, float]:
        if view is not None:
            return view.rgb, view.scale
        if seat is not None:  # turned and warped already
            src = load_photo(seat())
        else:
            src = load_photo(photo).turned(turn) if turn else load_photo(photo)
        return src.rgb, src.scale
    return corner_ink(corners.boxes, pixels)


def _detector_view(photo: Path, turn: int, detector, seat: Callable[[], bytes] | None = None):
    """The photo decoded as the detector decodes it (`scanner.imageio.Photo`): `seat()`'s
    when seen from a seat (turned and warped already), else the photo turned by `turn`."""
    from scanner.imageio import load_photo

    src = load_photo(seat() if seat is not None else photo, long_side=detector.decode_long_side)
    return src.turned(turn) if turn and seat is None else src


def _look(view, detector):
    """What the detector's readers read in boxes (photo pixels) of the decoded photo `view`
    (`_detector_view`), as `scan_photo` lets the layout ask them."""
    from scanner.scan import index_look

    return index_look(detector, view.rgb, view.scale)


def _find(view, detector):
    """Where the detector finds an index near boxes (photo pixels) of the decoded photo
    `view`, and what its readers read there, as `scan_photo` lets the layout ask it."""
    from scanner.scan import index_find

    return index_find(detector, view.rgb, view.scale)


def _lookalikes(view, corners: Corners,
                floor: float = LAYOUT_SUPPORTED_CONFIDENCE) -> tuple[Corners, float]:
    """`corners` with the unsure ones that look like the photo's sure ones lifted, on the
    photo decoded as the detector decodes it (`view`, `_detector_view`), from the floor
    `scan_photo` asks the detector for (a cache may hold corners under it, which scan never
    sees), and the lift's time in ms (the decode is the detector's)."""
    from scanner.likeness import lift_lookalikes

    start = time.perf_counter()
    lifted = lift_lookalikes(corners, view.rgb, view.scale, floor=floor)
    return lifted, (time.perf_counter() - start) * 1000


def run(source: str, scenes: list[tuple[dict, Path | None]], seed: int,
        verbose: bool, layout_gate: float = 0.0, cache_root: Path | None = None,
        supported_gate: float | None = None, turn: int = 0,
        models: Path | None = None, detect_floor: float | None = None,
        ink: bool = True, keystone: float = 0.0, tilted_gate: float | None = None,
        lookalikes: bool = True, look: bool = True, faint_gate: float | None = None,
        find: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    # the layout's floor (the lookalikes' too) ...
    scan_floor = layout_gate if supported_gate is None else min(layout_gate, supported_gate)
    if supported_gate is None:
        faint_gate = None  # (faint corners count only beside supported ones)
    if detect_floor is None:  # ... and what scan_photo asks the detector for
        detect_floor = scan_floor if faint_gate is None else min(scan_floor, faint_gate)
    detector = None
    cache = None
    if source == "detector":
        from scanner.detector import MODELS_DIR, OnnxDetector

        models = models or MODELS_DIR
        detector = OnnxDetector(models)
        scenes = [s for s in scenes if s[1] is not None]
        if cache_root is not None:
            cache = cache_root / f"{_model_key(models)}-floor{detect_floor:g}"
            cache.mkdir(parents=True, exist_ok=True)
    totals: Counter = Counter()
    times, cpu_times, lift_times = [], [], []
    for scene, photo in scenes:
        if not scene.get("complete", True):
            # a close shot of part of the table: its layout cannot match the whole deal
            totals["skipped_incomplete"] += 1
            continue
        scene, seat = photo_view(scene, photo, turn, keystone)
        corners = corners_for(source, scene, photo, rng, detector, cache, turn, detect_floor,
                              keystone, seat)
        view = (_detector_view(photo, turn, detector, seat)
                if source == "detector" and (lookalikes or look) else None)
        if view is not None and lookalikes:
            corners, ms = _lookalikes(view, corners, scan_floor)
            lift_times.append(ms)
        size = (scene["image"]["width"], scene["image"]["height"])
        gates = {"min_confidence": layout_gate, "supported_confidence": supported_gate,
                 "tilted_confidence": tilted_gate,
                 "ink": (_ink(photo, corners, turn, seat, view)
                         if ink and photo is not None else None),
                 "look": _look(view, detector) if view is not None and look else None,
                 "faint_confidence": faint_gate,
                 "find": _find(view, detector) if view is not None and look and find else None}
        read_table(corners, size, **gates)  # warm (first-call costs are not the layout step's)
        start, cpu = time.perf_counter(), time.thread_time()
        reading = read_table(corners, size, **gates)
        times.append((time.perf_counter() - start) * 1000)
        cpu_times.append((time.thread_time() - cpu) * 1000)
        if turn == 2:
            scene = swap_teams(scene)  # from the far side, the far team faces the bottom edge
        counts = compare_melds(scene, reading)
        if turn % 2:  # from the left or right: the team naming that matches more melds
            swapped = swap_teams(scene)
            other = compare_melds(swapped, reading)
            if other["plain_exact"] + other["squared_exact"] > counts["plain_exact"] + counts["squared_exact"]:
                scene, counts = swapped, other
        counts.update(red_three_misses(scene, reading))
        totals.update(counts)
        true_score = deal_scores(scene["layout"])
        raw = deal_scores(predicted_layout(scene, reading, False))
        counted = deal_scores(predicted_layout(scene, reading, True))
        totals["scenes"] += 1
        totals["score_exact"] += raw == true_score
        totals["score_exact_counted"] += counted == true_score
        readable = scene_readable(scene)
        if readable:
            totals["readable_scenes"] += 1
            totals["readable_score_exact_counted"] += counted == true_score
        totals["score_refused"] += counted is None
        totals["has_squared"] += any(m["squared"] for m in scene["melds"])
        if verbose and counted != true_score:
            print(f"  seed {scene.get('seed')} file {scene['image'].get('file')}"
                  f"{' (readable)' if readable else ''}: "
                  f"true {true_score} got {counted}; "
                  + ", ".join(k for k in counts if k.startswith("why:")), file=sys.stderr)
    melds = totals["plain_total"] + totals["squared_total"]
    exact = totals["plain_exact"] + totals["squared_exact"]
    n = max(totals["scenes"], 1)
    return {
        "source": source, "scenes": totals["scenes"],
        "skipped_incomplete": totals["skipped_incomplete"],
        # the share of scenes (and of plain melds) whose every card shows an index a
        # detector could read: clutter over a card's only index (a finger, a pen, the
        # score pad) leaves no corners to score from, whatever the layout step does
        "readable_scene_fraction": totals["readable_scenes"] / n,
        "readable_meld_fraction": totals["readable_total"] / max(totals["plain_total"], 1),
        "melds": melds,
        "meld_exact": exact / max(melds, 1),
        "meld_exact_not_squared": totals["plain_exact"] / max(totals["plain_total"], 1),
        # every meld, a squared-up canasta right where it is read squared (its rank on its
        # team's side) and the player has typed in the count the review asks for
        "meld_exact_squared_counted":
            (totals["plain_exact"] + totals["squared_flagged"]) / max(melds, 1),
        "readable_melds": totals["readable_total"],
        "meld_exact_readable": totals["readable_exact"] / max(totals["readable_total"], 1),
        "squared_melds": totals["squared_total"],
        "squared_default_guess_exact": totals["squared_exact"] / max(totals["squared_total"], 1),
        # of the squared-up canastas, those read squared and natural or mixed as they are
        "squared_kind_right": totals["squared_kind_right"] / max(totals["squared_total"], 1),
        "extra_melds": totals["extra_melds"],
        "score_exact": totals["score_exact"] / n,
        "score_exact_squared_counted": totals["score_exact_counted"] / n,
        "readable_scenes": totals["readable_scenes"],
        "score_exact_readable_squared_counted":
            totals["readable_score_exact_counted"] / max(totals["readable_scenes"], 1),
        "score_refused": totals["score_refused"],
        "scenes_with_squared": totals["has_squared"],
        "misses": {k[4:]: v for k, v in sorted(totals.items()) if k.startswith("why:")},
        "layout_ms_p50": statistics.median(times) if times else None,
        "layout_ms_p95": float(np.percentile(times, 95)) if times else None,
        # CPU time of this thread (onnxruntime's spinning pool threads excluded): what the
        # step costs when other jobs share the cores
        "layout_cpu_ms_p50": statistics.median(cpu_times) if cpu_times else None,
        "layout_cpu_ms_p95": float(np.percentile(cpu_times, 95)) if cpu_times else None,
        # `scan_photo` lifts the detector's unsure lookalike corners before the layout
        "lookalikes_ms_p50": statistics.median(lift_times) if lift_times else None,
        "lookalikes_ms_p95": float(np.percentile(lift_times, 95)) if lift_times else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes-dir", type=Path, help="directory with scene_*.json (+ photos)")
    parser.add_argument("--generate", type=int, default=200, help="scenes to generate if no dir")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--source", nargs="+", default=["gt", "noisy"],
                        choices=["gt", "noisy", "detector"])
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--layout-gate", type=float, default=None,
                        help="read_table(min_confidence=): corners below it are not used "
                             "(default: scan's LAYOUT_MIN_CONFIDENCE for detector corners, else 0)")
    parser.add_argument("--supported-gate", type=float, default=None,
                        help="read_table(supported_confidence=): corners from it up to the "
                             "layout gate are used where a line of surer cards supports them "
                             "(default: scan's LAYOUT_SUPPORTED_CONFIDENCE for detector "
                             "corners; a value at or over the layout gate turns it off)")
    parser.add_argument("--tilted-gate", type=float, default=None,
                        help="read_table(tilted_confidence=): the gate on a photo found "
                             "tilted (from a seat) where lower than the layout gate "
                             "(default: scan's LAYOUT_TILTED_CONFIDENCE for detector corners; "
                             "a value at or over the layout gate turns it off)")
    parser.add_argument("--faint-gate", type=float, default=None,
                        help="read_table(faint_confidence=): corners from it up to the "
                             "supported gate are used where they take an empty place of a line "
                             "of their rank (default: scan's LAYOUT_FAINT_CONFIDENCE for "
                             "detector corners; 1 turns it off)")
    parser.add_argument("--detect-floor", type=float, default=None,
                        help="ask the detector for corners down to this confidence (default: "
                             "the lower of the two gates, as scan does; set it low once to "
                             "sweep the gates over one cached detection)")
    parser.add_argument("--models", type=Path, default=None,
                        help="model folder for the detector source (default: the bundled models/)")
    parser.add_argument("--turn", type=int, default=0, choices=(0, 90, 180, 270),
                        help="turn every scene counter-clockwise first (a photo from another side)")
    parser.add_argument("--keystone", type=float, default=0.0, metavar="FAR",
                        help="warp every scene as if photographed from a player's seat, the far "
                             "edge FAR of the near one's width (boxes, directions and, for the "
                             "detector, the photo: datasets.groundtruth.keystone_scene)")
    parser.add_argument("--corners-cache", type=Path,
                        help="keep the detector's corners per photo under DIR/<model hash>/ and "
                             "reuse them (layout experiments without re-running the model)")
    parser.add_argument("--ink", type=int, default=1, choices=(0, 1),
                        help="measure each corner's ink colour on the photo, as scan does "
                             "(a squared-up canasta's top card: natural or mixed); 0 = off")
    parser.add_argument("--lookalikes", type=int, default=1, choices=(0, 1),
                        help="lift the detector's unsure corners that look like the photo's "
                             "sure ones of their rank, as scan does (scanner.likeness); 0 = off")
    parser.add_argument("--look", type=int, default=1, choices=(0, 1),
                        help="let the layout ask the detector's readers about hidden cards' "
                             "index places, as scan does (read_table(look=)); 0 = off")
    parser.add_argument("--find", type=int, default=1, choices=(0, 1),
                        help="let the layout ask the detector to find an index near a line's "
                             "empty place, as scan does (read_table(find=)); 0 = off")
    args = parser.parse_args(argv)
    scenes = load_scenes(args.scenes_dir, args.generate, args.seed, args.limit)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {len(scenes)} scenes from {args.scenes_dir or 'datasets.scene.make_scene'}; "
          f"machine: {platform.machine()} {os.cpu_count()} cores, load {load:.1f}, "
          f"python {platform.python_version()}")
    for source in args.source:
        gate, supported, tilted, faint = default_gates(source)
        if args.layout_gate is not None:
            gate = args.layout_gate
        if args.supported_gate is not None:
            supported = args.supported_gate
        if args.tilted_gate is not None:
            tilted = args.tilted_gate
        if args.faint_gate is not None:
            faint = args.faint_gate
        result = run(source, scenes, args.seed, args.verbose, gate, args.corners_cache,
                     supported, args.turn // 90, args.models, args.detect_floor,
                     bool(args.ink), args.keystone, tilted, bool(args.lookalikes),
                     bool(args.look), faint, bool(args.find))
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

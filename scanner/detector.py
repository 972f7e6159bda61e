"""The corner detector at run time: two small ONNX models run with onnxruntime.

Stage 1 is a one-class detector ("a printed rank index is here", a YOLO net trained in
`datasets/train.py`): a coarse pass on the photo rescaled to about 1,120 px on the long
side (close-ups' indices are too big at the finer scale), then a pass at about 1,600 px on
the parts of the photo around what the coarse pass found (a table's cards lie in a few
groups; see `_finest_pass`); boxes from all passes are merged with our own numpy NMS.
Stage 2 cuts each detected index out of the photo at the best resolution decoded and a
small CNN (`datasets/train_classifier.py`) reads its rank (15 classes, or "not an index")
and the direction its card's top points. Where the CPU multiplies 8-bit numbers exactly
(x86 VNNI), the readers and the box refiner run as the 8-bit networks `detector.json`'s
`int8` names (`use_8_bits`): the same readings within noise, 2.5x faster.
Splitting "where" from "what" is what lets a net trained from scratch on two CPU cores
converge (see models/MODEL_CARD.md). No torch here: numpy, OpenCV, onnxruntime only.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import cv2
import numpy as np

from scanner.classes import CLASS_ID, INDEX_CLASSES
from scanner.corners import Corners, long_sides, print_sizes, root_areas
from scanner.edges import card_edge_angles
from scanner.imageio import MAX_BYTES, MAX_PIXELS, Photo, load_photo
from scanner.ink import ink_colours
from scanner.joker import joker_index, joker_width, word_ends
from scanner.perspective import flatten_boxes, flattening_of_boxes, homography_map, moved_angles

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
META_FILE = "detector.json"

# Crop geometry shared with the classifier's training (datasets/train_classifier.py): a
# square around the box centre, CROP_MARGIN times the box's longer side, resized to
# CROP_SIZE pixels. Changing either means retraining the classifier.
CROP_SIZE = 40
CROP_MARGIN = 1.3

PAD_VALUE = 114  # the grey ultralytics letterboxes with, so padding looks like training


class ModelNotFound(RuntimeError):
    """The ONNX model files are missing from the model directory."""


class SettingError(ValueError):
    """A run-time setting from the environment that the detector cannot take."""


# `OnnxDetector.find_near`: the window around a place the layout expects an index (its
# half side, in the guessed box's long sides), the size the box's long side is scaled to
# there (pixels: the small-index pass's `fine_target`), and how far the found box's centre
# may lie from the guessed one's (long sides). Test deals 230 -> 231, t4 604 -> 605, val
# the same with meld exact 87.00 -> 87.06% (docs/LAYOUT.md, session 56).
FIND_WINDOW = 2.0
FIND_SIDE = 28.0
FIND_REACH = 0.6


@runtime_checkable
class Detector(Protocol):
    """Anything that finds rank corners in an RGB image (H,W,3 uint8), in its pixels."""

    def detect(self, rgb: np.ndarray, min_confidence: float | None = None,
               full: Callable[[], np.ndarray] | None = None) -> Corners:
        """Corners found in `rgb`, boxes in `rgb` pixels; with `min_confidence`, none
        under it (None: the detector's own gate). `full`, when `rgb` is a reduced decode,
        gives the photo's full-resolution pixels on demand (a detector may ignore it)."""
        ...


def _decoded(out: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Boxes (xyxy, the net's input pixels) and scores >= `floor` of the detector net's
    output for one image."""
    if out.shape[-1] == 6 and out.shape[0] != 6:  # end-to-end head: (K, x1 y1 x2 y2 score cls)
        boxes, scores = out[:, :4], out[:, 4]
    else:  # raw head: (4 + C, N) with cx cy w h and per-class scores
        scores = out[4:].max(axis=0)
        cx, cy, bw, bh = out[:4]
        boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=1)
    keep = scores >= floor
    return boxes[keep].astype(np.float32, copy=False), scores[keep].astype(np.float32, copy=False)


def box_iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """IoU of one xyxy box against (N,4) xyxy boxes; `box` (M,1,4) gives every pair, (M,N)."""
    x1 = np.maximum(box[..., 0], boxes[:, 0])
    y1 = np.maximum(box[..., 1], boxes[:, 1])
    x2 = np.minimum(box[..., 2], boxes[:, 2])
    y2 = np.minimum(box[..., 3], boxes[:, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = (box[..., 2] - box[..., 0]) * (box[..., 3] - box[..., 1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return inter / np.maximum(area + areas - inter, 1e-9)


def non_max_suppression(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float = 0.5,
                        max_detections: int = 1000) -> np.ndarray:
    """Indices of the boxes kept by greedy NMS (highest score first), class-agnostic."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    order = np.argsort(-np.asarray(scores, dtype=np.float32), kind="stable")
    keep: list[int] = []
    while order.size and len(keep) < max_detections:
        best = int(order[0])
        keep.append(best)
        rest = order[1:]
        order = rest[box_iou(boxes[best], boxes[rest]) <= iou_threshold]
    return np.asarray(keep, dtype=np.int64)


def fuse_views(boxes: np.ndarray, scores: np.ndarray, other: np.ndarray,
               other_scores: np.ndarray, same: float) -> tuple[np.ndarray, np.ndarray]:
    """The boxes of two views of one image (xyxy, the same pixels) as one list: a box of
    `other` overlapping one of `boxes` by IoU `same` or more is that index again, so the
    pair becomes one box, where the two agree weighted by score, at the better score; the
    rest of both views are kept as they are."""
    keep = np.ones(len(other), bool)
    if len(boxes) and len(other):
        iou = box_iou(other[:, None], boxes)
        nearest = iou.argmax(axis=1)
        pairs = np.flatnonzero(iou[np.arange(len(other)), nearest] >= same)
        if len(pairs):
            a, wa, wb = nearest[pairs], scores[nearest[pairs]], other_scores[pairs]
            boxes, scores = boxes.copy(), scores.copy()
            boxes[a] = (boxes[a] * wa[:, None] + other[pairs] * wb[:, None]) / (wa + wb)[:, None]
            scores[a] = np.maximum(wa, wb)
            keep[pairs] = False
    return np.concatenate([boxes, other[keep]]), np.concatenate([scores, other_scores[keep]])


def crop_geometry(boxes: np.ndarray, margin: float = CROP_MARGIN
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Left, top and side (whole pixels) of the square crop `crop_indices` cuts around
    each xyxy box: `margin` times the box's longer side, centred on the box."""
    b = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    side = np.maximum(np.round(np.maximum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]) * margin), 2)
    x0 = np.round((b[:, 0] + b[:, 2] - side) / 2)
    y0 = np.round((b[:, 1] + b[:, 3] - side) / 2)
    return x0.astype(np.int64), y0.astype(np.int64), side.astype(np.int64)


def crop_indices(rgb: np.ndarray, boxes: np.ndarray, size: int = CROP_SIZE,
                 margin: float = CROP_MARGIN) -> np.ndarray:
    """(N,size,size,3) uint8 square crops centred on each xyxy box (image edges replicated)."""
    h, w = rgb.shape[:2]
    lefts, tops, sides = crop_geometry(boxes, margin)
    out = np.zeros((len(sides), size, size, 3), dtype=np.uint8)
    for i, (x0, y0, side) in enumerate(zip(lefts.tolist(), tops.tolist(), sides.tolist(), strict=True)):
        xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + side, w), min(y0 + side, h)
        if xb <= xa or yb <= ya:
            continue  # box entirely outside the image: leave the crop black
        part = rgb[ya:yb, xa:xb]
        if (xb - xa, yb - ya) != (side, side):
            part = cv2.copyMakeBorder(part, ya - y0, y0 + side - yb, xa - x0, x0 + side - xb,
                                      cv2.BORDER_REPLICATE)
        interp = cv2.INTER_AREA if side > size else cv2.INTER_LINEAR
        out[i] = cv2.resize(part, (size, size), interpolation=interp)
    return out


def _rank_ids(setting: str, ranks) -> np.ndarray:
    """Class ids of the ranks a run-time setting names; an unknown rank is a clear error."""
    ranks = tuple(ranks)
    if unknown := [r for r in ranks if r not in CLASS_ID]:
        raise ValueError(f"{setting}: no such rank {unknown} (ranks: {', '.join(INDEX_CLASSES)})")
    return np.array([CLASS_ID[r] for r in ranks], int)


def _session(path: Path, threads: int, spin: bool = True):
    """An onnxruntime CPU session. `spin=False` lets its threads sleep as soon as a run
    ends: the reader's short runs come between detector passes, and its threads spinning
    on two cores slowed the next pass (a 12 MP photo 0.35 -> 0.32 s without it)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    if not spin:
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), sess_options=opts,
                                providers=["CPUExecutionProvider"])


def cpu_multiplies_8_bits(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU has x86's VNNI instructions (`avx512_vnni` or `avx_vnni` in
    `cpuinfo`'s flags): there onnxruntime multiplies 8-bit numbers exactly. Without them
    (older x86, or a system with no `cpuinfo`) its 8-bit products can saturate and read
    worse than measured, so the float networks run."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool({"avx512_vnni", "avx_vnni"} & set(line.partition(":")[2].split()))
    return False


def use_8_bits() -> bool:
    """Whether the 8-bit networks `detector.json` names under `int8` run: env
    `CANASTA_INT8` 0 (never) or 1 (always), else where `cpu_multiplies_8_bits`."""
    setting = os.environ.get("CANASTA_INT8", "").strip()
    if setting in ("0", "1"):
        return setting == "1"
    if setting:
        raise SettingError(f"CANASTA_INT8 is 0, 1 or unset, not {setting!r}")
    return cpu_multiplies_8_bits()


def _crop_model(path_of: Callable[[str], Path], meta: dict, key: str, threads: int):
    """(session, crop size, crop margin) of an optional crop model (a wide reader, the box
    refiner) detector.json names under `key`, or (None, 0, 0.0) when it names none; a named
    file that is missing is an error. `path_of` gives the file that runs for a named one."""
    entry = meta.get(key)
    if not entry:
        return None, 0, 0.0
    path = path_of(entry["file"])
    if not path.is_file():
        raise ModelNotFound(f"model file {path} is missing")
    return _session(path, threads, spin=False), int(entry["crop_size"]), float(entry["crop_margin"])


def _mean_direction(back: np.ndarray, weights=None) -> np.ndarray:
    """The mean of (turns, N) directions in radians, as unit vectors (each turn counting its
    `weights`, default alike): (N,) degrees."""
    w = np.ones(len(back)) if weights is None else np.asarray(weights, np.float64)
    return np.degrees(np.arctan2(w @ np.sin(back), w @ np.cos(back)))


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class OnnxDetector:
    """Two-stage ONNX detector loaded from `model_dir` (default: the bundled `models/`).

    `models/detector.json` names the ONNX files (the detector, the reader, and the
    optional 6/9 reader, direction reader and box refiner) and the run-time settings
    (pass sizes, thresholds); keyword arguments override its thresholds.
    """

    loads = 0  # how many detectors this process has built (tests check the cache)

    def __init__(self, model_dir: str | os.PathLike | None = None, threads: int | None = None,
                 conf: float | None = None, iou: float | None = None,
                 long_sides: tuple[int, ...] | None = None,
                 min_confidence: float | None = None,
                 reader_turns: tuple[int, ...] | None = None,
                 reread_below: float | None = None,
                 upright: bool | None = None,
                 six_nine_margin: float | None = None,
                 fine_below: float | None = None,
                 six_nine_weight: float | None = None,
                 wide_direction: tuple[str, ...] | None = None,
                 refine_weight: float | None = None,
                 refine_again: tuple[str, ...] | None = None,
                 three_ink: bool | None = None,
                 roi_margin: float | None = None,
                 rescue_floor: float | None = None,
                 rescue_ranks: tuple[str, ...] | None = None,
                 half_turn: tuple[str, ...] | None = None,
                 joker_word: bool | None = None,
                 joker_width: bool | None = None,
                 word_end_below: float | None = None,
                 edge_angles: bool | None = None) -> None:
        model_dir = Path(model_dir) if model_dir is not None else MODELS_DIR
        meta_path = model_dir / META_FILE
        if not meta_path.is_file():
            raise ModelNotFound(f"no detector model in {model_dir} (missing {META_FILE})")
        self.meta = json.loads(meta_path.read_text())
        # The readers and the refiner at 8 bits (`datasets.quantize --readers`), where this
        # CPU multiplies 8-bit numbers exactly (`use_8_bits`): float file -> 8-bit file.
        self.int8 = dict(self.meta.get("int8", {}).get("files", {})) if use_8_bits() else {}

        def path_of(name: str) -> Path:  # the file that runs for one detector.json names
            return model_dir / self.int8.get(name, name)

        det_path = path_of(self.meta["detector"]["file"])
        cls_path = path_of(self.meta["classifier"]["file"])
        # More readers of the same crops (optional): every crop is read by each and their
        # readings averaged (probabilities, and directions as unit vectors).
        also_paths = [path_of(f) for f in self.meta["classifier"].get("also", ())]
        for p in (det_path, cls_path, *also_paths):
            if not p.is_file():
                raise ModelNotFound(f"model file {p} is missing")
        if threads is None:
            threads = int(os.environ.get("CANASTA_THREADS") or 0) or min(os.cpu_count() or 1, 4)
        self._det = _session(det_path, threads)
        self._readers = tuple(_session(p, threads, spin=False) for p in (cls_path, *also_paths))
        # The 6/9 reader (optional): reads a crop read as a 6 or a 9 again from a wider
        # look, trained on those two ranks only (`datasets.train_classifier --six-nine`).
        self._sn, self.sn_size, self.sn_margin = _crop_model(path_of, self.meta, "six_nine",
                                                              threads)
        # The direction reader (optional): the same network trained on every rank from a
        # wide crop (`datasets.train_classifier --direction`); see `_settle_directions`.
        self._dir, self.dir_size, self.dir_margin = _crop_model(path_of, self.meta,
                                                                 "direction", threads)
        # The box refiner (optional): where exactly the index lies in a detector's box
        # (`datasets.train_boxes`); see `_refine`.
        self._ref, self.ref_size, self.ref_margin = _crop_model(path_of, self.meta, "refiner",
                                                                 threads)
        self._det_input = self._det.get_inputs()[0].name
        # each reader session's input name, read once
        self._input = {s: s.get_inputs()[0].name
                       for s in (*self._readers, self._sn, self._dir, self._ref) if s is not None}
        run = self.meta.get("runtime", {})

        def given(value, key: str, default):  # an argument given wins over detector.json
            return run.get(key, default) if value is None else value

        self.conf = float(given(conf, "conf", 0.25))
        self.iou = float(given(iou, "iou", 0.5))
        self.long_sides = tuple(long_sides or run.get("long_sides", (1600, 640)))
        self.min_side_ratio = float(run.get("min_side_ratio", 0.0))
        self.max_upscale = float(run.get("max_upscale", 4.0))
        # Final gate on confidence = detector score x rank probability (calibrated on the
        # synthetic val split and the real photos' train folder, see MODEL_CARD.md).
        self.min_confidence = float(given(min_confidence, "min_confidence", 0.0))
        # Test-time augmentation of the reader: a crop whose rank it reads with a probability
        # under `reread_below` is read again turned by these quarter turns (0 = as is).
        self.reader_turns = tuple(int(k) % 4 for k in given(reader_turns, "reader_turns", (0,))) or (0,)
        self.reread_below = float(given(reread_below, "reread_below", 1.01))
        # A photo taken from a player's side shows the cards sideways, where the detector
        # finds fewer indices: when the first pass's sure corners mostly point sideways the
        # photo is turned a quarter and the passes run again on it (see `detect`).
        self.upright = bool(given(upright, "upright", False))
        # ... judged on the coarse pass's boxes, before the finest pass: 0 = on the finest
        # pass's (which then runs on the photo as taken too), 1 = on the coarse pass's where
        # enough of them are sure, the finest pass then running on the turned photo only,
        # 2 = as 1, and the turned photo's finest pass guided by the first coarse pass's
        # boxes turned (no second coarse pass). See `_find`.
        self.turn_early = int(run.get("turn_early", 0))
        # A photo taken from a seat shows the far cards small: where the sure boxes' sizes
        # change across the photo by this ratio or more (`scanner.perspective`), the passes
        # run again on the photo made flat around its cards (its long side at most
        # `flat_max_side`): a box found there again takes the better score, one clear of every
        # box found already joins them; 0 = off. See `_flat_look`.
        self.flat_ratio = float(run.get("flat_ratio", 0.0))
        # A milder tilt (sizes changing by `flat_small_ratio` or more) is looked at too where
        # the far indices are small: the sure boxes' 10th percentile size (the root of a box's
        # area) at most `flat_small_side` px with the photo's long side at 1,600 px, where the
        # detector misses them; 0 = off (models/MODEL_CARD.md, "The flat look from a milder
        # tilt where the far indices are small").
        self.flat_small_ratio = float(run.get("flat_small_ratio", 0.0))
        self.flat_small_side = float(run.get("flat_small_side", 0.0))
        # With `flat_full`, a photo decoded reduced is warped flat from its full-resolution
        # pixels (the far indices keep what the camera saw of them; off: 0.1-0.23 s more for
        # +0.001 mAP50 from a seat, models/MODEL_CARD.md, "Phone-size photos from a seat").
        self.flat_full = bool(run.get("flat_full", False))
        self.flat_max_side = int(run.get("flat_max_side", 3200))
        self.flat_runs = 0  # photos looked at again made flat (benchmarks report it, tests read it)
        # With `flat_read`, the boxes lying on that flat image are read there too and the two
        # readings averaged (`_flat_readings`; shipped on: from a seat val mAP50 0.8812 ->
        # 0.8854, deals val 118 -> 123, test 117 -> 127). With `flat_fuse`, a box found again
        # there surer moves towards the flat box, score-weighted (off: mAP50 0.8915, but deals
        # val 126, test 121; models/MODEL_CARD.md, session 40).
        self.flat_read = bool(run.get("flat_read", False))
        self.flat_reads = 0  # boxes read again on a flat image
        self.flat_fuse = bool(run.get("flat_fuse", False))
        # A 6 and a 9 are one glyph turned: a crop read as either is read again from a wider
        # crop (this multiple of the box, all four turns; the 6/9 reader's own crop when the
        # models have one), whose card edges and pip show which way the card lies; 0 = off.
        # See `_six_or_nine`.
        self.six_nine_margin = float(given(six_nine_margin, "six_nine_margin", 0.0))
        # With a 6/9 reader, how much its split counts against the tight crop's (0-1).
        self.six_nine_weight = float(given(six_nine_weight, "six_nine_weight", 0.5))
        # Ranks whose direction the 6/9 reader's wide look settles (its crop shows the
        # card's edges; a bare glyph alone may read turned): see `_settle_directions`.
        self.wide_direction = tuple(given(wide_direction, "wide_direction", ())) \
            if self._sn is not None or self._dir is not None else ()
        # Where the tight reading agrees with the wide look (within 45 degrees, or turned
        # round), how much the wide look's direction counts in their mean (0 = the tight
        # reading alone); see `_settle_directions`.
        self.wide_weight = float(run.get("wide_weight", 0.0))
        # Small indices: when the sure boxes of the finest pass are under `fine_below`
        # pixels (median long side), one more pass runs with them `fine_target` pixels
        # tall, from the full-resolution photo when the decode was reduced, its long side
        # at most `fine_max_side`; 0 = off. See `_fine_scale`.
        self.fine_below = float(given(fine_below, "fine_below", 0.0))
        self.fine_target = float(run.get("fine_target", 24.0))
        # ... judged on the smaller print where the sure boxes fall into two sizes (two
        # decks: a bare glyph beside another deck's large rank leaves the median large)
        self.fine_two_prints = bool(run.get("fine_two_prints", False))
        self.fine_max_side = int(run.get("fine_max_side", 3200))
        # ... from a reduced decode enlarged up to this much before the full-resolution
        # photo is decoded for it (1 = never enlarged: the full photo whenever the pass
        # needs more pixels than the reduced decode has).
        self.fine_reduced_upscale = float(run.get("fine_reduced_upscale", 1.0))
        self.fine_runs = 0  # small-index passes this detector has run (benchmarks report it)
        self.roi_runs = 0  # finest passes run on parts of the photo (benchmarks report it)
        # How far every box moves to the refiner's box before the reader reads it (0 = not
        # at all, 1 = all the way). See `_refine`.
        self.refine_weight = float(given(refine_weight, "refine_weight", 0.0)) if self._ref is not None else 0.0
        # Corners read as these ranks have their box moved again, all the way to where the
        # refiner sees the index around the moved box (a joker's box often spans its whole
        # vertical word, where the label is its first three letters). See `_refine`.
        again = _rank_ids("refine_again", given(refine_again, "refine_again", ()))
        self.refine_again = again if self._ref is not None else np.zeros(0, int)
        # A red three and a black three differ by colour only: a crop read as a three is
        # given the colour its ink shows (see `_three_colour`).
        self.three_ink = bool(given(three_ink, "three_ink", False))
        # Each direction read is turned onto the straight lines that run along its card
        # around its index (`scanner.edges.card_edge_angles`).
        self.edge_angles = bool(given(edge_angles, "edge_angles", False))
        # The finest pass only where the coarse passes saw indices: around each of their
        # boxes, `roi_margin` times its long side (0 = the whole photo), unless those
        # rectangles cover `roi_max_area` of it or the coarse passes are unsure of the
        # table (see `_finest_pass`).
        self.roi_margin = float(given(roi_margin, "roi_margin", 0.0))
        self.roi_max_area = float(run.get("roi_max_area", 0.75))
        self.roi_min_side = float(run.get("roi_min_side", 20.0))
        self.roi_floor = float(run.get("roi_floor", 0.1))
        # The small-index pass too only around what the other passes found, this many times
        # each box's long side (0 = the whole photo; see `_fine_pass`).
        self.fine_roi_margin = float(run.get("fine_roi_margin", 0.0))
        # Rescue (see `_rescue`): boxes the passes score from `rescue_floor` up to `conf`,
        # where no surer box lies, are read too; one the reader gives a rank of
        # `rescue_ranks` with `rescue_prob` or more is kept, at `rescue_score`; one read
        # under `rescue_sure_prob` (default `rescue_prob`) at `rescue_unsure_score` (default
        # `rescue_score`): low enough that `detect`'s gate leaves it out while the layout,
        # which reads corners from a lower floor, may use it where a line of cards supports
        # it. 0 = off.
        self.rescue_ranks = _rank_ids("rescue_ranks", given(rescue_ranks, "rescue_ranks", ()))
        self.rescue_floor = float(given(rescue_floor, "rescue_floor", 0.0)) if len(self.rescue_ranks) else 0.0
        self.rescue_prob = float(run.get("rescue_prob", 0.95))
        self.rescue_score = float(run.get("rescue_score", 0.35))
        self.rescue_sure_prob = float(run.get("rescue_sure_prob", self.rescue_prob))
        self.rescue_unsure_score = float(run.get("rescue_unsure_score", self.rescue_score))
        # The passes named here ("coarse", "finest", "fine") run the net on their image
        # turned half round too and keep the boxes of both views: a second look at every
        # index, upside down (cards lie both ways on a table, so the net knows both); a box
        # of each view overlapping `half_turn_same` (IoU) or more is one index. Off in the
        # shipped runtime: it read more in session 36 but costs more time than the detector
        # has (`_infer`), and on the runtime of session 46 it reads no deal more (session 48).
        self.half_turn = frozenset(given(half_turn, "half_turn", ()))
        if not self.half_turn <= PASSES:
            raise ValueError(f"half_turn names unknown passes {sorted(self.half_turn - PASSES)}"
                             f" (known: {sorted(PASSES)})")
        self.half_turn_same = float(run.get("half_turn_same", 0.3))
        # A box read as a joker that spans its whole vertical JOKER is cut to the J O K
        # the index is (`scanner.joker`).
        self.joker_word = bool(given(joker_word, "joker_word", False))
        # ... and one about as long as its J O K but wider is narrowed to its letters' ink
        # (`scanner.joker.joker_width`); joker boxes that then lie on one another are one.
        self.joker_width = bool(given(joker_width, "joker_width", False))
        # A box read under `word_end_below` whose long side is `word_end_aspect` times its
        # short one or more is read again cut to either end (`word_end_share` of it); an
        # end read as a joker with `word_end_prob` or more, and more surely than the whole
        # box was read, takes its place (see `_word_ends`). 0 = off.
        self.word_end_below = float(given(word_end_below, "word_end_below", 0.0))
        self.word_end_aspect = float(run.get("word_end_aspect", 1.8))
        self.word_end_share = float(run.get("word_end_share", 0.62))
        self.word_end_prob = float(run.get("word_end_prob", 0.8))
        self.stride = int(self.meta["detector"].get("stride", 32))
        self.crop_size = int(self.meta["classifier"].get("crop_size", CROP_SIZE))
        self.crop_margin = float(self.meta["classifier"].get("crop_margin", CROP_MARGIN))
        self.classes = tuple(self.meta["classifier"]["classes"])
        if tuple(self.classes[: len(INDEX_CLASSES)]) != INDEX_CLASSES:
            raise ModelNotFound("classifier classes do not match scanner.classes.INDEX_CLASSES")
        self._lock = threading.Lock()  # one request at a time per session pair
        type(self).loads += 1

    @property
    def _low(self) -> float:
        """The score the passes keep boxes down to: `conf`, or `rescue_floor` with the rescue on."""
        return min(self.conf, self.rescue_floor) if self.rescue_floor > 0 else self.conf

    @property
    def decode_long_side(self) -> int:
        """The smallest long side a photo must be decoded at for this detector."""
        return max(self.long_sides)

    def _scales(self, h: int, w: int) -> list[float]:
        """Pass scales: each pass brings the long side to one of `long_sides`.

        Indices are a roughly fixed fraction of a table photo, so a small photo is
        enlarged too (up to `max_upscale`): its indices are then as tall as training's.
        """
        scales: list[float] = []
        for side in sorted(self.long_sides, reverse=True):
            s = min(self.max_upscale, side / max(h, w))
            if all(abs(s - t) / t > 0.2 for t in scales):
                scales.append(s)
        return scales

    def _resize(self, rgb: np.ndarray, scale: float) -> np.ndarray:
        """`rgb` at `scale` (area-averaged), as a detector pass sees it."""
        h, w = rgb.shape[:2]
        nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
        return rgb if (nw, nh) == (w, h) else cv2.resize(rgb, (nw, nh),
                                                         interpolation=cv2.INTER_AREA)

    def _infer(self, img: np.ndarray, floor: float, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (xyxy, `img` pixels, clipped to it) and scores >= `floor` of one run of the
        detector net on `img`, padded to a multiple of the stride; for a pass `kind` in
        `half_turn`, of a second run on the padded image turned half round as well.

        A box the net misses or scores under the floor one way up is often found the other
        way up: with the finest and small-index passes doubled, unseen-design test mAP50
        0.9608 -> 0.9638 and 20 more deals of 1,344 read right (session 36), for 0.05-0.1 s a
        12 MP photo, which takes p50 over 0.5 s on a slow hour. The two views' boxes on one
        index (IoU `half_turn_same`) become one, where they agree weighted by score, at the
        better score: kept side by side, the layout counted some twice (models/MODEL_CARD.md,
        "Every pass twice" and "The detector at 8 bits, and every pass on the photo turned
        half round again")."""
        nh, nw = img.shape[:2]
        s = self.stride
        pw, ph = -(-nw // s) * s, -(-nh // s) * s
        if (pw, ph) != (nw, nh):
            img = cv2.copyMakeBorder(img, 0, ph - nh, 0, pw - nw, cv2.BORDER_CONSTANT,
                                     value=(PAD_VALUE,) * 3)
        boxes, scores = self._net(img, floor)
        if kind in self.half_turn:
            turned, turned_scores = self._net(np.ascontiguousarray(img[::-1, ::-1]), floor)
            back = np.stack([pw - turned[:, 2], ph - turned[:, 3],
                             pw - turned[:, 0], ph - turned[:, 1]], axis=1)
            boxes, scores = fuse_views(boxes, scores, back, turned_scores, self.half_turn_same)
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, nw)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, nh)
        return boxes, scores

    def _net(self, img: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (xyxy, `img` pixels) and scores >= `floor` of the net on `img` (its sides
        multiples of the stride)."""
        blob = (img.transpose(2, 0, 1)[None].astype(np.float32)) * (1 / 255)
        return _decoded(self._det.run(None, {self._det_input: blob})[0][0], floor)

    def _run_pass(self, rgb: np.ndarray, scale: float, floor: float | None,
                  kind: str) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (in `rgb` pixels) and scores (>= `floor`, default `conf`) of one detector
        pass (`kind`, see `PASSES`) at `scale`."""
        img = self._resize(rgb, scale)
        boxes, scores = self._infer(img, self.conf if floor is None else floor, kind)
        # The coarse pass is there for big indices; its small boxes are the fine pass's job.
        h, w = rgb.shape[:2]
        if self.min_side_ratio and scale < max(self._scales(h, w)):
            big = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
            keep = big >= self.min_side_ratio * max(img.shape[:2])
            boxes, scores = boxes[keep], scores[keep]
        return boxes / scale, scores

    def _finest_pass(self, rgb: np.ndarray, scale: float, scout: np.ndarray,
                     scout_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The finest pass (`scale`), run only on the rectangles of the photo around the
        coarse passes' boxes (`scout`, `rgb` pixels, scores >= `roi_floor`) when that is
        worth it; else on the whole photo.

        Each scout box marks the stride cells within `roi_margin` times its long side; the
        marked cells' connected regions, as rectangles (`roi_rectangles` merges those that
        overlap or cost little more as one), are run one by one. The whole photo runs
        when `roi_margin` is 0, when fewer than `FINE_MIN_SURE` scout boxes are sure
        (score >= `SIDEWAYS_SURE`) or their median long side at `scale` is under
        `roi_min_side` pixels (the coarse pass sees too little of such a table to say
        where its cards are not), or when the rectangles cover `roi_max_area` of the
        photo. A box within a pixel of a rectangle's edge inside the photo is cut by it
        and dropped.
        """
        sure = scout[scout_scores >= SIDEWAYS_SURE]
        if self.roi_margin <= 0 or len(sure) < FINE_MIN_SURE:
            return self._run_pass(rgb, scale, self._low, "finest")
        side = float(np.median(np.maximum(sure[:, 2] - sure[:, 0], sure[:, 3] - sure[:, 1])))
        if side * scale < self.roi_min_side:
            return self._run_pass(rgb, scale, self._low, "finest")
        img = self._resize(rgb, scale)
        boxes, scores = self._around(img, scout[scout_scores >= self.roi_floor] * scale,
                                     self.roi_margin, "finest")
        return boxes / scale, scores

    def _around(self, img: np.ndarray, boxes: np.ndarray, margin: float, kind: str
                ) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (`img` pixels) and scores >= `_low` of pass `kind` on `img`, run only on
        the rectangles around `boxes` (`img` pixels; `roi_rectangles` with `margin`) unless
        those cover `roi_max_area` of it, when it runs on the whole of `img`. A box within a
        pixel of a rectangle's edge inside `img` is cut by it and dropped."""
        nh, nw = img.shape[:2]
        s = self.stride
        cells = roi_rectangles(boxes, margin, nw, nh, s)
        if sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in cells) * s * s \
                >= self.roi_max_area * nw * nh:
            return self._infer(img, self._low, kind)
        self.roi_runs += 1
        found_boxes, found_scores = [], []
        for x0, y0, x1, y1 in cells:
            px0, py0, px1, py1 = x0 * s, y0 * s, min(x1 * s, nw), min(y1 * s, nh)
            boxes, scores = self._infer(img[py0:py1, px0:px1], self._low, kind)
            inner = np.ones(len(boxes), bool)
            for edge, at, inside in ((0, 0, px0 > 0), (1, 0, py0 > 0),
                                     (2, px1 - px0, px1 < nw), (3, py1 - py0, py1 < nh)):
                if inside:  # this edge of the piece cuts the photo
                    inner &= np.abs(boxes[:, edge] - at) > 1.0
            boxes = boxes[inner] + np.array([px0, py0, px0, py0], np.float32)
            found_boxes.append(boxes)
            found_scores.append(scores[inner])
        if not found_boxes:
            return np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
        return np.concatenate(found_boxes), np.concatenate(found_scores)

    def _passes(self, rgb: np.ndarray, scales: list[float],
                scout: tuple[np.ndarray, np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Boxes and scores of the finest pass (`_finest_pass`), then those of the coarse
        passes at `conf` or more (`rgb` pixels): the coarse boxes under it only guided the
        finest pass. With the rescue on, boxes down to `rescue_floor` (`_rescue`). `scout`:
        the coarse passes' boxes and scores (`_scout`) where they have run already."""
        coarse, coarse_scores = self._scout(rgb, scales) if scout is None else scout
        finest, finest_scores = self._finest_pass(rgb, scales[0], coarse, coarse_scores)
        sure = coarse_scores >= self._low
        return finest, finest_scores, coarse[sure], coarse_scores[sure]

    def _scout(self, rgb: np.ndarray, scales: list[float]) -> tuple[np.ndarray, np.ndarray]:
        """Boxes and scores of the coarse passes (`scales[1:]`), down to `roi_floor` when
        they guide the finest pass (`_finest_pass`), else down to `conf` (`rescue_floor` with
        the rescue on)."""
        floor = min(self._low, self.roi_floor) if self.roi_margin > 0 else self._low
        found = [self._run_pass(rgb, scale, floor, "coarse") for scale in scales[1:]]
        if not found:
            return np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
        return (np.concatenate([b for b, _ in found]).astype(np.float32).reshape(-1, 4),
                np.concatenate([s for _, s in found]).astype(np.float32))

    def locate(self, rgb: np.ndarray, full: Callable[[], np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Stage 1 only: merged index boxes (xyxy, `rgb` pixels) and their scores; `full`
        gives the photo at full resolution when `rgb` is a reduced decode (`detect`)."""
        boxes, scores, *_ = self._find(_as_rgb(rgb), full, upright=False)
        sure = scores >= self.conf
        return boxes[sure], scores[sure]

    def _fine_scale(self, boxes: np.ndarray, scores: np.ndarray, scales: list[float]) -> float:
        """Scale (of `rgb`) of the extra pass for small indices, or 0 for none.

        Judged on the finest pass's `boxes` (in `rgb` pixels): with at least
        `FINE_MIN_SURE` sure ones (score >= `SIDEWAYS_SURE`) whose median long side, in
        that pass's pixels, is under `fine_below`, the pass brings that median to
        `fine_target` (`_fine_pass` caps it). Held-out test photos whose indices are 10-14
        px at 1,600 px (a bare rank glyph, no pip under it, on a 3,300 px photo) lost a
        sixth of them; see models/MODEL_CARD.md. With `fine_two_prints`, where that median
        is not small but the sure boxes fall into two print sizes
        (`scanner.corners.print_sizes`), the smaller holding `FINE_PRINT_SHARE` of them,
        the smaller's median decides (a second deck's bare glyphs).
        """
        if self.fine_below <= 0 or not scales or not len(boxes):
            return 0.0
        sure = boxes[scores >= SIDEWAYS_SURE]
        if len(sure) < FINE_MIN_SURE:
            return 0.0
        sides = long_sides(sure)
        side = float(np.median(sides))
        if side * scales[0] >= self.fine_below and self.fine_two_prints:
            prints = print_sizes(sides)
            if prints is not None and (prints == 0).mean() >= FINE_PRINT_SHARE:
                side = float(np.median(sides[prints == 0]))
        if side * scales[0] >= self.fine_below:
            return 0.0
        return scales[0] * self.fine_target / max(side * scales[0], 1.0)

    def _fine_pass(self, rgb: np.ndarray, full: Callable[[], np.ndarray] | None,
                   scale: float, guide: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, bool]:
        """Boxes (`rgb` pixels) and scores of the small-index pass at `scale` of `rgb`, and
        whether it ran on `full()` (taken where a reduced decode enlarged
        `fine_reduced_upscale` times has too few pixels). Never past the photo's own
        resolution (a reduced decode's full pixels, or `max_upscale` of a photo decoded at
        full size) nor a long side of `fine_max_side`; not run unless at least 1.2x the
        finest pass. With `fine_roi_margin` and the boxes the other passes found (`guide`,
        `rgb` pixels), only on the rectangles around them, as the finest pass
        (`_finest_pass`), unless those cover `roi_max_area` of the photo."""
        empty = np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
        if scale <= 0:
            return (*empty, False)
        scale = min(scale, self.fine_max_side / max(rgb.shape[:2]))
        from_full = full is not None and scale > max(1.0, self.fine_reduced_upscale)
        if not from_full:
            scale = min(scale, max(1.0, self.max_upscale if full is None
                                   else self.fine_reduced_upscale))
        if scale < 1.2 * self._scales(*rgb.shape[:2])[0]:
            return (*empty, False)
        self.fine_runs += 1
        src = full() if from_full else rgb
        f = src.shape[1] / rgb.shape[1]  # `src` pixels per `rgb` pixel
        at = min(scale / f, 1.0) if from_full else scale  # the pass's scale of `src`
        if self.fine_roi_margin > 0 and guide is not None and len(guide):
            boxes, scores = self._around(self._resize(src, at), guide * (at * f),
                                         self.fine_roi_margin, "fine")
            return boxes / (at * f), scores, from_full
        boxes, scores = self._run_pass(src, at, self._low, "fine")
        return boxes / f, scores, from_full

    def _read_views(self, crops: np.ndarray, turns: tuple[int, ...], session=None
                    ) -> tuple[np.ndarray, np.ndarray]:
        """Class probabilities (len(turns), N, classes) and directions (len(turns), N, radians)
        of `crops` read turned by each of `turns` quarter turns (counter-clockwise), in one
        batch. A turned view reads the direction turned with it (up in the photo is left
        after a quarter turn), so each is turned back by 90 degrees per turn. Without a
        `session`, every index reader reads them (`classifier.also`) and their readings are
        averaged: probabilities, and directions as unit vectors."""
        views = np.concatenate([np.rot90(crops, k, axes=(1, 2)) for k in turns])
        blob = views.transpose(0, 3, 1, 2).astype(np.float32) * (1 / 255)
        probs, cos, sin = 0.0, 0.0, 0.0
        sessions = (session,) if session is not None else self._readers
        for reader in sessions:
            logits, direction = reader.run(None, {self._input[reader]: blob})
            probs = probs + _softmax(logits)
            read = np.arctan2(direction[:, 1], direction[:, 0])
            cos, sin = cos + np.cos(read), sin + np.sin(read)
        n = len(crops)
        probs = (probs / len(sessions)).reshape(len(turns), n, -1)
        read = np.arctan2(sin, cos).reshape(len(turns), n)
        return probs, read + np.radians(90.0 * np.asarray(turns, np.float64))[:, None]

    def read(self, rgb: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Stage 2 only: class probabilities (N, classes) and angles (N,) in degrees.

        A crop read as it is with a rank probability under `reread_below` is read again
        turned by the other `reader_turns`, and the readings are averaged (probabilities,
        and directions as unit vectors).
        """
        if len(boxes) == 0:
            return np.zeros((0, len(self.classes)), np.float32), np.zeros(0, np.float32)
        rgb = _as_rgb(rgb)
        crops = crop_indices(rgb, boxes, self.crop_size, self.crop_margin)
        probs, back = self._read_views(crops, (0,))
        extra = tuple(k for k in self.reader_turns if k != 0)
        unsure = np.flatnonzero(probs[0, :, :len(INDEX_CLASSES)].max(axis=1) < self.reread_below)
        if extra and len(unsure):
            more_p, more_b = self._read_views(crops[unsure], extra)
            probs[0, unsure] = (probs[0, unsure] + more_p.sum(axis=0)) / (1 + len(extra))
            back[0, unsure] = np.radians(_mean_direction(np.concatenate([back[:1, unsure],
                                                                         more_b])))
        angles = np.degrees(back[0]) % 360
        seen: dict[int, float] = {}
        if self.six_nine_margin > 0:
            seen = self._six_or_nine(rgb, boxes, probs[0], angles)
        if self.wide_direction:
            self._settle_directions(rgb, boxes, probs[0], angles, seen)
        if self.three_ink:
            _three_colour(rgb, boxes, probs[0])
        return probs[0].astype(np.float32), angles.astype(np.float32)

    def find_near(self, rgb: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where an index lies near each of `boxes` (xyxy, `rgb` pixels: a place the layout
        expects one), and what the readers read there: boxes (N, 4) and probabilities (N,
        classes).

        The net runs again on a window `FIND_WINDOW` of the box's long sides around it,
        scaled so the box's long side is `FIND_SIDE` pixels, and its best box of any score
        whose centre lies within `FIND_REACH` long sides of the box's stands for it (the box
        itself where it has none); boxes are moved by the refiner, then read (`read`). A
        place guessed from a line's step lies a third of an index off where its card's index
        is, and a crop that far off is read unsurely; the pass over the whole photo scored
        these indices under its floor (models/MODEL_CARD.md, "Indices looked for again where
        the layout expects one").
        """
        boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
        if not len(boxes):
            return boxes, np.zeros((0, len(self.classes)), np.float32)
        rgb = _as_rgb(rgb)
        # the windows, cut as the readers' crops are (`crop_indices`), padded to the stride
        # and run through the net as one batch
        size = round(2 * FIND_WINDOW * FIND_SIDE)
        pad = -(-size // self.stride) * self.stride - size
        windows = np.pad(crop_indices(rgb, boxes, size, 2 * FIND_WINDOW),
                         ((0, 0), (0, pad), (0, pad), (0, 0)), constant_values=PAD_VALUE)
        blob = windows.transpose(0, 3, 1, 2).astype(np.float32) * (1 / 255)
        outs = self._det.run(None, {self._det_input: blob})[0]
        x0, y0, side = crop_geometry(boxes, 2 * FIND_WINDOW)
        found = boxes.copy()
        for k, out in enumerate(outs):
            got, scores = _decoded(out, 0.0)
            got = got.clip(0, size) * (side[k] / size) + np.array([x0[k], y0[k]] * 2, np.float32)
            near = np.linalg.norm((got[:, :2] + got[:, 2:]) / 2 - (boxes[k, :2] + boxes[k, 2:]) / 2,
                                  axis=1) <= FIND_REACH * side[k] / (2 * FIND_WINDOW)
            if near.any():
                found[k] = got[np.flatnonzero(near)[np.argmax(scores[near])]]
        if self.refine_weight > 0:
            found = self._refine(rgb, found)
        return found, self.read(rgb, found)[0]

    def _settle_directions(self, rgb: np.ndarray, boxes: np.ndarray, probs: np.ndarray,
                           angles: np.ndarray, seen: dict[int, float] | None = None) -> None:
        """Directions of the corners read as one of `wide_direction`, settled by a wide look.

        The tight crop of a bare glyph shows no pip to tell its top from its bottom, and a
        thin one (kde-oxygen-white's 6, 8, 9) is often read turned by a quarter or more;
        the 6/9 reader's crop (3x the box) shows the card's edges around the index, and
        its direction, averaged over four quarter turns, is right where the tight one is
        not (models/MODEL_CARD.md, "Directions from the wide look"). Where the tight
        reading agrees with the wide one within 45 degrees, or is opposite (within 45
        degrees of the turned wide one, and turned round), the direction is their mean with
        the wide one counting `wide_weight` (0: the tight one stays); otherwise the wide one
        replaces it. A tight reading of a thin glyph 20-45 degrees off is often one the wide
        look has nearly right (models/MODEL_CARD.md, "The wide look's direction averaged
        in"). With a direction reader (`direction.onnx`,
        `datasets.train_classifier --direction`: the same network trained on every rank
        from its own wide crop) it reads the wide look instead of the 6/9 reader. `seen`
        maps crops to the 6/9 reader's direction (degrees) where `_six_or_nine` has read
        it already: those are not read twice.
        """
        top = probs[:, :len(INDEX_CLASSES)].argmax(axis=1)
        ranks = [INDEX_CLASSES.index(r) for r in self.wide_direction]
        pick = np.flatnonzero(np.isin(top, ranks))
        if not len(pick):
            return
        seen = (seen or {}) if self._dir is None else {}  # a direction reader reads them all
        known = np.array([int(i) in seen for i in pick], bool)
        wide = np.array([seen.get(int(i), 0.0) for i in pick])
        if (~known).any():
            reader, size, margin = ((self._dir, self.dir_size, self.dir_margin)
                                    if self._dir is not None
                                    else (self._sn, self.sn_size, self.sn_margin))
            crops = crop_indices(rgb, boxes[pick[~known]], size, margin)
            wide[~known] = _mean_direction(self._read_views(crops, (0, 1, 2, 3), reader)[1])
        off = np.abs((angles[pick] - wide + 180.0) % 360.0 - 180.0)
        tight = np.where(off >= 135.0, angles[pick] + 180.0, angles[pick])
        if self.wide_weight > 0:
            tight = _mean_direction(np.radians(np.stack([tight, wide])),
                                    (1 - self.wide_weight, self.wide_weight))
        angles[pick] = np.where((off <= 45.0) | (off >= 135.0), tight, wide) % 360.0

    def six_nine_views(self, rgb: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The 6/9 reader's reading of `boxes` (`rgb` pixels) from its own crop (`sn_size`
        pixels, `sn_margin` times the box), averaged over four quarter turns: class
        probabilities (N, classes) and directions (N,) in degrees. Needs a 6/9 reader."""
        crops = crop_indices(rgb, boxes, self.sn_size, self.sn_margin)
        views, back = self._read_views(crops, (0, 1, 2, 3), self._sn)
        return views.mean(axis=0), _mean_direction(back)

    def _six_or_nine(self, rgb: np.ndarray, boxes: np.ndarray, probs: np.ndarray,
                     angles: np.ndarray) -> dict[int, float]:
        """Settle 6 against 9 from a wider look, in place.

        A bare 6 turned over is a 9 (one-index decks print no pip under the rank; a card
        lying upside down shows it at its bottom corner): the reader's tight crop splits
        its probability between the two, or picks the wrong one with the direction turned
        round. A crop read as a 6 or a 9 (their sum at least half) is read again from a
        wider crop, in all four quarter turns, where the card's edges around the index and
        the pip show how the card lies. The sum stays; a reading that changes between 6
        and 9 turns its direction round. With a 6/9 reader (`sixnine.onnx`, trained on 6s
        and 9s only from its own crop of 3x the box) the split is `six_nine_weight` of its
        split plus the rest of the tight crop's (shipped: 1.0, its split alone). Without
        one, the reader reads a crop `six_nine_margin` times the box and the split is the
        mean of the two (the wider one alone, by a reader trained on tight crops, lost a
        little on decks whose pip settles it up close: val rank accuracy 0.9964 -> 0.9953).
        Returns the 6/9 reader's direction (degrees) of each crop it read, by crop number
        (none without a 6/9 reader), for `_settle_directions`.
        """
        six, nine = INDEX_CLASSES.index("6"), INDEX_CLASSES.index("9")
        top = probs[:, :len(INDEX_CLASSES)].argmax(axis=1)
        mass = probs[:, six] + probs[:, nine]
        pick = np.flatnonzero(((top == six) | (top == nine)) & (mass >= 0.5))
        if not len(pick):
            return {}
        directions: dict[int, float] = {}
        if self._sn is not None:  # the 6/9 reader, on its own wider crops
            wide, back = self.six_nine_views(rgb, boxes[pick])
            directions = dict(zip(pick.tolist(), back.tolist(), strict=True))
            w = self.six_nine_weight
        else:
            crops = crop_indices(rgb, boxes[pick], self.crop_size, self.six_nine_margin)
            wide = self._read_views(crops, (0, 1, 2, 3))[0].mean(axis=0)
            w = 0.5
        share = (w * wide[:, nine] / np.maximum(wide[:, six] + wide[:, nine], 1e-6)
                 + (1 - w) * probs[pick, nine] / np.maximum(mass[pick], 1e-6))
        was_nine = top[pick] == nine
        probs[pick, nine] = mass[pick] * share
        probs[pick, six] = mass[pick] * (1 - share)
        turned = pick[(share > 0.5) != was_nine]
        angles[turned] = (angles[turned] + 180.0) % 360
        return directions

    def _sideways_turn(self, rgb: np.ndarray, boxes: np.ndarray, scores: np.ndarray,
                       most: int = 16) -> int | None:
        """Quarter turns that stand the photo's cards up (`quarter_turn_upright`), judged on
        the `most` best boxes of one pass that could pass the gate, each read once (no
        turned rereads: the direction is all this needs, and it must be cheap); None where
        fewer than `SIDEWAYS_MIN_SURE` are sure enough to judge."""
        sure = scores >= SIDEWAYS_SURE
        boxes, scores = boxes[sure], scores[sure]
        keep = non_max_suppression(boxes, scores, self.iou)[:most]
        if len(keep) < SIDEWAYS_MIN_SURE:
            return None
        crops = crop_indices(rgb, boxes[keep], self.crop_size, self.crop_margin)
        probs, back = self._read_views(crops, (0,))
        return quarter_turn_upright(probs[0], scores[keep], np.degrees(back[0]) % 360)

    def _find(self, rgb: np.ndarray, full: Callable[[], np.ndarray] | None, upright: bool,
              flat: bool = True
              ) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, Callable[[], np.ndarray] | None,
                         tuple[np.ndarray, np.ndarray] | None]:
        """Merged boxes (`rgb` pixels) and scores of all passes; the quarter turns (0, 1 or
        3) of the photo their crops are to be read in and that photo (`view`); when the
        small-index pass ran from the full-resolution photo, a callable giving `view` at
        that resolution (small indices are read there), else None; and, where the photo was
        looked at again made flat, that flat image and the homography from `view` to it,
        else None.

        The coarse passes run first, then the finest, where they saw cards
        (`_finest_pass`). With `upright`, sure corners are read: if most point sideways,
        the passes run again on the photo turned a quarter and one NMS takes all boxes;
        otherwise the boxes are those of `locate`. With `turn_early`, the coarse pass's
        corners are read first, and where they settle it the photo is turned before its
        finest pass, which then runs on the turned photo only; where too few of them are
        sure, the finest pass's are read as without it. With `flat` and `flat_ratio`, a
        photo whose table is seen in perspective is looked at again made flat
        (`_flat_look`).
        """
        scales = self._scales(*rgb.shape[:2])
        scout, scout_scores = self._scout(rgb, scales)
        turn = self._sideways_turn(rgb, scout, scout_scores) \
            if upright and self.turn_early else None
        early = bool(turn)  # sideways by the coarse pass: no finest pass on the photo as taken
        if early:
            sure = scout_scores >= self._low
            raw, raw_scores = scout[sure], scout_scores[sure]
        else:
            raw, raw_scores, coarse, coarse_scores = self._passes(rgb, scales,
                                                                  (scout, scout_scores))
            if upright and turn is None:
                turn = self._sideways_turn(rgb, raw, raw_scores)
            turn = turn or 0
        view = rgb
        if turn:
            view = np.ascontiguousarray(np.rot90(rgb, turn))
            # with `turn_early` 2 the first coarse pass's boxes, turned, guide the finest pass
            # (they are in `raw` already)
            first = (turn_boxes(scout, rgb.shape[1], rgb.shape[0], turn), scout_scores) \
                if early and self.turn_early >= 2 else None
            finest, finest_scores, coarse, coarse_scores = self._passes(view, scales, first)
            if first is not None:
                coarse, coarse_scores = coarse[:0], coarse_scores[:0]
            more = np.concatenate([finest, coarse])
            more_scores = np.concatenate([finest_scores, coarse_scores])
        else:
            more, more_scores = coarse, coarse_scores
        fine_scale = self._fine_scale(*((finest, finest_scores) if early else (raw, raw_scores)),
                                      scales)
        view_full = full
        if turn and full is not None:
            view_full = cache(lambda: np.ascontiguousarray(np.rot90(full(), turn)))
        guide = None
        if fine_scale > 0 and self.fine_roi_margin > 0:  # what the other passes found, in `view`
            found, found_scores = (more, more_scores) if turn else (
                np.concatenate([raw, coarse]), np.concatenate([raw_scores, coarse_scores]))
            guide = found[found_scores >= self.roi_floor]
        fine, fine_scores, sharp = self._fine_pass(view, view_full, fine_scale, guide)
        more, more_scores = np.concatenate([more, fine]), np.concatenate([more_scores, fine_scores])
        if turn:  # turning the turned image the rest of the way round maps its boxes back
            more = turn_boxes(more, view.shape[1], view.shape[0], 4 - turn)
        boxes = np.concatenate([raw, more])
        scores = np.concatenate([raw_scores, more_scores])
        keep = non_max_suppression(boxes, scores, self.iou)
        boxes, scores = boxes[keep], scores[keep]
        flat_view = None
        if flat and self.flat_ratio > 0:
            boxes, scores, flat_view = self._flat_look(rgb, view, turn, boxes, scores,
                                                       view_full)
        return boxes, scores, turn, view, view_full if sharp else None, flat_view

    def _flat_look(self, rgb: np.ndarray, view: np.ndarray, turn: int, boxes: np.ndarray,
                   scores: np.ndarray, full: Callable[[], np.ndarray] | None = None
                   ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
        """`boxes` (`rgb` pixels) and `scores`, with the boxes the passes find on the table
        made flat that are clear of them (IoU under `FLAT_NEW_IOU` with each); a box the
        flat table finds again (`FLAT_SAME_IOU`) takes its score there where that is better;
        and the flat image with the homography from `view` to it (None where the photo is
        not looked at again).

        A photo from a seat shows the far indices small and squeezed, where the detector
        misses them or scores them under the gate (models/MODEL_CARD.md, "A photo from a
        seat looked at again made flat"). The sure boxes' sizes give the table's tilt
        (`scanner.perspective.flattening_of_boxes`, needing a size ratio of `flat_ratio`
        across the photo); `view` (the photo as the passes saw it, turned `turn` quarters)
        is warped to the flat table around the sure boxes (`FLAT_MARGIN`), where every index
        has about the size of those at the photo's centre, and the passes run on it again
        (on the warped pixels only; no second flat look). Their boxes are moved back (each
        the bounds of its moved corners). With `flat_full`, the warp takes its pixels from
        `full()` (`view` at full resolution) where that is given."""
        vh, vw = view.shape[:2]
        sure = boxes[scores >= SIDEWAYS_SURE]
        if turn:
            sure = turn_boxes(sure, rgb.shape[1], rgb.shape[0], turn)
        table = flattening_of_boxes(sure, (vw, vh), self._flat_ratio_for(sure, (vw, vh)))
        if table is None:
            return boxes, scores, None
        self.flat_runs += 1
        # the flat table around the sure boxes (a photo's own edges, flattened, would give
        # the passes mostly empty corners to look at and shrink the cards to fit them)
        sure = flatten_boxes(sure, table)
        lo, hi = sure[:, :2].min(axis=0), sure[:, 2:].max(axis=0)
        side = float(np.median(long_sides(sure)))
        margin = max(0.1 * float((hi - lo).max()), FLAT_MARGIN * side)
        lo = np.maximum(lo - margin, 0.0)
        hi = np.minimum(hi + margin, np.asarray(table.size, float))
        s = min(1.0, self.flat_max_side / float((hi - lo).max()))
        size = (max(1, round((hi - lo)[0] * s)), max(1, round((hi - lo)[1] * s)))
        m = np.array([[s, 0, -lo[0] * s], [0, s, -lo[1] * s], [0, 0, 1]]) @ table.matrix()
        src, src_m = view, m
        if self.flat_full and full is not None:
            # the far indices warped from the photo's own pixels, not from the reduced decode
            src = full()
            src_m = m @ np.diag([vw / src.shape[1], vh / src.shape[0], 1.0])
        warped = cv2.warpPerspective(src, src_m, size, flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=(PAD_VALUE,) * 3)
        found, found_scores, *_ = self._find(warped, None, False, flat=False)
        if not len(found):
            return boxes, scores, (warped, m)
        back = table.boxes_to_photo(found / s + np.tile(lo, 2)).astype(np.float32)
        back[:, [0, 2]] = back[:, [0, 2]].clip(0, vw)
        back[:, [1, 3]] = back[:, [1, 3]].clip(0, vh)
        if turn:
            back = turn_boxes(back, vw, vh, 4 - turn)
        iou = np.stack([box_iou(b, boxes) for b in back]) if len(boxes) else \
            np.zeros((len(back), 0), np.float32)
        # a box found already, and surer on the flat table, takes the flat table's score
        # (the best-matching one only: two boxes of the photo on one index, both kept by the
        # NMS, would both become sure, one index read twice)
        same = iou >= FLAT_SAME_IOU
        if iou.shape[1]:
            same &= iou == iou.max(axis=1, keepdims=True)
        flat_score = np.where(same, found_scores[:, None], 0.0).max(axis=0, initial=0.0)
        if self.flat_fuse and len(back) and len(boxes):
            better = np.flatnonzero(flat_score > scores)
            k = np.where(same, found_scores[:, None], -1.0).argmax(axis=0)[better]
            wa, wb = scores[better][:, None], found_scores[k][:, None]
            boxes = np.array(boxes, np.float32)
            boxes[better] = (boxes[better] * wa + back[k] * wb) / (wa + wb)
        scores = np.maximum(scores, flat_score).astype(np.float32)
        new = ~(iou >= FLAT_NEW_IOU).any(axis=1)
        new &= (back[:, 2] - back[:, 0] >= 2) & (back[:, 3] - back[:, 1] >= 2)
        return (np.concatenate([boxes, back[new]]),
                np.concatenate([scores, found_scores[new]]), (warped, m))

    def _flat_ratio_for(self, sure: np.ndarray, size: tuple[int, int]) -> float:
        """The size ratio across the photo that `sure` boxes (`size` pixels) need for a flat
        look: `flat_ratio`, or the milder `flat_small_ratio` where their 10th percentile
        size is `flat_small_side` or less at a 1,600 px long side."""
        if not (self.flat_small_ratio and self.flat_small_side and len(sure)):
            return self.flat_ratio
        far = float(np.percentile(root_areas(sure), 10)) * FLAT_SMALL_AT / max(size)
        return min(self.flat_ratio, self.flat_small_ratio) if far <= self.flat_small_side \
            else self.flat_ratio

    def detect(self, rgb: np.ndarray, min_confidence: float | None = None,
               full: Callable[[], np.ndarray] | None = None) -> Corners:
        """Rank corners in `rgb` (H,W,3 uint8 RGB), boxes in its pixels, confidence at
        least `min_confidence` (default: the run-time gate `self.min_confidence`).
        `full`, when `rgb` is a reduced decode, gives the photo's full-resolution pixels
        for the small-index pass (`_fine_scale`); it is called only if that pass runs.

        With `upright` on, a first pass's sure corners are read (`_find`): if most point
        sideways, the passes run again on the photo turned a quarter (cards up or down, as
        the detector sees them best) and all boxes are merged; the crops of a turned photo
        are read turned too. With `flat_ratio`, a photo from a seat is looked at again
        warped flat (`_flat_look`), and with `flat_read` its boxes are read there too
        (`_flat_readings`).
        """
        rgb = _as_rgb(rgb)
        with self._lock:
            boxes, det_scores, turn, view, sharp, flat = self._find(rgb, full, self.upright)
            # a turned photo's crops are read turned, where their cards stand up or upside
            # down as in the photos the reader reads best (a sideways 6 is often read 9); a
            # direction read there is turned back with the photo
            view_boxes = turn_boxes(boxes, rgb.shape[1], rgb.shape[0], turn) if turn else boxes
            # small indices are cut from the full-resolution pixels
            src = sharp() if sharp is not None else view
            zoom = src.shape[1] / view.shape[1]
            keep, rescued, view_boxes, probs, angles = self._read_boxes(src, view_boxes * zoom,
                                                                         det_scores)
            view_boxes /= zoom
            det_scores = det_scores[keep]
            if flat is not None and self.flat_read and len(view_boxes):
                # read on the flat image too (its indices unslanted and of one size, as the
                # readers learnt them), the readings averaged
                on, flat_probs, flat_angles = self._flat_readings(view_boxes, *flat)
                probs[on] = (probs[on] + flat_probs) / 2
                angles[on] = _mean_direction(np.radians(np.stack([angles[on], flat_angles])))
            boxes = turn_boxes(view_boxes, view.shape[1], view.shape[0], 4 - turn) if turn \
                else view_boxes
            angles = (angles + 90.0 * turn) % 360
        if len(boxes) == 0:
            return Corners.empty()
        n_rank = len(INDEX_CLASSES)
        rank_ids = probs[:, :n_rank].argmax(axis=1)
        rank_prob = probs[np.arange(len(boxes)), rank_ids]
        # A crop the classifier calls "not an index" is a false detection: drop it.
        is_index = probs[:, :n_rank].sum(axis=1) >= 0.5
        if rescued.any():  # a rescued box stays only as a sure reading of a rescued rank
            is_index &= ~rescued | (np.isin(rank_ids, self.rescue_ranks)
                                    & (rank_prob >= self.rescue_prob))
            det_scores = np.where(rescued, np.where(rank_prob >= self.rescue_sure_prob,
                                                    self.rescue_score, self.rescue_unsure_score),
                                  det_scores)
        confidence = det_scores * rank_prob
        if self.joker_word:
            boxes = _joker_boxes(rgb, boxes, angles, rank_ids, is_index, self.joker_width)
            if self.joker_width:
                is_index &= ~_joker_twins(boxes, rank_ids, confidence, is_index, self.iou)
        corners = Corners(boxes, rank_ids, confidence, angles, rank_prob)
        gate = self.min_confidence if min_confidence is None else min_confidence
        corners = corners.select(is_index & (confidence >= gate))
        if self.edge_angles and len(corners):
            corners = replace(corners, angle=card_edge_angles(rgb, corners.boxes, corners.angle))
        return corners

    def _flat_readings(self, boxes: np.ndarray, flat: np.ndarray, m: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Readings of `boxes` (`view` pixels) on `flat` (the photo made flat, `m` the
        homography from `view` to it): which boxes lie on it (indices), and their
        probabilities and directions (degrees, moved back into `view`), as `read` gives
        them. Each box is read there as a square of its long side, moved to where the map
        takes its centre and scaled as the map scales around it (a box's four corners moved
        would bound a larger, slanted one)."""
        to_flat, back = homography_map(m), homography_map(np.linalg.inv(m))
        centre = (boxes[:, :2] + boxes[:, 2:]) / 2
        at = to_flat(centre)
        dx = to_flat(centre + [1.0, 0.0]) - at
        dy = to_flat(centre + [0.0, 1.0]) - at
        half = long_sides(boxes) * np.sqrt(np.abs(dx[:, 0] * dy[:, 1] - dx[:, 1] * dy[:, 0])) / 2
        there = np.concatenate([at - half[:, None], at + half[:, None]], axis=1)
        fh, fw = flat.shape[:2]
        on = np.flatnonzero((there[:, 0] >= 0) & (there[:, 1] >= 0) & (there[:, 2] <= fw)
                            & (there[:, 3] <= fh))
        self.flat_reads += len(on)
        probs, angles = self.read(flat, there[on].astype(np.float32))
        return on, probs, moved_angles(back, at[on], angles) if len(on) else angles

    def _read_boxes(self, img: np.ndarray, boxes: np.ndarray, scores: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Stage 2 on `boxes` (`img` pixels) scored `scores` by the passes: which go on
        (indices into them, `_rescue`), which of those are rescued ones, their boxes moved
        by the refiner (and a joker's word cut to its end, `_word_ends`), and their readings
        (probabilities, directions in degrees, as `read` gives them)."""
        keep = np.arange(len(boxes))
        rescued = np.zeros(len(boxes), bool)
        if self._low < self.conf and len(boxes):
            mask, rescued = self._rescue(img, boxes, scores)
            keep, boxes = np.flatnonzero(mask), boxes[mask]
        if self.refine_weight > 0 and len(boxes):  # the reader reads the moved boxes
            boxes = self._refine(img, boxes)
        probs, angles = self.read(img, boxes)
        if self.word_end_below > 0 and len(boxes):
            boxes = self._word_ends(img, boxes, probs, angles)
        again = np.isin(probs[:, :len(INDEX_CLASSES)].argmax(axis=1), self.refine_again) \
            if len(self.refine_again) else np.zeros(len(probs), bool)
        if again.any():
            boxes = np.array(boxes, np.float32)
            boxes[again] = self._refine(img, boxes[again], 1.0)
        return keep, rescued, np.asarray(boxes, np.float32).reshape(-1, 4), probs, angles

    def _rescue(self, rgb: np.ndarray, boxes: np.ndarray, scores: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """Which of the merged boxes (`rgb` pixels) go on to be read: every box scored `conf`
        or more, and those under it (down to `rescue_floor`) clear of them that one quick
        read (as they lie, no turns) gives a rank of `rescue_ranks`; returns that mask and,
        for the kept boxes, which are rescued ones. Of rescued boxes that overlap, the
        better scored is kept.

        Why: the detector scores a joker's vertical JOKER low (the end of its label in a
        word of like letters is a guess, and the score learns the box's fit): on held-out
        designs, jokers in full view with no box over the gate had boxes scored 0.02-0.22
        that the reader read as a joker at 0.94-1.0 (models/MODEL_CARD.md, session 22). The
        shipped runtime rescues every rank since session 23: the held-out designs' other
        indices scored under the gate are read surely too (test layouts: deals 62.32 ->
        63.77%; real photos' false corners 0.015 -> 0.03 a photo)."""
        sure = scores >= self.conf
        low = np.flatnonzero(~sure)
        if len(low) and sure.any():
            low = low[box_iou(boxes[low][:, None], boxes[sure]).max(axis=1) < RESCUE_CLEAR]
        if len(low):
            crops = crop_indices(rgb, boxes[low], self.crop_size, self.crop_margin)
            probs, _ = self._read_views(crops, (0,))
            first = probs[0, :, :len(INDEX_CLASSES)]
            low = low[np.isin(first.argmax(axis=1), self.rescue_ranks)
                      & (first.max(axis=1) >= RESCUE_SCREEN)]
            low = low[non_max_suppression(boxes[low], scores[low], RESCUE_CLEAR)]
        keep = sure.copy()
        keep[low] = True
        return keep, ~sure[keep]

    def _word_ends(self, rgb: np.ndarray, boxes: np.ndarray, probs: np.ndarray,
                   angles: np.ndarray) -> np.ndarray:
        """`boxes` (xyxy, `rgb` pixels) with each long box read unsurely replaced by the end
        of it read as a joker, where one is; `probs` and `angles` (as `read` gives them) are
        updated in place.

        On designs it has not seen the detector often boxes a joker's whole vertical JOKER
        (the label, and the reader's training crops, are its J O K), and the reader reads
        the long box unsurely or turned: on the unseen-design test, most of the visible
        jokers with no joker corner had a box over the word read at 0.26-0.59, or read the
        other way up, while their J O K alone read as a joker at 0.9 and more. So a box
        read under `word_end_below`, `word_end_aspect` times as long as wide or more, is
        read again cut to its first and to its last `word_end_share` along its long side
        (`scanner.joker.word_ends`), and the surer end read as a joker (at `word_end_prob`
        or more, and surer than the whole box's rank) replaces it: its box, its
        probabilities and its direction (models/MODEL_CARD.md, "A joker's word read at
        either end").
        """
        boxes = np.array(boxes, np.float32)
        aspect = long_sides(boxes) / np.maximum((boxes[:, 2:] - boxes[:, :2]).min(axis=1), 1e-6)
        rank_prob = probs[:, :len(INDEX_CLASSES)].max(axis=1)
        pick = np.flatnonzero((rank_prob < self.word_end_below) & (aspect >= self.word_end_aspect))
        if not len(pick):
            return boxes
        ends = word_ends(boxes[pick], self.word_end_share)
        end_probs, end_angles = self.read(rgb, ends)
        joker = end_probs[:, CLASS_ID["JK"]].reshape(-1, 2)
        which = joker.argmax(axis=1)
        best = joker.max(axis=1)
        take = (best >= self.word_end_prob) & (best > rank_prob[pick])
        for k in np.flatnonzero(take).tolist():
            i, e = int(pick[k]), 2 * k + int(which[k])
            boxes[i], probs[i], angles[i] = ends[e], end_probs[e], end_angles[e]
        return boxes

    def _refine(self, rgb: np.ndarray, boxes: np.ndarray, weight: float | None = None) -> np.ndarray:
        """`boxes` (xyxy, `rgb` pixels) moved `weight` (default `refine_weight`) of the way
        to where the box refiner sees the printed index in the crop around each; a box it
        returns inside out is kept as it was."""
        weight = self.refine_weight if weight is None else weight
        crops = crop_indices(rgb, boxes, self.ref_size, self.ref_margin)
        out = self._ref.run(None, {self._input[self._ref]:
                                   crops.transpose(0, 3, 1, 2).astype(np.float32) * (1 / 255)})[0]
        x0, y0, side = crop_geometry(boxes, self.ref_margin)
        found = out * side[:, None] + np.stack([x0, y0, x0, y0], axis=1)
        sane = (found[:, 2] > found[:, 0]) & (found[:, 3] > found[:, 1])
        moved = boxes + weight * (found - boxes)
        return np.where(sane[:, None], moved, boxes).astype(np.float32)


def _joker_boxes(rgb: np.ndarray, boxes: np.ndarray, angles: np.ndarray, rank_ids: np.ndarray,
                 keep: np.ndarray, narrow: bool = False) -> np.ndarray:
    """`boxes` with each kept box read as a joker that spans its whole vertical word cut to
    the word's J O K (`scanner.joker.joker_index`; unseen-design test mAP50 0.9319 -> 0.9417)
    and, with `narrow`, each such box not cut narrowed to its letters' ink where it is much
    wider (`scanner.joker.joker_width`; 0.9573 -> 0.9608, joker AP50 0.889 -> 0.941)."""
    jokers = np.flatnonzero(keep & (rank_ids == CLASS_ID["JK"]) & np.isfinite(angles))
    if not len(jokers):
        return boxes
    boxes = np.array(boxes, np.float32)
    for i in jokers.tolist():
        cut = joker_index(rgb, boxes[i], float(angles[i]))
        if cut is None and narrow:
            cut = joker_width(rgb, boxes[i], float(angles[i]))
        if cut is not None:
            boxes[i] = cut
    return boxes


def _joker_twins(boxes: np.ndarray, rank_ids: np.ndarray, confidence: np.ndarray,
                 keep: np.ndarray, iou: float) -> np.ndarray:
    """Mask of the kept joker boxes that overlap a surer kept joker box by more than `iou`
    (NMS's rule): two boxes on one joker's index once cut or narrowed (NMS ran on them as
    found)."""
    jokers = np.flatnonzero(keep & (rank_ids == CLASS_ID["JK"]))
    twins = np.zeros(len(boxes), bool)
    if len(jokers) > 1:
        twins[jokers] = True
        twins[jokers[non_max_suppression(boxes[jokers], confidence[jokers], iou)]] = False
    return twins


# A three is given its ink's colour only where the reader gives the other colour at least
# this share of the three's probability: a reader sure of the colour is right more often
# than the ink (val mAP50 0.9376 overriding every three, 0.9401 with this share, 0.9400
# with 0.25; models/MODEL_CARD.md "Threes by their ink").
THREE_SPLIT = 0.1


def _three_colour(rgb: np.ndarray, boxes: np.ndarray, probs: np.ndarray) -> None:
    """Settle red three against black three by the ink, in place.

    The reader tells a three from other ranks surely but often splits a three between
    its two colours on designs it has not seen (the unseen test's black threes: 27 of 68
    with 3R + 3B at least 0.5 and neither over 0.8), and a black three read red scores a
    red three's 100. A crop read as a three (3R + 3B at least half, one of them on top)
    whose colour the reader is unsure of (the other colour at least `THREE_SPLIT` of the
    three) and whose ink reads red or black (`scanner.ink`: 99.5% right on the unseen
    designs' indices) gets the whole three in that colour; unsure ink leaves it as read.
    """
    r3, b3 = CLASS_ID["3R"], CLASS_ID["3B"]
    top = probs[:, :len(INDEX_CLASSES)].argmax(axis=1)
    mass = probs[:, r3] + probs[:, b3]
    split = np.minimum(probs[:, r3], probs[:, b3]) / np.maximum(mass, 1e-6)
    pick = np.flatnonzero(((top == r3) | (top == b3)) & (mass >= 0.5) & (split >= THREE_SPLIT))
    if not len(pick):
        return
    colours = np.array(ink_colours(rgb, boxes[pick]), dtype=object)
    for colour, keep, drop in (("red", r3, b3), ("black", b3, r3)):
        sure = pick[colours == colour]
        probs[sure, keep] = mass[sure]
        probs[sure, drop] = 0.0


# The sideways check counts corners that would pass the run-time gate: a detector score x
# rank probability of 0.3 or more, at least four of them (`quarter_turn_upright`).
SIDEWAYS_SURE = 0.3
SIDEWAYS_MIN_SURE = 4
# The flat look (`OnnxDetector._flat_look`) warps the table around the sure boxes with this
# many of their sizes to spare (or a tenth of their spread, if more). A box it finds joins
# those found on the photo only where it overlaps each of them less than `FLAT_NEW_IOU`
# (the same index found twice would be two cards); one found on the photo too (IoU
# `FLAT_SAME_IOU` or more) keeps its box, at the better score.
FLAT_MARGIN = 4.0
FLAT_SMALL_AT = 1600  # the long side `flat_small_side` is measured at, px
FLAT_NEW_IOU = 0.2
FLAT_SAME_IOU = 0.4
# The rescue (`OnnxDetector._rescue`): a box under the score floor is read only where no
# box over it overlaps it by this IoU or more (nor a better rescued one); the quick read
# must give a rescued rank at least this probability for the full read to follow.
RESCUE_CLEAR = 0.1
RESCUE_SCREEN = 0.5
# The small-index pass is judged on at least this many sure boxes of the finest pass.
FINE_MIN_SURE = 4
# ... and with `fine_two_prints`, the smaller of two print sizes counts where it holds this
# share of the sure boxes: a second deck on the table, not a few small boxes on pips or
# letters (3% of one deck's boxes on held-out test photos; a second deck's 20-40%)
FINE_PRINT_SHARE = 0.2
# the detector's passes: the coarse scout, the finest pass and the small-index pass
# (`OnnxDetector.half_turn` names some of them)
PASSES = frozenset({"coarse", "finest", "fine"})


# Finest-pass pieces (`roi_rectangles`): two pieces are run as one where that adds at most
# this many stride cells (each costs ~0.2 ms at 1,600 px on this machine, a run of the net
# a few ms of its own), and never more than this many pieces.
ROI_SLACK = 48
ROI_MOST = 8


def roi_rectangles(boxes: np.ndarray, margin: float, width: int, height: int, cell: int,
                   slack: int = ROI_SLACK, most: int = ROI_MOST
                   ) -> list[tuple[int, int, int, int]]:
    """Rectangles (x0, y0, x1, y1 in `cell`s, end exclusive) of an image `width` x
    `height` holding every box of `boxes` (xyxy, its pixels) grown by `margin` times its
    long side: the connected regions of the cells the grown boxes touch, as bounding
    rectangles; then two rectangles become the one holding both, overlapping ones first
    and then the cheapest, while they overlap, that adds at most `slack` cells to the area
    run, or there are more than `most`."""
    gw, gh = -(-width // cell), -(-height // cell)
    mask = np.zeros((gh, gw), np.uint8)
    if not len(boxes):
        return []
    grow = margin * np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    lo = np.floor((boxes[:, :2] - grow[:, None]) / cell).astype(int).clip(0, [gw - 1, gh - 1])
    hi = np.floor((boxes[:, 2:] + grow[:, None]) / cell).astype(int).clip(0, [gw - 1, gh - 1])
    for (x0, y0), (x1, y1) in zip(lo, hi, strict=True):
        mask[y0:y1 + 1, x0:x1 + 1] = 1
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    rects = [(int(x), int(y), int(x + w), int(y + h)) for x, y, w, h, _ in stats[1:n]]

    def area(r: tuple[int, int, int, int]) -> int:
        return (r[2] - r[0]) * (r[3] - r[1])

    def overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    while len(rects) > 1:
        apart, extra, i, j, union = min(
            (not overlap(a, b), area(u) - area(a) - area(b), i, j, u)
            for i, a in enumerate(rects) for j, b in enumerate(rects[i + 1:], i + 1)
            for u in [(min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))])
        if apart and extra > slack and len(rects) <= most:
            break
        rects = [r for k, r in enumerate(rects) if k not in (i, j)] + [union]
    return sorted(rects)


def quarter_turn_upright(probs: np.ndarray, scores: np.ndarray, angles: np.ndarray,
                         min_sure: int = SIDEWAYS_MIN_SURE, sure: float = SIDEWAYS_SURE,
                         share: float = 0.6) -> int:
    """Counter-clockwise quarter turns (0, 1 or 3) that bring the cards of a photo upright
    or upside down: non-zero when at least `share` of the sure corners (detector score x
    rank probability >= `sure`, at least `min_sure` of them) point sideways."""
    n_rank = len(INDEX_CLASSES)
    sure_rows = (scores * probs[:, :n_rank].max(axis=1) >= sure) if len(probs) else np.zeros(0, bool)
    if sure_rows.sum() < min_sure:
        return 0
    a = np.asarray(angles, np.float64)[sure_rows] % 360
    right = (np.abs(a - 90) < 45).sum()
    left = (np.abs(a - 270) < 45).sum()
    if right + left < share * len(a):
        return 0
    # A card whose top points right (90) points up after a counter-clockwise quarter turn.
    return 1 if right >= left else 3


def turn_boxes(boxes: np.ndarray, width: int, height: int, k: int) -> np.ndarray:
    """xyxy `boxes` of a width x height image after k counter-clockwise quarter turns
    (np.rot90: a point (x, y) goes to (y, width - x), and the image's sides swap)."""
    b = np.asarray(boxes, np.float32).reshape(-1, 4).copy()
    for _ in range(k % 4):
        b = np.stack([b[:, 1], width - b[:, 2], b[:, 3], width - b[:, 0]], axis=1)
        width, height = height, width
    return b


def _as_rgb(rgb: np.ndarray) -> np.ndarray:
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"expected an (H,W,3) uint8 RGB image, got {rgb.shape} {rgb.dtype}")
    return rgb


@lru_cache(maxsize=1)
def default_detector() -> OnnxDetector:
    """The bundled model, loaded once per process."""
    return OnnxDetector(MODELS_DIR)


def detect_photo(src: str | os.PathLike | bytes | Photo, detector: Detector | None = None,
                 max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES) -> dict:
    """Detect corners in a photo file/bytes: the contract's `image` and `corners` JSON.

    Raises `scanner.imageio.ImageError` (or `PhotoTooLarge`) for unreadable input.
    """
    corners, photo = detect_corners(src, detector, max_pixels=max_pixels, max_bytes=max_bytes)
    return {"image": {"width": photo.width, "height": photo.height},
            "corners": corners.to_json()}


def detect_corners(src: str | os.PathLike | bytes | Photo, detector: Detector | None = None,
                   max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES,
                   min_confidence: float | None = None) -> tuple[Corners, Photo]:
    """Decode (at reduced size when the detector allows) and detect; boxes in photo pixels.
    `min_confidence` overrides the detector's gate (the layout uses unsure corners too)."""
    detector = detector if detector is not None else default_detector()
    if isinstance(src, Photo):
        photo = src
    else:
        long_side = getattr(detector, "decode_long_side", None)
        photo = load_photo(src, max_pixels=max_pixels, max_bytes=max_bytes, long_side=long_side)
    full = photo.full_rgb if photo.scale < 1.0 else None
    corners = detector.detect(photo.rgb, min_confidence=min_confidence, full=full)
    if photo.scale != 1.0:
        corners = corners.scaled(1 / photo.scale)
    return corners, photo

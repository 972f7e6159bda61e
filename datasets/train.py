"""Train the one-class index detector from scratch, offline, and export it to ONNX.

`python -m datasets.train [--resume]` (training venv only: /work/main/.venv-train) cuts
the rendered training scenes (scene_XXXXXX.json + image, see docs/ARCHITECTURE.md) into
small tiles at the scale the run-time detector sees a photo (about 1,600 px on the long
side, jittered), labels every readable rank index as one class "index", trains
ultralytics yolo26n from `yolo26n.yaml` (no pretrained weights) on those tiles, and
exports the best checkpoint to `models/detector.onnx`. Rank and orientation are read by
the second-stage classifier (`datasets/train_classifier.py`). Everything is offline: the
environment below keeps ultralytics from probing the network, installing packages or
downloading its font. Checkpoints go to runs/detector/ after every epoch; `--resume`
continues an interrupted run from runs/detector/weights/last.pt.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
RUNS = ROOT / "runs"
MODELS = ROOT / "models"
CONFIG_DIR = BUILD / "ultralytics-config"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

MIN_VISIBLE = 0.6  # an index less visible than this is not labelled (a reader could not read it)
DETECT_LONG_SIDE = 1600  # run-time pass size (scanner/detector.py); tiles are cut at this scale
# Tiles are cut at DETECT_LONG_SIDE x U(SCALE_JITTER): below 1 for the small indices of small
# phone photos (which the runtime does not enlarge), above 1 for close shots.
SCALE_JITTER = (0.6, 1.25)
KEYSTONE_FAR = (0.4, 0.9)  # --keystone: far edge of a photo from a seat, share of the near edge


def setup_offline() -> None:
    """Environment and files that keep ultralytics fully offline. Call before importing it."""
    os.environ["YOLO_OFFLINE"] = "1"  # no DNS probes / hub calls at import
    os.environ["YOLO_AUTOINSTALL"] = "0"  # never pip-install missing requirements
    os.environ["YOLO_CONFIG_DIR"] = str(CONFIG_DIR)
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("MPLCONFIGDIR", str(BUILD / "mplconfig"))
    user_dir = CONFIG_DIR / "Ultralytics"
    user_dir.mkdir(parents=True, exist_ok=True)
    # check_font("Arial.ttf") downloads the font unless it finds it here, even with plots off.
    for name in ("Arial.ttf", "Arial.Unicode.ttf"):
        if not (user_dir / name).exists():
            shutil.copyfile(FONT, user_dir / name)
    from ultralytics.utils import SETTINGS

    SETTINGS.update({"sync": False, "clearml": False, "comet": False, "dvc": False,
                     "mlflow": False, "raytune": False, "tensorboard": False,
                     "wandb": False, "runs_dir": str(RUNS), "weights_dir": str(BUILD / "weights"),
                     "datasets_dir": str(BUILD)})


# ----------------------------------------------------------------------------------------
# Tiles


def scene_files(scene_dir: Path) -> list[Path]:
    """Scene JSON files under `scene_dir` (recursively), sorted."""
    return sorted(scene_dir.rglob("scene_*.json"))


def index_boxes(scene: dict, min_visible: float = MIN_VISIBLE) -> list[dict]:
    """Readable indices of a scene: dicts with box, angle, card, rank."""
    out = []
    for card in scene["cards"]:
        if not card.get("face_up", True):
            continue
        for ind in card.get("indices", []):
            if ind.get("visible", 1.0) >= min_visible:
                out.append({"box": ind["box"], "angle": ind.get("angle", card.get("angle", 0.0)),
                            "card": card.get("card"), "rank": card.get("rank"),
                            "quad": ind.get("quad")})
    return out


def tile_origin(boxes, tile: int, width: int, height: int, rng, focus=None) -> tuple[int, int]:
    """Top-left of a tile in an image of `width` x `height` holding index `boxes` (xyxy).

    Most tiles centre near a random index (so tiles are not mostly empty table); some
    are anywhere, which teaches the net what background looks like. With `focus` (a
    boolean per box), a tile centres near one of the focused indices whenever there is one.
    """
    import numpy as np

    if focus is not None and np.any(focus):
        pick = np.flatnonzero(focus)
        c = boxes[pick[rng.integers(len(pick))]]
        cx = (c[0] + c[2]) / 2 + rng.uniform(-0.4, 0.4) * tile
        cy = (c[1] + c[3]) / 2 + rng.uniform(-0.4, 0.4) * tile
        return int(np.clip(cx - tile / 2, 0, width - tile)), int(np.clip(cy - tile / 2, 0, height - tile))
    if len(boxes) and rng.random() < 0.8:
        c = boxes[rng.integers(len(boxes))]
        cx = (c[0] + c[2]) / 2 + rng.uniform(-0.4, 0.4) * tile
        cy = (c[1] + c[3]) / 2 + rng.uniform(-0.4, 0.4) * tile
        return int(np.clip(cx - tile / 2, 0, width - tile)), int(np.clip(cy - tile / 2, 0, height - tile))
    return int(rng.integers(0, width - tile + 1)), int(rng.integers(0, height - tile + 1))


def yolo_lines(boxes, x0: float, y0: float, tile: int, quads=None) -> list[str]:
    """YOLO label lines of the index `boxes` in the tile at (x0, y0); mostly-outside ones dropped.

    With `quads` (the printed index's four corners, one (4,2) per box), each line is that
    polygon instead of the box: ultralytics then turns the polygon with the tile when it
    augments by rotation and takes the turned polygon's box. Turning a box would take the box
    of the turned box, up to twice the print's area at 45 degrees, and a net trained on such
    labels learns boxes larger than the print.
    """
    import numpy as np

    lines = []
    for i, b in enumerate(boxes):
        bx1, by1, bx2, by2 = b[0] - x0, b[1] - y0, b[2] - x0, b[3] - y0
        area = max((bx2 - bx1) * (by2 - by1), 1e-6)
        cx1, cy1, cx2, cy2 = max(bx1, 0), max(by1, 0), min(bx2, tile), min(by2, tile)
        if cx2 <= cx1 or cy2 <= cy1 or (cx2 - cx1) * (cy2 - cy1) / area < 0.6:
            continue  # mostly outside the tile: unreadable here
        if quads is not None:
            q = ((np.asarray(quads[i], float).reshape(4, 2) - (x0, y0)) / tile).clip(0, 1)
            lines.append("0 " + " ".join(f"{v:.6f}" for v in q.reshape(-1)))
            continue
        lines.append(f"0 {(cx1 + cx2) / 2 / tile:.6f} {(cy1 + cy2) / 2 / tile:.6f} "
                     f"{(cx2 - cx1) / tile:.6f} {(cy2 - cy1) / tile:.6f}")
    return lines


def polygon_labels(images: Path, out: Path) -> Path:
    """A copy of a YOLO image folder whose box labels are written as four-corner polygons.

    ultralytics keeps polygons only when every label of a dataset is one, so box-labelled
    folders (real-photo tiles) join a polygon-labelled run this way; their rectangles turn
    like boxes. Images are linked, not copied. Returns the new images folder.
    """
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(parents=True, exist_ok=True)
    labels = images.parent / "labels"
    for img in sorted(images.iterdir()):
        if img.suffix.lower() not in (".jpg", ".jpeg", ".png"):
            continue
        link = out / "images" / img.name
        if not link.exists():
            link.symlink_to(img.resolve())
        rows = []
        src = labels / f"{img.stem}.txt"
        for line in (src.read_text().splitlines() if src.exists() else []):
            v = line.split()
            if len(v) == 5:
                c, cx, cy, w, h = v[0], *(float(x) for x in v[1:])
                x1, y1, x2, y2 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
                v = [c] + [f"{t:.6f}" for t in (x1, y1, x2, y1, x2, y2, x1, y2)]
            if len(v) > 1:
                rows.append(" ".join(v))
        (out / "labels" / f"{img.stem}.txt").write_text("\n".join(rows))
    return out / "images"


def quarter_turn(crop, lines: list[str], k: int):
    """`crop` (square) and its YOLO label lines turned by k quarter turns counter-clockwise.

    np.rot90 maps a pixel at (x, y) of a T-pixel tile to (y, T - x) per turn, so a normalised
    box centre (cx, cy) goes to (cy, 1 - cx) and its width and height swap.
    """
    import numpy as np

    k %= 4
    out = []
    for line in lines:
        c, *vals = line.split()
        if len(vals) != 4:  # a polygon: every corner moves like a box centre
            xy = np.array(vals, float).reshape(-1, 2)
            for _ in range(k):
                xy = np.c_[xy[:, 1], 1.0 - xy[:, 0]]
            out.append(c + " " + " ".join(f"{v:.6f}" for v in xy.reshape(-1)))
            continue
        cx, cy, bw, bh = (float(v) for v in vals)
        for _ in range(k):
            cx, cy, bw, bh = cy, 1.0 - cx, bh, bw
        out.append(f"{c} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}")
    return np.ascontiguousarray(np.rot90(crop, k)), out


def _tile_scene(args: tuple) -> list[tuple[str, int]]:
    """Cut tiles of one scene into out_dir; returns (split, n_labels) per tile written."""
    import cv2
    import numpy as np

    (json_path, out_dir, split, tile, tiles_per_scene, seed, bare_glyph, quarter_turns, focus_ranks,
     polygons, keystone, stroke, min_visible) = args
    scene = json.loads(Path(json_path).read_text())
    img_path = Path(json_path).with_name(scene["image"]["file"])
    rgb = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
    if rgb is None:
        return []
    # the same tiles wherever the scenes live (the path once went in, via its length)
    rng = np.random.default_rng([seed, int(scene.get("seed", 0)), ("train", "val", "test").index(split)])
    if bare_glyph and split == "train":  # some cards lose the pip under the rank (datasets/glyphs.py)
        from datasets import glyphs

        glyphs.bare_glyphs(rgb, scene, np.random.default_rng([seed, 7, int(scene.get("seed", 0))]),
                           bare_glyph)
    if keystone and split == "train" and rng.random() < keystone:
        # A photo from a player's seat: the far edge of the table narrower than the near one
        # (the scenes' own camera tilt is at most 20 degrees, far milder).
        from datasets.groundtruth import seat_view

        scene, rgb = seat_view(scene, rgb, 1.0, float(rng.uniform(*KEYSTONE_FAR)))
    h, w = rgb.shape[:2]
    readable = index_boxes(scene, min_visible)
    boxes = np.array([b["box"] for b in readable], dtype=np.float32).reshape(-1, 4)
    quads = np.array([b["quad"] for b in readable], dtype=np.float32).reshape(-1, 4, 2) if polygons else None
    focus = np.array([b["rank"] in focus_ranks for b in readable], bool) if focus_ranks else None
    if focus is not None and not focus.any():
        return []  # a focused set holds only tiles around the asked-for ranks
    # Boxes a reader could partly see are neither positive nor safe negatives; tiles that
    # cut through them are still fine, YOLO just sees them as background (rare).
    written = []
    stem = Path(json_path).stem
    # its own draws: the tiles' places are the same with and without `stroke`
    stroke_rng = np.random.default_rng([seed, 11, int(scene.get("seed", 0))])
    for t in range(tiles_per_scene):
        # Jitter the detection scale so the net sees indices a bit smaller and larger.
        long_side = DETECT_LONG_SIDE * float(rng.uniform(*SCALE_JITTER))
        s = min(1.0, long_side / max(h, w))
        sw, sh = round(w * s), round(h * s)
        if sw < tile or sh < tile:
            s = tile / min(w, h)
            sw, sh = round(w * s), round(h * s)
        sb = boxes * s
        x0, y0 = tile_origin(sb, tile, sw, sh, rng, focus)
        # Resize only the region needed (INTER_AREA, like the runtime) to keep this cheap.
        xa, ya = int(x0 / s), int(y0 / s)
        xb, yb = min(w, int(np.ceil((x0 + tile) / s)) + 1), min(h, int(np.ceil((y0 + tile) / s)) + 1)
        part = rgb[ya:yb, xa:xb]
        part = cv2.resize(part, (round((xb - xa) * s), round((yb - ya) * s)),
                          interpolation=cv2.INTER_AREA)
        ox, oy = x0 - xa * s, y0 - ya * s
        crop = part[int(round(oy)):int(round(oy)) + tile, int(round(ox)):int(round(ox)) + tile]
        if crop.shape[0] != tile or crop.shape[1] != tile:
            crop = cv2.copyMakeBorder(crop, 0, tile - crop.shape[0], 0, tile - crop.shape[1],
                                      cv2.BORDER_CONSTANT, value=(114, 114, 114))
        lines = yolo_lines(sb, x0, y0, tile, None if quads is None else quads * s)
        if split == "train" and quarter_turns and rng.random() < quarter_turns:
            # A photo taken from a side of the table shows every index turned sideways;
            # ultralytics' `degrees` only tilts, and the scenes are shot from the long sides.
            crop, lines = quarter_turn(crop, lines, int(rng.choice([1, 3])))
        if split == "train" and stroke and stroke_rng.random() < stroke:
            # Print a pixel thinner or bolder (a 2x2 max or min filter of the tile): the
            # held-out decks the detector misses most print hairline or heavy indices.
            crop = (cv2.dilate if stroke_rng.random() < 0.5 else cv2.erode)(crop, np.ones((2, 2), np.uint8))
        name = f"{stem}_{t}"
        cv2.imwrite(str(Path(out_dir) / split / "images" / f"{name}.jpg"), crop,
                    [cv2.IMWRITE_JPEG_QUALITY, 92])
        (Path(out_dir) / split / "labels" / f"{name}.txt").write_text("\n".join(lines))
        written.append((split, len(lines)))
    return written


def build_tiles(scene_dirs: dict[str, Path], out_dir: Path, tile: int, tiles_per_scene: dict,
                seed: int, max_scenes: dict[str, int] | None = None, jobs: int = 2,
                bare_glyph: float = 0.0, quarter_turns: float = 0.0,
                focus_ranks: tuple[str, ...] = (), polygons: bool = False,
                keystone: float = 0.0, stroke: float = 0.0,
                min_visible: float = MIN_VISIBLE) -> Path:
    """Write a YOLO dataset (images/labels per split + data.yaml) of one-class index tiles.

    With `focus_ranks`, every tile centres near an index of one of those ranks (scenes
    without one give no tiles): a set to add to the train tiles for ranks the detector finds
    worst (the jokers, whose art differs most between decks). With `polygons`, labels are the
    printed indices' four corners (`yolo_lines`). With `keystone`, that share of the train
    scenes is first warped as if photographed from a player's seat (far edge `KEYSTONE_FAR`
    of the near one's width; `datasets.groundtruth.keystone_scene`). With `stroke`, that
    share of the train tiles has its print a pixel thinner or bolder. Indices less visible
    than `min_visible` (the share of the index not under another card) are not labelled.
    """
    from multiprocessing import Pool

    tasks = []
    for split, d in scene_dirs.items():
        (out_dir / split / "images").mkdir(parents=True, exist_ok=True)
        (out_dir / split / "labels").mkdir(parents=True, exist_ok=True)
        files = scene_files(d)
        if max_scenes and max_scenes.get(split):
            files = files[: max_scenes[split]]
        tasks += [(str(f), str(out_dir), split, tile, tiles_per_scene[split], seed, bare_glyph,
                   quarter_turns, tuple(focus_ranks), polygons, keystone, stroke, min_visible)
                  for f in files]
    t0 = time.time()
    with Pool(jobs) as pool:
        results = [r for chunk in pool.imap_unordered(_tile_scene, tasks, chunksize=4)
                   for r in chunk]
    yaml = out_dir / "data.yaml"
    yaml.write_text(f"path: {out_dir}\ntrain: train/images\nval: val/images\n"
                    f"names:\n  0: index\n")
    stats = {s: {"tiles": sum(1 for r in results if r[0] == s),
                 "labels": sum(r[1] for r in results if r[0] == s)} for s in scene_dirs}
    (out_dir / "stats.json").write_text(json.dumps({"seed": seed, "tile": tile, "bare_glyph": bare_glyph,
                                                    "quarter_turns": quarter_turns,
                                                    "focus_ranks": list(focus_ranks), "polygons": polygons,
                                                    "keystone": keystone, "stroke": stroke,
                                                    "min_visible": min_visible, **stats,
                                                    "seconds": round(time.time() - t0)}))
    print(f"tiles: {stats} in {time.time() - t0:.0f} s", flush=True)
    return yaml


# ----------------------------------------------------------------------------------------
# Training and export


def export_detector(weights: Path, models_dir: Path = MODELS) -> Path:
    """Export a checkpoint to models/detector.onnx (dynamic input size) and update the meta."""
    from ultralytics import YOLO

    model = YOLO(str(weights))
    onnx_path = Path(model.export(format="onnx", dynamic=True, simplify=True, imgsz=640,
                                  opset=17, device="cpu"))
    models_dir.mkdir(exist_ok=True)
    dest = models_dir / "detector.onnx"
    shutil.copyfile(onnx_path, dest)
    meta_path = models_dir / "detector.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta["detector"] = {"file": "detector.onnx", "stride": 32, "classes": ["index"],
                        "arch": "yolo26n (from yolo26n.yaml, trained from scratch)",
                        "weights": str(weights.relative_to(ROOT)) if weights.is_relative_to(ROOT)
                        else str(weights)}
    meta.setdefault("runtime", {"conf": 0.25, "iou": 0.5, "long_sides": [1600, 640],
                                "min_side_ratio": 0.0})
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"exported {dest} ({dest.stat().st_size / 1e6:.1f} MB)", flush=True)
    return dest


def main(argv: list[str] | None = None) -> int:
    """Build tiles if needed, train (or resume), export."""
    ap = argparse.ArgumentParser(prog="python -m datasets.train", description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", type=Path, default=BUILD / "scenes",
                    help="rendered scenes: DIR/train and DIR/val (scene_*.json + images)")
    ap.add_argument("--tiles", type=Path, default=BUILD / "yolo-index",
                    help="where the YOLO tile dataset is written (reused when present)")
    ap.add_argument("--resume", action="store_true",
                    help="continue runs/detector from weights/last.pt")
    ap.add_argument("--name", default="detector")
    ap.add_argument("--tile", type=int, default=320)
    ap.add_argument("--tiles-per-scene", type=int, default=4)
    ap.add_argument("--max-scenes", type=int, default=0, help="cap on train scenes (0 = all)")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--hours", type=float, default=0.0,
                    help="train for this long instead of --epochs (ultralytics `time`)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-export", action="store_true")
    ap.add_argument("--skip-reader", action="store_true",
                    help="do not (re)train the rank/orientation reader afterwards")
    ap.add_argument("--export-only", type=Path, default=None, metavar="WEIGHTS")
    ap.add_argument("--init", type=Path, default=None, metavar="WEIGHTS",
                    help="start from these weights instead of from scratch: an ultralytics "
                         "*.pt, or an exported detector.onnx (see datasets/warmstart.py)")
    ap.add_argument("--degrees", type=float, default=45.0,
                    help="random tile rotation, +-degrees (real cards lie at any angle)")
    ap.add_argument("--bare-glyph", type=float, default=0.0,
                    help="share of train cards whose pip under the rank is erased in the tiles "
                         "(datasets/glyphs.py: teaches bare-glyph indices like tango's)")
    ap.add_argument("--quarter-turns", type=float, default=0.0,
                    help="share of train tiles turned by 90 degrees either way (photos taken "
                         "from a side of the table; val tiles stay as shot)")
    ap.add_argument("--extra-train", type=Path, nargs="*", default=[],
                    help="more folders of train images with YOLO labels beside them "
                         "(e.g. build/real-tiles/train/images from datasets.real_tiles)")
    ap.add_argument("--freeze", type=int, default=0, metavar="N",
                    help="keep the first N layers as they are (11 = yolo26n's backbone): a "
                         "continuation that trains only the neck and head")
    ap.add_argument("--lr", type=float, default=0.0,
                    help="initial learning rate (0 = ultralytics' optimizer=auto choice)")
    ap.add_argument("--focus-ranks", nargs="*", default=[], metavar="RANK",
                    help="centre every tile on an index of these ranks (e.g. JK J): a set to pass "
                         "to another run's --extra-train; use with --tiles-only")
    ap.add_argument("--polygons", action="store_true",
                    help="label tiles with the indices' four corners, not boxes (tight boxes under "
                         "rotation); --extra-train folders get polygon copies under TILES/extra-polygons")
    ap.add_argument("--keystone", type=float, default=0.0,
                    help="share of train scenes warped as if shot from a seat (far edge "
                         "0.4-0.9 of the near one) before tiling; val tiles stay as shot")
    ap.add_argument("--stroke", type=float, default=0.0,
                    help="share of train tiles whose print is made a pixel thinner or bolder")
    ap.add_argument("--min-visible", type=float, default=MIN_VISIBLE,
                    help="label indices from this visible share (default: MIN_VISIBLE); lower "
                         "teaches indices partly under the next card")
    ap.add_argument("--tiles-only", action="store_true",
                    help="build the tiles in --tiles and stop (no training)")
    args = ap.parse_args(argv)

    setup_offline()
    if args.export_only:
        export_detector(args.export_only)
        return 0
    from ultralytics import YOLO

    run_dir = RUNS / args.name
    last = run_dir / "weights" / "last.pt"
    t0 = time.time()
    if args.resume and last.exists():
        print(f"resuming {last}", flush=True)
        YOLO(str(last)).train(resume=True, workers=0, device="cpu")
    else:
        yaml = args.tiles / "data.yaml"
        if not yaml.exists():
            splits = {s: args.scenes / s for s in ("train", "val") if (args.scenes / s).is_dir()}
            if "train" not in splits:
                print(f"no scenes in {args.scenes}/train: build them first "
                      "(see datasets/README.md)", file=sys.stderr)
                return 2
            if "val" not in splits:
                print(f"no {args.scenes}/val: validating on train scenes", file=sys.stderr)
            val_dir = splits.get("val", splits["train"])
            yaml = build_tiles({"train": splits["train"], "val": val_dir}, args.tiles, args.tile,
                               {"train": args.tiles_per_scene, "val": 2}, args.seed,
                               {"train": args.max_scenes, "val": 150}, args.jobs, args.bare_glyph,
                               args.quarter_turns, tuple(args.focus_ranks), args.polygons,
                               args.keystone, args.stroke, args.min_visible)
        if args.tiles_only:
            print(f"tiles in {args.tiles}", flush=True)
            return 0
        if args.extra_train:  # more train images (e.g. datasets.real_tiles), same val
            mixed = args.tiles / f"data-{args.name}.yaml"
            train_dirs = [str((args.tiles / "train" / "images").resolve())]
            extra_dirs = args.extra_train
            if args.polygons:  # one label kind per dataset: box folders get polygon copies
                extra_dirs = [polygon_labels(d, args.tiles / "extra-polygons"
                                             / f"{i}-{d.parent.parent.name}-{d.parent.name}")
                              for i, d in enumerate(args.extra_train)]
            train_dirs += [str(d.resolve()) for d in extra_dirs]
            mixed.write_text(f"path: {args.tiles.resolve()}\ntrain: {json.dumps(train_dirs)}\n"
                             f"val: val/images\nnames:\n  0: index\n")
            yaml = mixed
        if args.init:  # continue from earlier weights (a checkpoint, or the shipped ONNX)
            init = args.init
            if init.suffix == ".onnx":
                from datasets import warmstart

                init = run_dir.parent / f"{args.name}-init.pt"
                calib = sorted((yaml.parent / "train" / "images").glob("*.jpg"))[::7][:256]
                model_init = warmstart.recover(args.init, "yolo26n.yaml", calib, args.tile)
                print(f"warm start from {args.init}: raw-output difference from the ONNX "
                      f"{warmstart.max_difference(model_init, args.init, calib[:16], args.tile):.1e}",
                      flush=True)
                warmstart.save_checkpoint(model_init, init)
            model = YOLO(str(init))
        else:
            model = YOLO("yolo26n.yaml")  # architecture only: a *.pt name would download weights
        extra = {"time": args.hours} if args.hours else {}
        if args.lr:
            extra.update(optimizer="AdamW", lr0=args.lr)
        if args.freeze:
            extra["freeze"] = args.freeze
        model.train(data=str(yaml), epochs=args.epochs, imgsz=args.tile, batch=args.batch,
                    workers=0, device="cpu", project=str(RUNS), name=args.name, exist_ok=True,
                    seed=args.seed, single_cls=True, degrees=args.degrees, close_mosaic=1, patience=100,
                    warmup_epochs=0.5,  # ~110 steps: with few long epochs the default 3 wastes half a run
                    plots=True, amp=False, cache=False, verbose=True, **extra)
    print(f"training took {(time.time() - t0) / 60:.1f} min", flush=True)
    best = run_dir / "weights" / "best.pt"
    if not args.no_export:
        export_detector(best if best.exists() else last)
    if not args.skip_reader:
        from datasets import train_classifier

        return train_classifier.main(["--scenes", str(args.scenes), "--seed", str(args.seed)])
    return 0


if __name__ == "__main__":
    sys.exit(main())

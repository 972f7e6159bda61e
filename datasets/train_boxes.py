"""Train the box refiner: where exactly is the index inside a detector's box? Export to ONNX.

`python -m datasets.train_boxes` cuts, around every readable index of rendered scenes, the
square crop the runtime would cut around a detector's box for it (`crop_indices`: 1.6x
the box's longer side, 48 px), with the box misplaced the way detectors misplace boxes
(wider than the print more often than narrower, moved by a tenth of its size). A CNN (the
readers' conv body, its 6x6 map flattened) learns the printed index's box in crop
coordinates (0..1). Why: on the unseen test designs many indices are found with a box
around the right glyph that does not match the label (kde-oxygen-white: 93.6% of its
indices at IoU >= 0.5 but 98.5% with the box's centre inside; a vertical JOKER boxed
whole where the index is its first letters); such a box counts as a miss in mAP50 and
gives the layout a wrong index size.

Crops are turned by quarter turns in training (boxes turned with them); the result goes
to `refiner.onnx` in the run folder (`--models models`: the shipped file), its geometry and
learning curve to `detector.json` beside it ("refiner"); the runtime uses it when
`detector.json` names it (scanner/detector.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from datasets.train import BUILD, MIN_VISIBLE, index_boxes, scene_files
from datasets.train_classifier import (
    conv_features,
    fit,
    parse_with_models,
    photometric,
    rank_class,
    record_model,
    scene_pixels,
)
from scanner.classes import CLASS_ID
from scanner.detector import crop_geometry, crop_indices, turn_boxes

CROP_SIZE = 48
CROP_MARGIN = 1.6


def jittered(box: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A detector-like box for a printed index box (xyxy): each side scaled by a log-normal
    factor leaning wide (median 1.05, 5-95% about 0.75-1.5 with the shared factor), the
    centre moved by about a tenth of the longer side."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    bw, bh = box[2] - box[0], box[3] - box[1]
    f = np.exp(rng.normal(0.05, 0.12))
    fx, fy = f * np.exp(rng.normal(0, 0.15)), f * np.exp(rng.normal(0, 0.15))
    ox, oy = rng.normal(0, 0.09, 2) * max(bw, bh)
    return np.array([cx + ox - bw * fx / 2, cy + oy - bh * fy / 2,
                     cx + ox + bw * fx / 2, cy + oy + bh * fy / 2], np.float32)


def whole_word(box: np.ndarray, angle: float, rng: np.random.Generator) -> np.ndarray:
    """The box of a joker's index grown down its card (the way the word JOKER runs, `angle`
    its top's direction) to 1.4-1.9 times its length: a detector often boxes the whole
    vertical word where the label is its first letters."""
    up = np.array([np.sin(np.radians(angle)), -np.cos(np.radians(angle))])
    length = abs(up[0]) * (box[2] - box[0]) + abs(up[1]) * (box[3] - box[1])
    shift = -up * length * (rng.uniform(1.4, 1.9) - 1)
    moved = box + np.array([shift[0], shift[1], shift[0], shift[1]], np.float32)
    return np.concatenate([np.minimum(box[:2], moved[:2]), np.maximum(box[2:], moved[2:])]).astype(np.float32)


def crop_targets(printed: np.ndarray, boxes: np.ndarray, margin: float) -> np.ndarray:
    """The printed boxes (N,4 xyxy) in the coordinates of the crops cut around `boxes`:
    0 and 1 are the crop's edges."""
    x0, y0, side = crop_geometry(boxes, margin)
    return ((printed - np.stack([x0, y0, x0, y0], 1)) / side[:, None]).astype(np.float32)


def _scene_box_crops(args: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Crops (N,S,S,3) and targets (N,4) of one scene."""
    json_path, jitters, seed, bare_glyph, joker_words, keystone = args
    scene, rgb, s = scene_pixels(json_path, seed, bare_glyph, keystone)
    rng = np.random.default_rng([seed, int(scene.get("seed", 0)), len(str(json_path))])
    items = index_boxes(scene, MIN_VISIBLE)
    if not items:
        return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8), np.zeros((0, 4), np.float32)
    labels, boxes = [], []
    for it in items:
        printed = np.asarray(it["box"], np.float32) * s
        joker = rank_class(it) == CLASS_ID["JK"]
        for _ in range(jitters):
            grown = (whole_word(printed, float(it["angle"]), rng)
                     if joker_words and joker and rng.random() < joker_words else printed)
            labels.append(printed)
            boxes.append(jittered(grown, rng))
    labels, boxes = np.stack(labels), np.stack(boxes)
    return (crop_indices(rgb, boxes, CROP_SIZE, CROP_MARGIN),
            crop_targets(labels, boxes, CROP_MARGIN))


def build_crops(scene_dir: Path, out: Path, max_scenes: int, jitters: int, seed: int,
                jobs: int, bare_glyph: float = 0.0, joker_words: float = 0.0,
                keystone: float = 0.0) -> Path:
    """Cut and cache the crops and targets of up to `max_scenes` scenes as an .npz file
    (with `keystone`, that share of the scenes seen from a seat: `scene_pixels`)."""
    files = scene_files(scene_dir)[: max_scenes or None]
    if not files:
        raise SystemExit(f"no scenes in {scene_dir}")
    t0 = time.time()
    with Pool(jobs) as pool:
        parts = pool.map(_scene_box_crops, [(str(f), jitters, seed, bare_glyph, joker_words, keystone)
                                              for f in files],
                         chunksize=4)
    crops = np.concatenate([p[0] for p in parts])
    targets = np.concatenate([p[1] for p in parts])
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, crops=crops, targets=targets)
    print(f"{out}: {len(crops)} crops from {len(files)} scenes in {time.time() - t0:.0f} s",
          flush=True)
    return out


def make_model():
    """The refiner: the readers' conv body, its 6x6 map flattened, two linear layers to
    the box (x1, y1, x2, y2) in crop coordinates."""
    from torch import nn

    side = -(-CROP_SIZE // 8)  # three stride-2 blocks
    return nn.Sequential(conv_features(pool=False), nn.Flatten(),
                         nn.Linear(96 * side * side, 128), nn.ReLU(inplace=True),
                         nn.Linear(128, 4))


def turn_targets(t: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Crop-coordinate boxes (N,4) after `k` (N,) counter-clockwise quarter turns of their
    crops (np.rot90 / torch.rot90 on (H, W)): `turn_boxes` on a 1 x 1 image."""
    out = np.array(t, np.float32)
    for q in range(1, 4):
        out[k == q] = turn_boxes(out[k == q], 1, 1, q)
    return out


def paired_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of row i of `a` with row i of `b` (both (N,4) xyxy)."""
    wh = np.clip(np.minimum(a[:, 2:], b[:, 2:]) - np.maximum(a[:, :2], b[:, :2]), 0, None)
    inter = wh[:, 0] * wh[:, 1]
    areas = [(x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1]) for x in (a, b)]
    return inter / np.maximum(areas[0] + areas[1] - inter, 1e-9)


def evaluate(model, crops: np.ndarray, targets: np.ndarray) -> dict:
    """IoU of the refined boxes with the printed ones: median, and the shares at 0.5 and
    0.7. (Run histories before 2026-12-02 02:20 also list `square_box_iou50`: the square
    middle of each crop against the print, a baseline of no use, since removed.)"""
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(crops), 1024):
            x = torch.from_numpy(crops[i:i + 1024]).permute(0, 3, 1, 2).float() / 255
            out.append(model(x).numpy())
    iou = paired_iou(np.concatenate(out), targets)
    return {"iou_median": float(np.median(iou)), "iou50": float((iou >= 0.5).mean()),
            "iou70": float((iou >= 0.7).mean())}


def train(train_npz: list[Path], val_npz: Path, epochs: int, seed: int, threads: int,
          out_dir: Path, epoch_size: int, batch: int, lr: float, init: Path | None = None):
    """Train the refiner; returns the model and one metrics row per epoch."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(seed)
    parts = [np.load(p) for p in train_npz]
    x_all = torch.from_numpy(np.concatenate([z["crops"] for z in parts])).permute(0, 3, 1, 2).contiguous()
    t_all = torch.from_numpy(np.concatenate([z["targets"] for z in parts]))
    va = np.load(val_npz)
    model = make_model()
    if init is not None and init.suffix == ".onnx":  # continue from a shipped refiner
        from datasets.warmstart import recover_sequential

        pick = torch.randperm(len(x_all), generator=gen)[:2048]
        diff = recover_sequential(model, init, x_all[pick].float() / 255.0)
        print(f"refiner: warm start from {init}, largest box difference from the ONNX "
              f"{diff:.1e}", flush=True)
    elif init is not None:
        model.load_state_dict(torch.load(init, map_location="cpu"))
    print(f"refiner: {sum(p.numel() for p in model.parameters())} parameters, "
          f"{len(x_all)} train crops", flush=True)

    def batch_loss(idx):
        x = x_all[idx].float() / 255
        k = torch.randint(0, 4, (len(idx),), generator=gen)
        for q in range(1, 4):
            m = k == q
            x[m] = torch.rot90(x[m], q, dims=(2, 3))
        x = photometric(x, gen)
        target = torch.from_numpy(turn_targets(t_all[idx].numpy(), k.numpy()))
        return torch.nn.functional.smooth_l1_loss(model(x), target, beta=0.05)

    history = fit(model, len(x_all), batch_loss, lambda: evaluate(model, va["crops"], va["targets"]),
                  epochs, epoch_size, batch, lr, gen, out_dir)
    return model, history


def export(model, path: Path) -> None:
    """ONNX with a dynamic batch: input `crops` (N,3,48,48) in [0,1]; output `boxes` (N,4)."""
    import torch

    model.eval()
    torch.onnx.export(model, (torch.zeros(1, 3, CROP_SIZE, CROP_SIZE),), str(path),
                      input_names=["crops"], output_names=["boxes"], opset_version=17,
                      dynamic_axes={"crops": {0: "n"}, "boxes": {0: "n"}}, dynamo=False)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; the network goes to `--models`, by default the run folder."""
    ap = argparse.ArgumentParser(prog="python -m datasets.train_boxes")
    ap.add_argument("--scenes", type=Path, nargs="+", default=[BUILD / "scenes"],
                    help="scene folders (each with train/ and val/) whose train scenes are cut")
    ap.add_argument("--cache", type=Path, default=BUILD / "box-crops",
                    help="crop cache: one <folder name>.npz per scene folder, val.npz")
    ap.add_argument("--max-scenes", type=int, default=800, help="train scenes per folder")
    ap.add_argument("--jitters", type=int, default=2)
    ap.add_argument("--bare-glyph", type=float, default=0.3,
                    help="share of cards whose pip under the rank is erased (datasets/glyphs.py)")
    ap.add_argument("--joker-words", type=float, default=0.4,
                    help="share of a joker's crops cut around its whole vertical word (whole_word)")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--epoch-size", type=int, default=40000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--init", type=Path, help="continue from these weights (a run's last.pt, or "
                         "the shipped models/refiner.onnx)")
    ap.add_argument("--run", type=Path, default=Path("runs") / "refiner")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--crops-only", action="store_true", help="cut and cache the crops and stop")
    ap.add_argument("--keystone", type=float, default=0.0, metavar="SHARE",
                    help="that share of the train scenes seen from a player's seat when their crops "
                         "are cut (datasets.groundtruth.seat_view; default 0)")
    return parse_with_models(ap, argv)


def main(argv: list[str] | None = None) -> int:
    """Cut crops (cached per scene folder), train, export to MODELS/refiner.onnx (the run
    folder unless `--models` says otherwise)."""
    args = parse_args(argv)

    parts = []
    for i, folder in enumerate(args.scenes):
        npz = args.cache / f"{folder.name}.npz"
        if not npz.exists():
            build_crops(folder / "train", npz, args.max_scenes, args.jitters, args.seed + i,
                        args.jobs, args.bare_glyph, args.joker_words, args.keystone)
        parts.append(npz)
    val_npz = args.cache / "val.npz"
    if not val_npz.exists():  # the first folder's val scenes, pips kept as printed
        build_crops(args.scenes[0] / "val", val_npz, 150, 1, args.seed + 100, args.jobs)
    if args.crops_only:
        return 0
    model, history = train(parts, val_npz, args.epochs, args.seed, args.threads, args.run,
                           args.epoch_size, args.batch, args.lr, args.init)
    args.models.mkdir(parents=True, exist_ok=True)
    export(model, args.models / "refiner.onnx")
    record_model(args.models, "refiner", {
        "file": "refiner.onnx", "crop_size": CROP_SIZE, "crop_margin": CROP_MARGIN,
        "boxes": "the printed index's x1 y1 x2 y2 in crop coordinates (0..1)", "history": history})
    return 0


if __name__ == "__main__":
    sys.exit(main())

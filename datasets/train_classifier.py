"""Train the second-stage index reader (rank + orientation) and export it to ONNX.

`python -m datasets.train_classifier` (training venv: plain PyTorch, no ultralytics)
cuts every readable index of the rendered training scenes out of the photo exactly as the
runtime does (`scanner.detector.crop_indices`: a square of 1.3x the box's longer side,
resized to 40 px), with the box jittered the way a detector misplaces it, plus random
non-index crops of the same sizes labelled "none". A ~100k-parameter CNN learns the rank
(the 15 `INDEX_CLASSES`, then "none") and the direction the index's card top points as
(cos, sin). Crops are rotated by quarter turns during training (angle label turned with
them) so every rank is seen in every orientation. The result goes to `classifier.onnx`
in the run folder (`--models models`: the shipped file), its settings to `detector.json`
beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from datasets.groundtruth import seat_view
from datasets.train import BUILD, KEYSTONE_FAR, MIN_VISIBLE, MODELS, index_boxes, scene_files
from scanner.classes import CLASS_ID, INDEX_CLASSES
from scanner.detector import CROP_MARGIN, CROP_SIZE, box_iou, crop_indices

CLASSES = (*INDEX_CLASSES, "none")
NONE_ID = len(INDEX_CLASSES)
DECODE_LONG_SIDE = 2000  # the runtime crops from a JPEG decoded at about this size


def rank_class(item: dict) -> int | None:
    """Class id of an index from its scene record (rank, or card token for the threes)."""
    rank = str(item.get("rank") or "").upper()
    if rank in CLASS_ID:
        return CLASS_ID[rank]
    card = str(item.get("card") or "").upper()
    if card.startswith("3") and len(card) >= 2:
        return CLASS_ID["3R"] if card[1] in "HDR" else CLASS_ID["3B"]
    if card in ("JK", "JOKER") or rank in ("JOKER",):
        return CLASS_ID["JK"]
    if card[:-1] in CLASS_ID:
        return CLASS_ID[card[:-1]]
    return None


def printed_boxes(scene: dict, scale: float = 1.0) -> np.ndarray:
    """Every printed index box of a scene, covered ones too (xyxy, times `scale`)."""
    return np.array([ind["box"] for c in scene["cards"] for ind in c.get("indices", [])],
                    dtype=np.float32).reshape(-1, 4) * scale


def scene_pixels(json_path: str | Path, seed: int, bare_glyph: float,
                 keystone: float = 0.0) -> tuple[dict, np.ndarray, float]:
    """A rendered scene's record, its photo decoded as the runtime decodes it (a reduced-size
    JPEG decode near `DECODE_LONG_SIDE`) and the decode's scale; with `bare_glyph`, that share
    of the cards lose the pip under the rank (datasets/glyphs.py), as in the detector's tiles;
    with `keystone`, that share of the scenes is seen from a player's seat (`seat_view`)."""
    from PIL import Image

    scene = json.loads(Path(json_path).read_text())
    img = Image.open(Path(json_path).with_name(scene["image"]["file"]))
    w0, h0 = img.size
    k = DECODE_LONG_SIDE / max(w0, h0)
    if k < 1:
        img.draft("RGB", (int(w0 * k), int(h0 * k)))
    rgb = np.asarray(img.convert("RGB"))
    s = rgb.shape[1] / w0
    if bare_glyph:
        from datasets import glyphs

        rgb = rgb.copy()
        glyphs.bare_glyphs(rgb, scene, np.random.default_rng([seed, 7, int(scene.get("seed", 0))]),
                           bare_glyph, scale=s)
    if keystone:
        rng = np.random.default_rng([seed, 11, int(scene.get("seed", 0))])
        if rng.random() < keystone:
            scene, rgb = seat_view(scene, rgb, s, float(rng.uniform(*KEYSTONE_FAR)))
    return scene, rgb, s


def _scene_crops(args: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crops (N,S,S,3), class ids (N,), angles (N,) of one scene."""
    json_path, jitters, neg_ratio, seed, bare_glyph, crop_size, crop_margin, keep, keystone = args
    scene, rgb, s = scene_pixels(json_path, seed, bare_glyph, keystone)
    rng = np.random.default_rng([seed, int(scene.get("seed", 0)), len(str(json_path))])
    items = index_boxes(scene, MIN_VISIBLE)
    all_boxes = printed_boxes(scene, s)
    boxes, labels, angles = [], [], []
    for it in items:
        cid = rank_class(it)
        if cid is None or (keep is not None and cid not in keep):
            continue
        b = np.asarray(it["box"], dtype=np.float32) * s
        cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        bw, bh = b[2] - b[0], b[3] - b[1]
        for j in range(jitters):
            # The first crop is exact; the others move/resize the box like detector error.
            d = 0.0 if j == 0 else 1.0
            f = float(np.exp(rng.normal(0, 0.12 * d)))
            fx, fy = f * float(np.exp(rng.normal(0, 0.06 * d))), f * float(np.exp(rng.normal(0, 0.06 * d)))
            ox, oy = rng.normal(0, 0.08 * d, 2) * max(bw, bh)
            boxes.append([cx + ox - bw * fx / 2, cy + oy - bh * fy / 2,
                          cx + ox + bw * fx / 2, cy + oy + bh * fy / 2])
            labels.append(cid)
            angles.append(float(it["angle"]))
    n_neg = int(round(len(items) * neg_ratio)) + 2 if keep is None else 0
    h, w = rgb.shape[:2]
    sizes = (all_boxes[:, 2:] - all_boxes[:, :2]) if len(all_boxes) else np.array([[30., 40.]])
    outlines = [np.asarray(c["outline"], np.float32) * s for c in scene["cards"] if c.get("outline")]
    card_boxes = np.array([[o[:, 0].min(), o[:, 1].min(), o[:, 0].max(), o[:, 1].max()]
                           for o in outlines], np.float32) if outlines else None
    tries = 0
    while n_neg > 0 and tries < 200:
        tries += 1
        bw, bh = sizes[rng.integers(len(sizes))] * float(np.exp(rng.normal(0, 0.3)))
        if card_boxes is not None and rng.random() < 0.6:
            # Most false detections sit on cards (pips, faces, edges), so most negatives do.
            cb = card_boxes[rng.integers(len(card_boxes))]
            x1 = rng.uniform(cb[0] - bw / 2, cb[2] - bw / 2)
            y1 = rng.uniform(cb[1] - bh / 2, cb[3] - bh / 2)
        else:
            x1, y1 = rng.uniform(0, max(w - bw, 1)), rng.uniform(0, max(h - bh, 1))
        nb = np.array([x1, y1, x1 + bw, y1 + bh], dtype=np.float32)
        if len(all_boxes) and box_iou(nb, all_boxes).max() > 0.05:
            continue
        boxes.append(nb.tolist())
        labels.append(NONE_ID)
        angles.append(float("nan"))
        n_neg -= 1
    crops = crop_indices(rgb, np.asarray(boxes, dtype=np.float32).reshape(-1, 4), crop_size,
                         crop_margin)
    return crops, np.asarray(labels, np.int64), np.asarray(angles, np.float32)


def mine_negatives(scene_dir: Path, out: Path, models: Path | None, max_scenes: int,
                   min_score: float = 0.2, max_iou: float = 0.1, seed: int = 0,
                   crop_size: int = CROP_SIZE, crop_margin: float = CROP_MARGIN,
                   detector=None) -> Path:
    """Cache the detector's own false boxes on rendered scenes as "none" crops.

    The reader's second job is to drop what the detector wrongly proposes (court pictures,
    pips, card edges, the lower letters of a JOKER); random boxes on cards teach that only
    loosely. Every box of `models`' detector with a score of at least `min_score` that
    overlaps no printed index (IoU under `max_iou` with every index box, covered ones too)
    is cut out exactly as the runtime cuts it (decoded at the runtime's size). `detector`
    (anything with `locate` and `decode_long_side`) replaces the one loaded from `models`.
    """
    from scanner.detector import OnnxDetector
    from scanner.imageio import load_photo

    if detector is None:
        detector = OnnxDetector(models, conf=min_score, threads=1)
    files = scene_files(scene_dir)
    files = [files[i] for i in sorted(np.random.default_rng(seed).permutation(len(files))[: max_scenes or None])]
    t0 = time.time()
    crops = []
    for f in files:
        scene = json.loads(f.read_text())
        photo = load_photo(f.with_name(scene["image"]["file"]), long_side=detector.decode_long_side)
        boxes, _scores = detector.locate(photo.rgb)
        printed = printed_boxes(scene, photo.scale)
        false = [b for b in boxes if not len(printed) or box_iou(b, printed).max() < max_iou]
        if false:
            crops.append(crop_indices(photo.rgb, np.asarray(false, np.float32), crop_size, crop_margin))
    n = _save_none_crops(out, crops, crop_size)
    print(f"{out.name}: {n} false detector boxes from {len(files)} scenes "
          f"in {time.time() - t0:.0f} s", flush=True)
    return out


def _save_none_crops(out: Path, crops: list[np.ndarray], crop_size: int) -> int:
    """Save batches of crops as one "none" crop file (no angle); returns how many."""
    crops = np.concatenate(crops) if crops else np.zeros((0, crop_size, crop_size, 3), np.uint8)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, crops=crops, labels=np.full(len(crops), NONE_ID, np.int64),
             angles=np.full(len(crops), np.nan, np.float32))
    return len(crops)


def mine_real_negatives(folder: Path, out: Path, models: Path | None, min_score: float = 0.05,
                        crop_size: int = CROP_SIZE, crop_margin: float = CROP_MARGIN,
                        detector=None) -> Path:
    """Cache the detector's boxes on the real train photos' backgrounds as "none" crops.

    The mined scene negatives are boxes on rendered tables; real photos show what those do
    not (the print of a cookie box, a book's letters: read as a joker or a 10 by a wider
    reader). Of the photos `datasets.real_tiles.training_photos` trains on (never the
    calibration third, never a folder named test), every box of `models`' detector with a
    score of at least `min_score` whose centre lies in no labelled card (a box on a card
    may be an index the labels do not mark, so none of those) is cut as the runtime cuts it.
    The default score is under the run-time floor: at 0.2 the 197 photos give 90 boxes, at
    0.05 414.
    """
    from datasets.real_tiles import card_labels, is_test_folder, training_photos
    from scanner.detector import OnnxDetector
    from scanner.imageio import load_photo

    if is_test_folder(folder):
        raise SystemExit(f"{folder}: the real test photos are never trained on")
    if detector is None:
        detector = OnnxDetector(models, conf=min_score, threads=1)
    photos = training_photos(folder)
    if not photos:
        raise SystemExit(f"no labelled photos in {folder}")
    t0 = time.time()
    crops = []
    for p in photos:
        photo = load_photo(p, long_side=detector.decode_long_side)
        boxes, _scores = detector.locate(photo.rgb)
        cards = np.array([box for _rank, box in card_labels(p.with_suffix(".xml"))],
                         np.float32).reshape(-1, 4) * photo.scale
        xyxy = np.asarray(boxes, np.float32).reshape(-1, 4)
        centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
        on_card = ((centres[:, None, 0] >= cards[None, :, 0]) & (centres[:, None, 0] <= cards[None, :, 2])
                   & (centres[:, None, 1] >= cards[None, :, 1])
                   & (centres[:, None, 1] <= cards[None, :, 3])).any(axis=1)
        if not on_card.all():
            crops.append(crop_indices(photo.rgb, xyxy[~on_card], crop_size, crop_margin))
    n = _save_none_crops(out, crops, crop_size)
    print(f"{out.name}: {n} detector boxes off the cards of {len(photos)} real photos "
          f"in {time.time() - t0:.0f} s", flush=True)
    return out


def build_crops(scene_dir: Path, out: Path, max_scenes: int, jitters: int, neg_ratio: float,
                seed: int, jobs: int, bare_glyph: float = 0.0, crop_size: int = CROP_SIZE,
                crop_margin: float = CROP_MARGIN, keep: tuple[int, ...] | None = None,
                keystone: float = 0.0) -> Path:
    """Cut and cache the crop dataset of one split as an .npz file (crops of `crop_size`
    pixels, `crop_margin` times the box's longer side); with `keep`, only indices of those
    classes and no "none" crops; with `keystone`, that share of the scenes seen from a seat."""
    files = scene_files(scene_dir)[: max_scenes or None]
    if not files:
        raise SystemExit(f"no scenes in {scene_dir}")
    t0 = time.time()
    with Pool(jobs) as pool:
        parts = pool.map(_scene_crops, [(str(f), jitters, neg_ratio, seed, bare_glyph, crop_size,
                                          crop_margin, keep, keystone) for f in files],
                         chunksize=4)
    crops = np.concatenate([p[0] for p in parts])
    labels = np.concatenate([p[1] for p in parts])
    angles = np.concatenate([p[2] for p in parts])
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, crops=crops, labels=labels, angles=angles)
    print(f"{out.name}: {len(crops)} crops from {len(files)} scenes "
          f"({(labels == NONE_ID).sum()} none) in {time.time() - t0:.0f} s", flush=True)
    return out


# the readers' body's channels, block by block, at width 1
BODY_CHANNELS = (24, 32, 48, 64, 96, 96)


def body_channels(width: float = 1.0) -> tuple[int, ...]:
    """The body's channels at `width` times the shipped reader's (multiples of 8)."""
    return tuple(int(round(c * width / 8)) * 8 for c in BODY_CHANNELS)


def conv_features(pool: bool = True, width: float = 1.0):
    """The readers' body: 6 conv blocks (40 px -> 5 px), then global pooling to 96 features
    (`width` times as many channels throughout; without `pool`, the last map is left as it
    is)."""
    from torch import nn

    def block(cin: int, cout: int, stride: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    c = body_channels(width)
    return nn.Sequential(
        block(3, c[0], 1), block(c[0], c[1], 2),      # 40 -> 20
        block(c[1], c[2], 1), block(c[2], c[3], 2),   # 20 -> 10
        block(c[3], c[4], 1), block(c[4], c[5], 2),   # 10 -> 5
        *((nn.AdaptiveAvgPool2d(1), nn.Flatten()) if pool else ()))


def make_model(width: float = 1.0):
    """The index reader: the conv body, a rank head and an angle head."""
    import torch
    from torch import nn

    features = body_channels(width)[-1]

    class IndexReader(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = conv_features(width=width)
            self.rank = nn.Linear(features, len(CLASSES))
            self.angle = nn.Linear(features, 2)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            f = self.features(x)
            return self.rank(f), self.angle(f)

    return IndexReader()


def _turn(x, deg):
    """Turn crops (N,C,H,W) clockwise on screen by `deg` (N,) degrees about their centre,
    zooming out by up to 1.3x as the turn nears 45 degrees; edges repeat outward."""
    import torch

    r = torch.deg2rad(deg)
    c, s = torch.cos(r), torch.sin(r)
    zoom = 1.0 + 0.3 * torch.abs(torch.sin(2 * r))
    zero = torch.zeros_like(c)
    # affine_grid maps output to input coordinates (y down): the inverse of a clockwise turn
    theta = torch.stack([torch.stack([c * zoom, s * zoom, zero], 1),
                         torch.stack([-s * zoom, c * zoom, zero], 1)], 1)
    grid = torch.nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
    return torch.nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="border",
                                           align_corners=False)


def _augment(x, ang, gen, soft_min: int = 16):
    """Quarter turns and tilts (angle turned too), blur, brightness/contrast, noise; x in [0,1].
    `soft_min`: the smallest side (px) a softened crop is shrunk to."""
    import torch

    n = x.shape[0]
    k = torch.randint(0, 4, (n,), generator=gen)
    out = torch.empty_like(x)
    for q in range(4):
        m = k == q
        # rot90 with dims (H, W) turns the picture counter-clockwise: "up" becomes "left".
        out[m] = torch.rot90(x[m], q, dims=(2, 3))
    ang = torch.remainder(ang - 90.0 * k, 360.0)
    # Cards lie at any angle in real photos: half the crops also turn by up to 45 degrees,
    # zoomed out as a detector's axis-aligned box around a slanted index would crop it.
    tilt = torch.rand(n, generator=gen) < 0.5
    if tilt.any():
        deg = torch.empty(int(tilt.sum())).uniform_(-45.0, 45.0, generator=gen)
        out[tilt] = _turn(out[tilt], deg)
        ang[tilt] = torch.remainder(ang[tilt] + deg, 360.0)
    # Far or blurry photos: a third of the crops lose resolution (down to `soft_min`-30 px
    # and back).
    soft = torch.rand(n, generator=gen) < 0.33
    if soft.any():
        side = int(torch.randint(soft_min, 31, (1,), generator=gen))
        small = torch.nn.functional.interpolate(out[soft], size=(side, side), mode="area")
        out[soft] = torch.nn.functional.interpolate(small, size=x.shape[-2:], mode="bilinear",
                                                    align_corners=False)
    return photometric(out, gen), ang


def photometric(out, gen):
    """Brightness, contrast, tint and noise of crops (N,3,H,W) in [0,1], clamped."""
    import torch

    n = out.shape[0]
    gain = torch.empty(n, 1, 1, 1).uniform_(0.6, 1.3, generator=gen)
    bias = torch.empty(n, 1, 1, 1).uniform_(-0.15, 0.15, generator=gen)
    tint = torch.empty(n, 3, 1, 1).uniform_(0.85, 1.15, generator=gen)
    out = out * gain * tint + bias
    out = out + torch.randn(out.shape, generator=gen) * torch.empty(n, 1, 1, 1).uniform_(
        0, 0.05, generator=gen)
    return out.clamp(0, 1)


def evaluate(model, crops: np.ndarray, labels: np.ndarray, angles: np.ndarray) -> dict:
    """Rank accuracy on index crops, none-vs-index accuracy, angle error (degrees)."""
    import torch

    model.eval()
    preds, angs = [], []
    with torch.no_grad():
        for i in range(0, len(crops), 1024):
            x = torch.from_numpy(crops[i:i + 1024]).permute(0, 3, 1, 2).float() / 255
            lo, an = model(x)
            preds.append(lo.argmax(1).numpy())
            angs.append(np.degrees(np.arctan2(an[:, 1].numpy(), an[:, 0].numpy())))
    pred = np.concatenate(preds)
    ang = np.concatenate(angs)
    pos = labels != NONE_ID
    err = np.abs((ang[pos] - angles[pos] + 180) % 360 - 180)
    return {"rank_acc": float((pred[pos] == labels[pos]).mean()),
            "none_acc": float((pred[~pos] == NONE_ID).mean()) if (~pos).any() else None,
            "angle_err_median": float(np.median(err)),
            "quarter_turn_acc": float((err < 45).mean())}


def load_crops(paths: Path | list[Path]) -> dict[str, np.ndarray]:
    """Crops, labels and angles of one crop file or of several, concatenated in order (a
    file listed twice counts twice)."""
    parts = [np.load(p) for p in ([paths] if isinstance(paths, Path) else paths)]
    return {k: np.concatenate([z[k] for z in parts]) for k in ("crops", "labels", "angles")}


def fit(model, n_train: int, batch_loss, score, epochs: int, epoch_size: int, batch: int,
        lr: float, gen, out_dir: Path) -> list[dict]:
    """The readers' training loop: AdamW with a one-cycle schedule peaking at `lr`, each
    epoch `epoch_size` of the `n_train` samples (0 = all) in a random order, in batches whose
    loss `batch_loss(indices)` gives; after each epoch a row of `score()` is printed and
    kept, and the weights are saved to `out_dir`/last.pt. Returns the rows."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    per_epoch = min(epoch_size or n_train, n_train)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, pct_start=0.15,
                                                total_steps=epochs * (per_epoch // batch + 1))
    history: list[dict] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(n_train, generator=gen)[:per_epoch]
        total = 0.0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            loss = batch_loss(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        row = {"epoch": epoch + 1, "loss": total / per_epoch, "samples": per_epoch,
               "minutes": round((time.time() - t0) / 60, 2), **score()}
        history.append(row)
        print(json.dumps(row), flush=True)
        torch.save(model.state_dict(), out_dir / "last.pt")
    return history


def train(train_npz: Path | list[Path], val_npz: Path, epochs: int, seed: int, threads: int,
          out_dir: Path, epoch_size: int = 0, batch: int = 64,
          lr: float = 3e-3, init: Path | None = None,
          width: float = 1.0, soft_min: int = 16) -> tuple[object, list[dict]]:
    """Train the reader; returns the model and one metrics row per epoch."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(seed)
    tr, va = load_crops(train_npz), np.load(val_npz)
    x_all = torch.from_numpy(tr["crops"]).permute(0, 3, 1, 2).contiguous()
    y_all = torch.from_numpy(tr["labels"])
    a_all = torch.from_numpy(np.nan_to_num(tr["angles"], nan=0.0))
    model = make_model(width)
    if init is not None and init.suffix == ".onnx":  # continue from a shipped reader
        from datasets.warmstart import recover_sequential

        pick = torch.randperm(len(x_all), generator=gen)[:2048]
        try:
            diff = recover_sequential(model, init, x_all[pick].float() / 255.0)
        except ValueError as err:  # another shape: the reader was trained at another --width
            raise SystemExit(f"--init {init}: {err} (give the --width it was trained at)") from err
        print(f"reader: warm start from {init}, largest logit difference from the ONNX "
              f"{diff:.1e}", flush=True)
    elif init is not None:  # continue from an earlier run's weights (e.g. runs/classifier/last.pt)
        model.load_state_dict(torch.load(init, map_location="cpu"))
    params = sum(p.numel() for p in model.parameters())
    print(f"reader: {params} parameters, {len(x_all)} train crops", flush=True)
    ce = nn.CrossEntropyLoss(label_smoothing=0.02)

    def batch_loss(idx):
        x = x_all[idx].float() / 255
        x, ang = _augment(x, a_all[idx], gen, soft_min)
        y = y_all[idx]
        logits, vec = model(x)
        loss = ce(logits, y)
        pos = y != NONE_ID
        if pos.any():
            r = torch.deg2rad(ang[pos])
            target = torch.stack([torch.cos(r), torch.sin(r)], 1)
            loss = loss + nn.functional.mse_loss(vec[pos], target)
        return loss

    history = fit(model, len(x_all), batch_loss,
                  lambda: evaluate(model, va["crops"], va["labels"], va["angles"]),
                  epochs, epoch_size, batch, lr, gen, out_dir)
    return model, history


def export(model, path: Path, crop_size: int = CROP_SIZE) -> None:
    """ONNX with a dynamic batch: input `crops` (N,3,S,S) in [0,1]; outputs logits, angle."""
    import torch

    model.eval()
    dummy = torch.zeros(1, 3, crop_size, crop_size)
    torch.onnx.export(model, (dummy,), str(path), input_names=["crops"],
                      output_names=["rank_logits", "angle"], opset_version=17,
                      dynamic_axes={"crops": {0: "n"}, "rank_logits": {0: "n"}, "angle": {0: "n"}},
                      dynamo=False)


def record_model(models: Path, key: str, entry: dict) -> None:
    """Name an exported model (`entry`, with its file) under `key` in `models`/detector.json,
    the rest of the file kept, and the rest of the old entry too (the shipped reader's entry
    names the readers averaged with it, `also`)."""
    meta_path = models / "detector.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta[key] = {**meta.get(key, {}), **entry}
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"exported {models / entry['file']}", flush=True)


def check_cache_geometry(cache: Path, crop_size: int, crop_margin: float) -> None:
    """Refuse a crop cache cut with another crop geometry; record it for a new cache.

    A cache without a record was cut before the geometry was an option: 40 px at 1.3.
    """
    record = cache / "geometry.json"
    want = {"crop_size": crop_size, "crop_margin": crop_margin}
    if record.exists():
        have = json.loads(record.read_text())
    elif (cache / "train.npz").exists() or (cache / "val.npz").exists():
        have = {"crop_size": CROP_SIZE, "crop_margin": CROP_MARGIN}
    else:
        cache.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(want) + "\n")
        return
    if have != want:
        raise SystemExit(f"{cache} holds crops of {have['crop_size']} px at "
                         f"{have['crop_margin']}x the box, not {crop_size} px at {crop_margin}x: "
                         f"use another --cache")


def parse_with_models(ap: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """`argv` parsed by a training command's parser (one with `--run`) given `--models`: the
    folder the network is exported to, by default the run folder (never the shipped files
    unless asked)."""
    ap.add_argument("--models", type=Path, default=None,
                    help="where the ONNX file and its detector.json entry go (default: the --run "
                         "folder; `--models models` replaces the shipped network)")
    args = ap.parse_args(argv)
    args.models = args.models or args.run
    return args


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; the network goes to `--models`, by default the run folder."""
    ap = argparse.ArgumentParser(prog="python -m datasets.train_classifier")
    ap.add_argument("--scenes", type=Path, default=BUILD / "scenes")
    ap.add_argument("--cache", type=Path, default=BUILD / "index-crops")
    ap.add_argument("--max-scenes", type=int, default=800)
    ap.add_argument("--jitters", type=int, default=2)
    ap.add_argument("--neg-ratio", type=float, default=0.5)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--epoch-size", type=int, default=40000, help="crops drawn per epoch (0 = all)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--init", type=Path, default=None, help="start from these weights")
    ap.add_argument("--run", type=Path, default=Path("runs") / "classifier",
                    help="where checkpoints go")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--crop-size", type=int, default=CROP_SIZE,
                    help="crop side in pixels the reader reads (written to detector.json)")
    ap.add_argument("--crop-margin", type=float, default=CROP_MARGIN,
                    help="crop side as a multiple of the box's longer side (detector.json)")
    ap.add_argument("--bare-glyph", type=float, default=0.0,
                    help="share of train cards whose pip under the rank is erased (datasets/glyphs.py)")
    ap.add_argument("--mine-negatives", type=Path, metavar="MODELS",
                    help="also cut the false boxes of this models folder's detector on the train "
                         "scenes as 'none' crops (CACHE/negatives.npz, see mine_negatives)")
    ap.add_argument("--negative-scenes", type=int, default=500, help="scenes to mine (default 500)")
    ap.add_argument("--negatives-repeat", type=int, default=5,
                    help="times each cache's negatives.npz is listed in the training set (default 5)")
    ap.add_argument("--also", type=Path, nargs="*", default=[], metavar="CACHE",
                    help="more crop caches (same geometry) whose train.npz and negatives.npz "
                         "are trained on too, e.g. crops of the relettered scenes")
    ap.add_argument("--val-cache", type=Path, help="read val.npz from this cache instead")
    ap.add_argument("--crops-only", action="store_true", help="cut and cache the crops and stop")
    ap.add_argument("--real-negatives", type=Path, metavar="FOLDER",
                    help="also mine the detector's boxes off the cards of this real train folder's "
                         "training photos into CACHE/negatives-real.npz (with --mine-negatives' "
                         "models, else models/) and train on them")
    ap.add_argument("--real-negatives-repeat", type=int, default=10,
                    help="times the real negatives are listed (default 10)")
    ap.add_argument("--soft-min", type=int, default=16,
                    help="smallest side (px) the third of crops that lose resolution are shrunk "
                         "to before being enlarged back (default 16; at most 30)")
    ap.add_argument("--width", type=float, default=1.0,
                    help="channels of the reader's body times the shipped reader's (1.0)")
    ap.add_argument("--keystone", type=float, default=0.0, metavar="SHARE",
                    help="that share of the train scenes seen from a player's seat when their crops "
                         "are cut (far edge U(0.4, 0.9) of the near one: indices stretched and "
                         "squeezed as in such photos; default 0)")
    ap.add_argument("--six-nine", action="store_true",
                    help="train the 6/9 reader instead: crops of 6s and 9s only (no 'none'), "
                         "exported to MODELS/sixnine.onnx, its settings to detector.json 'six_nine' "
                         "(the runtime settles a 6 against a 9 with it, scanner/detector.py)")
    ap.add_argument("--direction", action="store_true",
                    help="train the direction reader instead: crops of every rank (no 'none'), "
                         "exported to MODELS/direction.onnx, its settings to detector.json "
                         "'direction' (the runtime settles the direction of the ranks runtime "
                         "'wide_direction' names with it, scanner/detector.py)")
    return parse_with_models(ap, argv)


def main(argv: list[str] | None = None) -> int:
    """Cut crops (cached), train, export to MODELS/classifier.onnx (the run folder unless
    `--models` says otherwise)."""
    args = parse_args(argv)
    if not 4 <= args.soft_min <= 30:
        raise SystemExit(f"--soft-min {args.soft_min}: a side from 4 to 30 px")
    if args.six_nine and args.direction:
        raise SystemExit("--six-nine and --direction train two different readers: pick one")
    keep = ((CLASS_ID["6"], CLASS_ID["9"]) if args.six_nine else
            tuple(CLASS_ID.values()) if args.direction else None)
    if keep is not None and args.mine_negatives:
        raise SystemExit("--six-nine and --direction train on indices only: no mined negatives")
    if keep is not None and args.real_negatives:
        raise SystemExit("--six-nine and --direction train on indices only: no real negatives")

    tr_npz, neg_npz = args.cache / "train.npz", args.cache / "negatives.npz"
    va_npz = (args.val_cache or args.cache) / "val.npz"
    for cache in (args.cache, *args.also, *([args.val_cache] if args.val_cache else [])):
        check_cache_geometry(cache, args.crop_size, args.crop_margin)
    if not tr_npz.exists():
        build_crops(args.scenes / "train", tr_npz, args.max_scenes, args.jitters, args.neg_ratio,
                    args.seed, args.jobs, args.bare_glyph, args.crop_size, args.crop_margin, keep,
                    args.keystone)
    if args.mine_negatives and not neg_npz.exists():
        mine_negatives(args.scenes / "train", neg_npz, args.mine_negatives, args.negative_scenes,
                       seed=args.seed, crop_size=args.crop_size, crop_margin=args.crop_margin)
    real_npz = args.cache / "negatives-real.npz"
    if args.real_negatives and not real_npz.exists():
        mine_real_negatives(args.real_negatives, real_npz, args.mine_negatives or MODELS,
                            crop_size=args.crop_size, crop_margin=args.crop_margin)
    if not va_npz.exists():
        val_dir = args.scenes / "val" if (args.scenes / "val").is_dir() else args.scenes / "train"
        build_crops(val_dir, va_npz, 150 if keep is None else 400, 1, args.neg_ratio, args.seed + 1,
                    args.jobs, crop_size=args.crop_size, crop_margin=args.crop_margin, keep=keep)
    if args.crops_only:
        return 0
    parts = []
    for cache in (args.cache, *args.also):
        if not (cache / "train.npz").exists():
            raise SystemExit(f"{cache} has no train.npz (cut it first with --crops-only)")
        parts.append(cache / "train.npz")
        if (cache / "negatives.npz").exists() and keep is None:
            parts += [cache / "negatives.npz"] * args.negatives_repeat
    if args.real_negatives:
        parts += [real_npz] * args.real_negatives_repeat
    model, history = train(parts, va_npz, args.epochs, args.seed, args.threads,
                           args.run, args.epoch_size, args.batch, args.lr, args.init,
                           args.width, args.soft_min)
    args.models.mkdir(parents=True, exist_ok=True)
    name, key = (("sixnine.onnx", "six_nine") if args.six_nine else
                 ("direction.onnx", "direction") if args.direction else
                 ("classifier.onnx", "classifier"))
    export(model, args.models / name, args.crop_size)
    record_model(args.models, key, {"file": name, "classes": list(CLASSES),
                                    "crop_size": args.crop_size, "crop_margin": args.crop_margin,
                                    "width": args.width, "soft_min": args.soft_min,
                                    "angle": "direction the card's top points, degrees, 0 = up, 90 = right",
                                    "history": history})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Weight-space ensemble of two detector checkpoints: `python -m datasets.soup BASE TUNED --alpha A --out W.pt`.

Every continuation of detector v5 so far gained on the synthetic sets and lost real photos'
cards (models/MODEL_CARD.md, v16-v20). Interpolating the weights of a model and of its own
fine-tuned continuation, (1 - A) * base + A * tuned, keeps much of the start's robustness
with part of the continuation's gain (Wortsman et al. 2022, "Robust fine-tuning of zero-shot
models", WiSE-FT). Both checkpoints must share the architecture (a continuation of BASE does).
BatchNorm running statistics are interpolated too; integer buffers come from TUNED.

With `--models DIR`, the result is also exported to `DIR/detector.onnx` (DIR's other files
first copied from `models/` when DIR does not exist), ready for `bench_detector --models DIR`.

The crop networks (an index reader, the box refiner) the same way, from the shipped ONNX file
and a continuation's `last.pt`: `python -m datasets.soup models/classifier.onnx
runs/NAME/last.pt --alpha A --crop-net reader [--width 1.5] --calib CROPS.npz --out OUT.onnx`
(`--crop-net refiner` for the refiner). The ONNX file is recovered by
`datasets.warmstart.recover_sequential`, its BatchNorms calibrated on the first 2,048 crops
of `--calib` (a crop cache's .npz); the result is exported as the trainers export it (a wide
reader is then halved by `datasets.halve`, as shipped).
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path


def load_model(path: Path):
    """The network of an ultralytics checkpoint (its EMA when it has one), in float32."""
    import torch

    ckpt = torch.load(str(path), map_location="cpu", weights_only=False)
    model = ckpt.get("ema") or ckpt.get("model") if isinstance(ckpt, dict) else ckpt
    if model is None:
        raise ValueError(f"{path}: no model in this checkpoint")
    return model.float()


def interpolate(base: dict, tuned: dict, alpha: float) -> dict:
    """(1 - alpha) * base + alpha * tuned for floating tensors; other entries from `tuned`.
    Tensors are torch's (state dicts) or numpy arrays."""
    if base.keys() != tuned.keys():
        missing = sorted(set(base) ^ set(tuned))[:5]
        raise ValueError(f"the two models differ in their layers (e.g. {missing})")
    out = {}
    for key, t in tuned.items():
        b = base[key]
        if tuple(t.shape) != tuple(b.shape):
            raise ValueError(f"{key}: shapes {tuple(b.shape)} and {tuple(t.shape)} differ")
        out[key] = (1 - alpha) * b + alpha * t if _is_float(t) else _copy(t)
    return out


def _is_float(t) -> bool:
    """A torch tensor's or a numpy array's: holds floating-point numbers."""
    import numpy as np

    return t.is_floating_point() if hasattr(t, "is_floating_point") else np.issubdtype(t.dtype, np.floating)


def _copy(t):
    return t.clone() if hasattr(t, "clone") else t.copy()


def soup(base_path: Path, tuned_path: Path, alpha: float, out: Path):
    """Write the interpolated checkpoint to `out`; returns the model."""
    from datasets.warmstart import save_checkpoint

    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha {alpha} is not in [0, 1]")
    base, tuned = load_model(base_path), load_model(tuned_path)
    tuned.load_state_dict(interpolate(base.state_dict(), tuned.state_dict(), alpha))
    save_checkpoint(tuned, out)
    return tuned


def soup_crop_net(kind: str, base_onnx: Path, tuned_pt: Path, alpha: float, calib: Path,
                  out: Path, width: float = 1.0) -> None:
    """Write (1 - alpha) x the shipped crop network `base_onnx` + alpha x its continuation
    `tuned_pt` to `out` (ONNX); `kind` "reader" (of `width`) or "refiner"."""
    import numpy as np
    import torch

    from datasets import train_boxes, train_classifier
    from datasets.warmstart import recover_sequential

    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha {alpha} is not in [0, 1]")
    if kind == "reader":
        make, export = (lambda: train_classifier.make_model(width)), train_classifier.export
    elif kind == "refiner":
        make, export = train_boxes.make_model, train_boxes.export
    else:
        raise ValueError(f"unknown crop network {kind!r} (reader or refiner)")
    crops = np.load(calib)["crops"][:2048]
    base = make()
    recover_sequential(base, base_onnx, torch.from_numpy(crops).permute(0, 3, 1, 2).float() / 255)
    tuned = make()
    tuned.load_state_dict(torch.load(tuned_pt, map_location="cpu"))
    tuned.load_state_dict(interpolate(base.state_dict(), tuned.state_dict(), alpha))
    tuned.eval()
    export(tuned, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m datasets.soup", description=__doc__.split("\n")[0])
    ap.add_argument("base", type=Path, help="the starting checkpoint (e.g. the shipped model recovered "
                                           "by datasets.warmstart)")
    ap.add_argument("tuned", type=Path, help="a continuation of it (runs/NAME/weights/last.pt)")
    ap.add_argument("--alpha", type=float, required=True, help="share of the continuation, 0..1")
    ap.add_argument("--out", type=Path, required=True, help="checkpoint to write")
    ap.add_argument("--models", type=Path, help="also export to DIR/detector.onnx")
    ap.add_argument("--crop-net", choices=("reader", "refiner"),
                    help="BASE is a shipped crop network's ONNX file, TUNED a continuation's last.pt; "
                         "--out is the ONNX file to write")
    ap.add_argument("--width", type=float, default=1.0, help="--crop-net reader: its width")
    ap.add_argument("--calib", type=Path, help="--crop-net: crops (.npz) that calibrate BASE's BatchNorms")
    args = ap.parse_args(argv)
    for p in (args.base, args.tuned):
        if not p.is_file():
            print(f"no such checkpoint: {p}", file=sys.stderr)
            return 2
    if args.crop_net:
        if args.calib is None or not args.calib.is_file():
            print(f"--crop-net needs --calib crops (.npz): {args.calib}", file=sys.stderr)
            return 2
        try:
            soup_crop_net(args.crop_net, args.base, args.tuned, args.alpha, args.calib, args.out,
                          args.width)
        except ValueError as e:
            print(f"cannot interpolate: {e}", file=sys.stderr)
            return 2
        print(f"wrote {args.out} ({1 - args.alpha:g} x {args.base} + {args.alpha:g} x {args.tuned})")
        return 0
    try:
        soup(args.base, args.tuned, args.alpha, args.out)
    except ValueError as e:
        print(f"cannot interpolate: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out} ({1 - args.alpha:g} x {args.base} + {args.alpha:g} x {args.tuned})")
    if args.models:
        from datasets.train import MODELS, export_detector, setup_offline

        setup_offline()
        if not args.models.exists():
            shutil.copytree(MODELS, args.models)
        export_detector(args.out, args.models)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Recover a trainable ultralytics checkpoint from a shipped ONNX detector.

Training runs (`runs/`) are not kept in git, so a new machine has only `models/detector.onnx`.
Its weights are the trained ones with every BatchNorm folded into the convolution before it
(ultralytics fuses on export). This module rebuilds the same architecture from its yaml,
copies the folded weights back and gives each BatchNorm the statistics that make it a no-op
on real data, so `python -m datasets.train --init models/detector.onnx` continues training
where the shipped model stopped instead of starting from scratch:

- every `Conv` (conv + bn + act) gets the folded kernel; its BatchNorm gets running mean `m`
  and variance `v` measured on training tiles (the per-channel statistics of the folded
  convolution's output), weight `sqrt(v + eps)` and bias `m + folded_bias`. In eval mode that
  is exactly `conv(x) + folded_bias`, the exported function; in train mode batch statistics
  are close to `m`, `v`, so the first steps do not destroy what was learned.
- plain `nn.Conv2d` layers (the head's last 1x1 convolutions) take kernel and bias as they are.
- the export carries one head; yolo26 trains two (one-to-many and one-to-one), so the missing
  one starts as a copy of the exported one.

Training venv only (torch + ultralytics + onnx).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from datasets.halve import HALF_SUFFIX


def _onnx_weights(path: Path) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    # a file halved by datasets.halve stores big tensors as float16 under NAME__f16, cast
    # back to NAME before use: the weights are those of NAME
    out = {}
    for init in model.graph.initializer:
        value = numpy_helper.to_array(init)
        out[init.name.removesuffix(HALF_SUFFIX)] = (value.astype(np.float32)
                                                     if value.dtype == np.float16 else value)
    return out


def _calibration_batches(images: list[Path], size: int, batch: int = 8):
    import cv2
    import torch

    for start in range(0, len(images), batch):
        arrays = []
        for p in images[start:start + batch]:
            img = cv2.imread(str(p))
            if img is None:
                continue
            img = cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)
            arrays.append(img[:, :, ::-1].transpose(2, 0, 1).astype(np.float32) / 255.0)
        if arrays:
            yield torch.from_numpy(np.stack(arrays))


def _calibrate_batchnorms(model, pairs, batches) -> None:
    """Give each (conv, bn) pair's BatchNorm the statistics of its convolution's output.

    Each BatchNorm holds the folded bias with identity statistics on entry (so the model
    computes the exported function); `batches()` yields input batches. Afterwards the
    BatchNorm has running mean m and variance v of the convolution's output, weight
    sqrt(v + eps) and bias m + folded bias: the same function in eval mode, and close to
    it in train mode, where batch statistics stand in for m and v.
    """
    import torch

    sums: dict[int, list] = {}
    hooks = []
    for k, (conv, _bn) in enumerate(pairs):
        def hook(_mod, _inp, out, k=k):
            o = out.detach().double()
            s = sums.setdefault(k, [0.0, 0.0, 0])
            s[0] = s[0] + o.sum(dim=(0, 2, 3))
            s[1] = s[1] + (o * o).sum(dim=(0, 2, 3))
            s[2] += o.numel() // o.shape[1]
        hooks.append(conv.register_forward_hook(hook))
    model.eval()
    with torch.no_grad():
        for x in batches():
            model(x)
        for h in hooks:
            h.remove()
        for k, (_conv, bn) in enumerate(pairs):
            if k not in sums:
                continue
            total, total_sq, count = sums[k]
            mean = total / count
            var = (total_sq / count - mean * mean).clamp(min=1e-6)
            bias = bn.bias.detach().double().clone()
            bn.running_mean.copy_(mean.float())
            bn.running_var.copy_(var.float())
            bn.weight.copy_(torch.sqrt(var + bn.eps).float())
            bn.bias.copy_((mean + bias).float())


def recover(onnx_path: Path, yaml: str, calib_images: list[Path], imgsz: int = 320,
            nc: int = 1):
    """Return an ultralytics DetectionModel carrying the ONNX model's weights (see module doc)."""
    import torch
    from torch import nn
    from ultralytics.nn.modules.conv import Conv
    from ultralytics.nn.tasks import DetectionModel

    weights = _onnx_weights(onnx_path)
    model = DetectionModel(yaml, nc=nc, verbose=False)
    used: set[str] = set()
    convs: dict[str, nn.Module] = {}  # bn owner name -> Conv module, for calibration

    def fetch(key: str) -> torch.Tensor:
        if key not in weights:
            alias = key.replace(".one2one_cv2.", ".cv2.").replace(".one2one_cv3.", ".cv3.")
            if alias not in weights:
                raise KeyError(f"{onnx_path} has no weight {key}")
            key = alias
        used.add(key)
        return torch.from_numpy(weights[key].copy())

    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, Conv):
                module.conv.weight.copy_(fetch(f"{name}.conv.weight"))
                bias = fetch(f"{name}.conv.bias")
                bn = module.bn
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
                bn.weight.fill_(1.0)
                bn.bias.copy_(bias)
                convs[name] = module
            elif isinstance(module, nn.Conv2d) and not any(
                    name.startswith(c + ".") for c in convs) and not name.endswith(".conv"):
                module.weight.copy_(fetch(f"{name}.weight"))
                if module.bias is not None:
                    module.bias.copy_(fetch(f"{name}.bias"))
    unused = {k for k in weights if k.endswith((".weight", ".bias"))} - used
    if unused:
        raise ValueError(f"weights of {onnx_path} not placed: {sorted(unused)[:5]} ...")

    pairs = [(module.conv, module.bn) for module in convs.values()]
    _calibrate_batchnorms(model, pairs, lambda: _calibration_batches(calib_images, imgsz))
    return model


def recover_sequential(model, onnx_path: Path, calib) -> float:
    """Load an exported plain-PyTorch net (the index reader) back into `model`, in place.

    Returns the largest difference of the first output (the reader's rank logits, the
    refiner's boxes) from the ONNX model's on up to 256 of the calibration inputs.

    The export folded each BatchNorm into the convolution before it and named the folded
    tensors by number, so convolutions are matched in order (shapes checked), named layers
    (linear heads) by name; BatchNorms are calibrated on `calib` (a float tensor batch) the
    same way as `recover` does.
    """
    import torch
    from torch import nn

    weights = _onnx_weights(onnx_path)
    named = {k: v for k, v in weights.items() if not k.startswith("onnx::")}
    folded = [v for k, v in weights.items() if k.startswith("onnx::") and v.ndim >= 1]
    pairs = []  # (conv, bn) in forward order
    modules = list(model.named_modules())
    for i, (_name, m) in enumerate(modules):
        if isinstance(m, nn.Conv2d):
            bn = modules[i + 1][1] if i + 1 < len(modules) else None
            pairs.append((m, bn if isinstance(bn, nn.BatchNorm2d) else None))
    with torch.no_grad():
        for k, (conv, bn) in enumerate(pairs):
            w, b = torch.from_numpy(folded[2 * k].copy()), torch.from_numpy(folded[2 * k + 1].copy())
            if tuple(w.shape) != tuple(conv.weight.shape):
                raise ValueError(f"{onnx_path}: convolution {k} is {tuple(w.shape)}, "
                                 f"the model's is {tuple(conv.weight.shape)}")
            conv.weight.copy_(w)
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
            bn.weight.fill_(1.0)
            bn.bias.copy_(b)
        for name, param in model.named_parameters():
            if name in named:
                param.copy_(torch.from_numpy(named[name].copy()))
    _calibrate_batchnorms(model, pairs, lambda: [calib])
    import onnxruntime as ort

    check = calib[:256]
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    size = session.get_inputs()[0].shape[2:]
    if all(isinstance(v, int) for v in size) and tuple(size) != tuple(check.shape[2:]):
        # an exported reader takes one crop size; the net itself any (it pools globally):
        # compare at the export's size when the new crops are cut larger or smaller
        check = torch.nn.functional.interpolate(check, size=tuple(size), mode="bilinear",
                                                align_corners=False)
    theirs = session.run(None, {session.get_inputs()[0].name: check.numpy()})[0]
    with torch.no_grad():
        ours = model(check)
    if isinstance(ours, (tuple, list)):  # a reader: rank logits first; the refiner: boxes only
        ours = ours[0]
    return float(np.abs(ours.numpy() - theirs).max())


def save_checkpoint(model, out: Path) -> Path:
    """Write `model` as an ultralytics checkpoint that `YOLO(path)` loads (no download)."""
    import datetime

    import torch
    from ultralytics import __version__

    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model, "train_args": {}, "date": datetime.datetime.now().isoformat(),
                "version": __version__, "epoch": -1}, out)
    return out


def max_difference(model, onnx_path: Path, images: list[Path], imgsz: int = 320) -> float:
    """Largest absolute difference of the raw head output between `model` and the ONNX file."""
    import onnxruntime as ort
    import torch

    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0].name
    model.eval()
    for m in model.modules():  # the export used the one-to-many head
        if hasattr(m, "end2end") and hasattr(m, "one2one_cv2"):
            m.end2end = False
    worst = 0.0
    with torch.no_grad():
        for x in _calibration_batches(images, imgsz):
            ours = model(x)
            ours = ours[0] if isinstance(ours, (tuple, list)) else ours
            theirs = sess.run(None, {inp: x.numpy()})[0]
            worst = max(worst, float(np.abs(ours.numpy() - theirs).max()))
    return worst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m datasets.warmstart", description=__doc__.split("\n")[0])
    ap.add_argument("onnx", type=Path)
    ap.add_argument("--images", type=Path, required=True, help="folder of training tiles (*.jpg)")
    ap.add_argument("--out", type=Path, required=True, help="checkpoint to write (*.pt)")
    ap.add_argument("--yaml", default="yolo26n.yaml")
    ap.add_argument("--imgsz", type=int, default=320)
    ap.add_argument("--calib", type=int, default=256, help="tiles used for BatchNorm statistics")
    args = ap.parse_args(argv)

    from datasets.train import setup_offline

    setup_offline()
    images = sorted(args.images.glob("*.jpg"))
    if not images:
        print(f"no *.jpg in {args.images}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(0)
    calib = [images[i] for i in rng.permutation(len(images))[: args.calib]]
    model = recover(args.onnx, args.yaml, calib, args.imgsz)
    diff = max_difference(model, args.onnx, calib[:16], args.imgsz)
    print(f"recovered {args.onnx}: largest raw-output difference from ONNX {diff:.2e}")
    save_checkpoint(model, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

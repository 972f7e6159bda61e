"""The shipped detector's weights as an ultralytics checkpoint, for the speed comparison.

`bench_detector --parts speed` times ultralytics' own PyTorch `predict` of the detector's
weights beside ours. Training's checkpoints live in `runs/` (never committed), so on a
fresh clone the weights of the shipped network exist only in its ONNX file. This rebuilds
them: the network named in `detector.json` (`arch`, e.g. yolo26n from `yolo26n.yaml`) with
its convolutions and batch norms fused, as the ONNX export fuses them, takes the ONNX
file's initializers by name (every one of the fused model's tensors must be found, of the
same shape), and is saved as a checkpoint `ultralytics.YOLO` loads. Before saving, both
networks read one random image and must agree (largest difference of their raw outputs
under `--tolerance`), or nothing is written.

Run with the training environment (ultralytics and torch are the `train` extra; offline):

    .venv-train/bin/python -m bench.torch_weights --models models --out runs/detector-shipped.pt
    .venv/bin/python -m bench.bench_detector --parts speed --photo build/i4/speed-12mp.jpg \
        --torch-weights runs/detector-shipped.pt --torch-python .venv-train/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(models: Path, out: Path, tolerance: float = 1e-3) -> float:
    """Write the checkpoint of `models`' detector to `out`; returns the largest difference
    between its raw output and the ONNX network's on one random image. Raises
    ValueError, writing nothing, when a tensor is missing or the two disagree."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_AUTOINSTALL", "0")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(ROOT / "build" / "ultralytics-config"))
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import numpy_helper
    from ultralytics.nn.tasks import DetectionModel

    meta = json.loads((models / "detector.json").read_text())["detector"]
    onnx_path = models / meta["file"]
    yaml = meta.get("arch", "yolo26n").split()[0] + ".yaml"
    graph = onnx.load(str(onnx_path)).graph
    found = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    net = DetectionModel(yaml, nc=len(meta["classes"]), verbose=False)
    net.fuse(verbose=False)
    state = net.state_dict()
    wanted = [k for k, v in state.items() if v.is_floating_point()]
    missing = [k for k in wanted if k not in found or tuple(found[k].shape) != tuple(state[k].shape)]
    if missing:
        raise ValueError(f"{onnx_path} has no tensor of the right shape for {missing[:5]} "
                         f"({len(missing)} of {len(wanted)}): not a fused {yaml} network")
    state.update({k: torch.from_numpy(found[k].copy()) for k in wanted})
    net.load_state_dict(state)
    net.names = dict(enumerate(meta["classes"]))
    net.eval()
    image = np.random.default_rng(0).random((1, 3, 320, 416), dtype=np.float32)
    with torch.no_grad():
        mine = net(torch.from_numpy(image))
    mine = (mine[0] if isinstance(mine, (list, tuple)) else mine).numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    theirs = session.run(None, {session.get_inputs()[0].name: image})[0]
    if mine.shape != theirs.shape:
        raise ValueError(f"outputs differ in shape: {mine.shape} against {theirs.shape}")
    diff = float(np.abs(mine - theirs).max())
    if diff > tolerance:
        raise ValueError(f"the rebuilt network reads {diff:.3g} away from {onnx_path}")
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": net.float(), "train_args": {}, "date": None, "version": None}, out)
    return diff


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.torch_weights", description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=Path, default=ROOT / "models")
    ap.add_argument("--out", type=Path, required=True, help="checkpoint to write (.pt)")
    ap.add_argument("--tolerance", type=float, default=1e-3)
    args = ap.parse_args(argv)
    try:
        diff = build(args.models, args.out, args.tolerance)
    except (ValueError, FileNotFoundError, KeyError) as e:
        print(f"torch_weights: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} (largest difference from the ONNX network {diff:.2g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

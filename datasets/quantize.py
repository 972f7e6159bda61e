"""The detector's network, or the index readers and the box refiner, at 8 bits: the same
trained weights, run faster.

Readers (shipped since session 37): `python -m datasets.quantize --models DIR --readers
[--images build/scenes/val] [--count 16]` writes `classifier-int8.onnx`,
`classifier-wide-int8.onnx` (each reader `detector.json` names) and `refiner-int8.onnx`
beside the float files and maps each float file to its 8-bit one in `detector.json`'s
`int8`; the runtime runs those where the CPU has VNNI (`scanner.detector.use_8_bits`), the
float files elsewhere and for training. Activation ranges come from every crop the float
runtime reads on the photos (each box, the unsure ones in their other turns, the sideways
check's, the rescue screen's); the refiner's from the first 1,024 of those resized to its
48 px. On this machine (x86-64 with VNNI) 256 crops take 0.024 s instead of 0.061
(reader), 0.037 instead of 0.105 (wide reader), 0.030 instead of 0.081 (refiner); the
readers' top class agrees on 99.2-99.6% of crops, probabilities move by 0.002-0.005 (median).

Detector:

`python -m datasets.quantize --models DIR [--images build/scenes/val] [--count 24]`
(runtime or training venv: needs `onnx`) reads the trained float network `DIR/detector.onnx`
and writes `DIR/detector-int8.onnx`, then points `detector.json`'s `detector.file` at it, so
`scanner.detector` runs the 8-bit network and training (`datasets.train --init`,
`datasets.warmstart`, `datasets.soup`) keeps the float one. Not shipped: the 8-bit network
read 16 fewer deals of 1,344 (models/MODEL_CARD.md, "The detector at 8 bits"); the shipped
`models/` runs the float network.

onnxruntime's static quantization (QDQ): weights 8-bit signed per output channel, activations
8-bit unsigned with ranges measured on `--count` photos (sorted by name) of a built scene
folder, each at about the run time's coarse pass size (long side 1,120 px, sides rounded down to
multiples of 32). On this machine's CPU (x86-64 with VNNI) the 1,120 x 864 pass takes 0.081 s
instead of 0.103 s idle, 0.27 s instead of 0.44 s with two other jobs running.

The detection head's decoding (the nodes between its last convolutions and the output) stays
in float: its output puts box coordinates (hundreds of pixels) and scores (0-1) into one
tensor, and one 8-bit range over both leaves no score but 0 (every box lost). Quantized
everywhere else, a box's score moves by about 0.013 (median over six test photos, no bias).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CALIBRATION_SIDE = 1120  # the coarse pass's long side (detector.json runtime long_sides)
STRIDE = 32


def calibration_input(path: Path, side: int = CALIBRATION_SIDE) -> np.ndarray:
    """`path`'s photo as the detector's input at about `side` px on its long side: (1, 3, H, W)
    float32 RGB in 0..1, each side rounded down to a multiple of the stride (the photo
    squeezed by under 4%, as the shipped network's ranges were measured)."""
    import cv2

    bgr = cv2.imread(str(path))
    if bgr is None:
        raise ValueError(f"not an image: {path}")
    h, w = bgr.shape[:2]
    scale = side / max(h, w)
    size = (max(STRIDE, round(w * scale) // STRIDE * STRIDE),
            max(STRIDE, round(h * scale) // STRIDE * STRIDE))
    rgb = cv2.cvtColor(cv2.resize(bgr, size, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB)
    return rgb.transpose(2, 0, 1)[None].astype(np.float32) / 255


def head_decoding(model) -> list[str]:
    """Names of the nodes between the network's last convolutions and its first output (an
    `onnx.ModelProto`): the head's decoding, which stays in float. The walk also goes up
    through the `Shape` nodes the decoding takes its grid sizes from, so the three activations
    they read stay in float too (as measured: 106 nodes of the detector)."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    seen: set[str] = set()
    names: list[str] = []
    stack = [graph.output[0].name]
    while stack:
        node = producer.get(stack.pop())
        if node is None or node.name in seen:
            continue
        seen.add(node.name)
        if node.op_type == "Conv":
            continue
        names.append(node.name)
        stack.extend(node.input)
    return names


def _write_8_bit(float_path: Path, out: Path, inputs: Iterable[np.ndarray],
                 keep_float: Callable[[Any], list[str]] | None = None) -> int:
    """Write the network `float_path` at 8 bits to `out` (onnxruntime static QDQ: weights int8
    per output channel, activations uint8), activation ranges from `inputs` (its input
    tensors, made as the calibration asks for them); the nodes `keep_float` names in the
    prepared `onnx.ModelProto` stay in float. Returns how many stayed in float."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        # the input sizes are dynamic: symbolic shape inference cannot finish
        quant_pre_process(str(float_path), str(prepared), skip_symbolic_shape=True)
        model = onnx.load(str(prepared))
        kept = keep_float(model) if keep_float else []
        name = model.graph.input[0].name

        class Feed(CalibrationDataReader):
            def __init__(self) -> None:
                self.left = iter(inputs)

            def get_next(self) -> dict | None:
                x = next(self.left, None)
                return None if x is None else {name: x}

        quantize_static(str(prepared), str(out), Feed(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True, nodes_to_exclude=kept)
    return len(kept)


def quantize(float_path: Path, out: Path, images: list[Path], side: int = CALIBRATION_SIDE) -> int:
    """Write `float_path`'s network quantized to 8 bits to `out`, activation ranges from
    `images`; returns how many nodes stayed in float (`head_decoding`)."""
    if not images:
        raise ValueError("no calibration images")
    return _write_8_bit(float_path, out, (calibration_input(p, side) for p in images),
                        head_decoding)


READER_PHOTOS = 16  # val photos whose reads give the readers' activation ranges
READER_BATCH = 64
REFINER_CROPS = 1024


def reader_crops(models: Path, photos: list[Path]) -> np.ndarray:
    """(N, 40, 40, 3) uint8: every crop the index readers of `models` (float, as shipped) read
    on `photos`, as the runtime reads them: each box once, the unsure ones in their other
    turns, the sideways check's, the rescue screen's and the joker word ends' too."""
    from scanner.detector import OnnxDetector, detect_corners

    seen: list[np.ndarray] = []

    class Recording(OnnxDetector):
        def _read_views(self, crops, turns, session=None):
            if session is None:  # the index readers (the 6/9 reader's wide crops are not theirs)
                seen.append(np.concatenate([np.rot90(crops, k, axes=(1, 2)) for k in turns]))
            return super()._read_views(crops, turns, session)

    detector = Recording(models)
    for photo in photos:
        detect_corners(photo, detector, min_confidence=0)
    return np.concatenate(seen) if seen else np.zeros((0, 40, 40, 3), np.uint8)


def refiner_input(crops: np.ndarray, size: int) -> np.ndarray:
    """The first `REFINER_CROPS` of the readers' crops resized to the refiner's `size`: (N, 3,
    size, size) float32 in 0..1. Its ranges were measured on these (session 37), not on its
    own crops of 1.6x the box, which would be the better choice for a new measurement."""
    import cv2

    scaled = [cv2.resize(c.transpose(1, 2, 0), (size, size))
              for c in reader_input(crops[:REFINER_CROPS])]
    return np.stack(scaled).transpose(0, 3, 1, 2).astype(np.float32)


def reader_input(crops: np.ndarray) -> np.ndarray:
    """uint8 (N, H, W, 3) crops as the crop networks take them: (N, 3, H, W) float32 in 0..1."""
    return crops.transpose(0, 3, 1, 2).astype(np.float32) / 255


def quantize_crops(float_path: Path, out: Path, data: np.ndarray) -> None:
    """Write the crop network `float_path` (a reader or the refiner) at 8 bits to `out`
    (weights int8 per channel, activations uint8), activation ranges from `data`
    ((N, 3, H, W) float32, its input, in batches of `READER_BATCH`); every node is quantized."""
    if not len(data):
        raise ValueError("no calibration crops")
    _write_8_bit(float_path, out, (data[i:i + READER_BATCH] for i in range(0, len(data), READER_BATCH)))


def quantize_readers(models: Path, photos: list[Path]) -> list[str]:
    """The index readers (`classifier.file` and `classifier.also`) and the box refiner of
    `models` at 8 bits, beside their float files (`<name>-int8.onnx`), ranges from the crops
    the float runtime reads on `photos`; `detector.json`'s `int8` then maps each float file
    to its 8-bit one, which the runtime runs where the CPU multiplies 8-bit numbers exactly
    (`scanner.detector.use_8_bits`; the float files stay for other CPUs and for training).
    Returns the files written."""
    meta_path = models / "detector.json"
    meta = json.loads(meta_path.read_text())
    crops = reader_crops(models, photos)
    data = reader_input(crops)  # what every reader takes
    files = {}
    for name in [meta["classifier"]["file"], *meta["classifier"].get("also", [])]:
        files[name] = Path(name).stem + "-int8.onnx"
        quantize_crops(models / name, models / files[name], data)
    if meta.get("refiner"):
        name = meta["refiner"]["file"]
        files[name] = Path(name).stem + "-int8.onnx"
        quantize_crops(models / name, models / files[name],
                       refiner_input(crops, int(meta["refiner"]["crop_size"])))
    meta["int8"] = {
        "files": files, "activations": "uint8", "weights": "int8 per channel",
        "calibration": f"{len(crops)} crops the float runtime reads on {len(photos)} photos of "
                       f"{photos[0].parent.name} (the refiner: the first {REFINER_CROPS} resized)",
        "runs": "where the CPU has VNNI (scanner.detector.use_8_bits; env CANASTA_INT8=0 or 1)"}
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return list(files.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m datasets.quantize", description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, required=True,
                    help="a models folder (its detector.json is rewritten to run the 8-bit networks)")
    ap.add_argument("--readers", action="store_true",
                    help="the index readers and the box refiner instead of the detector")
    ap.add_argument("--images", type=Path, default=ROOT / "build" / "scenes" / "val",
                    help="a folder of photos to measure activation ranges on (default: the val scenes)")
    ap.add_argument("--count", type=int, default=None,
                    help=f"how many of its photos, by name (default 24, with --readers {READER_PHOTOS})")
    ap.add_argument("--out", default="detector-int8.onnx", help="file name in --models (detector)")
    args = ap.parse_args(argv)
    count = args.count or (READER_PHOTOS if args.readers else 24)

    float_path = args.models / "detector.onnx"
    meta_path = args.models / "detector.json"
    if not float_path.is_file() or not meta_path.is_file():
        raise SystemExit(f"quantize: no detector.onnx and detector.json in {args.models}")
    images = sorted(p for p in args.images.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    images = images[:count]
    if len(images) < count:
        raise SystemExit(f"quantize: {count} calibration photos asked for, {len(images)} in "
                         f"{args.images} (build the scenes first: datasets/README.md)")
    if args.readers:
        meta = json.loads(meta_path.read_text())
        if meta.get("int8"):
            raise SystemExit(f"quantize: the readers of {args.models} are quantized already")
        written = quantize_readers(args.models, images)
        print(f"quantize: {', '.join(written)} written in {args.models} and named in {meta_path.name}")
        return 0
    out = args.models / args.out
    kept = quantize(float_path, out, images)
    meta = json.loads(meta_path.read_text())
    meta["detector"]["file"] = out.name
    meta["detector"]["quantized"] = {
        "from": float_path.name, "activations": "uint8", "weights": "int8 per channel",
        "calibration": f"{len(images)} photos of {args.images.name} at {CALIBRATION_SIDE} px",
        "float_nodes": kept}
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"quantize: {float_path} ({float_path.stat().st_size / 1e6:.1f} MB) -> {out} "
          f"({out.stat().st_size / 1e6:.1f} MB), {kept} head nodes in float")
    return 0


if __name__ == "__main__":
    sys.exit(main())

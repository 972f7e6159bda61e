"""Store an ONNX model's weights as 16-bit floats, run at 32 bits: half the file.

`python -m datasets.halve models/detector.onnx [--out OUT]` (training venv: needs `onnx`)
rewrites every 32-bit float initializer of at least `--min-size` values as a 16-bit one
followed by a `Cast` back to 32 bits under the initializer's own name, so the graph and
its inputs and outputs stay as they were. onnxruntime folds those casts into constants
when it loads the model (every session of `scanner.detector` optimises its graph), so the
network runs in 32 bits as before, on weights rounded to 16 bits (a relative error of at
most 2^-11, about 5e-4). Weights outside float16's range are left at 32 bits.

Why: the shipped models must stay under 15 MB together (issue 4), and the detector alone
was 10 MB of 32-bit weights; halved, there is room for a wider reader.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

F16_MAX = float(np.finfo(np.float16).max)
# a halved tensor NAME is stored as NAME + HALF_SUFFIX (float16), cast back to NAME in the graph
HALF_SUFFIX = "__f16"


def halve(model, min_size: int = 64) -> int:
    """Halve `model`'s (an `onnx.ModelProto`) large float initializers in place; returns
    how many were halved."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    kept, casts, halved = [], [], 0
    for init in graph.initializer:
        if init.data_type != TensorProto.FLOAT:
            kept.append(init)
            continue
        values = numpy_helper.to_array(init)
        if values.size < min_size or not np.isfinite(values).all() \
                or np.abs(values).max(initial=0.0) > F16_MAX:
            kept.append(init)
            continue
        half = numpy_helper.from_array(values.astype(np.float16), init.name + HALF_SUFFIX)
        kept.append(half)
        casts.append(helper.make_node("Cast", [half.name], [init.name], to=TensorProto.FLOAT,
                                      name=init.name + "__to_f32"))
        halved += 1
    del graph.initializer[:]
    graph.initializer.extend(kept)
    # the casts first: every node after them may read the weights under their old names
    nodes = casts + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    return halved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--out", type=Path, help="write here (default: over MODEL)")
    ap.add_argument("--min-size", type=int, default=64,
                    help="initializers with fewer values stay 32-bit (default 64)")
    args = ap.parse_args(argv)
    import onnx

    if not args.model.is_file():
        raise SystemExit(f"halve: no such model: {args.model}")
    model = onnx.load(str(args.model))
    if any(i.name.endswith(HALF_SUFFIX) for i in model.graph.initializer):
        raise SystemExit(f"halve: {args.model} is halved already")
    before = args.model.stat().st_size
    n = halve(model, args.min_size)
    onnx.checker.check_model(model)
    out = args.out or args.model
    onnx.save(model, str(out))
    print(f"halve: {n} initializers to float16, {before / 1e6:.2f} MB -> "
          f"{out.stat().st_size / 1e6:.2f} MB ({out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""datasets.quantize: the detector's network at 8 bits, its head's decoding kept in float."""

from __future__ import annotations

import json

import cv2
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from datasets import quantize


def _detector_like(rng: np.random.Generator) -> onnx.ModelProto:
    """images (1,3,H,W) -> Conv -> Sigmoid*x -> Conv -> [box part x 100, Sigmoid(score part)]
    concatenated: like the detector, one output holding pixel-sized numbers and 0-1 scores."""
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((5, 8, 1, 1)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["images", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Sigmoid", ["c1"], ["s1"], name="act_sig"),
        helper.make_node("Mul", ["c1", "s1"], ["a1"], name="act_mul"),
        helper.make_node("Conv", ["a1", "w2"], ["c2"], name="conv2"),
        helper.make_node("Split", ["c2", "split"], ["box", "score"], axis=1, name="head_split"),
        helper.make_node("Mul", ["box", "hundred"], ["pixels"], name="head_scale"),
        helper.make_node("Sigmoid", ["score"], ["prob"], name="head_sigmoid"),
        helper.make_node("Concat", ["pixels", "prob"], ["output0"], axis=1, name="head_concat"),
    ]
    graph = helper.make_graph(
        nodes, "detector-like",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
         numpy_helper.from_array(np.array([4, 1], np.int64), "split"),
         numpy_helper.from_array(np.array(100.0, np.float32), "hundred")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _photos(folder, n: int, rng: np.random.Generator) -> list:
    folder.mkdir()
    paths = []
    for i in range(n):
        path = folder / f"p{i}.png"
        cv2.imwrite(str(path), rng.integers(0, 256, (48, 80, 3), dtype=np.uint8))
        paths.append(path)
    return paths


def _run(path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"images": x})[0]


def test_head_decoding_is_what_follows_the_last_convolutions() -> None:
    model = _detector_like(np.random.default_rng(0))
    assert sorted(quantize.head_decoding(model)) == [
        "head_concat", "head_scale", "head_sigmoid", "head_split"]


def test_quantized_network_answers_like_the_float_one_scores_kept(tmp_path) -> None:
    rng = np.random.default_rng(1)
    full = tmp_path / "float.onnx"
    onnx.save(_detector_like(rng), str(full))
    photos = _photos(tmp_path / "photos", 6, rng)
    out = tmp_path / "int8.onnx"
    assert quantize.quantize(full, out, photos, side=64) == 4

    model = onnx.load(str(out))
    ops = {n.name: n.op_type for n in model.graph.node}
    assert "QuantizeLinear" in ops.values()  # the body runs at 8 bits
    producer = {o: n for n in model.graph.node for o in n.output}
    assert producer["output0"].op_type == "Concat"  # the decoding is as it was, in float
    assert producer["prob"].op_type == "Sigmoid"

    x = quantize.calibration_input(photos[0], side=64)
    assert x.shape == (1, 3, 32, 64) and x.dtype == np.float32
    a, b = _run(full, x), _run(out, x)
    scores_a, scores_b = a[:, 4], b[:, 4]
    assert np.median(np.abs(scores_a - scores_b)) < 0.05  # scores not flattened to 0 or 1
    assert len(np.unique(np.round(scores_b, 3))) > 20
    boxes_a, boxes_b = a[:, :4], b[:, :4]
    assert np.median(np.abs(boxes_a - boxes_b)) < 0.05 * np.median(np.abs(boxes_a))


def test_main_points_the_runtime_at_the_quantized_file(tmp_path) -> None:
    rng = np.random.default_rng(2)
    models = tmp_path / "models"
    models.mkdir()
    onnx.save(_detector_like(rng), str(models / "detector.onnx"))
    (models / "detector.json").write_text(json.dumps({"detector": {"file": "detector.onnx"}}))
    photos = tmp_path / "photos"
    _photos(photos, 3, rng)
    assert quantize.main(["--models", str(models), "--images", str(photos), "--count", "3"]) == 0
    meta = json.loads((models / "detector.json").read_text())
    assert meta["detector"]["file"] == "detector-int8.onnx"
    assert meta["detector"]["quantized"]["from"] == "detector.onnx"
    assert (models / "detector-int8.onnx").is_file() and (models / "detector.onnx").is_file()


def test_main_refuses_too_few_photos_and_changes_nothing(tmp_path) -> None:
    rng = np.random.default_rng(3)
    models = tmp_path / "models"
    models.mkdir()
    onnx.save(_detector_like(rng), str(models / "detector.onnx"))
    meta = json.dumps({"detector": {"file": "detector.onnx"}})
    (models / "detector.json").write_text(meta)
    photos = tmp_path / "photos"
    _photos(photos, 2, rng)
    with pytest.raises(SystemExit, match="3 calibration photos asked for, 2"):
        quantize.main(["--models", str(models), "--images", str(photos), "--count", "3"])
    assert (models / "detector.json").read_text() == meta
    assert not (models / "detector-int8.onnx").exists()
    with pytest.raises(SystemExit, match="no detector.onnx"):
        quantize.main(["--models", str(tmp_path / "nowhere"), "--images", str(photos)])

"""datasets.quantize: the detector's network at 8 bits, its head's decoding kept in float."""

from __future__ import annotations

import json
from pathlib import Path

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


def _reader_like(rng: np.random.Generator, size: int, outputs: int = 2) -> onnx.ModelProto:
    """crops (N,3,size,size) -> Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm: logits
    (N,4) and, with `outputs` 2, a direction (N,2): the shape of the index readers (one
    output, (N,4), like the refiner's box)."""
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((8, 4)) * 0.5).astype(np.float32)
    w3 = (rng.standard_normal((8, 2)) * 0.5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["crops", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("GlobalAveragePool", ["r1"], ["g1"], name="pool"),
        helper.make_node("Flatten", ["g1"], ["f1"], name="flat"),
        helper.make_node("MatMul", ["f1", "w2"], ["logits"], name="fc_logits"),
    ]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)]
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")]
    if outputs == 2:
        nodes.append(helper.make_node("MatMul", ["f1", "w3"], ["direction"], name="fc_dir"))
        outs.append(helper.make_tensor_value_info("direction", TensorProto.FLOAT, None))
        inits.append(numpy_helper.from_array(w3, "w3"))
    graph = helper.make_graph(
        nodes, "reader-like",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["batch", 3, size, size])],
        outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _reader_models(folder, rng: np.random.Generator):
    folder.mkdir()
    onnx.save(_reader_like(rng, 40), str(folder / "classifier.onnx"))
    onnx.save(_reader_like(rng, 40), str(folder / "classifier-wide.onnx"))
    onnx.save(_reader_like(rng, 48, outputs=1), str(folder / "refiner.onnx"))
    onnx.save(_detector_like(rng), str(folder / "detector.onnx"))
    meta = {"detector": {"file": "detector.onnx"},
            "classifier": {"file": "classifier.onnx", "also": ["classifier-wide.onnx"]},
            "refiner": {"file": "refiner.onnx", "crop_size": 48}}
    (folder / "detector.json").write_text(json.dumps(meta))
    return meta


def test_a_quantized_reader_reads_like_the_float_one(tmp_path) -> None:
    rng = np.random.default_rng(4)
    full = tmp_path / "reader.onnx"
    onnx.save(_reader_like(rng, 40), str(full))
    base = rng.integers(0, 256, (96, 1, 1, 3))  # crops of many colours: readings that differ
    crops = (base + rng.integers(-20, 21, (96, 40, 40, 3))).clip(0, 255).astype(np.uint8)
    data = quantize.reader_input(crops)
    assert data.shape == (96, 3, 40, 40) and data.dtype == np.float32 and data.max() <= 1.0
    out = tmp_path / "reader-int8.onnx"
    quantize.quantize_crops(full, out, data)
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert "QuantizeLinear" in ops and "DequantizeLinear" in ops
    a = ort.InferenceSession(str(full)).run(None, {"crops": data[:32]})
    b = ort.InferenceSession(str(out)).run(None, {"crops": data[:32]})
    for x, y in zip(a, b, strict=True):
        assert x.shape == y.shape
        assert np.abs(x - y).max() < 0.05 * np.abs(x).max()  # close, and not all one value
        assert len(np.unique(np.round(y, 4))) > 16
    with pytest.raises(ValueError, match="no calibration crops"):
        quantize.quantize_crops(full, out, data[:0])


def test_the_refiner_is_calibrated_on_the_readers_crops_at_its_size() -> None:
    crops = np.random.default_rng(5).integers(0, 256, (3, 40, 40, 3), dtype=np.uint8)
    scaled = quantize.refiner_input(crops, 48)
    assert scaled.shape == (3, 3, 48, 48) and scaled.dtype == np.float32
    # a crop of one colour stays that colour, in 0..1
    flat = np.full((1, 40, 40, 3), (255, 0, 51), np.uint8)
    assert np.allclose(quantize.refiner_input(flat, 48)[0, :, 20, 20], [1.0, 0.0, 0.2])


def test_main_readers_names_the_8_bit_readers_and_keeps_the_float_ones(tmp_path, monkeypatch) -> None:
    rng = np.random.default_rng(6)
    models = tmp_path / "models"
    _reader_models(models, rng)
    photos = tmp_path / "photos"
    _photos(photos, 2, rng)
    seen = []

    def crops(folder, paths):  # the float runtime's reads, stood in for
        seen.append((folder, list(paths)))
        return rng.integers(0, 256, (80, 40, 40, 3), dtype=np.uint8)

    monkeypatch.setattr(quantize, "reader_crops", crops)
    assert quantize.main(["--models", str(models), "--readers", "--images", str(photos),
                          "--count", "2"]) == 0
    assert seen == [(models, sorted(photos.glob("*.png")))]
    meta = json.loads((models / "detector.json").read_text())
    assert meta["int8"]["files"] == {"classifier.onnx": "classifier-int8.onnx",
                                     "classifier-wide.onnx": "classifier-wide-int8.onnx",
                                     "refiner.onnx": "refiner-int8.onnx"}
    # the float files stay named: the runtime picks the 8-bit ones where the CPU allows
    assert meta["classifier"]["file"] == "classifier.onnx"
    assert meta["refiner"]["file"] == "refiner.onnx"
    assert meta["detector"]["file"] == "detector.onnx"  # the detector is left in float
    for name in ("classifier", "classifier-wide", "refiner"):
        assert (models / f"{name}.onnx").is_file() and (models / f"{name}-int8.onnx").is_file()
    before = (models / "detector.json").read_text()
    with pytest.raises(SystemExit, match="quantized already"):
        quantize.main(["--models", str(models), "--readers", "--images", str(photos),
                       "--count", "2"])
    assert (models / "detector.json").read_text() == before


def test_reader_crops_are_what_the_shipped_readers_read(tmp_path) -> None:
    from scanner.detector import MODELS_DIR, OnnxDetector, detect_corners

    photo = Path(__file__).parents[2] / "datasets" / "samples" / "scene_000000.jpg"
    crops = quantize.reader_crops(MODELS_DIR, [photo])
    assert crops.dtype == np.uint8 and crops.shape[1:] == (40, 40, 3)
    corners, _ = detect_corners(photo, OnnxDetector(MODELS_DIR), min_confidence=0)
    assert len(corners) > 10
    assert len(crops) >= len(corners)  # each kept corner's crop was read, and more

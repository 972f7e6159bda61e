"""datasets.halve: weights stored at 16 bits, the network run at 32, outputs as before."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from datasets import halve


def _conv_model(rng: np.random.Generator, scale: float = 1.0) -> onnx.ModelProto:
    """x (1,3,16,16) -> Conv 3->8 (3x3) -> Relu -> Conv 8->4 (1x1): the shape of our nets."""
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.2 * scale).astype(np.float32)
    b1 = rng.standard_normal(8).astype(np.float32)  # 8 values: under --min-size, stays 32-bit
    w2 = (rng.standard_normal((4, 8, 1, 1)) * 0.3).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["y"])]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16, 16])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(path, x: np.ndarray) -> np.ndarray:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def test_halved_model_is_smaller_and_answers_the_same(tmp_path):
    rng = np.random.default_rng(0)
    full = tmp_path / "full.onnx"
    onnx.save(_conv_model(rng), str(full))
    half = tmp_path / "half.onnx"
    assert halve.main([str(full), "--out", str(half), "--min-size", "16"]) == 0

    model = onnx.load(str(half))
    kinds = {i.name: i.data_type for i in model.graph.initializer}
    assert kinds == {"w1__f16": TensorProto.FLOAT16, "w2__f16": TensorProto.FLOAT16,
                     "b1": TensorProto.FLOAT}
    # inputs and outputs keep their names and 32-bit type
    assert [i.name for i in model.graph.input] == ["x"]
    assert model.graph.output[0].type.tensor_type.elem_type == TensorProto.FLOAT

    x = rng.random((1, 3, 16, 16), dtype=np.float32)
    a, b = _run(full, x), _run(half, x)
    assert b.dtype == np.float32
    assert not np.array_equal(a, b)  # the weights were rounded...
    np.testing.assert_allclose(b, a, rtol=0, atol=2e-3 * np.abs(a).max())  # ...by little
    # 27 + 32 weights of 4 bytes became 2 bytes each (plus two Cast nodes)
    assert half.stat().st_size < full.stat().st_size


def test_weights_out_of_float16_range_stay_32_bit(tmp_path):
    rng = np.random.default_rng(1)
    full = tmp_path / "big.onnx"
    onnx.save(_conv_model(rng, scale=1e6), str(full))  # w1 reaches past 65504
    model = onnx.load(str(full))
    assert halve.halve(model, min_size=16) == 1  # w2 only
    names = {i.name for i in model.graph.initializer}
    assert names == {"w1", "b1", "w2__f16"}


def test_refuses_a_halved_model_and_a_missing_file(tmp_path):
    rng = np.random.default_rng(2)
    path = tmp_path / "m.onnx"
    onnx.save(_conv_model(rng), str(path))
    halve.main([str(path), "--min-size", "16"])
    size = path.stat().st_size
    with pytest.raises(SystemExit, match="halved already"):
        halve.main([str(path)])
    assert path.stat().st_size == size
    with pytest.raises(SystemExit, match="no such model"):
        halve.main([str(tmp_path / "nope.onnx")])


def test_a_halved_model_gives_its_weights_back_under_their_names(tmp_path):
    """datasets.warmstart continues training from a shipped file, halved ones too (the wide
    reader): each weight comes back 32-bit under its own name."""
    from datasets.warmstart import _onnx_weights

    rng = np.random.default_rng(2)
    full, half = tmp_path / "full.onnx", tmp_path / "half.onnx"
    onnx.save(_conv_model(rng), str(full))
    assert halve.main([str(full), "--out", str(half), "--min-size", "16"]) == 0
    before, after = _onnx_weights(full), _onnx_weights(half)
    assert set(after) == set(before) == {"w1", "w2", "b1"}
    for name, value in after.items():
        assert value.dtype == np.float32 and value.shape == before[name].shape
        np.testing.assert_allclose(value, before[name], rtol=1e-3, atol=1e-4)

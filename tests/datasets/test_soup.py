"""The weight-space ensemble of two checkpoints (datasets/soup.py), on numpy state dicts."""
import numpy as np
import pytest

from datasets.soup import interpolate, main


def _state(seed):
    rng = np.random.default_rng(seed)
    return {"conv.weight": rng.normal(size=(4, 3, 3, 3)).astype(np.float32),
            "bn.running_var": rng.random(4).astype(np.float32),
            "bn.num_batches_tracked": np.array(seed + 10, dtype=np.int64)}


def test_interpolation_is_the_weighted_mean_of_floats_and_keeps_the_tuned_counters():
    base, tuned = _state(1), _state(2)
    out = interpolate(base, tuned, 0.25)
    np.testing.assert_allclose(out["conv.weight"], 0.75 * base["conv.weight"] + 0.25 * tuned["conv.weight"],
                               rtol=1e-6)
    np.testing.assert_allclose(out["bn.running_var"], 0.75 * base["bn.running_var"] + 0.25 * tuned["bn.running_var"],
                               rtol=1e-6)
    assert out["bn.num_batches_tracked"] == 12
    np.testing.assert_array_equal(interpolate(base, tuned, 0.0)["conv.weight"], base["conv.weight"])
    np.testing.assert_array_equal(interpolate(base, tuned, 1.0)["conv.weight"], tuned["conv.weight"])


def test_models_of_other_shapes_or_layers_are_refused():
    base, tuned = _state(1), _state(2)
    tuned["conv.weight"] = tuned["conv.weight"][:2]
    with pytest.raises(ValueError, match="shapes"):
        interpolate(base, tuned, 0.5)
    del base["bn.running_var"]
    with pytest.raises(ValueError, match="layers"):
        interpolate(base, _state(2), 0.5)


def test_cli_refuses_a_missing_checkpoint(tmp_path, capsys):
    assert main([str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--alpha", "0.5",
                 "--out", str(tmp_path / "c.pt")]) == 2
    assert "no such checkpoint" in capsys.readouterr().err
    assert not (tmp_path / "c.pt").exists()


def test_cli_refuses_a_crop_net_without_its_calibration_crops(tmp_path, capsys):
    base, tuned = tmp_path / "reader.onnx", tmp_path / "last.pt"
    base.write_bytes(b"x")
    tuned.write_bytes(b"x")
    out = tmp_path / "soup.onnx"
    for extra in ([], ["--calib", str(tmp_path / "missing.npz")]):
        assert main([str(base), str(tuned), "--alpha", "0.75", "--crop-net", "reader",
                     "--out", str(out), *extra]) == 2
        assert "--crop-net needs --calib" in capsys.readouterr().err
    assert not out.exists()

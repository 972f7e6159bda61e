"""Reader crops of datasets.train_classifier: the crop geometry is an option, and a cache
cut with one geometry is never read as another."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from magenta_deck import magenta_scene

from datasets import groundtruth, train_classifier
from scanner.detector import CROP_MARGIN, CROP_SIZE, box_iou, crop_indices


def _magenta_share(crops: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per index crop: the fraction of its pixels that are the magenta print."""
    c = crops[labels != train_classifier.NONE_ID].astype(int)
    magenta = (c[..., 0] > 150) & (c[..., 2] > 150) & (c[..., 1] < 110)
    return magenta.mean(axis=(1, 2))


def test_crops_take_the_asked_size_and_margin(tmp_path: Path):
    scene = magenta_scene(tmp_path)
    args = (str(scene), 1, 0.5, 0, 0.0)
    near, labels = train_classifier._scene_crops(args + (CROP_SIZE, CROP_MARGIN, None, 0.0))[:2]
    wide, labels_w = train_classifier._scene_crops(args + (48, 2.0, None, 0.0))[:2]
    assert near.shape[1:] == (CROP_SIZE, CROP_SIZE, 3) and wide.shape[1:] == (48, 48, 3)
    assert (labels == labels_w).all() and (labels != train_classifier.NONE_ID).sum() > 5
    # the print fills less of a wider crop (more of the card and table around it)
    assert np.median(_magenta_share(wide, labels)) < 0.8 * np.median(_magenta_share(near, labels))


def test_six_nine_crops_are_sixes_and_nines_only(tmp_path: Path):
    scene = magenta_scene(tmp_path)
    args = (str(scene), 1, 0.5, 0, 0.0, 48, 2.5)
    every = train_classifier._scene_crops(args + (None, 0.0))[1]
    six, nine = train_classifier.CLASS_ID["6"], train_classifier.CLASS_ID["9"]
    labels = train_classifier._scene_crops(args + ((six, nine), 0.0))[1]
    assert 0 < len(labels) == int(np.isin(every, (six, nine)).sum())  # all of them, nothing else
    assert set(labels.tolist()) <= {six, nine} and train_classifier.NONE_ID not in labels


def test_a_cache_of_another_crop_geometry_is_refused(tmp_path: Path):
    cache = tmp_path / "crops"
    train_classifier.check_cache_geometry(cache, 48, 1.7)  # a new cache records its geometry
    assert json.loads((cache / "geometry.json").read_text()) == {"crop_size": 48, "crop_margin": 1.7}
    train_classifier.check_cache_geometry(cache, 48, 1.7)
    with pytest.raises(SystemExit, match="48 px at 1.7x"):
        train_classifier.check_cache_geometry(cache, CROP_SIZE, CROP_MARGIN)


def test_an_unrecorded_cache_is_the_old_geometry(tmp_path: Path):
    cache = tmp_path / "crops"
    cache.mkdir()
    (cache / "train.npz").write_bytes(b"")  # cut before the geometry was recorded
    train_classifier.check_cache_geometry(cache, CROP_SIZE, CROP_MARGIN)
    with pytest.raises(SystemExit, match=f"{CROP_SIZE} px at {CROP_MARGIN}x"):
        train_classifier.check_cache_geometry(cache, 48, 1.7)


class _Proposals:
    """A stand-in detector: one box on a printed index, one in a bare corner of the photo."""

    decode_long_side = 1600

    def __init__(self, scene: dict) -> None:
        self.scene = scene

    def printed(self, rgb: np.ndarray) -> np.ndarray:
        s = rgb.shape[1] / self.scene["image"]["width"]
        return np.array([i["box"] for c in self.scene["cards"] for i in c.get("indices", [])],
                        np.float32) * s

    def locate(self, rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        on = self.printed(rgb)[0]
        corner = np.array([2, 2, 2 + on[2] - on[0], 2 + on[3] - on[1]], np.float32)
        return np.stack([on, corner]), np.ones(2, np.float32)


def test_mined_negatives_are_the_detector_boxes_off_every_index(tmp_path: Path):
    from scanner.imageio import load_photo

    scene_path = magenta_scene(tmp_path)
    stub = _Proposals(json.loads(scene_path.read_text()))
    rgb = load_photo(scene_path.with_name(stub.scene["image"]["file"]), long_side=1600).rgb
    on, corner = stub.locate(rgb)[0]
    assert box_iou(corner, stub.printed(rgb)).max() == 0  # the scene leaves that corner bare
    out = train_classifier.mine_negatives(scene_path.parent, tmp_path / "hn.npz", None, 0, detector=stub)
    mined = np.load(out)
    # the box on the index is not a negative; the corner's is, cut as the runtime cuts it
    assert len(mined["crops"]) == 1
    assert (mined["crops"][0] == crop_indices(rgb, corner[None])[0]).all()
    assert (mined["labels"] == train_classifier.NONE_ID).all() and np.isnan(mined["angles"]).all()


def test_crops_only_cuts_crops_and_the_detectors_false_boxes(tmp_path: Path):
    scene_path = magenta_scene(tmp_path)
    cache = tmp_path / "crops"
    models = Path(__file__).resolve().parents[2] / "models"
    assert train_classifier.main(["--scenes", str(scene_path.parent.parent), "--cache", str(cache),
                                  "--mine-negatives", str(models), "--negative-scenes", "1",
                                  "--max-scenes", "1", "--jobs", "1", "--crops-only"]) == 0
    negatives = np.load(cache / "negatives.npz")
    assert (negatives["labels"] == train_classifier.NONE_ID).all()
    both = train_classifier.load_crops([cache / "train.npz", cache / "negatives.npz", cache / "negatives.npz"])
    assert len(both["labels"]) == len(np.load(cache / "train.npz")["labels"]) + 2 * len(negatives["labels"])
    assert (cache / "val.npz").exists()


def test_direction_crops_are_every_index_and_no_none(tmp_path: Path):
    scene = magenta_scene(tmp_path)
    args = (str(scene), 1, 0.5, 0, 0.0, 48, 3.0)
    every = train_classifier._scene_crops(args + (None, 0.0))[1]
    labels = train_classifier._scene_crops(args + (tuple(train_classifier.CLASS_ID.values()), 0.0))[1]
    indices = every[every != train_classifier.NONE_ID]
    assert len(labels) == len(indices) > 5 and sorted(labels) == sorted(indices)


def test_direction_and_six_nine_are_two_readers(tmp_path: Path):
    with pytest.raises(SystemExit, match="pick one"):
        train_classifier.main(["--six-nine", "--direction", "--cache", str(tmp_path / "c")])
    with pytest.raises(SystemExit, match="no mined negatives"):
        train_classifier.main(["--direction", "--mine-negatives", "models",
                               "--cache", str(tmp_path / "c")])


def test_the_softest_crop_side_is_a_side_a_crop_can_shrink_to(tmp_path: Path):
    for side in ("2", "31"):
        with pytest.raises(SystemExit, match="a side from 4 to 30 px"):
            train_classifier.main(["--soft-min", side, "--cache", str(tmp_path / "c")])


def test_reader_width_scales_every_block_in_multiples_of_eight():
    assert train_classifier.body_channels(1.0) == train_classifier.BODY_CHANNELS
    wide = train_classifier.body_channels(1.5)
    assert wide == (32, 48, 72, 96, 144, 144)
    assert all(c % 8 == 0 for c in train_classifier.body_channels(1.3))


class _FixedBoxes:
    """A stand-in detector: the same boxes on every photo."""

    decode_long_side = 2000

    def __init__(self, boxes):
        self.boxes = np.asarray(boxes, np.float32)

    def locate(self, rgb):
        return self.boxes, np.full(len(self.boxes), 0.5, np.float32)


def _real_folder(folder: Path, n: int) -> Path:
    from PIL import Image

    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for i in range(n):
        pixels = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / f"IMG_{i}.JPG")
        (folder / f"IMG_{i}.xml").write_text(
            "<annotation><object><name>king</name><bndbox><xmin>20</xmin><ymin>20</ymin>"
            "<xmax>120</xmax><ymax>160</ymax></bndbox></object></annotation>")
    return folder


def test_real_negatives_are_boxes_off_the_cards_of_training_photos(tmp_path: Path):
    folder = _real_folder(tmp_path / "train", 6)
    on_card, off_card = (40, 40, 60, 70), (200, 150, 230, 190)
    out = train_classifier.mine_real_negatives(
        folder, tmp_path / "neg.npz", None, detector=_FixedBoxes([on_card, off_card]))
    got = np.load(out)
    # photos 0 and 3 calibrate the gate: the other four give one off-card box each
    assert got["crops"].shape == (4, CROP_SIZE, CROP_SIZE, 3)
    assert (got["labels"] == train_classifier.NONE_ID).all()
    assert np.isnan(got["angles"]).all()


def test_real_negatives_refuse_the_test_folder(tmp_path: Path):
    folder = _real_folder(tmp_path / "test", 3)
    with pytest.raises(SystemExit, match="never trained on"):
        train_classifier.mine_real_negatives(folder, tmp_path / "neg.npz", None,
                                             detector=_FixedBoxes([]))
    assert not (tmp_path / "neg.npz").exists()


def test_crops_from_a_seat_are_the_same_indices_warped(tmp_path: Path):
    scene = str(magenta_scene(tmp_path))
    args = (scene, 1, 0.0, 0, 0.0, CROP_SIZE, CROP_MARGIN, None)
    plain, labels = train_classifier._scene_crops(args + (0.0,))[:2]
    seat, labels_s = train_classifier._scene_crops(args + (1.0,))[:2]
    assert (labels == labels_s).all() and len(labels) > 5
    assert np.abs(seat.astype(int) - plain.astype(int)).mean() > 5
    # each crop still holds its print: the labels moved with the photo
    assert np.median(_magenta_share(seat, labels)) > 0.5 * np.median(_magenta_share(plain, labels))
    # a share of 0 draws nothing: the plain crops again
    assert (train_classifier._scene_crops(args + (0.0,))[0] == plain).all()


def test_a_seat_view_leaves_out_indices_off_the_photo():
    """A close shot's cards beyond its frame: towards the horizon the seat's map sends their
    boxes anywhere (10^5 px wide), and a negative crop of that size would not fit in memory."""
    w, h = 400, 300
    scene = {"image": {"width": w, "height": h}, "cards": [
        {"indices": [{"box": [100, 250, 120, 280]}, {"box": [150, 1500, 170, 1530]}]},
        {"indices": [{"box": [-900, 100, -880, 130]}]}]}
    rgb = np.full((h, w, 3), 200, np.uint8)
    seen, warped = groundtruth.seat_view(scene, rgb, 1.0, 0.5)
    assert warped.shape == rgb.shape
    kept = [i["box"] for c in seen["cards"] for i in c["indices"]]
    assert len(kept) == 1 and all(0 <= v <= max(w, h) for v in kept[0])
    assert len(scene["cards"][0]["indices"]) == 2  # the scene given is not changed


def test_a_training_run_exports_into_its_run_folder_unless_told_otherwise():
    from datasets import train_boxes

    for module, run in ((train_classifier, "runs/cls-x"), (train_boxes, "runs/ref-x")):
        assert module.parse_args(["--run", run]).models == Path(run)
        assert module.parse_args(["--run", run, "--models", "models"]).models == Path("models")
        assert module.parse_args([]).models == module.parse_args([]).run


def test_a_reader_exported_again_keeps_the_readers_averaged_with_it(tmp_path):
    (tmp_path / "detector.json").write_text(json.dumps({
        "classifier": {"file": "classifier.onnx", "width": 1.0, "history": [{"epoch": 1}],
                       "also": ["classifier-wide.onnx"]},
        "refiner": {"file": "refiner.onnx"}}))
    train_classifier.record_model(tmp_path, "classifier",
                                  {"file": "classifier.onnx", "width": 1.0, "history": [{"epoch": 5}]})
    meta = json.loads((tmp_path / "detector.json").read_text())
    assert meta["classifier"] == {"file": "classifier.onnx", "width": 1.0, "history": [{"epoch": 5}],
                                  "also": ["classifier-wide.onnx"]}
    assert meta["refiner"] == {"file": "refiner.onnx"}

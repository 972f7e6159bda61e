"""bench.speed_photos: the speed test's 12 MP photos, made from built scenes."""

from __future__ import annotations

import numpy as np
from PIL import Image

from bench import speed_photos


def _scenes(folder, numbers) -> None:
    folder.mkdir()
    rng = np.random.default_rng(0)
    for n in numbers:
        pixels = rng.integers(0, 256, (40, 30, 3), dtype=np.uint8)  # upright, as scene 569
        Image.fromarray(pixels).save(folder / f"scene_{n:06d}.jpg")


def test_the_five_photos_are_12_megapixels(tmp_path) -> None:
    _scenes(tmp_path / "test", speed_photos.SCENES)
    out = tmp_path / "i4"
    assert speed_photos.main(["--scenes", str(tmp_path / "test"), "--out", str(out)]) == 0
    sizes = {p.name: Image.open(p).size for p in out.glob("*.jpg")}
    assert sizes["speed-12mp.jpg"] == (4032, 3024)  # the photo every session has timed
    for name in ("speed-12mp-19.jpg", "speed-12mp-29.jpg", "speed-12mp-39.jpg", "speed-12mp-49.jpg"):
        w, h = sizes[name]
        assert h > w  # its own aspect kept
        assert abs(w * h - 4032 * 3024) < 0.001 * 4032 * 3024
    # three of them also from the side of the table: turned a quarter, outside the glob
    # the speed test times by default
    side = {p.name: p for p in (out / "side").glob("*.jpg")}
    assert sorted(side) == ["speed-12mp-39-side.jpg", "speed-12mp-49-side.jpg",
                            "speed-12mp-side.jpg"]
    upright = np.asarray(Image.open(out / "speed-12mp.jpg"), np.float32)
    turned = np.asarray(Image.open(side["speed-12mp-side.jpg"]), np.float32)
    assert turned.shape == (4032, 3024, 3)
    assert np.abs(np.rot90(upright) - turned).mean() < 4  # the same pixels, turned


def test_the_same_scene_makes_the_same_photo(tmp_path) -> None:
    _scenes(tmp_path / "test", [19])
    a, b = tmp_path / "a.jpg", tmp_path / "b.jpg"
    speed_photos.speed_photo(tmp_path / "test" / "scene_000019.jpg", a, exact=False)
    speed_photos.speed_photo(tmp_path / "test" / "scene_000019.jpg", b, exact=False)
    assert a.read_bytes() == b.read_bytes()  # the noise is seeded


def test_missing_scenes_are_named_and_nothing_is_written(tmp_path, capsys) -> None:
    _scenes(tmp_path / "test", [569, 19])
    out = tmp_path / "i4"
    assert speed_photos.main(["--scenes", str(tmp_path / "test"), "--out", str(out)]) == 1
    assert "[29, 39, 49]" in capsys.readouterr().err
    assert not out.exists()

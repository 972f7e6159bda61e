"""Inverted detector tiles: the same labels, every pixel inverted, a seeded share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from datasets.inverted import invert_tiles, main


def _tiles(root: Path, n: int) -> Path:
    split = root / "tiles" / "train"
    (split / "images").mkdir(parents=True)
    (split / "labels").mkdir(parents=True)
    for i in range(n):
        rgb = np.zeros((32, 32, 3), np.uint8)
        rgb[4:12, 4:10] = 230  # a light "index" on a dark tile
        Image.fromarray(rgb).save(split / "images" / f"t{i:02d}.jpg", quality=95)
        if i % 5:  # some tiles have no label file: no index on them
            (split / "labels" / f"t{i:02d}.txt").write_text(f"0 0.2 0.25 0.19 0.25\n0 0.{i} 0.5 0.1 0.1\n")
    return split


def test_inverted_copies_keep_labels_and_invert_pixels(tmp_path) -> None:
    src = _tiles(tmp_path, 40)
    out = tmp_path / "inv"
    n = invert_tiles([src], out, share=0.5, seed=3)
    images = sorted((out / "images").glob("*.jpg"))
    assert len(images) == n and 10 <= n <= 30  # about half of 40
    for image in images:
        assert image.stem.startswith("tiles-")  # source folder prefix: no collisions
        stem = image.stem.split("-", 1)[1]
        before = np.asarray(Image.open(src / "images" / f"{stem}.jpg").convert("RGB"), np.int16)
        after = np.asarray(Image.open(image).convert("RGB"), np.int16)
        assert np.abs((255 - before) - after).mean() < 3  # inverted (up to JPEG error)
        assert after[6, 6].max() < 40 and after[20, 20].min() > 215
        label = src / "labels" / f"{stem}.txt"
        expect = label.read_text() if label.is_file() else ""
        assert (out / "labels" / f"{image.stem}.txt").read_text() == expect


def test_same_seed_same_pick_and_cli_errors(tmp_path, capsys) -> None:
    src = _tiles(tmp_path, 30)
    a, b, c = (tmp_path / x for x in "abc")
    invert_tiles([src], a, 0.3, seed=5)
    invert_tiles([src], b, 0.3, seed=5)
    invert_tiles([src], c, 0.3, seed=6)
    names = [sorted(p.name for p in (d / "images").glob("*.jpg")) for d in (a, b, c)]
    assert names[0] == names[1] and names[0] != names[2]
    assert main(["--src", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 2
    assert "no images/ folder" in capsys.readouterr().err
    assert main(["--src", str(src), "--out", str(tmp_path / "x"), "--share", "0"]) == 2
    assert not (tmp_path / "x").exists()  # a refused run writes nothing

"""The layout benchmark's corner cache keeps photos of different builds apart."""

from __future__ import annotations

from pathlib import Path

from bench.bench_layout import cache_name


def _photo(folder: Path, data: bytes) -> Path:
    folder.mkdir(parents=True)
    path = folder / "scene_000008.jpg"
    path.write_bytes(data)
    return path


def test_same_name_in_two_builds_gets_two_cache_files(tmp_path: Path) -> None:
    # every build has a val/scene_000008.jpg; their corners must not be mixed up
    a = _photo(tmp_path / "scenes" / "val", b"one photo")
    b = _photo(tmp_path / "scenes-u13" / "val", b"another photo")
    assert cache_name(a) != cache_name(b)
    assert cache_name(a).startswith("val-scene_000008-")


def test_same_photo_same_cache_file_and_turns_apart(tmp_path: Path) -> None:
    a = _photo(tmp_path / "x" / "val", b"same bytes")
    b = _photo(tmp_path / "y" / "val", b"same bytes")
    assert cache_name(a) == cache_name(b)
    assert cache_name(a, turn=1) != cache_name(a) and cache_name(a, turn=1).endswith("-t90.npz")

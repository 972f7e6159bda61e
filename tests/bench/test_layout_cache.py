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


def test_a_photo_from_a_seat_has_its_own_cache_file(tmp_path: Path) -> None:
    a = _photo(tmp_path / "x" / "val", b"same bytes")
    assert cache_name(a, keystone=0.5) != cache_name(a) and cache_name(a, keystone=0.5).endswith("-k0.5.npz")
    assert cache_name(a, turn=1, keystone=0.5).endswith("-t90-k0.5.npz")


def test_perfect_corners_of_tables_shot_from_a_seat_are_scored(monkeypatch) -> None:
    import scanner.reconstruct
    from bench.bench_layout import load_scenes, run

    scenes = load_scenes(None, 6, 3, None)
    from_above = run("gt", scenes, 3, False)
    from_a_seat = run("gt", scenes, 3, False, keystone=0.5)
    assert from_above["scenes"] == from_a_seat["scenes"] > 0
    assert from_above["readable_melds"] == from_a_seat["readable_melds"] > 10
    # the corners moved with the photo; the layout flattens the table and reads it as well
    assert from_a_seat["meld_exact_readable"] == from_above["meld_exact_readable"] == 1.0
    monkeypatch.setattr(scanner.reconstruct, "UNSURE_TILT_RATIO", float("inf"))  # never flattened
    assert run("gt", scenes, 3, False, keystone=0.5)["meld_exact_readable"] < 0.9


def test_cached_corners_belong_to_the_models_and_the_runtime_code(tmp_path: Path, monkeypatch) -> None:
    import bench.bench_layout as bench_layout

    models = tmp_path / "models"
    models.mkdir()
    (models / "detector.json").write_text("{}")
    key = bench_layout._model_key(models)
    (models / "detector.json").write_text('{"runtime": {}}')
    assert bench_layout._model_key(models) != key
    key = bench_layout._model_key(models)
    # the same model files read by other run-time code: another key
    monkeypatch.setattr(bench_layout, "RUNTIME_SOURCES", bench_layout.RUNTIME_SOURCES[:-1])
    assert bench_layout._model_key(models) != key


def test_cached_corners_belong_to_the_readers_the_cpu_runs(tmp_path: Path, monkeypatch) -> None:
    import bench.bench_layout as bench_layout

    models = tmp_path / "models"
    models.mkdir()
    (models / "detector.json").write_text('{"int8": {"files": {"a.onnx": "a-int8.onnx"}}}')
    monkeypatch.setenv("CANASTA_INT8", "1")
    eight = bench_layout._model_key(models)
    monkeypatch.setenv("CANASTA_INT8", "0")
    assert bench_layout._model_key(models) != eight  # the float readers read other corners
    (models / "detector.json").write_text('{"runtime": {}}')
    plain = bench_layout._model_key(models)
    monkeypatch.setenv("CANASTA_INT8", "1")
    assert bench_layout._model_key(models) == plain  # no 8-bit files: nothing to choose


def test_the_detector_runs_let_the_layout_look_and_find_as_scan_does(monkeypatch) -> None:
    """From the detector's corners the benchmark gives the layout the readers' `look` and
    the detector's `find`, as `scan_photo` does; `find=False` (`--find 0`) leaves the search
    out, `look=False` both."""
    import bench.bench_layout as bl
    from datasets.groundtruth import corners_from_scene

    scenes = [(scene, Path("not-read.jpg")) for scene, _ in bl.load_scenes(None, 2, 3, None)]
    monkeypatch.setattr(bl, "corners_for", lambda source, scene, photo, rng, *a:
                        corners_from_scene(scene, rng))
    monkeypatch.setattr(bl, "_detector_view", lambda *a: object())
    monkeypatch.setattr(bl, "_lookalikes", lambda view, corners, *a: (corners, 0.0))
    monkeypatch.setattr(bl, "_ink", lambda *a: None)
    monkeypatch.setattr(bl, "_look", lambda view, detector: "look")
    monkeypatch.setattr(bl, "_find", lambda view, detector: "find")
    given = []
    monkeypatch.setattr(bl, "read_table", lambda corners, size, **gates:
                        given.append((gates["look"], gates["find"])) or
                        bl.TableReading([], [], [0, 0], [], (0.0, 0.0)))
    for flags, expected in (({}, ("look", "find")), ({"find": False}, ("look", None)),
                            ({"look": False}, (None, None))):
        given.clear()
        bl.run("detector", scenes, 3, False, **flags)
        assert given and set(given) == {expected}

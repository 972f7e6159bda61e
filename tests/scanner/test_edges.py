"""A direction read a few degrees off is turned onto the card's edges, and only then."""
import cv2
import numpy as np
import pytest

from scanner.edges import EDGE_MAX_TURN, card_edge_angles


def _card_photo(angle: float, size: int = 240) -> tuple[np.ndarray, np.ndarray]:
    """A white card turned `angle` degrees (clockwise, our convention) on a dark table, a
    dark rank glyph in its top-left corner; returns the photo and that index's box."""
    rgb = np.full((size, size, 3), 40, np.uint8)
    centre = np.array([size / 2, size / 2])
    t = np.radians(angle)
    right, down = np.array([np.cos(t), np.sin(t)]), np.array([-np.sin(t), np.cos(t)])

    def at(x: float, y: float) -> np.ndarray:  # card frame (from its centre) -> photo
        return centre + x * right + y * down

    card = np.array([at(-50, -70), at(50, -70), at(50, 70), at(-50, 70)], np.int32)
    cv2.fillPoly(rgb, [card], (235, 235, 230), cv2.LINE_AA)
    glyph = np.array([at(-44, -64), at(-30, -64), at(-30, -44), at(-44, -44)], np.int32)
    cv2.fillPoly(rgb, [glyph], (30, 30, 30), cv2.LINE_AA)
    corner = at(-37, -54)
    box = np.array([[corner[0] - 12, corner[1] - 12, corner[0] + 12, corner[1] + 12]])
    return rgb, box


@pytest.mark.parametrize("truth", [0.0, 12.0, 187.0, 301.0])
def test_a_reading_a_few_degrees_off_is_turned_onto_the_card_edges(truth):
    rgb, box = _card_photo(truth)
    for off in (-11.0, 7.0):
        got = card_edge_angles(rgb, box, np.array([truth + off]))[0]
        assert abs((got - truth + 180) % 360 - 180) < 1.5, (truth, off, got)


def test_a_reading_far_off_or_unknown_is_left_as_read():
    rgb, box = _card_photo(20.0)
    far = 20.0 + EDGE_MAX_TURN + 8.0  # the nearest line direction is further than the cap
    assert card_edge_angles(rgb, box, np.array([far]))[0] == pytest.approx(far)
    assert np.isnan(card_edge_angles(rgb, box, np.array([np.nan]))[0])


def test_no_clear_lines_no_turn():
    # a table of noise around the index: its gradients point every way
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 255, (200, 200, 3), dtype=np.uint8)
    box = np.array([[90.0, 90.0, 110.0, 110.0]])
    assert card_edge_angles(rgb, box, np.array([13.0]))[0] == pytest.approx(13.0)


def test_the_detector_applies_it_only_when_its_settings_say_so(tmp_path):
    import json
    import shutil

    from scanner.detector import MODELS_DIR, OnnxDetector

    assert json.loads((MODELS_DIR / "detector.json").read_text())["runtime"]["edge_angles"]
    assert OnnxDetector(MODELS_DIR).edge_angles
    for f in MODELS_DIR.iterdir():
        shutil.copy(f, tmp_path / f.name)
    cfg = json.loads((tmp_path / "detector.json").read_text())
    cfg["runtime"]["edge_angles"] = False
    (tmp_path / "detector.json").write_text(json.dumps(cfg))
    assert not OnnxDetector(tmp_path).edge_angles
    assert OnnxDetector(tmp_path, edge_angles=True).edge_angles

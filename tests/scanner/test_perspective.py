"""Photos from a seat: the table's perspective fitted from the index sizes and undone."""

from __future__ import annotations

import numpy as np
import pytest

from datasets.groundtruth import (
    GroundTruthDetector,
    column,
    corners_from_scene,
    keystone_scene,
    scene_from_placements,
)
from scanner.classes import CLASS_ID
from scanner.corners import Corners
from scanner.perspective import (
    MIN_TILT_RATIO,
    UNSURE_TILT_RATIO,
    flatten_corners,
    flattening,
    flattening_of_boxes,
    homography_map,
)
from scanner.reconstruct import LAYOUT_TILTED_CONFIDENCE, read_flat_table, read_table

W, H = 4000, 3000


def _grid_corners(warp: np.ndarray | None, noise: float = 0.0, seed: int = 0) -> Corners:
    """Equal 60 px indices on a 7x5 grid of the table, photographed through `warp`."""
    import cv2

    rng = np.random.default_rng(seed)
    boxes = []
    for x in np.linspace(400, 3600, 7):
        for y in np.linspace(300, 2700, 5):
            s = 60 * (1 + rng.normal(0, noise))
            quad = np.float32([[x, y], [x + s, y], [x + s, y + s], [x, y + s]])
            if warp is not None:
                quad = cv2.perspectiveTransform(quad.reshape(-1, 1, 2), warp)[:, 0]
            boxes.append([*quad.min(axis=0), *quad.max(axis=0)])
    n = len(boxes)
    return Corners(np.array(boxes), np.zeros(n), np.ones(n), np.zeros(n))


def _seat_warp(far: float) -> np.ndarray:
    import cv2

    src = np.float32([[0, 0], [W, 0], [W, H], [0, H]])
    dst = np.float32([[W * (1 - far) / 2, H * 0.1], [W * (1 + far) / 2, H * 0.1], [W, H], [0, H]])
    return cv2.getPerspectiveTransform(src, dst)


def _step_spread(corners: Corners) -> float:
    """How unequal the grid's steps along its rows are: the spread of the step vectors
    over their mean length (0 on a table seen square-on, or through any affine map)."""
    centres = corners.centers.reshape(7, 5, 2)  # 7 columns of 5
    steps = np.diff(centres, axis=0).reshape(-1, 2)
    return float(np.linalg.norm(steps - steps.mean(axis=0), axis=1).max()
                 / np.linalg.norm(steps.mean(axis=0)))


def test_the_flattened_table_has_equal_steps_again():
    corners = _grid_corners(_seat_warp(0.5))
    assert _step_spread(corners) > 0.3  # the far row's steps about half the near row's
    flat = flattening(corners, (W, H))
    assert flat is not None
    assert _step_spread(flatten_corners(corners, flat)) < 0.05
    # the near edge is the one that shrinks, and the way back is the way there
    assert flat.c[1] > 0 and abs(flat.c[0]) < 0.1 * flat.c[1]
    pts = np.array([[10.0, 20.0], [2000, 1500], [3900, 2900]])
    assert np.allclose(flat.to_photo(flat.to_flat(pts)), pts, atol=1e-6)


def test_the_flattening_is_one_homography_and_boxes_go_back_where_they_were():
    import cv2

    corners = _grid_corners(_seat_warp(0.5))
    flat = flattening(corners, (W, H))
    assert flat is not None
    same = flattening_of_boxes(corners.boxes, (W, H), by_height=True)  # all square-on
    assert same is not None and np.allclose(same.c, flat.c) and same.size == flat.size
    pts = np.array([[10.0, 20.0], [2000, 1500], [3900, 2900]])
    warped = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), flat.matrix())[:, 0]
    assert np.allclose(warped, flat.to_flat(pts), atol=1e-6)
    assert np.allclose(homography_map(flat.matrix())(pts), warped, atol=1e-6)
    # a flat box moved back bounds the photo box it came from
    on_flat = flatten_corners(corners, flat).boxes
    back = flat.boxes_to_photo(on_flat)
    assert np.all(back[:, :2] <= corners.boxes[:, :2] + 1e-6)
    assert np.all(back[:, 2:] >= corners.boxes[:, 2:] - 1e-6)
    centres = (back[:, :2] + back[:, 2:]) / 2
    assert np.abs(centres - corners.centers).max() < 0.2 * (corners.boxes[:, 2] - corners.boxes[:, 0]).min()


def test_the_tilt_is_fitted_to_the_indices_heights_not_their_widths():
    """Indices print glyphs of different widths (a 10 is twice a 4): fitted to the boxes'
    areas, a table whose 10s lie on one side reads as tilted sideways; fitted to their
    heights (the longer side, along the tilt), it flattens as it should."""
    import cv2

    warp = _seat_warp(0.5)
    boxes = []
    for x in np.linspace(400, 3600, 7):
        for y in np.linspace(300, 2700, 5):
            wide = 2.0 if x < 2000 else 1.0  # 10s on the left
            quad = np.float32([[x, y], [x + 28 * wide, y], [x + 28 * wide, y + 64], [x, y + 64]])
            quad = cv2.perspectiveTransform(quad.reshape(-1, 1, 2), warp)[:, 0]
            boxes.append([*quad.min(axis=0), *quad.max(axis=0)])
    n = len(boxes)
    corners = Corners(np.array(boxes), np.zeros(n), np.ones(n), np.zeros(n))
    by_area = flattening_of_boxes(corners.boxes, (W, H))
    by_height = flattening(corners, (W, H))
    assert by_area is not None and by_height is not None
    assert abs(by_area.c[0]) > 0.2 * by_area.c[1]  # a sideways tilt that is not there
    assert abs(by_height.c[0]) < 0.1 * by_height.c[1]
    assert _step_spread(flatten_corners(corners, by_height)) < 0.05
    assert _step_spread(flatten_corners(corners, by_area)) > 2 * _step_spread(
        flatten_corners(corners, by_height))


def test_cards_lying_across_the_tilt_keep_the_fit_to_the_areas():
    """Seen from a side seat the cards point across the tilt, where their heights shrink
    as w^-1, not w^-2: the tilt stays the one fitted to the boxes' areas."""
    corners = _grid_corners(_seat_warp(0.5))
    across = Corners(corners.boxes, corners.class_ids, corners.confidence,
                     np.full(len(corners), 90.0))
    flat = flattening(across, (W, H))
    by_area = flattening_of_boxes(corners.boxes, (W, H))
    assert flat is not None and by_area is not None and np.allclose(flat.c, by_area.c)
    along = flattening(corners, (W, H))
    assert along is not None and not np.allclose(along.c, by_area.c)


def test_a_photo_from_above_is_not_flattened():
    assert flattening(_grid_corners(None, noise=0.04), (W, H)) is None


def test_too_few_corners_give_no_fit():
    corners = _grid_corners(_seat_warp(0.5))
    few = Corners(corners.boxes[:8], corners.class_ids[:8], corners.confidence[:8], corners.angle[:8])
    assert flattening(few, (W, H)) is None
    # only the corners the layout trusts count
    unsure = Corners(corners.boxes, corners.class_ids, np.full(len(corners), 0.3), corners.angle)
    assert flattening(unsure, (W, H), unsure.confidence >= 0.4) is None


def test_directions_move_with_the_table():
    flat = flattening(_grid_corners(_seat_warp(0.5)), (W, H))
    pts = np.array([[600.0, 700.0], [3400.0, 700.0], [2000.0, 2500.0]])
    up = flat.angles_to(pts, np.zeros(3), flat=True)
    # an index pointing up near the far edge's left end leans out on the flat table, the
    # right end's the other way; one near the middle of the near edge stays upright
    assert up[0] > 180 and up[1] < 180 and (up[2] < 3 or up[2] > 357)
    back = flat.angles_to(flat.to_flat(pts), up, flat=False)
    assert np.allclose((back + 180) % 360 - 180, 0, atol=1e-6)


def _table() -> dict:
    """Four melds a side: team 0 near the camera, team 1 across."""
    near = (column(["KH", "KS", "KD", "KC"], 900, 2000) + column(["9H", "9S", "9D", "JK"], 1700, 2000)
            + column(["5H", "5S", "5D"], 2500, 2000) + column(["AH", "AS", "AD", "2C"], 3300, 2000))
    far = (column(["8H", "8S", "8D", "8C"], 900, 700, angle=180)
           + column(["QH", "QS", "QD"], 1700, 700, angle=180)
           + column(["7H", "7S", "7C", "7D", "2D"], 2500, 700, angle=180)
           + column(["4H", "4S", "4C"], 3300, 700, angle=180))
    return scene_from_placements(near + far, W, H)


def _melds(reading) -> list:
    """Each team's melds as the layout JSON lists them."""
    return [reading.layout_json()["teams"][t]["melds"] for t in (0, 1)]


TRUE_MELDS = [[["K"] * 4, ["9", "9", "9", "JK"], ["5"] * 3, ["A", "A", "A", "2"]],
              [["8"] * 4, ["Q"] * 3, ["7", "7", "7", "7", "2"], ["4"] * 3]]


@pytest.mark.parametrize("far", [0.55, 0.5, 0.4])
def test_a_table_shot_from_a_seat_reads_as_from_above(far):
    scene, _ = keystone_scene(_table(), far)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    reading = read_table(corners, (W, H))
    assert _melds(reading) == TRUE_MELDS
    assert [r["kind"] for r in reading.review].count("perspective") == 1
    # read as if from above, the near cards' two indices count twice
    as_is = read_flat_table(corners, (W, H))
    assert _melds(as_is) != TRUE_MELDS
    # the cards are reported in the photo: each outline holds its cards' corners
    import cv2

    for card in reading.cards:
        outline = card.outline(reading.card_size).astype(np.float32)
        for i in card.corner_ids:
            x1, y1, x2, y2 = corners.boxes[i]
            centre = (float(x1 + x2) / 2, float(y1 + y2) / 2)
            assert cv2.pointPolygonTest(outline, centre, False) >= 0, (card.rank, i)


def test_a_mild_tilt_is_read_flattened_only_where_that_breaks_fewer_rules():
    # far edge 0.7 of the near one: a mild tilt, read right as shot, so kept as shot
    scene, _ = keystone_scene(_table(), 0.7)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    flat = flattening(corners, (W, H), min_ratio=1.0)
    assert UNSURE_TILT_RATIO <= flat.ratio < MIN_TILT_RATIO
    reading = read_table(corners, (W, H))
    assert _melds(reading) == TRUE_MELDS
    assert all(r["kind"] != "perspective" for r in reading.review)
    assert [c.center for c in reading.cards] == [c.center for c in read_flat_table(corners, (W, H)).cards]
    # 0.55: as shot, a near card's two indices count twice (a rule broken); flattened, not
    scene, _ = keystone_scene(_table(), 0.55)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    assert flattening(corners, (W, H), min_ratio=1.0).ratio < MIN_TILT_RATIO
    as_shot = read_flat_table(corners, (W, H))
    assert _melds(as_shot) != TRUE_MELDS
    assert [r["kind"] for r in read_table(corners, (W, H)).review].count("perspective") == 1


def test_a_table_shot_from_above_reads_the_same_as_before():
    corners = corners_from_scene(_table(), np.random.default_rng(1))
    reading = read_table(corners, (W, H))
    assert _melds(reading) == TRUE_MELDS
    assert all(r["kind"] != "perspective" for r in reading.review)
    before = read_flat_table(corners, (W, H))
    assert [c.center for c in reading.cards] == [c.center for c in before.cards]


def _queens_unsure(corners: Corners, value: float) -> Corners:
    """Every corner sure (0.9) but the far team's queens, read at `value`."""
    conf = np.where(corners.class_ids == CLASS_ID["Q"], value, 0.9).astype(np.float32)
    return Corners(corners.boxes, corners.class_ids, conf, corners.angle)


def test_a_table_from_a_seat_counts_its_unsurer_corners_from_the_tilted_gate():
    scene, _ = keystone_scene(_table(), 0.5)
    corners = _queens_unsure(corners_from_scene(scene, np.random.default_rng(1)), 0.37)
    # at the photo's gate the queens (0.37) are left out: their meld is missing
    strict = read_table(corners, (W, H), min_confidence=0.4)
    assert ["Q"] * 3 not in _melds(strict)[1]
    # read flattened from the lower gate they count, and the table reads as from above
    reading = read_table(corners, (W, H), min_confidence=0.4, tilted_confidence=0.35)
    assert _melds(reading) == TRUE_MELDS
    assert [r["kind"] for r in reading.review].count("perspective") == 1
    # a gate over the corners' confidence leaves them out again; one above the photo's
    # gate does not raise it
    assert _melds(read_table(corners, (W, H), min_confidence=0.4, tilted_confidence=0.38)) == _melds(strict)
    assert _melds(read_table(corners, (W, H), min_confidence=0.3, tilted_confidence=0.5)) == TRUE_MELDS


def test_the_tilted_gate_leaves_a_photo_from_above_alone():
    corners = _queens_unsure(corners_from_scene(_table(), np.random.default_rng(1)), 0.37)
    strict = read_table(corners, (W, H), min_confidence=0.4)
    lowered = read_table(corners, (W, H), min_confidence=0.4, tilted_confidence=0.35)
    assert ["Q"] * 3 not in _melds(lowered)[1]
    assert [c.center for c in lowered.cards] == [c.center for c in strict.cards]


def test_scan_reads_a_photo_with_the_tilted_gate(monkeypatch):
    """scan_photo gives the layout its gate for a photo found tilted (the queens above would
    count there anyway: their row of surer melds supports them)."""
    import scanner.scan as scan

    seen = {}

    def spy(corners, size, **gates):
        seen.update(gates)
        return read_table(corners, size, **gates)

    monkeypatch.setattr(scan, "read_table", spy)
    scene, _ = keystone_scene(_table(), 0.5)
    result = scan.scan_photo(np.zeros((H, W, 3), np.uint8),
                             detector=GroundTruthDetector(scene, np.random.default_rng(1)))
    assert seen["tilted_confidence"] == LAYOUT_TILTED_CONFIDENCE
    assert _melds(result.table) == TRUE_MELDS


def test_a_hidden_card_s_index_place_is_asked_about_in_the_photo_s_pixels():
    # from a seat, the far team's column of eights hides a joker the detector missed: the
    # table is read flattened, and the reader is asked about the joker's index where the
    # photo shows it
    from scanner.detector import box_iou

    table = _table()
    eights = scene_from_placements(column(["8H", "8S", "JK", "8D", "8C"], 900, 700, angle=180),
                                   W, H)
    table["cards"] = [c for c in table["cards"] if c["card"][0] != "8"] + eights["cards"]
    scene, _ = keystone_scene(table, 0.5)
    corners = corners_from_scene(scene, np.random.default_rng(1))
    joker = next(c for c in scene["cards"] if c["card"] == "JK" and c["angle"] == 180)
    index = np.asarray(next(ix["box"] for ix in joker["indices"] if ix["visible"] >= 0.5))
    corners = corners.select(np.flatnonzero(box_iou(index, corners.boxes) < 0.5))
    asked = []

    def look(boxes):
        asked.append(np.asarray(boxes))
        probs = np.zeros((len(boxes), len(CLASS_ID) + 1))
        probs[:, CLASS_ID["JK"]] = 0.95
        return probs

    reading = read_table(corners, (W, H), look=look)
    assert [r["kind"] for r in reading.review].count("perspective") == 1
    assert ["8", "8", "8", "8", "JK"] in _melds(reading)[1]
    # each reading asked (flattened, and as shot: a mild tilt is read both ways) about it
    assert asked and all(box_iou(index, boxes).max() > 0.5 for boxes in asked)

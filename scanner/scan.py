"""Photo to the contract's scan JSON: detect rank corners, then read the table from them.

`scan_photo` decodes the photo (through `scanner.imageio`, at the size the detector
wants), runs a `Detector` (the bundled ONNX model by default), maps the corners to photo
pixels and hands them to `scanner.reconstruct.read_table`. The `ScanResult` it returns
prints as `canasta-scan scan --json` (image, corners, cards, layout, plus the optional
`melds` and `review`), and carries what `scanner.overlay.draw_overlay` needs.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from scanner.corners import Corners
from scanner.ink import corner_ink
from scanner.likeness import lift_lookalikes
from scanner.reconstruct import (
    LAYOUT_FAINT_CONFIDENCE,
    LAYOUT_MIN_CONFIDENCE,
    LAYOUT_SUPPORTED_CONFIDENCE,
    LAYOUT_TILTED_CONFIDENCE,
    TableReading,
    read_table,
)


@dataclass
class ScanResult:
    """Corners and the table read from one photo, in photo pixels (EXIF orientation applied)."""

    width: int
    height: int
    corners: Corners
    table: TableReading
    detect_ms: float = 0.0
    layout_ms: float = 0.0

    def to_json(self) -> dict:
        """The contract's `scan --json` output (with the optional `melds` and `review`)."""
        return {
            "image": {"width": self.width, "height": self.height},
            "corners": self.corners_json(),
            "cards": self.table.cards_json(),
            "layout": self.table.layout_json(),
            "melds": self.table.melds_json(),
            "review": self.table.review,
        }


    def corners_json(self) -> list[dict]:
        """The contract's `corners`, each angle the direction its card's top points.

        The detector reports the direction of the printed index's own top; a card's
        bottom index is printed upside down, so once the corner belongs to a card it
        takes the card's direction, as the contract defines the angle.
        """
        corners = self.corners.to_json()
        for card in self.table.cards:
            for corner_id in card.corner_ids:
                if 0 <= corner_id < len(corners):
                    corners[corner_id]["angle"] = round(card.angle % 360, 1)
        return corners


def index_look(detector, rgb: np.ndarray, scale: float):
    """The layout's `look` (`read_table(look=)`): what the detector's index readers read in
    boxes given in photo pixels, cut from `rgb` (the photo at `scale` pixels per photo
    pixel); None where the detector has no readers."""
    reader = getattr(detector, "read", None)
    if reader is None:
        return None
    return lambda boxes: reader(rgb, np.asarray(boxes, float) * scale)[0]


def index_find(detector, rgb: np.ndarray, scale: float):
    """The layout's `find` (`read_table(find=)`): where the detector finds an index near
    each of the boxes given in photo pixels and what its readers read there (`rgb` is the
    photo at `scale` pixels per photo pixel); None where the detector cannot look."""
    finder = getattr(detector, "find_near", None)
    if finder is None:
        return None

    def find(boxes):
        found, probs = finder(rgb, np.asarray(boxes, float) * scale)
        return found / scale, probs
    return find


def scan_photo(src: str | os.PathLike | bytes | np.ndarray, detector=None) -> ScanResult:
    """Read a photo (path, bytes, `Photo` or RGB array) into corners, cards and a layout.

    Raises `scanner.imageio.ImageError` for input that is not a readable photo.
    """
    start = time.perf_counter()
    if detector is None:
        from scanner.detector import default_detector
        detector = default_detector()
    if isinstance(src, np.ndarray):
        rgb = src
        if rgb.ndim != 3 or rgb.shape[2] != 3:
            raise ValueError(f"expected an (H,W,3) RGB image, got shape {rgb.shape}")
        corners = detector.detect(rgb, min_confidence=LAYOUT_FAINT_CONFIDENCE)
        height, width = rgb.shape[:2]
        scale = 1.0
    else:
        from scanner.detector import detect_corners
        # down to the layout's faint floor: unsure corners count where a line of cards wants
        # them
        corners, photo = detect_corners(src, detector, min_confidence=LAYOUT_FAINT_CONFIDENCE)
        width, height = photo.size
        rgb, scale = photo.rgb, photo.scale
    detected = time.perf_counter()
    # the layout counts unsure corners that look like the photo's sure ones of their rank;
    # the corners listed keep the detector's own scores
    table = read_table(lift_lookalikes(corners, rgb, scale, floor=LAYOUT_SUPPORTED_CONFIDENCE),
                       (width, height),
                       min_confidence=LAYOUT_MIN_CONFIDENCE,
                       supported_confidence=LAYOUT_SUPPORTED_CONFIDENCE,
                       tilted_confidence=LAYOUT_TILTED_CONFIDENCE,
                       ink=corner_ink(corners.boxes, lambda: (rgb, scale)),
                       look=index_look(detector, rgb, scale),
                       faint_confidence=LAYOUT_FAINT_CONFIDENCE,
                       find=index_find(detector, rgb, scale))
    done = time.perf_counter()
    return ScanResult(width, height, corners, table, detect_ms=(detected - start) * 1000,
                      layout_ms=(done - detected) * 1000)

"""Detected card corners (printed rank indices) as one array-backed value.

A `Corners` holds N detections as parallel numpy arrays, in pixels of the photo as the
person sees it (EXIF orientation applied). It is what every `Detector` returns and what
layout reconstruction consumes, so a test double built from ground truth and the ONNX
runtime are interchangeable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scanner.classes import INDEX_CLASSES


@dataclass(frozen=True)
class Corners:
    """N rank corners: boxes (N,4 xyxy px), class ids (N,), confidences (N,), angles (N,) in degrees.

    `angle` is the direction the card's top points in the photo: 0 = up, 90 = right,
    180 = down, 270 = left (NaN where unknown). `rank_confidence` is the classifier's
    probability for the rank alone (defaults to `confidence`).
    """

    boxes: np.ndarray
    class_ids: np.ndarray
    confidence: np.ndarray
    angle: np.ndarray
    rank_confidence: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        boxes = np.asarray(self.boxes, dtype=np.float32).reshape(-1, 4)
        n = len(boxes)
        class_ids = np.asarray(self.class_ids, dtype=np.int64).reshape(n)
        confidence = np.asarray(self.confidence, dtype=np.float32).reshape(n)
        angle = np.asarray(self.angle, dtype=np.float32).reshape(n)
        rank_conf = confidence if self.rank_confidence is None else self.rank_confidence
        rank_conf = np.asarray(rank_conf, dtype=np.float32).reshape(n)
        if n and (class_ids.min() < 0 or class_ids.max() >= len(INDEX_CLASSES)):
            raise ValueError("class id out of range")
        if n and np.any(boxes[:, 2:] < boxes[:, :2]):
            raise ValueError("box with x2 < x1 or y2 < y1")
        object.__setattr__(self, "boxes", boxes)
        object.__setattr__(self, "class_ids", class_ids)
        object.__setattr__(self, "confidence", confidence)
        object.__setattr__(self, "angle", angle)
        object.__setattr__(self, "rank_confidence", rank_conf)

    def __len__(self) -> int:
        return len(self.boxes)

    @classmethod
    def empty(cls) -> Corners:
        """No detections."""
        return cls(np.zeros((0, 4)), np.zeros(0), np.zeros(0), np.zeros(0))

    @property
    def ranks(self) -> list[str]:
        """Rank token per corner (`K`, `10`, `JK`, `3R`, ...)."""
        return [INDEX_CLASSES[i] for i in self.class_ids]

    @property
    def centers(self) -> np.ndarray:
        """(N,2) box centres."""
        return (self.boxes[:, :2] + self.boxes[:, 2:]) / 2

    @property
    def heights(self) -> np.ndarray:
        """(N,) box heights."""
        return self.boxes[:, 3] - self.boxes[:, 1]

    def select(self, mask_or_index: np.ndarray) -> Corners:
        """The subset picked by a boolean mask or index array."""
        return Corners(
            self.boxes[mask_or_index],
            self.class_ids[mask_or_index],
            self.confidence[mask_or_index],
            self.angle[mask_or_index],
            self.rank_confidence[mask_or_index],
        )

    def scaled(self, factor: float) -> Corners:
        """The same corners with boxes multiplied by `factor` (to map between image scales)."""
        return Corners(self.boxes * factor, self.class_ids, self.confidence, self.angle,
                       self.rank_confidence)

    def to_json(self) -> list[dict]:
        """The contract's `corners` list: card, box, confidence, angle."""
        out = []
        for box, rank, conf, ang in zip(self.boxes, self.ranks, self.confidence, self.angle, strict=True):
            item = {"card": rank, "box": [round(float(v), 1) for v in box],
                    "confidence": round(float(conf), 4)}
            if not np.isnan(ang):
                item["angle"] = round(float(ang) % 360, 1)
            out.append(item)
        return out


# Two decks of a table may print their indices at two sizes (kde-oxygen-white's bare glyph
# beside tango's large rank). A photo's index boxes fall into two sizes when the two groups'
# means lie PRINT_SPLIT apart or more, with a clear gap between them (the smallest of the
# larger group PRINT_GAP above the largest of the smaller), PRINT_MIN boxes or more in each.
# Detector boxes, a third short on a shaded index, blur the gap: 1.15 made false groups on
# val photos (docs/LAYOUT.md, session 29).
PRINT_SPLIT = 1.35
PRINT_GAP = 1.2
PRINT_MIN = 3


def long_sides(boxes: np.ndarray) -> np.ndarray:
    """The longer side of each xyxy box (at least 1e-6)."""
    return np.maximum(boxes[:, 2:] - boxes[:, :2], 1e-6).max(axis=1)


def root_areas(boxes: np.ndarray) -> np.ndarray:
    """The square root of each xyxy box's area (a size that a rank's glyph width moves less
    than either side alone)."""
    return np.sqrt(np.prod(np.maximum(boxes[:, 2:] - boxes[:, :2], 0.0), axis=1))


def print_sizes(sides: np.ndarray) -> np.ndarray | None:
    """Which of two print sizes (0 smaller, 1 larger) each index is, given its box's longer
    side (`long_sides`), where the boxes fall into two (`PRINT_SPLIT`, `PRINT_GAP`); else
    None. The split is the one of the sides' logs with the least spread within the groups."""
    log_side = np.log(np.asarray(sides, dtype=float))
    n = len(log_side)
    if n < 2 * PRINT_MIN:
        return None
    order = np.sort(log_side)
    k = np.arange(PRINT_MIN, n - PRINT_MIN + 1)
    s1, s2 = np.cumsum(order), np.cumsum(order ** 2)
    # within-group sums of squares of every split at k (the first k smaller)
    low = s2[k - 1] - s1[k - 1] ** 2 / k
    high = (s2[-1] - s2[k - 1]) - (s1[-1] - s1[k - 1]) ** 2 / (n - k)
    cut = int(k[np.argmin(low + high)])
    lo, hi = order[:cut], order[cut:]
    if hi.mean() - lo.mean() < np.log(PRINT_SPLIT) or hi.min() - lo.max() < np.log(PRINT_GAP):
        return None
    return (log_side >= hi.min()).astype(int)

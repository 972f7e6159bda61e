"""The annotated photo: what canasta-scan saw, drawn over the picture for a person to check.

`draw_overlay` outlines each meld in its team's colour (team 0 blue, team 1 orange), boxes
each detected corner, and labels each card with its rank at its visible index; cards
left out of the layout (piles, strays) are grey, and low-confidence cards get a red
label so the eye goes there first. Used by `canasta-scan scan --overlay` and the service.
"""

from __future__ import annotations

import cv2
import numpy as np

TEAM_COLOURS = {0: (30, 144, 255), 1: (255, 140, 0), None: (160, 160, 160)}
LOW_CONFIDENCE = (220, 20, 60)
LABEL_TEXT = (255, 255, 255)


def _card_outline(center: tuple[float, float], angle: float, size: tuple[float, float]) -> np.ndarray:
    """Four photo points of a card's outline from its centre, up direction and (w, h)."""
    w, h = size
    a = np.radians(angle)
    up = np.array([np.sin(a), -np.cos(a)])
    right = np.array([np.cos(a), np.sin(a)])
    c = np.asarray(center, dtype=float)
    return np.array([c + up * h / 2 - right * w / 2, c + up * h / 2 + right * w / 2,
                     c - up * h / 2 + right * w / 2, c - up * h / 2 - right * w / 2])


def draw_overlay(rgb: np.ndarray, scan_result) -> np.ndarray:
    """A copy of `rgb` with cards labelled and melds outlined in team colours.

    `rgb` may be any resolution of the scanned photo: coordinates are scaled from the
    photo's size in `scan_result` to the array's size.
    """
    image = np.ascontiguousarray(np.asarray(rgb, dtype=np.uint8).copy())
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an (H,W,3) RGB image, got shape {image.shape}")
    table = scan_result.table
    sx = image.shape[1] / max(scan_result.width, 1)
    sy = image.shape[0] / max(scan_result.height, 1)
    scale = np.array([sx, sy])
    card_w, card_h = table.card_size
    px_card_h = max(card_h * sy, 10.0)
    thick = max(1, int(round(px_card_h / 60)))
    font_scale = max(0.4, px_card_h / 180)

    # melds first (underneath the labels): hull of their cards' outlines
    for meld in table.melds:
        pts = np.concatenate([_card_outline(table.cards[i].center, table.cards[i].angle,
                                            (card_w, card_h)) for i in meld.card_ids]) * scale
        hull = cv2.convexHull(pts.astype(np.float32)).astype(np.int32)
        colour = TEAM_COLOURS.get(meld.team, TEAM_COLOURS[None])
        cv2.polylines(image, [hull], True, colour, thick * 3, cv2.LINE_AA)

    boxes = scan_result.corners.boxes
    for card in table.cards:
        colour = TEAM_COLOURS.get(card.team, TEAM_COLOURS[None])
        for k in card.corner_ids:
            x1, y1, x2, y2 = (boxes[k] * np.array([sx, sy, sx, sy])).astype(int)
            cv2.rectangle(image, (x1, y1), (x2, y2), colour, thick, cv2.LINE_AA)
        outline = (_card_outline(card.center, card.angle, (card_w, card_h)) * scale).astype(np.int32)
        cv2.polylines(image, [outline], True, colour, thick, cv2.LINE_AA)
        label = card.rank if card.meld is not None or card.role == "red_three" else f"{card.rank}?"
        x1, y1 = (boxes[card.corner_ids[0], :2] * scale).astype(int)
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thick)
        y_text = max(th + 2, y1 - 3)
        background = LOW_CONFIDENCE if card.confidence < 0.6 else colour
        cv2.rectangle(image, (x1, y_text - th - 2), (x1 + tw + 2, y_text + base), background, -1)
        cv2.putText(image, label, (x1 + 1, y_text), cv2.FONT_HERSHEY_SIMPLEX, font_scale,
                    LABEL_TEXT, thick, cv2.LINE_AA)
    return image

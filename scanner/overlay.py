"""The annotated photo: what canasta-scan saw, drawn over the picture for a person to check.

`draw_overlay` outlines each meld in its team's colour (team 0 blue, team 1 orange), boxes
each detected corner, and labels each card with its rank at its visible index; cards
left out of the layout (piles, strays) are grey, cards not in a meld carry a "?", and
low-confidence cards (under `CARD_CHECK`) get a red label and the melds the scan's review
sends to be counted (`meld_check`) a red line over their outline, so the eye goes there
first. It takes a `ScanResult` or the contract's scan JSON (with the optional card
outlines and review), so the service can draw a stored scan. Used by `canasta-scan scan --overlay` and the service.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from scanner.reconstruct import CARD_CHECK

TEAM_COLOURS = {0: (30, 144, 255), 1: (255, 140, 0), None: (160, 160, 160)}
LOW_CONFIDENCE = (220, 20, 60)
LABEL_TEXT = (255, 255, 255)


def _as_json(scan_result: Any) -> dict:
    return scan_result if isinstance(scan_result, dict) else scan_result.to_json()


def draw_overlay(rgb: np.ndarray, scan_result: Any) -> np.ndarray:
    """A copy of `rgb` with cards labelled and melds outlined in team colours.

    `scan_result` is a `scanner.scan.ScanResult` or its JSON. `rgb` may be any
    resolution of the scanned photo: coordinates are scaled from the photo's size to the
    array's size.
    """
    image = np.ascontiguousarray(np.asarray(rgb, dtype=np.uint8).copy())
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an (H,W,3) RGB image, got shape {image.shape}")
    data = _as_json(scan_result)
    sx = image.shape[1] / max(data["image"]["width"], 1)
    sy = image.shape[0] / max(data["image"]["height"], 1)
    scale = np.array([sx, sy])
    boxes = np.array([c["box"] for c in data.get("corners", [])], dtype=float).reshape(-1, 4)
    cards = data.get("cards", [])
    outlines = [np.array(c["outline"], dtype=float) * scale if c.get("outline") else None
                for c in cards]
    heights = [np.linalg.norm(o[0] - o[3]) for o in outlines if o is not None]
    if heights:
        px_card_h = float(np.median(heights))
    elif len(boxes):
        px_card_h = 5.0 * float((boxes[:, 3] - boxes[:, 1]).mean()) * sy  # about 5 indices
    else:
        px_card_h = 100.0
    px_card_h = max(px_card_h, 10.0)
    thick = max(1, int(round(px_card_h / 60)))
    font_scale = max(0.4, px_card_h / 180)

    # melds first (underneath the labels): hull of their cards' outlines or corner boxes
    groups: dict[tuple[int, int], list[int]] = {}
    for k, card in enumerate(cards):
        if card.get("team") is not None and card.get("meld") is not None:
            groups.setdefault((card["team"], card["meld"]), []).append(k)
    # the melds the review sends to be counted, by (team, meld) as their cards name them
    to_count = {(r.get("team"), r.get("meld")) for r in data.get("review") or []
                if r.get("kind") == "meld_check"}
    count_hulls: list[np.ndarray] = []  # drawn last, over the cards' own lines
    for (team, meld), members in groups.items():
        pts = [outlines[k] for k in members if outlines[k] is not None]
        pts += [_box_points(boxes[i]) * scale for k in members for i in cards[k]["corners"]
                if 0 <= i < len(boxes)]
        if not pts:
            continue
        hull = cv2.convexHull(np.concatenate(pts).astype(np.float32)).astype(np.int32)
        cv2.polylines(image, [hull], True, TEAM_COLOURS.get(team, TEAM_COLOURS[None]),
                      thick * 3, cv2.LINE_AA)
        if (team, meld) in to_count:
            count_hulls.append(hull)

    for k, card in enumerate(cards):
        colour = TEAM_COLOURS.get(card.get("team"), TEAM_COLOURS[None])
        for i in card.get("corners", []):
            if 0 <= i < len(boxes):
                x1, y1, x2, y2 = (boxes[i] * np.array([sx, sy, sx, sy])).astype(int)
                cv2.rectangle(image, (x1, y1), (x2, y2), colour, thick, cv2.LINE_AA)
        if outlines[k] is not None:
            cv2.polylines(image, [outlines[k].astype(np.int32)], True, colour, thick,
                          cv2.LINE_AA)
        placed = card.get("meld") is not None or card.get("role") == "red_three"
        label = str(card.get("card", "?")) + ("" if placed else "?")
        if card.get("corners"):
            x1, y1 = (boxes[card["corners"][0], :2] * scale).astype(int)
        elif outlines[k] is not None:
            x1, y1 = outlines[k][0].astype(int)
        else:
            continue
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thick)
        y_text = max(th + 2, y1 - 3)
        confidence = card.get("confidence")
        background = (LOW_CONFIDENCE if confidence is not None and confidence < CARD_CHECK
                      else colour)
        cv2.rectangle(image, (x1, y_text - th - 2), (x1 + tw + 2, y_text + base), background, -1)
        cv2.putText(image, label, (x1 + 1, y_text), cv2.FONT_HERSHEY_SIMPLEX, font_scale,
                    LABEL_TEXT, thick, cv2.LINE_AA)
    if count_hulls:
        cv2.polylines(image, count_hulls, True, LOW_CONFIDENCE, thick * 2, cv2.LINE_AA)
    return image


def _box_points(box: np.ndarray) -> np.ndarray:
    x1, y1, x2, y2 = box
    return np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], dtype=float)

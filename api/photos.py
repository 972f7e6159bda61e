"""Photos in the service: checking uploads, scanning them, storing them by content hash.

An upload is refused before its pixels are decoded when its declared type is not an
image (415) or it is larger than the byte or pixel limit (413, from the size and the
image header); a file that does not decode is a 422. A deal's photo is stored once per
content (`photos/ab/abcd....jpg` under the data directory), with a smaller JPEG the page
can show (phones cannot show HEIC) and from which the annotated image is drawn with the
deal's current, corrected cards.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from api.service import ServiceError
from api.table import review_cards
from scanner.imageio import ImageError, Photo, PhotoTooLarge, load_photo

IMAGE_TYPES = frozenset({
    "image/jpeg", "image/jpg", "image/pjpeg", "image/png", "image/heic", "image/heif",
    "image/heic-sequence", "image/heif-sequence",
    # Some browsers send this for HEIC files; the decoder still decides.
    "application/octet-stream",
})
EXTENSIONS = {"JPEG": "jpg", "MPO": "jpg", "PNG": "png", "HEIF": "heic"}
TEAM_COLOURS = [(33, 150, 243), (255, 152, 0), (76, 175, 80), (156, 39, 176)]
UNPLACED_COLOUR = (158, 158, 158)
LOW_COLOUR = (229, 57, 53)


def check_content_type(content_type: str | None) -> None:
    """415 unless the declared type is one of the photo types (or unknown bytes)."""
    kind = (content_type or "").split(";")[0].strip().lower()
    # No type at all is let through too (some browsers send none for .heic): the decoder
    # then decides from the bytes, and refuses anything that is not a photo.
    if kind and kind not in IMAGE_TYPES:
        raise ServiceError(415, f"the photo must be a JPEG, PNG or HEIC image, not "
                           f"{kind or 'an untyped upload'}")


def read_limited(stream: Any, max_bytes: int) -> bytes:
    """The upload's bytes, or 413 as soon as it is known to exceed `max_bytes`."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ServiceError(413, f"the photo is larger than {max_bytes / 2**20:.0f} MB")
    if not data:
        raise ServiceError(422, "the photo is empty")
    return data


def decode(data: bytes, max_pixels: int, max_bytes: int, long_side: int | None) -> Photo:
    """Decode a photo, mapping the reader's errors to HTTP statuses (413 before decoding)."""
    try:
        return load_photo(data, max_pixels=max_pixels, max_bytes=max_bytes, long_side=long_side)
    except PhotoTooLarge as exc:
        raise ServiceError(413, str(exc)) from exc
    except ImageError as exc:
        raise ServiceError(422, f"not a readable photo: {exc}") from exc


def scan(photo: Photo, detector: Any) -> dict[str, Any]:
    """The contract's scan JSON of a decoded photo."""
    from scanner.scan import scan_photo  # vision code is imported only when scanning

    return scan_photo(photo, detector=detector).to_json()


def decode_long_side(detector: Any) -> int | None:
    """How large the detector needs a JPEG decoded (None: full size).

    The page's view image is made from the same decode, so a deal's photo reads exactly
    as `POST /api/scan` and `canasta-scan scan` read it.
    """
    side = getattr(detector, "decode_long_side", None)
    return int(side) if side else None


class PhotoStore:
    """Photos by SHA-256 of their bytes, plus their view JPEG, under one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, sha: str, suffix: str) -> Path:
        return self.root / sha[:2] / f"{sha}{suffix}"

    def put(self, data: bytes, photo: Photo, view_long_side: int) -> tuple[str, str]:
        """Store the photo and its view JPEG once per content; return (sha256, extension)."""
        sha = hashlib.sha256(data).hexdigest()
        ext = EXTENSIONS.get(photo.format, "bin")
        original = self._path(sha, f".{ext}")
        if not original.exists():
            _write_atomic(original, data)
        view = self._path(sha, ".view.jpg")
        if not view.exists():
            _write_atomic(view, _jpeg(_resize(photo.rgb, view_long_side)))
        return sha, ext

    def original(self, sha: str, ext: str) -> Path:
        """Path of the photo as uploaded."""
        return self._path(sha, f".{ext}")

    def view(self, sha: str) -> Path:
        """Path of the JPEG the page shows."""
        return self._path(sha, ".view.jpg")


def _write_atomic(path: Path, data: bytes) -> None:
    # Written beside and renamed, so a crash never leaves half a photo under its hash.
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _resize(rgb: np.ndarray, long_side: int) -> Image.Image:
    img = Image.fromarray(rgb)
    scale = long_side / max(img.size)
    if scale < 1:
        img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))),
                         Image.Resampling.BILINEAR)
    return img


def _jpeg(img: Image.Image, quality: int = 85) -> bytes:
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=quality)
    return out.getvalue()


def annotated_jpeg(view_path: Path, image_size: tuple[int, int], table: dict[str, Any],
                   scan_seq: int) -> bytes:
    """The view image with each card of this photo boxed and labelled as currently corrected;
    what the deal's review lists first is red: a low-confidence card's box and label, and a
    box round each meld to count."""
    img = Image.open(view_path).convert("RGB")
    k = img.width / image_size[0]
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=max(12, img.width // 80))
    review = review_cards(table)
    low_ids = {r["card_id"] for r in review if r["kind"] == "low_confidence"}
    to_count = {r["meld"] for r in review if r["kind"] == "count_meld"}
    placed: list[tuple[dict[str, Any], tuple[int, int, int]]] = []
    count_boxes = []
    for t, team in enumerate(table["teams"]):
        colour = TEAM_COLOURS[t % len(TEAM_COLOURS)]
        for meld in team["melds"]:
            placed += [(c, colour) for c in meld["cards"]]
            boxes = [c["box"] for c in meld["cards"] if c["scan"] == scan_seq and c["box"]]
            if meld["id"] in to_count and boxes:
                count_boxes.append([min(b[0] for b in boxes), min(b[1] for b in boxes),
                                    max(b[2] for b in boxes), max(b[3] for b in boxes)])
        placed += [(c, colour) for c in team["red_threes"]]
    placed += [(c, UNPLACED_COLOUR) for c in table["unplaced"]]
    for card, colour in placed:
        if card["scan"] != scan_seq or not card["box"]:
            continue
        low = card["id"] in low_ids
        x1, y1, x2, y2 = (v * k for v in card["box"])
        draw.rectangle((x1, y1, x2, y2), outline=LOW_COLOUR if low else colour, width=3)
        label = card["card"] + (" ?" if low else "")
        tx, ty = x1, max(0, y1 - font.size - 4)
        bbox = draw.textbbox((tx, ty), label, font=font)
        draw.rectangle(bbox, fill=LOW_COLOUR if low else colour)
        draw.text((tx, ty), label, fill=(255, 255, 255), font=font)
    pad = font.size  # outside the cards' own boxes and labels
    for x1, y1, x2, y2 in count_boxes:
        draw.rectangle((x1 * k - pad, y1 * k - 2 * pad, x2 * k + pad, y2 * k + pad),
                       outline=LOW_COLOUR, width=4)
    return _jpeg(img)

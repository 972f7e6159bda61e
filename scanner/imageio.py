"""Decoding phone photos into RGB arrays, safely and only as large as needed.

`load_photo` accepts a path or the uploaded bytes of a JPEG, PNG or HEIC (HEIF) photo,
rejects anything else with an `ImageError`, and rejects photos that are too large
(`PhotoTooLarge`) from the file size and the header alone, before a single pixel is
decoded, so a decompression bomb costs nothing. The EXIF orientation is applied, so all
coordinates are in pixels of the photo as the person sees it. When the caller needs
only a smaller image (the detector reads a table at about 1,600 px), a JPEG is decoded
at a reduced scale by the codec itself (Pillow `draft()`, 2-4x faster than a full
decode); `Photo.full_rgb()` still decodes the full-resolution pixels on demand.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

try:  # HEIC support is optional at import time so a broken wheel does not stop JPEG/PNG.
    import pillow_heif

    pillow_heif.register_heif_opener()
    _HEIF_FORMATS: tuple[str, ...] = ("HEIF",)
except ImportError:  # pragma: no cover - pillow-heif is a declared dependency
    _HEIF_FORMATS = ()

MAX_PIXELS = 50_000_000
MAX_BYTES = 25 * 2**20

# Phones that attach a depth map or preview write MPO; Pillow opens those through "JPEG".
_FORMATS = ("JPEG", "PNG", *_HEIF_FORMATS)
_TRANSPOSING_ORIENTATIONS = {5, 6, 7, 8}  # EXIF orientations that swap width and height

# Never decode a bomb behind our back: our own check runs first; this is a second guard.
Image.MAX_IMAGE_PIXELS = None
ImageFile.LOAD_TRUNCATED_IMAGES = False


class ImageError(ValueError):
    """The input is not a photo we can read (not JPEG/PNG/HEIC, corrupt or truncated)."""


class PhotoTooLarge(ImageError):
    """The photo exceeds the byte or pixel limit; raised before its pixels are decoded."""


@dataclass
class Photo:
    """A decoded photo: `rgb` (H,W,3 uint8) plus the size of the photo as the person sees it.

    `rgb` may be a reduced-size decode (`scale` = rgb pixels per photo pixel, <= 1);
    multiply `rgb` coordinates by `1/scale` to get photo pixels. `full_rgb()` returns the
    full-resolution pixels, decoding them on first use when `rgb` was reduced.
    """

    rgb: np.ndarray
    width: int
    height: int
    format: str
    scale: float = 1.0
    _data: bytes | None = field(default=None, repr=False)
    _full: np.ndarray | None = field(default=None, repr=False)
    # quarter turns (`np.rot90`) from the pixels `_data` decodes to, to this photo's
    _turns: int = field(default=0, repr=False)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the photo with EXIF orientation applied."""
        return self.width, self.height

    def full_rgb(self) -> np.ndarray:
        """The full-resolution RGB pixels (decoded once, then cached)."""
        if self.scale >= 1.0:
            return self.rgb
        if self._full is None:
            assert self._data is not None
            full = _decode(_open(self._data), draft_long_side=None)
            self._full = np.ascontiguousarray(np.rot90(full, self._turns)) if self._turns else full
        return self._full

    def turned(self, k: int) -> Photo:
        """The photo as if taken after k counter-clockwise quarter turns (`np.rot90`), at
        the decoded size (benchmarks of photos from another side of the table)."""
        width, height = (self.height, self.width) if k % 2 else (self.width, self.height)
        full = None if self._full is None else np.ascontiguousarray(np.rot90(self._full, k))
        return Photo(np.ascontiguousarray(np.rot90(self.rgb, k)), width, height, self.format,
                     self.scale, self._data, full, (self._turns + k) % 4)


def _read_source(src: str | os.PathLike | bytes | bytearray | memoryview,
                 max_bytes: int) -> bytes:
    """The file's bytes, refusing oversized files from their size before reading them."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        data = bytes(src)
        if len(data) > max_bytes:
            raise PhotoTooLarge(f"photo is {len(data) / 2**20:.1f} MB; the limit is "
                                f"{max_bytes / 2**20:.0f} MB")
        return data
    path = Path(src)
    try:
        n = path.stat().st_size
    except OSError as exc:
        raise ImageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if path.is_dir():
        raise ImageError(f"{path} is a directory, not a photo")
    if n > max_bytes:
        raise PhotoTooLarge(f"photo is {n / 2**20:.1f} MB; the limit is "
                            f"{max_bytes / 2**20:.0f} MB")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ImageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _open(data: bytes) -> Image.Image:
    """Open the header only (no pixels decoded yet)."""
    if not data:
        raise ImageError("empty file: not a photo")
    try:
        return Image.open(io.BytesIO(data), formats=_FORMATS)
    except UnidentifiedImageError as exc:
        raise ImageError("not a JPEG, PNG or HEIC photo (unrecognised or corrupt header)") from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"corrupt photo header: {exc}") from exc


def _orientation(img: Image.Image) -> int:
    try:
        return int(img.getexif().get(0x0112, 1) or 1)
    except Exception:  # a malformed EXIF block must not make the photo unreadable
        return 1


def _decode(img: Image.Image, draft_long_side: int | None) -> np.ndarray:
    """Decode pixels (at reduced JPEG scale if asked), apply EXIF orientation, return RGB."""
    try:
        if draft_long_side is not None and img.format in ("JPEG", "MPO"):
            w, h = img.size
            # draft() picks the smallest 1/2, 1/4, 1/8 scale that is still >= the request.
            k = draft_long_side / max(w, h)
            img.draft("RGB", (max(1, int(w * k)), max(1, int(h * k))))
        img.load()
        if _orientation(img) != 1:  # exif_transpose copies the pixels even when upright
            img = ImageOps.exif_transpose(img)
        if img.mode != "RGB":
            img = img.convert("RGBA").convert("RGB") if "A" in img.mode or img.mode == "P" \
                else img.convert("RGB")
        return np.asarray(img, dtype=np.uint8).copy()
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ImageError(f"corrupt or truncated photo: {exc}") from exc


def load_photo(src: str | os.PathLike | bytes | bytearray | memoryview,
               max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES,
               long_side: int | None = None) -> Photo:
    """Decode a JPEG/PNG/HEIC photo to RGB with EXIF orientation applied.

    Raises `PhotoTooLarge` when the file exceeds `max_bytes` or the header announces more
    than `max_pixels`, before decoding; `ImageError` for anything unreadable. With
    `long_side`, a JPEG may be decoded at a reduced scale whose long side is still at
    least `long_side` (`Photo.scale` < 1); other formats are decoded at full size.
    """
    data = _read_source(src, max_bytes)
    img = _open(data)
    w, h = img.size
    if w <= 0 or h <= 0:
        raise ImageError("photo has no pixels")
    if w * h > max_pixels:
        raise PhotoTooLarge(f"photo is {w}x{h} = {w * h / 1e6:.1f} megapixels; the limit is "
                            f"{max_pixels / 1e6:.0f}")
    if _orientation(img) in _TRANSPOSING_ORIENTATIONS:
        w, h = h, w
    fmt = img.format or "unknown"
    want = long_side if long_side is not None and long_side < max(w, h) else None
    rgb = _decode(img, draft_long_side=want)
    scale = rgb.shape[1] / w
    if abs(scale - 1.0) < 1e-9:
        scale = 1.0
    return Photo(rgb=rgb, width=w, height=h, format=fmt, scale=scale,
                 _data=data if scale < 1.0 else None)

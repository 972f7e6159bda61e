"""Photo decoding: formats, EXIF orientation, size limits before decoding, bad input."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image, ImageFile

from scanner.imageio import ImageError, Photo, PhotoTooLarge, load_photo


def _gradient(w: int = 64, h: int = 48) -> np.ndarray:
    """An image whose every corner has a different colour, so rotations are detectable."""
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([x * 255 // (w - 1), y * 255 // (h - 1), np.full_like(x, 60)], -1).astype(np.uint8)


def _encode(rgb: np.ndarray, fmt: str, orientation: int | None = None, **kw) -> bytes:
    buf = io.BytesIO()
    img = Image.fromarray(rgb)
    if orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = orientation
        kw["exif"] = exif.tobytes()
    img.save(buf, format=fmt, **kw)
    return buf.getvalue()


def test_jpeg_roundtrip_from_bytes_and_path(tmp_path) -> None:
    rgb = _gradient()
    data = _encode(rgb, "JPEG", quality=95)
    photo = load_photo(data)
    assert isinstance(photo, Photo)
    assert photo.size == (64, 48) and photo.rgb.shape == (48, 64, 3) and photo.rgb.dtype == np.uint8
    assert np.abs(photo.rgb.astype(int) - rgb).mean() < 4
    path = tmp_path / "p.jpg"
    path.write_bytes(data)
    assert np.array_equal(load_photo(path).rgb, photo.rgb)
    assert np.array_equal(load_photo(str(path)).rgb, photo.rgb)


def test_png_with_alpha_and_palette() -> None:
    rgba = np.dstack([_gradient(), np.full((48, 64), 255, np.uint8)])
    photo = load_photo(_encode(rgba, "PNG"))
    assert photo.format == "PNG" and photo.rgb.shape == (48, 64, 3)
    assert np.array_equal(photo.rgb, _gradient())
    buf = io.BytesIO()
    Image.fromarray(_gradient()).convert("P").save(buf, format="PNG")
    assert load_photo(buf.getvalue()).rgb.shape == (48, 64, 3)


def test_heic_decodes() -> None:
    pillow_heif = pytest.importorskip("pillow_heif")
    rgb = _gradient(128, 96)
    buf = io.BytesIO()
    pillow_heif.from_pillow(Image.fromarray(rgb)).save(buf, format="HEIF", quality=95)
    photo = load_photo(buf.getvalue())
    assert photo.format == "HEIF" and photo.size == (128, 96)
    assert np.abs(photo.rgb.astype(int) - rgb).mean() < 8


@pytest.mark.parametrize("orientation, expected", [
    (1, lambda a: a),
    (3, lambda a: np.rot90(a, 2)),
    (6, lambda a: np.rot90(a, -1)),   # camera held turned: the viewer rotates 90 clockwise
    (8, lambda a: np.rot90(a, 1)),
])
def test_exif_orientation_applied(orientation, expected) -> None:
    rgb = _gradient()
    photo = load_photo(_encode(rgb, "PNG", orientation=orientation))
    want = expected(rgb)
    assert photo.rgb.shape == want.shape
    assert (photo.width, photo.height) == (want.shape[1], want.shape[0])
    assert np.array_equal(photo.rgb, want)


def test_reduced_decode_keeps_photo_size_and_full_crops() -> None:
    rgb = np.kron(_gradient(), np.ones((20, 20, 1), np.uint8))  # 1280 x 960
    data = _encode(rgb, "JPEG", orientation=6, quality=95)
    photo = load_photo(data, long_side=600)
    assert (photo.width, photo.height) == (960, 1280)  # EXIF 6 swaps the sides
    assert photo.scale == pytest.approx(0.5)  # draft() picks the 1/2 scale (640 >= 600)
    assert photo.rgb.shape == (640, 480, 3)
    full = photo.full_rgb()
    assert full.shape == (1280, 960, 3)
    small_as_full = full[::2, ::2].astype(int)
    assert np.abs(small_as_full - photo.rgb.astype(int)).mean() < 6
    assert load_photo(data, long_side=5000).scale == 1.0


def test_turned_reduced_decode_has_its_full_pixels_turned() -> None:
    """A photo decoded reduced and then turned (a benchmark's photo from another side of
    the table) still gives its full-resolution pixels, turned like its decoded ones: the
    small-index pass reads them."""
    rgb = np.kron(_gradient(), np.ones((20, 20, 1), np.uint8))  # 1280 x 960
    photo = load_photo(_encode(rgb, "JPEG", quality=95), long_side=600)
    assert photo.scale < 1.0
    for k in (1, 2, 3):
        turned = photo.turned(k)
        full = turned.full_rgb()
        assert np.array_equal(full, np.rot90(photo.full_rgb(), k))
        assert full.shape[:2] == (turned.height, turned.width)
        assert turned.full_rgb() is full  # decoded once


def test_not_an_image() -> None:
    with pytest.raises(ImageError, match="not a JPEG, PNG or HEIC"):
        load_photo(b"%PDF-1.4 this is a document, not a photo" * 10)
    with pytest.raises(ImageError, match="empty"):
        load_photo(b"")


def test_missing_file_and_directory(tmp_path) -> None:
    with pytest.raises(ImageError, match="cannot read"):
        load_photo(tmp_path / "nope.jpg")
    with pytest.raises(ImageError, match="directory"):
        load_photo(tmp_path)


def test_corrupt_and_truncated_jpeg() -> None:
    data = _encode(np.kron(_gradient(), np.ones((8, 8, 1), np.uint8)), "JPEG", quality=90)
    with pytest.raises(ImageError):
        load_photo(data[: len(data) // 2])
    garbage = data[:200] + bytes(np.random.default_rng(0).integers(0, 256, 3000, dtype=np.uint8))
    with pytest.raises(ImageError):
        load_photo(garbage)
    # Errors are ValueErrors, so callers can map them to a 4xx / CLI message.
    assert issubclass(ImageError, ValueError) and issubclass(PhotoTooLarge, ImageError)


def _png_header_bomb(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims width x height pixels (IDAT only a few bytes)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
            + chunk(b"IEND", b""))


def _jpeg_header_bomb(width: int, height: int) -> bytes:
    """A real small JPEG with its SOF0 frame size rewritten to width x height."""
    data = bytearray(_encode(_gradient(), "JPEG"))
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


@pytest.mark.parametrize("make", [_png_header_bomb, _jpeg_header_bomb])
def test_hundred_megapixel_header_rejected_before_decoding(make, monkeypatch) -> None:
    bomb = make(10_000, 10_000)
    assert len(bomb) < 10_000
    decoded = []
    monkeypatch.setattr(Image.Image, "load", lambda self: decoded.append(1))
    monkeypatch.setattr(ImageFile.ImageFile, "load", lambda self: decoded.append(1))
    with pytest.raises(PhotoTooLarge, match="100.0 megapixels"):
        load_photo(bomb)
    assert not decoded  # refused from the header: no pixel decoding was attempted


def test_byte_limit(tmp_path) -> None:
    data = _encode(_gradient(), "PNG")
    with pytest.raises(PhotoTooLarge, match="MB"):
        load_photo(data, max_bytes=100)
    path = tmp_path / "big.png"
    path.write_bytes(data)
    with pytest.raises(PhotoTooLarge):
        load_photo(path, max_bytes=100)
    assert load_photo(data, max_pixels=64 * 48).size == (64, 48)
    with pytest.raises(PhotoTooLarge):
        load_photo(data, max_pixels=64 * 48 - 1)


def test_turned_photo_turns_pixels_and_sides() -> None:
    rgb = np.zeros((20, 30, 3), np.uint8)
    rgb[2, 5] = 255  # a mark near the top left
    photo = Photo(rgb, 60, 40, "JPEG", 0.5)  # decoded at half size
    turned = photo.turned(1)  # counter-clockwise: the top left goes to the bottom left
    assert (turned.width, turned.height, turned.scale, turned.format) == (40, 60, 0.5, "JPEG")
    assert turned.rgb.shape == (30, 20, 3) and turned.rgb.flags["C_CONTIGUOUS"]
    assert tuple(np.argwhere(turned.rgb[..., 0])[0]) == (30 - 1 - 5, 2)
    back = turned.turned(3)
    assert np.array_equal(back.rgb, rgb) and (back.width, back.height) == (60, 40)

"""Photo rendering: draw a `Scene` as a phone photo of a card table.

The geometry (every card outline, clutter polygon, image size) comes from
`datasets.scene`; this module only makes pixels: a procedural table texture (felt,
wood, cloth, gingham, stone, laminate), soft drop shadows under cards, the card art from
`datasets.art` warped onto each outline (face-down cards show the deck's back), coins,
a score pad, a pen, fingers, then the camera: uneven light and shadow, glare, white
balance, defocus or motion blur and sensor noise. JPEG compression happens when the
photo is saved (`datasets.build`). Nothing here moves a card, so the labels stay exact;
blur only spreads them by a pixel or two.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from datasets import art
from datasets.scene import Scene, undistort_points

TEXTURE_KINDS = ("felt", "wood", "wood", "carpet", "cloth", "gingham", "stone", "laminate", "stripes")
BACKGROUND_VARIANTS = 12
# table textures held out for the test split: the last two variants of every kind
# (a kind listed twice, like wood, is drawn twice as often)
BACKGROUNDS_TRAIN = tuple(f"{k}-{i}" for k in TEXTURE_KINDS for i in range(BACKGROUND_VARIANTS - 2))
BACKGROUNDS_TEST = tuple(f"{k}-{i}" for k in TEXTURE_KINDS for i in range(BACKGROUND_VARIANTS - 2, BACKGROUND_VARIANTS))


def backgrounds_for(split: str) -> tuple[str, ...]:
    """Texture names a split may use (test: held-out ones only)."""
    return BACKGROUNDS_TEST if split == "test" else BACKGROUNDS_TRAIN


@dataclass
class ArtBank:
    """Card faces per design, loaded lazily (memory-mapped arrays from datasets.art)."""

    manifest: dict[str, Any]
    _faces: dict[str, np.ndarray] = field(default_factory=dict)
    _small: dict[tuple[str, int, int], np.ndarray] = field(default_factory=dict)

    def face(self, design: str, token: str, height_px: float | None = None) -> np.ndarray:
        """RGBA art of a token (`KH`, `JK_red`, `back`) in a design; with `height_px`, the
        smallest halved copy still at least 1.4 times that tall (cached), so warping never
        squeezes many art pixels into one (aliasing) and stays cheap."""
        faces = self._faces.get(design)
        if faces is None:
            faces = self._faces[design] = art.load_faces(design)
        index = self.manifest[design]["tokens"].index(token)
        full = faces[index]
        if height_px is None:
            return full
        level = 0
        while full.shape[0] / 2 ** (level + 1) >= 1.4 * height_px and level < 5:
            level += 1
        if level == 0:
            return full
        key = (design, index, level)
        small = self._small.get(key)
        if small is None:
            f = 2 ** -level
            small = self._small[key] = cv2.resize(np.asarray(full), None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        return small


def _name_rng(name: str, rng: np.random.Generator) -> np.random.Generator:
    """A texture's fixed look comes from its name; rng adds per-photo jitter elsewhere."""
    digest = hashlib.sha256(name.encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cells: float) -> np.ndarray:
    """Value noise in [0,1] with about `cells` blobs across the long side."""
    gh = max(2, int(round(cells * h / max(h, w))) + 2)
    gw = max(2, int(round(cells * w / max(h, w))) + 2)
    grid = rng.random((gh, gw)).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)


def table_texture(name: str, h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """Procedural table surface (uint8 RGB, h x w) for a background name like `wood-3`."""
    kind = name.split("-")[0]
    trng = _name_rng(name, rng)
    # work at reduced size: table textures are soft at phone resolution anyway
    s = min(1.0, 900 / max(h, w))
    th, tw = max(8, int(h * s)), max(8, int(w * s))
    base = trng.uniform(0, 1, 3)
    if kind == "felt":
        colour = np.array([[30, 110, 60], [25, 70, 120], [120, 30, 40], [60, 60, 65], [30, 90, 90]][trng.integers(5)], np.float32)
        colour *= trng.uniform(0.7, 1.2)
        n = _smooth_noise(rng, th, tw, 6) * 0.25 + rng.random((th, tw), dtype=np.float32) * 0.12
        img = colour[None, None] * (0.85 + n[..., None])
    elif kind == "wood":
        # grain: noise stretched along the boards, bent by a slow warp, banded into
        # dark late-wood lines; boards of slightly different tone with dark seams
        colour = np.array([150, 95, 55], np.float32) * trng.uniform(0.45, 1.3) + trng.uniform(-20, 20, 3)
        ang = trng.uniform(0, math.pi)
        big = int(max(th, tw) * 1.5)
        along = _smooth_noise(rng, 4, 64, 64)
        grain = cv2.resize(rng.random((int(trng.integers(60, 160)), 6)).astype(np.float32), (big, big),
                           interpolation=cv2.INTER_CUBIC)
        warp = _smooth_noise(rng, big, big, 4) * trng.uniform(2, 6)
        yy = np.mgrid[0:big, 0:big][0].astype(np.float32) / big
        rings = np.abs(np.sin((yy * trng.uniform(20, 60) + warp + grain * 2) * math.pi))
        fine = cv2.resize(rng.random((big, big // 40 + 2)).astype(np.float32), (big, big))
        shade = 0.55 + 0.35 * rings ** trng.uniform(0.3, 1.5) + 0.15 * fine + 0.05 * cv2.resize(along, (big, big))
        planks = int(trng.integers(2, 7))
        xx = np.mgrid[0:big, 0:big][1].astype(np.float32) / big * planks
        shade *= 0.85 + 0.15 * ((np.floor(xx) * 7.31) % 1.0)
        shade *= 1 - 0.5 * (np.abs((xx % 1.0) - 0.5) > 0.497)
        rot = cv2.getRotationMatrix2D((big / 2, big / 2), math.degrees(ang), 1.0)
        shade = cv2.warpAffine(shade, rot, (big, big), borderMode=cv2.BORDER_REFLECT)
        y0, x0 = (big - th) // 2, (big - tw) // 2
        img = colour[None, None] * shade[y0:y0 + th, x0:x0 + tw, None]
    elif kind == "carpet":
        colour = np.array([[170, 150, 120], [120, 110, 100], [90, 70, 60], [140, 140, 150]][trng.integers(4)], np.float32)
        colour *= trng.uniform(0.7, 1.2)
        n = rng.random((th, tw), dtype=np.float32)
        n = cv2.GaussianBlur(n, (0, 0), 0.7) * 0.6 + _smooth_noise(rng, th, tw, 12) * 0.4
        img = colour[None, None] * (0.55 + 0.7 * n[..., None])
    elif kind == "gingham":
        c1 = trng.uniform(80, 230, 3).astype(np.float32)
        period = tw / trng.uniform(15, 45)
        yy, xx = np.mgrid[0:th, 0:tw].astype(np.float32)
        sx = ((xx // (period / 2)) % 2).astype(np.float32)
        sy = ((yy // (period / 2)) % 2).astype(np.float32)
        mix = (sx + sy) / 2
        white = np.array([240, 238, 232], np.float32)
        img = white[None, None] * (1 - mix[..., None]) + c1[None, None] * mix[..., None]
    elif kind == "stripes":
        c1 = trng.uniform(60, 230, 3).astype(np.float32)
        c2 = trng.uniform(60, 230, 3).astype(np.float32)
        ang = trng.uniform(0, math.pi)
        yy, xx = np.mgrid[0:th, 0:tw].astype(np.float32)
        u = (xx * math.cos(ang) + yy * math.sin(ang)) / (tw / trng.uniform(8, 30))
        m = (np.sin(u * 2 * math.pi) > trng.uniform(-0.5, 0.5)).astype(np.float32)
        m = cv2.GaussianBlur(m, (0, 0), 0.8)
        img = c1[None, None] * m[..., None] + c2[None, None] * (1 - m[..., None])
    elif kind == "cloth":
        colour = trng.uniform(40, 220, 3).astype(np.float32)
        yy, xx = np.mgrid[0:th, 0:tw].astype(np.float32)
        f = trng.uniform(0.8, 1.6)
        weave = 0.5 + 0.25 * np.sin(xx * f) * np.sin(yy * f)
        n = _smooth_noise(rng, th, tw, 10) * 0.2
        img = colour[None, None] * (0.8 + 0.2 * weave + n)[..., None]
    elif kind == "stone":
        # pale marble or granite: soft clouds with a few thin darker veins
        colour = np.array([[215, 210, 200], [190, 185, 180], [200, 190, 170], [120, 120, 125]][trng.integers(4)],
                          np.float32) * trng.uniform(0.85, 1.1)
        n = _smooth_noise(rng, th, tw, 6) + 0.5 * _smooth_noise(rng, th, tw, 20)
        veins = np.exp(-np.abs(np.sin(n * trng.uniform(4, 9))) * trng.uniform(15, 40))
        speck = rng.random((th, tw), dtype=np.float32)
        img = colour[None, None] * (0.92 + 0.08 * n[..., None] / 1.5 - 0.25 * veins[..., None] + 0.05 * speck[..., None])
    else:  # laminate: a plain colour with a faint texture
        colour = (base * 200 + 30).astype(np.float32)
        n = _smooth_noise(rng, th, tw, 4) * 0.1 + rng.random((th, tw), dtype=np.float32) * 0.05
        img = colour[None, None] * (0.9 + n[..., None])
    img = np.clip(img, 0, 255).astype(np.uint8)
    return cv2.resize(img, (w, h), interpolation=cv2.INTER_LINEAR)


def _roi(points: np.ndarray, pad: float, w: int, h: int) -> tuple[int, int, int, int] | None:
    x1, y1 = np.floor(points.min(axis=0) - pad).astype(int)
    x2, y2 = np.ceil(points.max(axis=0) + pad).astype(int)
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if x2 <= x1 or y2 <= y1:
        return None
    return x1, y1, x2, y2


def _composite(canvas: np.ndarray, layer: np.ndarray, alpha: np.ndarray, x1: int, y1: int) -> None:
    """Alpha-blend an RGB layer (float alpha 0..1) onto canvas at (x1, y1), in place."""
    h, w = alpha.shape
    roi = canvas[y1:y1 + h, x1:x1 + w]
    a = np.ascontiguousarray(alpha, dtype=np.float32)
    roi[:] = cv2.blendLinear(np.ascontiguousarray(layer, dtype=np.uint8), roi.copy(), a, 1.0 - a)


def _draw_shadow(canvas: np.ndarray, quad: np.ndarray, offset: np.ndarray, blur: float, strength: float) -> None:
    h, w = canvas.shape[:2]
    shifted = quad + offset
    box = _roi(shifted, 3 * blur + 2, w, h)
    if box is None:
        return
    x1, y1, x2, y2 = box
    mask = np.zeros((y2 - y1, x2 - x1), np.uint8)
    cv2.fillConvexPoly(mask, np.round((shifted - [x1, y1]) * 4).astype(np.int32), int(255 * strength),
                       lineType=cv2.LINE_AA, shift=2)
    if blur > 4:
        # a wide soft shadow: blur a smaller mask (same look, a fraction of the work)
        f = blur / 2
        small = cv2.resize(mask, (max(1, int(mask.shape[1] / f)), max(1, int(mask.shape[0] / f))),
                           interpolation=cv2.INTER_AREA)
        mask = cv2.resize(cv2.GaussianBlur(small, (0, 0), 2), (mask.shape[1], mask.shape[0]),
                          interpolation=cv2.INTER_LINEAR)
    elif blur > 0.5:
        mask = cv2.GaussianBlur(mask, (0, 0), blur)
    shade = cv2.cvtColor(255 - mask, cv2.COLOR_GRAY2RGB)
    roi = canvas[y1:y2, x1:x2]
    roi[:] = cv2.multiply(roi, shade, scale=1 / 255)


def draw_card(canvas: np.ndarray, face: np.ndarray, quad: np.ndarray, gain: float = 1.0) -> None:
    """Warp RGBA card art onto a quad (TL, TR, BR, BL in canvas px), in place; `gain`
    brightens or darkens this card (cards catch the light differently)."""
    h, w = canvas.shape[:2]
    box = _roi(quad, 2, w, h)
    if box is None:
        return
    x1, y1, x2, y2 = box
    fh, fw = face.shape[:2]
    src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
    dst = (quad - [x1, y1]).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    # shrink big art first: warping from far more pixels than the target aliases
    scale = max(np.linalg.norm(quad[1] - quad[0]) / fw, np.linalg.norm(quad[3] - quad[0]) / fh)
    face_np = np.asarray(face)
    if scale < 0.5:
        factor = max(scale * 1.5, 0.05)
        small = cv2.resize(face_np, (max(2, int(fw * factor)), max(2, int(fh * factor))), interpolation=cv2.INTER_AREA)
        src_small = np.array([[0, 0], [small.shape[1], 0], [small.shape[1], small.shape[0]], [0, small.shape[0]]], np.float32)
        m = cv2.getPerspectiveTransform(src_small, dst)
        face_np = small
    warped = cv2.warpPerspective(face_np, m, (x2 - x1, y2 - y1), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[:, :, 3].astype(np.float32) * (1 / 255.0)
    rgb = warped[:, :, :3] if gain == 1.0 else cv2.convertScaleAbs(warped[:, :, :3], alpha=gain)
    _composite(canvas, rgb, alpha, x1, y1)


def _draw_clutter(canvas: np.ndarray, kind: str, poly: np.ndarray, rng: np.random.Generator) -> None:
    h, w = canvas.shape[:2]
    box = _roi(poly, 4, w, h)
    if box is None:
        return
    x1, y1, x2, y2 = box
    local = (poly - [x1, y1])
    mask = np.zeros((y2 - y1, x2 - x1), np.float32)
    cv2.fillPoly(mask, [np.round(local * 4).astype(np.int32)], 1.0, lineType=cv2.LINE_AA, shift=2)
    layer = np.zeros((y2 - y1, x2 - x1, 3), np.float32)
    if kind == "score_pad":
        layer = np.zeros((y2 - y1, x2 - x1, 3), np.uint8)  # OpenCV draws text on 8-bit images only
        layer[:] = rng.uniform(225, 250, 3)
        # ruled lines along the pad's own top edge
        top = poly[1] - poly[0]
        n = int(rng.integers(12, 25))
        for i in range(1, n):
            t = i / n
            a = poly[0] + (poly[3] - poly[0]) * t - [x1, y1]
            b = a + top
            cv2.line(layer, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), (120, 150, 200), 1, cv2.LINE_AA)
        # a few scribbled numbers
        for _ in range(int(rng.integers(3, 10))):
            p = poly[0] + (poly[1] - poly[0]) * rng.uniform(0.1, 0.7) + (poly[3] - poly[0]) * rng.uniform(0.1, 0.9) - [x1, y1]
            size = np.linalg.norm(poly[3] - poly[0]) / 40
            cv2.putText(layer, str(int(rng.integers(5, 3000))), tuple(np.round(p).astype(int)), cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
                        size / 20, (40, 40, 90), max(1, int(size / 12)), cv2.LINE_AA)
    elif kind == "coin":
        c = local.mean(axis=0)
        r = np.linalg.norm(local - c, axis=1).mean()
        metal = np.array([[200, 170, 90], [190, 190, 195], [180, 110, 70]][rng.integers(3)], np.float32)
        yy, xx = np.mgrid[0:y2 - y1, 0:x2 - x1].astype(np.float32)
        d = np.hypot(xx - c[0] + r * 0.3, yy - c[1] + r * 0.3) / max(r, 1)
        layer[:] = metal * (1.15 - 0.35 * d.clip(0, 1.5))[..., None]
        cv2.circle(layer, tuple(np.round(c).astype(int)), int(r * 0.8), tuple(float(v) * 0.8 for v in metal), max(1, int(r / 15)), cv2.LINE_AA)
    elif kind == "pen":
        layer[:] = rng.uniform(10, 200, 3)
    else:  # finger: skin tone with a soft highlight, slightly out of focus
        skin = np.array([[224, 172, 140], [198, 134, 100], [141, 85, 60], [235, 190, 160]][rng.integers(4)], np.float32)
        layer[:] = skin
        mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, 0.01 * max(w, h)))
    layer = np.clip(layer, 0, 255).astype(np.uint8)
    _composite(canvas, layer, mask, x1, y1)


def _table_edge(canvas: np.ndarray, card_pts: np.ndarray, card_px: float, rng: np.random.Generator,
                params: dict[str, Any]) -> None:
    """The table ends beyond the cards on one side: floor or a darker surface there, with
    the table's edge as a dark band. Nothing is drawn where a card lies."""
    h, w = canvas.shape[:2]
    side = int(rng.integers(4))
    lo, hi = card_pts.min(axis=0), card_pts.max(axis=0)
    gap = card_px * rng.uniform(0.2, 1.2)
    edge = [hi[1] + gap, lo[1] - gap, hi[0] + gap, lo[0] - gap][side]
    if not (0 < edge < (h if side < 2 else w)):
        return
    floor = table_texture(f"{['carpet', 'laminate', 'wood'][int(rng.integers(3))]}-{int(rng.integers(100, 1000))}",
                          h, w, rng)
    floor = cv2.convertScaleAbs(floor, alpha=float(rng.uniform(0.35, 0.8)))
    mask = np.zeros((h, w), np.float32)
    e = int(edge)
    band = max(2, int(card_px * rng.uniform(0.03, 0.1)))
    if side == 0:
        mask[e:] = 1
    elif side == 1:
        mask[:e] = 1
    elif side == 2:
        mask[:, e:] = 1
    else:
        mask[:, :e] = 1
    edge_mask = cv2.GaussianBlur(cv2.dilate(mask, np.ones((band, band), np.uint8)) - mask, (0, 0), 1.0)
    _composite(canvas, floor, cv2.GaussianBlur(mask, (0, 0), 1.5), 0, 0)
    _composite(canvas, np.zeros_like(canvas) + 30, edge_mask * 0.8, 0, 0)
    params["table_edge"] = ["bottom", "top", "right", "left"][side]


def render(scene: Scene, bank: ArtBank, rng: np.random.Generator) -> np.ndarray:
    """The photo of a scene (uint8 RGB, scene.height x scene.width); fills scene.render."""
    h, w = scene.height, scene.width
    params: dict[str, Any] = {}
    k1 = float(scene.camera.get("k1", 0.0))
    # The scene's points include the lens distortion. Draw an undistorted picture (with a
    # margin: barrel distortion pulls in what lies outside the frame), then distort it.
    pad = int(math.ceil(max(0.0, -k1) * max(w, h))) + 4 if k1 else 0

    def to_canvas(pts: np.ndarray) -> np.ndarray:
        return undistort_points(pts, k1, w, h) + pad

    canvas = table_texture(scene.background or "felt-0", h + 2 * pad, w + 2 * pad, rng)
    card_px = scene.card_height_px
    if scene.cards and rng.random() < 0.2:
        _table_edge(canvas, np.concatenate([to_canvas(c.outline) for c in scene.cards]), card_px, rng, params)
    # light comes from one side: shadows fall the other way
    light_dir = rng.uniform(0, 2 * math.pi)
    shadow_len = card_px * rng.uniform(0.01, 0.05)
    shadow_offset = np.array([math.cos(light_dir), math.sin(light_dir)]) * shadow_len
    shadow_blur = card_px * rng.uniform(0.01, 0.04)
    shadow_strength = float(rng.uniform(0.15, 0.45))
    params.update(shadow_px=round(float(shadow_len), 1), shadow_strength=round(shadow_strength, 2))

    items: list[tuple[int, str, Any]] = [(c.z, "card", c) for c in scene.cards]
    items += [(k.z, "clutter", k) for k in scene.clutter]
    items.sort(key=lambda t: t[0])
    for _, what, obj in items:
        if what == "card":
            quad = to_canvas(obj.outline)
            _draw_shadow(canvas, quad, shadow_offset, shadow_blur, shadow_strength)
            if obj.face_up:
                token = f"JK_{obj.joker or 'red'}" if obj.card == "JK" else obj.card
            else:
                token = "back"
            face = bank.face(obj.design, token, card_px)
            gain = float(rng.uniform(0.93, 1.05))
            if obj.role == "squared_top":
                # the squared-up canasta underneath shows as a few uneven card edges
                for _ in range(int(rng.integers(2, 5))):
                    jitter = rng.normal(0, 0.008 * card_px, size=2)
                    draw_card(canvas, face, quad + jitter, gain * 0.95)
            draw_card(canvas, face, quad, gain)
        else:
            poly = to_canvas(obj.polygon)
            if obj.kind in ("coin", "pen", "finger"):
                _draw_shadow(canvas, poly, shadow_offset * 1.5, shadow_blur * 1.5, shadow_strength)
            _draw_clutter(canvas, obj.kind, poly, rng)

    if k1:
        # where each photo pixel comes from, computed on a coarse grid (the map is smooth)
        # grid node j sits at pixel 8j - 4.5 so that cv2.resize (pixel-centre aligned) puts
        # it exactly on output pixel 8j - 8 (then the first 8 rows/columns are cut)
        step = 8
        ny, nx = h // step + 3, w // step + 3
        gy, gx = np.mgrid[0:ny, 0:nx].astype(np.float64) * step - (step / 2 + 0.5)
        src = to_canvas(np.stack([gx.ravel(), gy.ravel()], axis=1)).astype(np.float32)
        size = (nx * step, ny * step)
        map_x = cv2.resize(src[:, 0].reshape(gx.shape), size, interpolation=cv2.INTER_LINEAR)[step:step + h, step:step + w]
        map_y = cv2.resize(src[:, 1].reshape(gx.shape), size, interpolation=cv2.INTER_LINEAR)[step:step + h, step:step + w]
        canvas = cv2.remap(canvas, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        params["lens_k1"] = k1
    out = _camera(canvas, rng, params, card_px)
    scene.render = params
    return out


def _camera(img: np.ndarray, rng: np.random.Generator, params: dict[str, Any], card_px: float) -> np.ndarray:
    """Light field, glare, white balance, blur, noise: what a phone adds to the table."""
    h, w = img.shape[:2]
    small_h, small_w = max(4, h // 32), max(4, w // 32)
    # uneven light: a broad gradient plus blotches, and sometimes a soft shadow band
    yy, xx = np.mgrid[0:small_h, 0:small_w].astype(np.float32)
    ang = rng.uniform(0, 2 * math.pi)
    grad = ((xx / small_w - 0.5) * math.cos(ang) + (yy / small_h - 0.5) * math.sin(ang))
    light = 1.0 + grad * rng.uniform(0, 0.5) + (_smooth_noise(rng, small_h, small_w, 3) - 0.5) * rng.uniform(0, 0.3)
    vignette = rng.uniform(0, 0.35)
    light *= 1 - vignette * (((xx / small_w - 0.5) ** 2 + (yy / small_h - 0.5) ** 2) * 2)
    if rng.random() < 0.3:  # the shadow of the photographer or a lamp arm
        band = np.zeros((small_h, small_w), np.float32)
        p = rng.uniform(0, 1, 2) * [small_w, small_h]
        cv2.ellipse(band, (int(p[0]), int(p[1])), (int(small_w * rng.uniform(0.1, 0.4)), int(small_h * rng.uniform(0.2, 0.6))),
                    float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
        band = cv2.GaussianBlur(band, (0, 0), max(small_w, small_h) * 0.05)
        light *= 1 - band * rng.uniform(0.2, 0.45)
    exposure = rng.uniform(0.75, 1.35)  # real phone photos are often over-exposed
    wb = np.array([rng.uniform(0.85, 1.12), 1.0, rng.uniform(0.8, 1.15)], np.float32)  # warm / cool light
    # one gain per pixel and channel, applied in 8-bit fixed point (x/128) for speed
    gain = (light * exposure)[..., None] * wb[None, None]
    gain8 = np.clip(gain * 128, 0, 255).astype(np.uint8)
    img8 = cv2.multiply(img, cv2.resize(gain8, (w, h), interpolation=cv2.INTER_LINEAR), scale=1 / 128)
    if rng.random() < 0.35:  # glare: a soft bright spot from a lamp on glossy cards
        gx, gy = rng.uniform(0.15, 0.85) * small_w, rng.uniform(0.15, 0.85) * small_h
        gr = rng.uniform(0.05, 0.2) * max(small_w, small_h)
        g = np.exp(-(((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * gr ** 2))) * rng.uniform(40, 180)
        g8 = cv2.cvtColor(np.clip(g, 0, 255).astype(np.uint8), cv2.COLOR_GRAY2RGB)
        img8 = cv2.add(img8, cv2.resize(g8, (w, h), interpolation=cv2.INTER_LINEAR))
        params["glare"] = True
    if rng.random() < 0.25:  # a specular streak on glossy cards: small, sharp, bright
        gx, gy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
        axes = (int(card_px * rng.uniform(0.2, 0.6)), int(card_px * rng.uniform(0.05, 0.25)))
        spot = np.zeros((h // 4 + 1, w // 4 + 1), np.uint8)
        cv2.ellipse(spot, (int(gx / 4), int(gy / 4)), (max(1, axes[0] // 4), max(1, axes[1] // 4)),
                    float(rng.uniform(0, 180)), 0, 360, int(rng.uniform(60, 150)), -1)
        spot = cv2.GaussianBlur(spot, (0, 0), max(1.0, card_px / 60))
        img8 = cv2.add(img8, cv2.cvtColor(cv2.resize(spot, (w, h), interpolation=cv2.INTER_LINEAR), cv2.COLOR_GRAY2RGB))
        params["specular"] = True
    if rng.random() < 0.15:  # the sharp-edged shadow of the phone or the photographer's arm
        q = 4
        sh = np.zeros((h // q + 1, w // q + 1), np.uint8)
        edge_pt = [(rng.uniform(0, w), 0), (rng.uniform(0, w), h), (0, rng.uniform(0, h)), (w, rng.uniform(0, h))][
            int(rng.integers(4))]
        length, width = max(w, h) * rng.uniform(0.2, 0.6), max(w, h) * rng.uniform(0.08, 0.2)
        ang = rng.uniform(0, 2 * math.pi)
        d = np.array([math.cos(ang), math.sin(ang)])
        n = np.array([-d[1], d[0]])
        base = np.array(edge_pt)
        poly = np.array([base - n * width / 2, base + n * width / 2, base + n * width / 2 + d * length,
                         base - n * width / 2 + d * length]) / q
        cv2.fillConvexPoly(sh, np.round(poly).astype(np.int32), 255)
        sh = cv2.GaussianBlur(sh, (0, 0), rng.uniform(1.0, 6.0))
        strength = rng.uniform(0.2, 0.45)
        shade = 255 - (cv2.resize(sh, (w, h), interpolation=cv2.INTER_LINEAR) * strength).astype(np.uint8)
        img8 = cv2.multiply(img8, cv2.cvtColor(shade, cv2.COLOR_GRAY2RGB), scale=1 / 255)
        params["hard_shadow"] = True
    # focus and hand shake, relative to the card size (what the eye sees)
    r = rng.random()
    if r < 0.45:
        sigma = float(rng.uniform(0.3, 1.2)) * card_px / 250
        img8 = cv2.GaussianBlur(img8, (0, 0), sigma)
        params["defocus_sigma"] = round(sigma, 2)
    elif r < 0.65:
        length = max(3, int(rng.uniform(0.005, 0.02) * card_px * 2))
        k = np.zeros((length, length), np.float32)
        k[length // 2] = 1.0
        rot = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), float(rng.uniform(0, 180)), 1.0)
        k = cv2.warpAffine(k, rot, (length, length))
        k /= k.sum()
        img8 = cv2.filter2D(img8, -1, k)
        params["motion_px"] = length
    # sensor noise: a random tile of grain (luminance plus weaker colour), repeated; the
    # repeat period is far larger than anything the detector looks at
    sigma_n = float(rng.uniform(1.0, 7.0))
    tile = 509
    grain = rng.standard_normal((tile, tile, 1), dtype=np.float32) * sigma_n
    grain = grain + rng.standard_normal((tile, tile, 3), dtype=np.float32) * (sigma_n * 0.35)
    pos = np.clip(grain, 0, 255).astype(np.uint8)
    neg = np.clip(-grain, 0, 255).astype(np.uint8)
    reps = (h // tile + 1, w // tile + 1)
    img8 = cv2.add(img8, np.tile(pos, (*reps, 1))[:h, :w])
    img8 = cv2.subtract(img8, np.tile(neg, (*reps, 1))[:h, :w])
    params["noise_sigma"] = round(sigma_n, 2)
    params["wb"] = [round(float(v), 3) for v in wb]
    return img8

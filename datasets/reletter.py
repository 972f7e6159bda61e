"""Relettered designs: training decks whose corner indices are printed anew in other fonts.

The detector's misses concentrate on the held-out designs whose index looks least like
any training deck's (tango's and kde-oxygen-white's bare glyphs, thin or wide faces).
Twenty-one packaged decks are all the index styles the data engine had. A relettered
design keeps a training deck's card bodies (pips, court pictures, backs) and paints its
printed indices over with the paper colour, then prints new ones: a rank glyph in one of
the machine's fonts (weight, width and size drawn per design), with or without a suit
pip under it, in one, two or four corners, at its own distance from the edges. Labels
are exact: the new index box is measured on the ink drawn.

Fonts come from Debian packages (see datasets/README.md); missing ones are skipped, so the
same seed gives the same designs on machines with the same fonts. `--fonts wide` draws from
every installed font that prints the index characters, a package first.

    python -m datasets.reletter --designs 24 --seed 11     # -> build/art/relettered.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from datasets import art
from datasets.scene import CardGeometry, rank_class

MANIFEST = art.ART_DIR / "relettered.json"

FONT_FILES = (
    "truetype/dejavu/DejaVuSans.ttf", "truetype/dejavu/DejaVuSans-Bold.ttf",
    "truetype/dejavu/DejaVuSansCondensed.ttf", "truetype/dejavu/DejaVuSansCondensed-Bold.ttf",
    "truetype/dejavu/DejaVuSerif.ttf", "truetype/dejavu/DejaVuSerif-Bold.ttf",
    "truetype/dejavu/DejaVuSerifCondensed-Bold.ttf", "truetype/dejavu/DejaVuSans-ExtraLight.ttf",
    "truetype/dejavu/DejaVuSansMono-Bold.ttf",
    "truetype/liberation/LiberationSans-Regular.ttf", "truetype/liberation/LiberationSans-Bold.ttf",
    "truetype/liberation/LiberationSansNarrow-Bold.ttf", "truetype/liberation/LiberationSerif-Regular.ttf",
    "truetype/liberation/LiberationSerif-Bold.ttf", "truetype/liberation/LiberationMono-Bold.ttf",
    "truetype/freefont/FreeSans.ttf", "truetype/freefont/FreeSansBold.ttf",
    "truetype/freefont/FreeSerif.ttf", "truetype/freefont/FreeSerifBold.ttf",
    "truetype/croscore/Arimo-Bold.ttf", "truetype/croscore/Tinos-Regular.ttf",
    "truetype/croscore/Tinos-Bold.ttf", "truetype/croscore/Cousine-Bold.ttf",
    "truetype/open-sans/OpenSans-Light.ttf", "truetype/open-sans/OpenSans-Regular.ttf",
    "truetype/open-sans/OpenSans-Bold.ttf", "truetype/open-sans/OpenSans-ExtraBold.ttf",
    "truetype/open-sans/OpenSans-CondBold.ttf",
    "truetype/roboto/unhinted/RobotoCondensed-Bold.ttf", "truetype/roboto/unhinted/RobotoCondensed-Light.ttf",
    "truetype/roboto/unhinted/RobotoTTF/Roboto-Thin.ttf", "truetype/roboto/unhinted/RobotoTTF/Roboto-Black.ttf",
    "truetype/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf",
    "opentype/urw-base35/NimbusSans-Bold.otf", "opentype/urw-base35/NimbusSansNarrow-Bold.otf",
    "opentype/urw-base35/NimbusRoman-Bold.otf", "opentype/urw-base35/NimbusRoman-Regular.otf",
    "opentype/urw-base35/C059-Bold.otf", "opentype/urw-base35/P052-Bold.otf",
    "opentype/urw-base35/P052-Roman.otf", "opentype/urw-base35/URWBookman-Demi.otf",
    "opentype/urw-base35/URWBookman-Light.otf", "opentype/urw-base35/URWGothic-Book.otf",
    "opentype/urw-base35/URWGothic-Demi.otf", "opentype/urw-base35/NimbusMonoPS-Bold.otf",
    "opentype/linux-libertine/LinLibertine_RB.otf", "opentype/linux-libertine/LinBiolinum_RB.otf",
    "opentype/linux-libertine/LinBiolinum_R.otf",
)
PIP_FONTS = ("truetype/dejavu/DejaVuSans.ttf", "truetype/freefont/FreeSerif.ttf",
             "truetype/freefont/FreeSans.ttf")
FONT_ROOT = Path("/usr/share/fonts")
SUIT_CHARS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
PAD = 0.08  # of the index height, around the ink: the margin measure_index gives a label


# Fonts whose letters are no letters (symbols, maths, icons): left out of the wide set
NOT_LETTERS = ("symbol", "dingbat", "math", "emoji", "icon", "braille", "music", "d050000l",
               "z003", "ornament")
# The characters an index may print
INDEX_CHARS = "AKQJ1023456789OER"


def available_fonts(files: tuple[str, ...] = FONT_FILES) -> list[list[Path]]:
    """The listed fonts found, each its own group (see `_style`)."""
    return [[FONT_ROOT / f] for f in files if (FONT_ROOT / f).exists()]


def prints_letters(font_file: Path) -> bool:
    """Whether the font draws every index character as its own glyph: a character it lacks
    draws the font's blank-box glyph, the same as a private-use character does."""
    from PIL import ImageFont

    try:
        font = ImageFont.truetype(str(font_file), 48)
        missing = _mask_bytes(font.getmask("\U0010fffd"))
        masks = [font.getmask(ch) for ch in INDEX_CHARS]
    except OSError:
        return False
    return all(m.getbbox() is not None and _mask_bytes(m) != missing for m in masks)


def _mask_bytes(mask) -> tuple:
    """A glyph mask (PIL's core image) as comparable (size, pixels)."""
    return mask.size, bytes(mask)


def wide_fonts(root: Path = FONT_ROOT) -> list[list[Path]]:
    """Every installed font that prints the index characters, grouped by the folder of its
    package (`truetype/noto`, `opentype/urw-base35`, ...), groups and files sorted: a design
    draws a package first, so one package of hundreds of faces is one choice among many."""
    groups: dict[str, list[Path]] = {}
    for f in sorted(root.rglob("*")):
        if f.suffix.lower() not in (".ttf", ".otf") or any(w in f.name.lower() for w in NOT_LETTERS):
            continue
        if prints_letters(f):
            groups.setdefault("/".join(f.parent.relative_to(root).parts[:2]), []).append(f)
    return [groups[k] for k in sorted(groups)]


FONT_SETS = {"listed": available_fonts, "wide": wide_fonts}


def _style(rng: np.random.Generator, fonts: list[list[Path]], pip_fonts: list[list[Path]]
           ) -> dict[str, Any]:
    """One relettered design's print: font (a group, then one of its files where it has
    more than one: the listed set's seeds draw what they drew before groups), sizes,
    colours, corners, placement."""
    corners = [("tl", "br"), ("tl", "br"), ("tl", "br"), ("tl", "br"), ("tl", "tr", "br", "bl"),
               ("tr",), ("tl",)][int(rng.integers(7))]
    red = (int(rng.integers(150, 236)), int(rng.integers(0, 45)), int(rng.integers(0, 60)))
    black = tuple(int(v) for v in rng.integers(0, 50, 3)) if rng.random() < 0.8 else (20, 30, 90)
    group = fonts[int(rng.integers(len(fonts)))]
    font = group[int(rng.integers(len(group)))] if len(group) > 1 else group[0]
    return {
        "font": str(font),
        "pip_font": str(pip_fonts[int(rng.integers(len(pip_fonts)))][0]),
        "glyph_h": float(rng.uniform(0.065, 0.13)),     # cap height, of the card height
        "squeeze": float(rng.uniform(0.75, 1.15)),      # horizontal scale of the glyphs
        "pip": bool(rng.random() < 0.7),                # a suit pip under the rank
        "pip_scale": float(rng.uniform(0.55, 0.95)),    # pip height, of the glyph height
        "gap": float(rng.uniform(0.05, 0.3)),           # glyph-pip gap, of the glyph height
        "x": float(rng.uniform(0.025, 0.085)),          # index left edge, of the card width
        "y": float(rng.uniform(0.02, 0.07)),            # index top, of the card height
        "corners": list(corners), "red": list(red), "black": list(black),
        "joker": ["vertical", "vertical", "word"][int(rng.integers(3))],
    }


def _text_patch(text: str, font_file: str, cap_px: float, squeeze: float, colour) -> np.ndarray:
    """RGBA patch of `text` cropped to its ink, scaled so its height is `cap_px`."""
    from PIL import Image, ImageDraw, ImageFont

    size = max(8, int(cap_px * 1.6))
    font = ImageFont.truetype(font_file, size)
    left, top, right, bottom = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), text, font=font)
    canvas = Image.new("L", (right - left + 8, bottom - top + 8), 0)
    ImageDraw.Draw(canvas).text((4 - left, 4 - top), text, font=font, fill=255)
    alpha = np.asarray(canvas)
    ys, xs = np.nonzero(alpha > 40)
    if len(ys) == 0:
        raise ValueError(f"{Path(font_file).name} draws nothing for {text!r}")
    alpha = alpha[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]
    h, w = alpha.shape
    scale = cap_px / h
    out_w, out_h = max(1, round(w * scale * squeeze)), max(1, round(cap_px))
    alpha = np.asarray(Image.fromarray(alpha).resize((out_w, out_h), Image.LANCZOS))
    patch = np.zeros((out_h, out_w, 4), np.uint8)
    patch[..., :3] = colour
    patch[..., 3] = alpha
    return patch


def _paste(card: np.ndarray, patch: np.ndarray, x: int, y: int) -> None:
    """Alpha-composite an RGBA patch onto an RGBA card in place (clipped)."""
    h, w = card.shape[:2]
    ph, pw = patch.shape[:2]
    x0, y0, x1, y1 = max(0, x), max(0, y), min(w, x + pw), min(h, y + ph)
    if x1 <= x0 or y1 <= y0:
        return
    p = patch[y0 - y: y1 - y, x0 - x: x1 - x].astype(np.float32)
    a = p[..., 3:4] / 255.0
    region = card[y0:y1, x0:x1, :3].astype(np.float32)
    card[y0:y1, x0:x1, :3] = np.clip(region * (1 - a) + p[..., :3] * a, 0, 255).astype(np.uint8)


def index_patch(rank: str, suit: str | None, style: dict[str, Any], card_h: int) -> np.ndarray:
    """The whole top-left index of one card as an RGBA patch (ink only, no padding)."""
    colour = style["red"] if suit in ("H", "D") else style["black"]
    cap = style["glyph_h"] * card_h
    if rank == "JK":
        if style["joker"] == "word":
            return _text_patch("JOKER", style["font"], cap * 0.8, style["squeeze"] * 0.8, colour)
        letters = [_text_patch(c, style["font"], cap * 0.75, style["squeeze"], colour) for c in "JOKER"]
        step = round(cap * 0.75 * 1.15)
        w = max(p.shape[1] for p in letters)
        out = np.zeros((step * 4 + letters[-1].shape[0], w, 4), np.uint8)
        for i, p in enumerate(letters):
            x = (w - p.shape[1]) // 2
            out[i * step: i * step + p.shape[0], x: x + p.shape[1]] = p  # letters do not overlap
        return out
    glyph = _text_patch(rank, style["font"], cap, style["squeeze"] * (0.8 if rank == "10" else 1.0), colour)
    if not style["pip"] or suit is None:
        return glyph
    pip = _text_patch(SUIT_CHARS[suit], style["pip_font"], cap * style["pip_scale"], 1.0, colour)
    gap = round(cap * style["gap"])
    w = max(glyph.shape[1], pip.shape[1])
    out = np.zeros((glyph.shape[0] + gap + pip.shape[0], w, 4), np.uint8)
    gx, px = (w - glyph.shape[1]) // 2, (w - pip.shape[1]) // 2
    out[: glyph.shape[0], gx: gx + glyph.shape[1]] = glyph
    out[glyph.shape[0] + gap:, px: px + pip.shape[1]] = pip
    return out


def _erase_box(m: dict[str, Any]) -> tuple[float, float, float, float]:
    """Top-left-equivalent region holding every printed rank index of a design (grown).

    Jokers are redrawn on a blank card, so their index does not widen it."""
    boxes = [m["index_box"], *(b for k, b in m["index_boxes"].items() if k != "JK")]
    x1 = min(b[0] for b in boxes)
    y1 = min(b[1] for b in boxes)
    x2 = max(b[2] for b in boxes)
    y2 = max(b[3] for b in boxes)
    return (max(0.0, x1 - 0.02), max(0.0, y1 - 0.015), min(0.45, x2 + 0.02), min(0.42, y2 + 0.015))


def usable_base(faces: np.ndarray, base: dict[str, Any]) -> bool:
    """A base whose paper is light and even: painting its indices over leaves no patch."""
    face = np.asarray(faces[base["tokens"].index("4S")])
    h, w = face.shape[:2]
    strip = face[int(h * 0.3): int(h * 0.7), int(w * 0.06): int(w * 0.16)]
    rgb = strip[strip[..., 3] > 250][:, :3].astype(np.float32)
    return len(rgb) > 100 and rgb.mean() > 170 and rgb.std(axis=0).mean() < 25


def _paper(face: np.ndarray) -> np.ndarray:
    h, w = face.shape[:2]
    mid = face[int(h * 0.3): int(h * 0.7), int(w * 0.08): int(w * 0.2)]
    mid = mid[mid[..., 3] > 250][:, :3]
    if len(mid) < 20:
        mid = face[face[..., 3] > 250][:, :3]
    return art._paper_colour(mid[:, None, :].astype(np.float32))


def reletter(faces: np.ndarray, base: dict[str, Any], style: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
    """(new faces, manifest entry) of a base design's cards with their indices reprinted."""
    tokens = base["tokens"]
    out = np.array(faces, copy=True)
    h, w = out.shape[1:3]
    erase = [(int(x1 * w), int(y1 * h), int(np.ceil(x2 * w)), int(np.ceil(y2 * h)))
             for _, (x1, y1, x2, y2), _ in CardGeometry(
                 index_box=_erase_box(base), index_corners=tuple(base["index_corners"])).corner_boxes("")]
    boxes: dict[str, list[list[float]]] = {}
    x0, y0 = round(style["x"] * w), round(style["y"] * h)
    paper = _paper(faces[tokens.index("4S")])  # a pip card: mostly paper
    blank = art.blank_card(np.asarray(faces[tokens.index("5S")]))
    for i, token in enumerate(tokens):
        if token == "back":
            continue
        if token.startswith("JK"):  # the base joker's picture on a blank card: its own index goes
            rank, suit = "JK", ("H" if token == "JK_red" else "S")
            out[i] = blank
            pic = art._picture_of(np.asarray(faces[i]))
            _paste(out[i], pic, (w - pic.shape[1]) // 2, (h - pic.shape[0]) // 2)
        else:
            rank, suit = token[:-1], token[-1]
        face = out[i]
        for ex1, ey1, ex2, ey2 in erase:
            opaque = face[ey1:ey2, ex1:ex2, 3] > 0
            face[ey1:ey2, ex1:ex2, :3][opaque] = paper.astype(np.uint8)
        patch = index_patch(rank, suit, style, h)
        ph, pw = patch.shape[:2]
        if rank == "JK" and style["joker"] == "word":
            patch = np.ascontiguousarray(np.rot90(patch, -1))  # JOKER down the edge
            ph, pw = patch.shape[:2]
        for c in style["corners"]:
            piece = patch if c in ("tl", "tr") else patch[::-1, ::-1]
            px = x0 if c in ("tl", "bl") else w - x0 - pw
            py = y0 if c in ("tl", "tr") else h - y0 - ph
            _paste(face, piece, px, py)
        cls = rank_class(token) if rank != "JK" else "JK"
        pad = PAD * ph if rank != "JK" else PAD * pw
        boxes.setdefault(cls, []).append(
            [(x0 - pad) / w, (y0 - pad) / h, (x0 + pw + pad) / w, (y0 + ph + pad) / h])
    index_boxes = {k: [round(float(v), 4) for v in np.median(np.array(b), axis=0)] for k, b in boxes.items()}
    index_boxes["JK"] = [round(v, 4) for v in art.joker_label(index_boxes["JK"], w, h)]
    allb = np.array([b for k, b in index_boxes.items() if k != "JK"])
    entry = dict(base)
    entry.update({
        "source": f"relettered {base['design']}", "split": "train",
        "index_corners": list(style["corners"]),
        "index_box": [round(float(v), 4) for v in (allb[:, 0].min(), allb[:, 1].min(),
                                                  allb[:, 2].max(), allb[:, 3].max())],
        "index_boxes": index_boxes, "style": style,
    })
    return out, entry


def prepare(count: int, seed: int, force: bool = False, fonts: str = "listed") -> dict[str, Any]:
    """Make sure `count` relettered designs exist (build/art/relettered.json); returns them.
    `fonts`: "listed" (FONT_FILES) or "wide" (every installed font, see `wide_fonts`)."""
    manifest = art.prepare_all()
    bases = sorted(n for n, m in manifest.items()
                   if m["split"] == "train" and usable_base(art.load_faces(n), m))
    fonts, pip_fonts = FONT_SETS[fonts](), available_fonts(PIP_FONTS)
    if not fonts or not pip_fonts:
        raise SystemExit("no fonts found under /usr/share/fonts (see datasets/README.md)")
    have = json.loads(MANIFEST.read_text()) if MANIFEST.exists() and not force else {}
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for k in range(count):
        base = bases[int(rng.integers(len(bases)))]
        style = _style(rng, fonts, pip_fonts)
        name = f"reletter-{seed}-{k:02d}"
        path = art.ART_DIR / f"{name}.npy"
        if name in have and path.exists():
            out[name] = have[name]
            continue
        faces, entry = reletter(art.load_faces(base), manifest[base], style)
        entry["design"] = name
        np.save(path, faces)
        out[name] = entry
        have[name] = entry
        MANIFEST.write_text(json.dumps(have, indent=1))
        print(f"reletter: {name} from {base} in {Path(style['font']).stem}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m datasets.reletter", description=__doc__.split("\n")[0])
    ap.add_argument("--designs", type=int, default=24, help="how many relettered designs")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--force", action="store_true", help="redraw existing ones")
    ap.add_argument("--fonts", choices=sorted(FONT_SETS), default="listed",
                    help="the fonts listed in FONT_FILES, or every installed one (by package)")
    ap.add_argument("--sheet", type=Path, help="also draw the designs with their label boxes (art.art_sheet)")
    args = ap.parse_args(argv)
    made = prepare(args.designs, args.seed, args.force, args.fonts)
    if args.sheet:
        art.art_sheet(args.sheet, made)
    print(f"{len(made)} relettered designs in {MANIFEST}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Card art: find the installed decks, rasterize them, measure their indices, keep a manifest.

Decks come from Debian `gnome-cards-data` and `kdegames-card-data-kf5` (one SVG holding
every card, rendered element by element with librsvg through the system python's
`gi`), and from the npm packages `@letele/playing-cards` (CC0, React components we
turn back into SVG with node), `cardsJS` and `svg-cards`, packed into `build/npm/`. Each
card is cropped to its own outline, resized to one size per design and stored as one
RGBA array per design in `build/art/<design>.npy`; `build/art/manifest.json` records,
per design, its source package, licence, card aspect, which corners carry an index,
the index box (top-left index as fractions of the card, measured from the ink of the
art), the split (about a fifth of the designs are held out for the test split) and
whether its jokers were drawn by us. `python -m datasets.art --sheet docs/x.jpg`
draws every design with its measured index boxes so anyone can check them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from datasets.scene import CardGeometry, rank_class

ROOT = Path(__file__).resolve().parent.parent
ART_DIR = ROOT / "build" / "art"
NPM_DIR = ROOT / "build" / "npm"
CARD_HEIGHT = 512  # px of the cached art: a card is at most ~600 px tall in a 12 MP photo
SYSTEM_PYTHON = "/usr/bin/python3"

RANKS = ("A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2")
SUITS = ("S", "H", "D", "C")
FACE_TOKENS = tuple(r + s for s in SUITS for r in RANKS)
TOKENS = FACE_TOKENS + ("JK_red", "JK_black", "back")
SUIT_NAME = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}
RANK_NAME = {"A": "1", "K": "king", "Q": "queen", "J": "jack"}


@dataclass(frozen=True)
class DeckSource:
    """Where one design's art comes from and how its cards are named."""

    name: str
    kind: str  # "gnome" | "kde" | "svg-cards" | "cardsjs" | "letele"
    path: str  # svgz file, or folder of per-card SVGs
    package: str
    licence: str
    corners: tuple[str, ...] = ("tl", "br")
    joker_ids: tuple[str, str] | None = None  # (red, black) element ids; None: we draw jokers
    joker_has_index: bool = True
    back_id: str = "back"

    def element_id(self, token: str) -> str | None:
        """Element id (or file name) of a card token in this source."""
        if token == "back":
            return self.back_id
        if token.startswith("JK"):
            if self.joker_ids is None:
                return None
            return self.joker_ids[0] if token == "JK_red" else self.joker_ids[1]
        rank, suit = token[:-1], token[-1]
        if self.kind in ("gnome", "svg-cards"):
            return f"{SUIT_NAME[suit]}_{RANK_NAME.get(rank, rank)}"
        if self.kind == "kde":
            return f"{RANK_NAME.get(rank, rank)}_{SUIT_NAME[suit]}"
        if self.kind == "cardsjs":
            return f"{rank}{suit}.svg"
        if self.kind == "letele":
            return f"{suit}{rank[0] if rank != '10' else '10'}.svg"
        raise ValueError(self.kind)


G = "/usr/share/aisleriot/cards/"
K = "/usr/share/carddecks/"
GNOME = ("gnome-cards-data", "GPL-3+")
KDE = ("kdegames-card-data-kf5", "GPL-2+")
GJ = ("joker_red", "joker_black")

# Decks checked by eye (python -m datasets.art --preview): English indices A K Q J on
# every card, French suits. Left out: konqi-modern (licence for KDE members only), the
# German-suited and skat decks, decks whose court cards carry no index or use
# non-English letters (e.g. French R D V), tarot-like and bitmap duplicates.
SOURCES: tuple[DeckSource, ...] = (
    DeckSource("letele", "letele", "letele", "@letele/playing-cards (npm)", "CC0-1.0",
               joker_ids=("J1.svg", "J2.svg"), joker_has_index=False, back_id="B2.svg"),
    DeckSource("cardsjs", "cardsjs", "cardsJS", "cardsJS (npm)", "LGPL-3.0", back_id="Red_Back.svg"),
    DeckSource("svg-cards", "svg-cards", "svg-cards", "svg-cards (npm)", "LGPL-2.1", joker_ids=GJ),
    DeckSource("anglo", "gnome", G + "anglo.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("anglo_poker", "gnome", G + "anglo_poker.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("anglo_modern", "gnome", G + "anglo_modern.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("gnomangelo", "gnome", G + "gnomangelo.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("neoclassical", "gnome", G + "neoclassical.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("paris", "gnome", G + "paris.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("plastic", "gnome", G + "plastic.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("simplistic", "gnome", G + "simplistic.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("tango", "gnome", G + "tango.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("tango_nuevo", "gnome", G + "tango_nuevo.svgz", *GNOME, corners=("tl",), joker_ids=GJ,
               joker_has_index=False),
    DeckSource("tigullio", "gnome", G + "tigullio.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("dondorf", "gnome", G + "dondorf.svgz", *GNOME, corners=("tl", "tr", "br", "bl"),
               joker_ids=GJ, joker_has_index=False),
    DeckSource("orell", "gnome", G + "orell.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("atlasnye", "gnome", G + "atlasnye.svgz", *GNOME, joker_ids=GJ, joker_has_index=False),
    DeckSource("kde-standard", "kde", K + "svg-standard/standard.svgz", *KDE),
    DeckSource("kde-oxygen", "kde", K + "svg-oxygen/oxygen.svgz", *KDE, corners=("tr",)),
    DeckSource("kde-oxygen-air", "kde", K + "svg-oxygen-air/oxygen-air.svgz", *KDE, corners=("tr",),
               joker_ids=("joker", "joker"), joker_has_index=False),
    DeckSource("kde-oxygen-white", "kde", K + "svg-oxygen-white/oxygen-white.svgz", *KDE, corners=("tr",),
               joker_ids=("joker", "joker"), joker_has_index=False),
    DeckSource("kde-nicu-white", "kde", K + "svg-nicu-white/white.svgz", *KDE, joker_ids=("red_joker", "black_joker")),
    DeckSource("kde-nicu-ornamental", "kde", K + "svg-nicu-ornamental/ornamental.svgz", *KDE,
               joker_ids=("red_joker", "black_joker")),
    DeckSource("kde-penguins", "kde", K + "svg-penguins/penguins.svgz", "kdegames-card-data-kf5", "GPL-3+"),
    DeckSource("kde-jolly-royal", "kde", K + "svg-jolly-royal/jolly-royal.svgz", *KDE),
    DeckSource("kde-tigullio-international", "kde", K + "svg-tigullio-international/tigullio-international.svgz",
               "kdegames-card-data-kf5", "LGPL-2+"),
)

# Installed decks left out after looking at them (python -m datasets.art --preview).
EXCLUDED: dict[str, str] = {
    "konqi-modern": "licence for KDE members only",
    "berlin, lattmann, rheinland, kde-xskat-french": "German court letters (K D B)",
    "ancient_french": "French court letters (R D V)",
    "slavic_costumes": "Cyrillic court letters",
    "swiss-xvii, kde-xskat-german, tarocco": "non-French suits",
    "guyenne-classic": "court cards carry no rank index",
    "bellot": "same art as svg-cards", "ornamental (gnome)": "same art as kde-nicu-ornamental",
    "kde-gm-paris": "same art as paris", "kde-dondorf": "same art as dondorf",
    "anglo_bitmap, gnomangelo_bitmap, *_4_color, atlasnye_skat, Атласные": "variants of kept decks",
    "kde-future": "librsvg renders it broken", "kde-ancient-egyptians": "librsvg runs out of memory",
}

# Designs held out for the test split (about a fifth), spread over the sources and styles.
TEST_DESIGNS: frozenset[str] = frozenset(
    {"anglo_modern", "tango", "orell", "kde-oxygen-white", "kde-penguins"})


# ----------------------------------------------------------------------------- fetching

def _npm_package_dir(spec: str, folder: str) -> Path:
    """Unpacked npm package (npm pack into build/npm, once)."""
    target = NPM_DIR / folder / "package"
    if target.exists():
        return target
    if shutil.which("npm") is None:
        raise SystemExit("npm is missing: apt-get install npm (needed to fetch the card decks)")
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(["npm", "pack", spec, "--silent"], cwd=NPM_DIR, capture_output=True,
                         text=True, check=True).stdout.strip().splitlines()[-1]
    (NPM_DIR / folder).mkdir(exist_ok=True)
    subprocess.run(["tar", "xzf", out, "-C", folder], cwd=NPM_DIR, check=True)
    return target


# React.createElement -> SVG text, so the CC0 React components become plain SVG files
_LETELE_JS = r"""
const fs = require('fs');
const src = fs.readFileSync(process.argv[2], 'utf8');
const out = process.argv[3];
const keep = new Set(['viewBox','preserveAspectRatio','patternUnits','gradientUnits',
  'gradientTransform','patternTransform','clipPathUnits','markerWidth','markerHeight']);
function attr(k) {
  if (k === 'className') return 'class';
  if (k === 'xlinkHref') return 'xlink:href';
  if (k === 'xmlnsXlink') return 'xmlns:xlink';
  if (k === 'xmlSpace') return 'xml:space';
  if (keep.has(k)) return k;
  return k.replace(/[A-Z]/g, m => '-' + m.toLowerCase());
}
function esc(s) { return String(s).replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/"/g,'&quot;'); }
const React = { createElement(tag, props, ...kids) {
  let a = '';
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || k === 'title' || k === 'titleId') continue;
    a += ` ${attr(k)}="${esc(v)}"`;
  }
  const inner = kids.flat().filter(k => k !== null && k !== undefined && k !== false).join('');
  return `<${tag}${a}>${inner}</${tag}>`;
}};
let body = src.replace(/^import .*$/mg, '');
const m = body.match(/export \{([^}]*)\};?/);
body = body.replace(/export \{[^}]*\};?/, '');
const names = m[1].split(',').map(s => s.trim().split(/\s+as\s+/));
const fn = new Function('React', '_extends', body + '\nreturn {' + names.map(([a, b]) => `"${b}": ${a}`).join(',') + '};');
const comps = fn(React, Object.assign);
fs.mkdirSync(out, { recursive: true });
for (const [name, comp] of Object.entries(comps)) {
  // export names: Hk, H10, Ha, J1, B2 -> files HK.svg, H10.svg, HA.svg, J1.svg, B2.svg
  fs.writeFileSync(`${out}/${name.toUpperCase()}.svg`, comp({}));
}
"""


def letele_svg_dir() -> Path:
    """The @letele/playing-cards components exported to one SVG file per card."""
    out = NPM_DIR / "letele-svg"
    if (out / "HK.svg").exists():
        return out
    pkg = _npm_package_dir("@letele/playing-cards@0.1.0", "letele-playing-cards")
    if shutil.which("node") is None:
        raise SystemExit("node is missing: apt-get install nodejs (needed to export the letele deck)")
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as f:
        f.write(_LETELE_JS)
    try:
        subprocess.run(["node", f.name, str(pkg / "dist" / "index.esm.js"), str(out)], check=True)
    finally:
        os.unlink(f.name)
    return out


def source_path(src: DeckSource) -> Path:
    """Local file or folder holding a source's art, fetching npm packages on first use."""
    if src.kind == "letele":
        return letele_svg_dir()
    if src.kind == "cardsjs":
        return _npm_package_dir("cardsJS@1.1.1", "cardsJS") / "dist" / "cards"
    if src.kind == "svg-cards":
        return _npm_package_dir("svg-cards@4.0.2", "svg-cards") / "svg-cards.svg"
    path = Path(src.path)
    if not path.exists():
        pkg = src.package
        raise SystemExit(f"{path} is missing: apt-get install {pkg} (card art for design {src.name})")
    return path


# ----------------------------------------------------------------------------- rasterizing

# Runs under the system python (python3-gi, gir1.2-rsvg-2.0, python3-gi-cairo): reads jobs
# as JSON on stdin: [{"file", "id" (element id or null for the whole file), "out", "height"}]
_RSVG_WORKER = r"""
import json, sys
import gi
gi.require_version('Rsvg', '2.0')
from gi.repository import Rsvg
import cairo
jobs = json.load(sys.stdin)
handles = {}
failed = []
for job in jobs:
    h = handles.get(job['file'])
    if h is None:
        h = handles[job['file']] = Rsvg.Handle.new_from_file(job['file'])
    ok, w, hh = h.get_intrinsic_size_in_pixels()
    if not ok:
        d = h.get_dimensions(); w, hh = d.width, d.height
    doc = Rsvg.Rectangle(); doc.x = 0; doc.y = 0; doc.width = w; doc.height = hh
    eid = job['id']
    if eid:
        ok, ink, rect = h.get_geometry_for_layer('#' + eid, doc)
        if not ok or rect.height <= 0:
            failed.append(eid); continue
    else:
        rect = doc
    s = job['height'] / rect.height
    surf = cairo.ImageSurface(cairo.FORMAT_ARGB32, max(1, round(rect.width * s)), job['height'])
    cr = cairo.Context(surf)
    cr.scale(s, s)
    cr.translate(-rect.x, -rect.y)
    if eid:
        h.render_layer(cr, '#' + eid, doc)
    else:
        h.render_document(cr, doc)
    surf.write_to_png(job['out'])
print(json.dumps(failed))
"""


def rasterize(src: DeckSource, out_dir: Path, height: int = CARD_HEIGHT + 64) -> dict[str, Path]:
    """Render every card of a source to RGBA PNGs; returns token -> png (missing jokers absent)."""
    if not Path(SYSTEM_PYTHON).exists():
        raise SystemExit("the system python3 is missing (needed with python3-gi for librsvg)")
    path = source_path(src)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs, result = [], {}
    for token in TOKENS:
        eid = src.element_id(token)
        if eid is None:
            continue
        png = out_dir / f"{token}.png"
        result[token] = png
        if png.exists():
            continue
        if eid.endswith(".svg"):
            file = path / eid
            if not file.exists() and "10" in eid:
                file = path / eid.replace("10", "T")
            jobs.append({"file": str(file), "id": None, "out": str(png), "height": height})
        else:
            jobs.append({"file": str(path), "id": eid, "out": str(png), "height": height})
    failed = _run_rsvg(jobs, src.name)
    if failed:
        # some files define their cards inside <defs> (drawn through <use>): librsvg renders
        # only drawn elements, so draw each one through a <use> of our own and render that
        wrapped = _with_uses(path, failed, out_dir)
        retry = [{**j, "file": str(wrapped), "id": "__use_" + j["id"]} for j in jobs if j["id"] in failed]
        still = _run_rsvg(retry, src.name)
        failed = {f.removeprefix("__use_") for f in still}
        for token in list(result):
            if src.element_id(token) in failed:
                result.pop(token)
    return {t: p for t, p in result.items() if p.exists()}


def _run_rsvg(jobs: list[dict[str, Any]], name: str) -> set[str]:
    """Run the librsvg worker on jobs; returns element ids it could not find."""
    if not jobs:
        return set()
    proc = subprocess.run([SYSTEM_PYTHON, "-c", _RSVG_WORKER], input=json.dumps(jobs),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        if "gi" in proc.stderr and ("No module" in proc.stderr or "Namespace" in proc.stderr):
            raise SystemExit("librsvg for python is missing: apt-get install python3-gi "
                             "gir1.2-rsvg-2.0 python3-gi-cairo\n" + proc.stderr[-500:])
        raise RuntimeError(f"rasterizing {name} failed:\n{proc.stderr[-2000:]}")
    return set(json.loads(proc.stdout.strip().splitlines()[-1] or "[]"))


def _with_uses(path: Path, ids: Iterable[str], out_dir: Path) -> Path:
    """A copy of an SVG file that draws each element id once more through <use>."""
    import gzip

    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    uses = "".join(f'<use href="#{i}" xlink:href="#{i}" id="__use_{i}"/>' for i in ids)
    if "xmlns:xlink" not in text[:5000]:
        text = text.replace("<svg", '<svg xmlns:xlink="http://www.w3.org/1999/xlink"', 1)
    end = text.rindex("</svg>")
    out = out_dir / "_wrapped.svg"
    out.write_text(text[:end] + uses + text[end:], encoding="utf-8")
    return out


def _load_rgba(png: Path) -> np.ndarray:
    import cv2

    img = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise RuntimeError(f"cannot read {png}")
    if img.ndim == 2 or img.shape[2] == 3:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGRA if img.ndim == 2 else cv2.COLOR_BGR2BGRA)
    return cv2.cvtColor(img, cv2.COLOR_BGRA2RGBA)


def crop_to_card(rgba: np.ndarray) -> np.ndarray:
    """Crop a rendered card to its opaque outline (sources pad some cards)."""
    alpha = rgba[:, :, 3] > 128
    ys, xs = np.nonzero(alpha)
    if len(xs) == 0:
        raise ValueError("empty card render")
    return rgba[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]


# ----------------------------------------------------------------------------- measuring

def _paper_colour(rgb: np.ndarray) -> np.ndarray:
    """Most common colour (quantised) of a card region: the paper around the print."""
    q = (rgb.reshape(-1, 3) // 16).astype(np.int32)
    key = q[:, 0] * 256 + q[:, 1] * 16 + q[:, 2]
    mode = np.bincount(key).argmax()
    return rgb.reshape(-1, 3)[key == mode].mean(axis=0)


# A card corner whose median colour averages under DARK_PAPER is dark paper (kde-oxygen's
# black and red cards); on it the ink is what is lighter than the paper's darkest channel
# by LIGHT_INK in every channel.
DARK_PAPER = 110
LIGHT_INK = 100
# The version of the ink rule a manifest entry was measured with: 2 since 2026-12-04 (session
# 25), when light print on dark paper got its own rule; entries measured before are measured
# again on their saved faces (`remeasure`).
INK_RULE = 2


def measure_index(rgba: np.ndarray, corner: str = "tl", joker: bool = False) -> tuple[float, float, float, float] | None:
    """Top-left-equivalent index box (fractions of the card) from the ink near one corner.

    The index is the ink component nearest the corner (the rank glyph) plus the
    components stacked under it or beside it (suit pip, the second digit of a 10, the
    letters of a vertical JOKER). Large components (frames, pictures) are ignored.
    """
    import cv2

    img = rgba
    if corner in ("tr", "br"):
        img = img[:, ::-1]
    if corner in ("bl", "br"):
        img = img[::-1]
    h, w = img.shape[:2]
    rh, rw = int(h * 0.5), int(w * 0.5)
    region = np.ascontiguousarray(img[:rh, :rw, :3]).astype(np.int16)
    # inside the card, away from its outline stroke and rounded corner
    inner = cv2.erode((img[:rh, :rw, 3] > 250).astype(np.uint8), np.ones((3, 3), np.uint8),
                      iterations=max(2, int(0.025 * w))) > 0
    dark = np.median(region[inner], axis=0)
    if dark.mean() < DARK_PAPER:
        # light print on dark paper (kde-oxygen, whose light rim and the glow painted behind
        # the glyph make the commonest colour no paper colour): the glyph is lighter than the
        # paper in every channel, the glow only in some
        ink = (region.min(axis=2) - dark.min() > LIGHT_INK) & inner
    else:
        paper = _paper_colour(region[inner].reshape(-1, 1, 3).astype(np.float32))
        ink = (np.abs(region - paper).max(axis=2) > 70) & inner
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    comps, lower = [], []
    for i in range(1, n):
        x, y, cw, ch, area = stats[i]
        if area < 0.0003 * w * h or ch < 0.025 * h or cw > 0.3 * w or ch > 0.25 * h:
            continue
        if x > 0.25 * w or y > 0.2 * h:
            # too far from the corner to start an index, but a vertical JOKER's later
            # letters (K, E, R) sit this low: they may still join its J
            lower.append([x, y, x + cw, y + ch])
            continue
        comps.append([x, y, x + cw, y + ch])
    if not comps:
        return None
    comps.sort(key=lambda b: b[0] + b[1])
    box = list(comps[0])
    if joker:
        comps = comps + lower
    gh = box[3] - box[1]  # the rank glyph's height sets the scale of what belongs to it
    grown = True
    while grown:
        grown = False
        for b in comps:
            if b[0] >= box[0] and b[1] >= box[1] and b[2] <= box[2] and b[3] <= box[3]:
                continue
            bw, bh = b[2] - b[0], b[3] - b[1]
            cw = box[2] - box[0]
            # a suit pip or the next letter of a vertical JOKER: under the index, not wider
            # (a letter after a narrow J is as wide as the J is tall: O, K)
            below = (-0.1 * gh <= b[1] - box[3] < (0.9 if joker else 0.5) * gh and b[0] < box[2]
                     and b[2] > box[0] and bw <= 1.4 * max(cw, (0.9 if joker else 0.5) * gh) and bh <= 1.3 * gh)
            # the 0 of a 10, or the next letter of a horizontal JOKER: as tall, narrow
            beside = (-2 <= b[0] - box[2] < (0.6 if joker else 0.3) * gh
                      and abs(b[3] - box[3]) < 0.3 * gh and (0.4 if joker else 0.6) * gh <= bh <= 1.2 * gh
                      and bw <= (1.2 if joker else 0.85) * gh)
            if below or beside:
                box = [min(box[0], b[0]), min(box[1], b[1]), max(box[2], b[2]), max(box[3], b[3])]
                grown = True
    x1, y1, x2, y2 = box
    # a little margin around the ink, as a labeller would draw it (a rank and its pip are about
    # two glyphs tall; a vertical JOKER's margin is as wide as that, not five letters' share)
    pad = 0.16 * gh if joker else 0.08 * (y2 - y1)
    return (max(0.0, (x1 - pad) / w), max(0.0, (y1 - pad) / h),
            min(1.0, (x2 + pad) / w), min(1.0, (y2 + pad) / h))


# ----------------------------------------------------------------------------- jokers

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
JOKER_LABEL_PAD = 0.08  # of the letters' width, around their ink (as `reletter.PAD`)


def _joker_strip(box: tuple[float, float, float, float], card_w: int, card_h: int, serif: bool,
                 colour: tuple[int, int, int]):
    """The vertical JOKER drawn in `box` (card fractions): the RGBA strip and the ink box of
    its first three letters, J O K (strip pixels: x1 y1 x2 y2), the part a label covers."""
    from PIL import Image, ImageDraw, ImageFont

    font_file = FONT_DIR / ("DejaVuSerif-Bold.ttf" if serif else "DejaVuSans-Bold.ttf")
    x1, y1, x2, y2 = box
    letter_h = (y2 - y1) * card_h / 5.4
    font = ImageFont.truetype(str(font_file), max(6, int(letter_h * 1.25)))
    strip = Image.new("RGBA", (int((x2 - x1) * card_w) + 2, int((y2 - y1) * card_h) + 2), (0, 0, 0, 0))
    draw = ImageDraw.Draw(strip)
    ink = []
    for i, ch in enumerate("JOKER"):
        bb = draw.textbbox((0, 0), ch, font=font)
        cx = (strip.width - (bb[2] - bb[0])) / 2 - bb[0]
        cy = i * (strip.height / 5) + (strip.height / 5 - (bb[3] - bb[1])) / 2 - bb[1]
        draw.text((cx, cy), ch, font=font, fill=(*colour, 255))
        if i < 3:
            ink.append(draw.textbbox((cx, cy), ch, font=font))
    ink_box = np.array(ink, float)
    return strip, (ink_box[:, 0].min(), ink_box[:, 1].min(), ink_box[:, 2].max(), ink_box[:, 3].max())


def draw_joker(blank: np.ndarray, picture: np.ndarray | None, colour: tuple[int, int, int],
               box: tuple[float, float, float, float], corners: tuple[str, ...],
               serif: bool = True) -> np.ndarray:
    """A joker on the design's blank card: a picture in the middle and a vertical JOKER
    index (letters stacked, as printed on most real decks) in each index corner."""
    from PIL import Image

    h, w = blank.shape[:2]
    card = Image.fromarray(blank.copy(), "RGBA")
    if picture is not None:
        ph = int(h * 0.55)
        pw = int(picture.shape[1] * ph / picture.shape[0])
        if pw > w * 0.7:
            pw = int(w * 0.7)
            ph = int(picture.shape[0] * pw / picture.shape[1])
        pic = Image.fromarray(picture, "RGBA").resize((pw, ph), Image.LANCZOS)
        card.alpha_composite(pic, ((w - pw) // 2, (h - ph) // 2))
    strip, _ = _joker_strip(box, w, h, serif, colour)
    x1, y1, x2, y2 = box
    for c in corners:
        sx1 = x1 if c in ("tl", "bl") else 1 - x2
        sy1 = y1 if c in ("tl", "tr") else 1 - y2
        piece = strip if c in ("tl", "tr") else strip.rotate(180)
        card.alpha_composite(piece, (int(sx1 * w), int(sy1 * h)))
    return np.asarray(card)


def drawn_joker_label(box: tuple[float, float, float, float], card_w: int, card_h: int,
                      serif: bool) -> tuple[float, float, float, float]:
    """The label of a JOKER `draw_joker` drew in `box`: the ink of its J, O and K plus the
    margin a relettered joker's label has (8% of the letters' width; `reletter.PAD`), in
    top-left-equivalent card fractions. (Until 2026-12-02, session 18, the first 60% of `box`,
    as wide as the design's K index: on decks with a wide K, twice the letters' width.)"""
    _, ink = _joker_strip(box, card_w, card_h, serif, (0, 0, 0))
    return _ink_label(box, ink, card_w, card_h)


def _ink_label(box: tuple[float, float, float, float], ink: tuple[float, float, float, float],
               card_w: int, card_h: int) -> tuple[float, float, float, float]:
    """`drawn_joker_label` from the letters' ink box `ink` (strip pixels) of the strip in `box`."""
    ix1, iy1, ix2, iy2 = ink
    pad = JOKER_LABEL_PAD * (ix2 - ix1)
    ox, oy = int(box[0] * card_w), int(box[1] * card_h)
    return (max(0.0, (ox + ix1 - pad) / card_w), max(0.0, (oy + iy1 - pad) / card_h),
            min(1.0, (ox + ix2 + pad) / card_w), min(1.0, (oy + iy2 + pad) / card_h))


def measure_drawn_joker(entry: dict[str, Any]) -> tuple[float, float, float, float] | None:
    """`drawn_joker_label` of a prepared design whose jokers we drew (its manifest entry),
    from its saved faces: the strip's box is read back from the old label (its first 60%)
    and the font (serif or not, a seeded draw) is the one whose letters match the saved
    joker's ink. None when neither matches (not a joker we drew)."""
    faces = load_faces(entry["design"])
    h, w = faces.shape[1:3]
    x1, y1, x2, ly2 = entry["index_boxes"]["JK"]
    box = (x1, y1, x2, y1 + (ly2 - y1) / 0.6)
    if not np.allclose(joker_label(box, w, h), (x1, y1, x2, ly2), atol=1e-6):
        box = (x1, y1, x2, ly2)  # a short strip is labelled whole
    corner = entry["index_corners"][0]
    if corner not in ("tl", "tr"):
        return None
    face = np.asarray(faces[entry["tokens"].index("JK_black")]).astype(np.int16)
    blank = blank_card(np.asarray(faces[entry["tokens"].index("5S")])).astype(np.int16)
    # the strip's pixels on the card: what differs from the blank card there was drawn
    sx = int(box[0] * w) if corner == "tl" else int((1 - box[2]) * w)
    sy = int(box[1] * h)
    drawn = np.abs(face[sy:, sx:, :3] - blank[sy:, sx:, :3]).max(axis=2) > 60
    best, label = 0.0, None
    for serif in (True, False):
        strip, ink = _joker_strip(box, w, h, serif, (0, 0, 0))
        mine = np.asarray(strip)[:, :, 3] > 128
        sh, sw = min(mine.shape[0], drawn.shape[0]), min(mine.shape[1], drawn.shape[1])
        seen, mine = drawn[:sh, :sw], mine[:sh, :sw]
        iou = (seen & mine).sum() / max((seen | mine).sum(), 1)
        if iou > best:
            best, label = iou, _ink_label(box, ink, w, h)
    return label if best >= 0.5 else None


def blank_card(rgba: np.ndarray) -> np.ndarray:
    """The design's card with nothing printed: its outline filled with its paper colour."""
    paper = _paper_colour(rgba[rgba[:, :, 3] > 250][:, None, :3].astype(np.float32))
    out = np.zeros_like(rgba)
    out[:, :, :3] = paper.astype(np.uint8)
    out[:, :, 3] = rgba[:, :, 3]
    # keep the thin border line of the card, if it has one
    edge = max(2, rgba.shape[1] // 100)
    border = np.zeros(rgba.shape[:2], bool)
    border[:edge + 1] = border[-edge - 1:] = True
    border[:, :edge + 1] = border[:, -edge - 1:] = True
    out[border] = rgba[border]
    return out


# ----------------------------------------------------------------------------- preparing

def _picture_of(joker: np.ndarray) -> np.ndarray:
    """The central picture of a joker card (its corners cut away)."""
    h, w = joker.shape[:2]
    pic = joker[int(h * 0.22): int(h * 0.78), int(w * 0.2): int(w * 0.8)].copy()
    return pic


def measure_cards(cards: dict[str, np.ndarray], corner: str) -> dict[str, tuple[float, float, float, float]]:
    """Each face card's own index box (top-left-equivalent fractions) where one is found."""
    per_card = {}
    for token in (t for t in FACE_TOKENS if t in cards):
        box = measure_index(cards[token], corner)
        if box is not None:
            per_card[token] = box
    return per_card


def rank_boxes(per_card: dict[str, tuple[float, float, float, float]]
               ) -> tuple[dict[str, tuple[float, ...]], tuple[float, float, float, float]]:
    """The label box of each rank class (the median of its cards' boxes that look like an
    index) and the design's whole index region, from `measure_cards`' boxes."""
    boxes: dict[str, list[tuple[float, float, float, float]]] = {}
    for token, box in per_card.items():
        boxes.setdefault(rank_class(token), []).append(box)
    # a measurement far from the design's usual index height is a miss (a picture, a frame)
    heights = np.array([b[3] - b[1] for v in boxes.values() for b in v])
    usual = float(np.median(heights))
    boxes = {k: [b for b in v if 0.6 * usual <= b[3] - b[1] <= 1.6 * usual] or v for k, v in boxes.items()}
    # A box starting well below the design's usual top missed the rank glyph (a Q whose tail
    # touches the picture frame is part of the frame) and found only the suit pip under it:
    # drop it; a rank left with none takes the design's usual box.
    top = float(np.median([b[1] for v in boxes.values() for b in v]))
    kept = {k: [b for b in v if b[1] - top <= 0.25 * usual] for k, v in boxes.items()}
    usual_box = tuple(np.median(np.array([b for v in kept.values() for b in v]), axis=0))
    boxes = {k: v or [usual_box] for k, v in kept.items()}
    index_boxes = {k: tuple(float(v) for v in np.median(np.array(b), axis=0)) for k, b in boxes.items()}
    allb = np.array([b for v in boxes.values() for b in v])
    index_box = (float(np.percentile(allb[:, 0], 10)), float(np.percentile(allb[:, 1], 10)),
                 float(np.percentile(allb[:, 2], 90)), float(np.percentile(allb[:, 3], 90)))
    return index_boxes, index_box


def prepare_design(src: DeckSource, pictures: list[np.ndarray], rng: np.random.Generator) -> dict[str, Any]:
    """Rasterize, crop, resize, measure one design; draw its jokers if needed; save the array."""
    import cv2

    pngs = rasterize(src, ART_DIR / "png" / src.name)
    missing = [t for t in FACE_TOKENS if t not in pngs]
    if missing:
        raise RuntimeError(f"{src.name}: cards missing from the art: {missing[:5]}")
    cards = {t: crop_to_card(_load_rgba(p)) for t, p in pngs.items()}
    aspect = float(np.median([c.shape[1] / c.shape[0] for t, c in cards.items() if t in FACE_TOKENS]))
    size = (round(CARD_HEIGHT * aspect), CARD_HEIGHT)
    cards = {t: cv2.resize(c, size, interpolation=cv2.INTER_AREA) for t, c in cards.items()}
    per_card = measure_cards(cards, src.corners[0])
    index_boxes, index_box = rank_boxes(per_card)
    drawn_jokers = src.joker_ids is None or not src.joker_has_index
    if drawn_jokers:
        blank = blank_card(cards["5S"])
        # a vertical JOKER roughly 1.6 times as tall as the design's rank+suit index
        x1, y1, x2, y2 = index_boxes.get("K", index_box)
        gw = max(x2 - x1, 0.09)
        jbox = (x1, y1, x1 + gw * 0.8, min(0.45, y1 + (y2 - y1) * 1.7))
        serif = bool(rng.random() < 0.5)
        dark_paper = blank[blank[:, :, 3] > 250][:, :3].mean() < 110
        inks = ((255, 90, 90), (235, 235, 235)) if dark_paper else ((200, 20, 30), (20, 20, 20))
        for token, colour in zip(("JK_red", "JK_black"), inks, strict=True):
            own = cards.get(token)
            pic = _picture_of(own) if own is not None else pictures[int(rng.integers(len(pictures)))]
            cards[token] = draw_joker(blank, pic, colour, jbox, src.corners, serif)
        index_boxes["JK"] = drawn_joker_label(jbox, size[0], CARD_HEIGHT, serif)
    else:
        jb = [measure_index(cards[t], src.corners[0], joker=True) for t in ("JK_red", "JK_black")]
        jb = [b for b in jb if b is not None]
        if jb:
            index_boxes["JK"] = joker_label(np.median(np.array(jb), axis=0), size[0], CARD_HEIGHT)
    order = FACE_TOKENS + ("JK_red", "JK_black", "back")
    if "back" not in cards:
        cards["back"] = _plain_back(size, rng)
    stack = np.stack([cards[t] for t in order])
    ART_DIR.mkdir(parents=True, exist_ok=True)
    np.save(ART_DIR / f"{src.name}.npy", stack)
    return {
        "design": src.name, "package": src.package, "licence": src.licence,
        "source": src.path if src.kind in ("gnome", "kde") else src.kind,
        "split": "test" if src.name in TEST_DESIGNS else "train",
        "aspect": round(aspect, 4), "index_corners": list(src.corners),
        **_label_fields(per_card, index_boxes, index_box),
        "jokers_drawn": drawn_jokers, "joker_ink": drawn_jokers, "tokens": list(order), "size": [size[1], size[0]],
        "ink_rule": INK_RULE,
    }


# A card is labelled by its own measured index box where that box has its rank's usual size
# (each side within CARD_BOX_SIZE of the rank's median box) but lies elsewhere (IoU with the
# median under CARD_BOX_MOVED): kde-oxygen-white prints each suit's J, 9, K and Q at its own
# height, a quarter of a glyph apart, so the rank's median box missed part of the print of
# some. A box of another size merged or lost a suit pip, or found a picture: the rank's
# median stands.
CARD_BOX_SIZE = 0.15
CARD_BOX_MOVED = 0.9


def card_boxes(per_card: dict[str, tuple[float, float, float, float]],
               index_boxes: dict[str, tuple[float, float, float, float]]) -> dict[str, list[float]]:
    """The cards (tokens) whose own index box is their label: `per_card`'s boxes of their
    rank's size that lie off the rank's box (`index_boxes`, top-left-equivalent fractions)."""
    from scanner.detector import box_iou

    out = {}
    for token, box in per_card.items():
        rank = rank_class(token)
        if rank not in index_boxes or token.startswith("JK"):
            continue
        b, m = np.asarray(box, float), np.asarray(index_boxes[rank], float)
        if (np.abs((b[2:] - b[:2]) / (m[2:] - m[:2]) - 1) > CARD_BOX_SIZE).any():
            continue
        if box_iou(b, m[None])[0] < CARD_BOX_MOVED:
            out[token] = [round(float(v), 4) for v in b]
    return out


def _label_fields(per_card: dict[str, tuple[float, float, float, float]],
                  index_boxes: dict[str, tuple[float, ...]],
                  index_box: tuple[float, float, float, float]) -> dict[str, Any]:
    """A manifest entry's label fields: the design's index region, each rank's label box and
    the cards labelled by their own box (rounded as the manifest keeps them)."""
    return {"index_box": [round(v, 4) for v in index_box],
            "index_boxes": {k: [round(v, 4) for v in b] for k, b in index_boxes.items()},
            "card_boxes": card_boxes(per_card, index_boxes)}


def _saved_cards(entry: dict[str, Any]) -> dict[str, np.ndarray]:
    """The face cards of a prepared design (its manifest entry), from its saved array."""
    faces = load_faces(entry["design"])
    return {t: np.asarray(faces[k]) for k, t in enumerate(entry["tokens"]) if t in FACE_TOKENS}


def measure_card_boxes(entry: dict[str, Any]) -> dict[str, list[float]]:
    """`card_boxes` of a prepared design (its manifest entry), measured on its saved faces."""
    return card_boxes(measure_cards(_saved_cards(entry), entry["index_corners"][0]), entry["index_boxes"])


def remeasure(entry: dict[str, Any]) -> bool:
    """Measure a prepared design's index labels again on its saved faces with the current ink
    rule, in place (its joker's label stays: the saved jokers were drawn to it); returns
    whether a label changed."""
    per_card = measure_cards(_saved_cards(entry), entry["index_corners"][0])
    index_boxes, index_box = rank_boxes(per_card)
    if "JK" in entry["index_boxes"]:
        index_boxes["JK"] = tuple(entry["index_boxes"]["JK"])
    new = _label_fields(per_card, index_boxes, index_box)
    changed = any(entry.get(k) != v for k, v in new.items())
    entry.update(new, ink_rule=INK_RULE)
    return changed


def joker_label(box, card_w: int, card_h: int) -> tuple[float, float, float, float]:
    """The labelled part of a joker's index box (card fractions).

    A vertical JOKER is taller than the step of a meld column, so in a column only its
    first letters show: the label is the part that always reads as a joker (J, O, K), the
    same whether the card is covered or not. Other joker indices are labelled whole.
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    if (y2 - y1) * card_h > 1.3 * (x2 - x1) * card_w:
        return (x1, y1, x2, y1 + 0.6 * (y2 - y1))
    return (x1, y1, x2, y2)


def _plain_back(size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    import cv2

    w, h = size
    colour = [(170, 30, 40), (30, 50, 140), (30, 110, 60)][int(rng.integers(3))]
    back = np.zeros((h, w, 4), np.uint8)
    back[:, :, :3] = 250
    cv2.rectangle(back, (w // 14, w // 14), (w - w // 14, h - w // 14), (*colour, 255), -1)
    back[:, :, 3] = 255
    return back


def prepare_all(names: Iterable[str] | None = None, force: bool = False) -> dict[str, Any]:
    """Make sure every chosen design is rasterized and measured; returns the manifest."""
    manifest_path = ART_DIR / "manifest.json"
    manifest: dict[str, Any] = {}
    if manifest_path.exists() and not force:
        manifest = json.loads(manifest_path.read_text())
    wanted = [s for s in SOURCES if names is None or s.name in set(names)]
    todo = [s for s in wanted if s.name not in manifest or not (ART_DIR / f"{s.name}.npy").exists()]
    if todo:
        rng = np.random.default_rng(7)
        pictures = _joker_pictures()
        for src in todo:
            manifest[src.name] = prepare_design(src, pictures, rng)
            manifest_path.write_text(json.dumps(manifest, indent=1))
            print(f"art: {src.name} ready", file=sys.stderr)
    older = [s for s in wanted if "card_boxes" not in manifest[s.name]]
    for src in older:  # prepared before cards had their own boxes: measured on the saved faces
        manifest[src.name]["card_boxes"] = measure_card_boxes(manifest[src.name])
        print(f"art: {src.name}: {len(manifest[src.name]['card_boxes'])} cards with their own "
              "index box (`python -m datasets.relabel` the scenes built before)", file=sys.stderr)
    measured = [s for s in wanted if manifest[s.name].get("ink_rule", 1) < INK_RULE]
    for src in measured:
        if remeasure(manifest[src.name]):
            print(f"art: {src.name}: index labels measured again with the light-ink rule "
                  "(`python -m datasets.relabel` the scenes built before)", file=sys.stderr)
    strips = [s for s in wanted if manifest[s.name].get("jokers_drawn") and "joker_ink" not in manifest[s.name]]
    for src in strips:  # drawn jokers labelled as wide as the strip they were drawn in: their ink now
        entry = manifest[src.name]
        label = measure_drawn_joker(entry)
        entry["joker_ink"] = label is not None
        if label is not None:
            entry["index_boxes"]["JK"] = [float(v) for v in label]
            print(f"art: {src.name}: joker label on its letters (`python -m datasets.relabel` the "
                  "scenes built before)", file=sys.stderr)
        else:
            print(f"art: {src.name}: its drawn joker's letters were not found on the saved "
                  "faces; the joker keeps its strip label (`--force` draws the art again)",
                  file=sys.stderr)
    if older or measured or strips:
        manifest_path.write_text(json.dumps(manifest, indent=1))
    return {k: v for k, v in manifest.items() if names is None or k in set(names)}


def _joker_pictures() -> list[np.ndarray]:
    """Jester pictures from decks whose jokers we keep, to decorate decks without jokers."""
    pics = []
    for name in ("anglo", "svg-cards", "atlasnye", "kde-nicu-white"):
        src = next(s for s in SOURCES if s.name == name)
        pngs = rasterize(src, ART_DIR / "png" / src.name)
        for token in ("JK_red", "JK_black"):
            if token in pngs:
                pics.append(_picture_of(crop_to_card(_load_rgba(pngs[token]))))
    return pics


def geometries(manifest: dict[str, Any]) -> dict[str, Any]:
    """CardGeometry per design from the manifest (what datasets.scene needs)."""

    return {
        name: CardGeometry(
            aspect=m["aspect"], index_box=tuple(m["index_box"]), index_corners=tuple(m["index_corners"]),
            index_boxes={k: tuple(v) for k, v in m["index_boxes"].items()},
            card_boxes={k: tuple(v) for k, v in m.get("card_boxes", {}).items()},
        )
        for name, m in manifest.items()
    }


def load_faces(design: str) -> np.ndarray:
    """(N,H,W,4) RGBA faces of a design in manifest token order (memory-mapped)."""
    return np.load(ART_DIR / f"{design}.npy", mmap_mode="r")


def art_sheet(out: Path, manifest: dict[str, Any]) -> Path:
    """Every design (a row of sample cards) with its index boxes drawn: to check by eye."""
    import cv2

    geoms = geometries(manifest)
    rows = []
    for name, m in manifest.items():
        faces, tiles = load_faces(name), []
        for token in ("KH", "QS", "JD", "AC", "10H", "3D", "3S", "2C", "7H", "JK_red", "JK_black", "back"):
            im = np.array(faces[m["tokens"].index(token)])
            h, w = im.shape[:2]
            a = im[:, :, 3:4] / 255.0
            rgb = np.ascontiguousarray((im[:, :, :3] * a + np.array([40, 120, 60]) * (1 - a)).astype(np.uint8))
            if token != "back":
                rank = "JK" if token.startswith("JK") else rank_class(token)
                for _, (x1, y1, x2, y2), _ in geoms[name].corner_boxes(rank):
                    cv2.rectangle(rgb, (int(x1 * w), int(y1 * h)), (int(x2 * w), int(y2 * h)), (255, 0, 255), 3)
            tile = cv2.resize(rgb, (int(w * 180 / h), 180), interpolation=cv2.INTER_AREA)
            tiles.append(np.pad(tile, ((0, 0), (0, max(0, 140 - tile.shape[1])), (0, 0)))[:, :140])
        row = np.hstack(tiles)
        cv2.putText(row, name + (" (test)" if m["split"] == "test" else ""), (5, 175), 0, 0.6, (0, 0, 255), 2)
        rows.append(row)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), cv2.cvtColor(np.vstack(rows), cv2.COLOR_RGB2BGR))
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m datasets.art", description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="rasterize and measure again")
    ap.add_argument("--designs", nargs="*", help="only these designs")
    ap.add_argument("--sheet", type=Path, help="write an image of every design with its index boxes")
    args = ap.parse_args(argv)
    manifest = prepare_all(args.designs, force=args.force)
    print(f"{len(manifest)} designs ready in {ART_DIR} "
          f"({sum(m['split'] == 'test' for m in manifest.values())} held out for test)", file=sys.stderr)
    if args.sheet:
        print(f"wrote {art_sheet(args.sheet, manifest)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Relettered designs: the old indices are painted over, the new ones sit in their labels."""

from __future__ import annotations

import numpy as np
import pytest

from datasets import art, reletter
from datasets.scene import CardGeometry, rank_class

H, W = 256, 180
TOKENS = [*art.FACE_TOKENS, "JK_red", "JK_black", "back"]
BASE_BOX = (0.03, 0.03, 0.15, 0.22)  # the base deck's printed index (top-left equivalent)


def _base() -> tuple[np.ndarray, dict]:
    """White cards with a solid dark block where the base deck prints its two indices."""
    faces = np.full((len(TOKENS), H, W, 4), 255, np.uint8)
    x1, y1, x2, y2 = (int(BASE_BOX[0] * W), int(BASE_BOX[1] * H), int(BASE_BOX[2] * W), int(BASE_BOX[3] * H))
    faces[:, y1:y2, x1:x2, :3] = 0
    faces[:, H - y2:H - y1, W - x2:W - x1, :3] = 0
    faces[:, 110:140, 80:100, :3] = (200, 0, 0)  # a pip in the middle of every card
    manifest = {"design": "base", "split": "train", "tokens": TOKENS, "index_corners": ["tl", "br"],
                "index_box": list(BASE_BOX), "index_boxes": {}, "size": [H, W], "aspect": W / H}
    return faces, manifest


def _style(corners, joker="vertical", pip=True) -> dict:
    font = str(reletter.FONT_ROOT / "truetype/dejavu/DejaVuSans-Bold.ttf")
    return {"font": font, "pip_font": str(reletter.FONT_ROOT / "truetype/dejavu/DejaVuSans.ttf"),
            "glyph_h": 0.09, "squeeze": 1.0, "pip": pip, "pip_scale": 0.7, "gap": 0.15,
            "x": 0.3, "y": 0.3, "corners": list(corners), "red": [210, 20, 30], "black": [10, 10, 10],
            "joker": joker}


def _ink(face: np.ndarray) -> np.ndarray:
    return face[..., :3].astype(int).min(axis=2) < 200


def _label_mask(entry: dict, cls: str) -> np.ndarray:
    mask = np.zeros((H, W), bool)
    geom = CardGeometry(index_boxes=entry["index_boxes"], index_corners=tuple(entry["index_corners"]))
    for _, (x1, y1, x2, y2), _ in geom.corner_boxes(cls):
        mask[int(y1 * H): int(np.ceil(y2 * H)) + 1, int(x1 * W): int(np.ceil(x2 * W)) + 1] = True
    return mask


@pytest.mark.parametrize("corners", [("tl", "br"), ("tr",), ("tl", "tr", "br", "bl")])
def test_old_index_gone_and_new_ink_inside_its_labels(corners):
    faces, base = _base()
    out, entry = reletter.reletter(faces, base, _style(corners))
    assert entry["index_corners"] == list(corners) and entry["split"] == "train"
    middle = np.zeros((H, W), bool)
    middle[105:145, 75:105] = True  # the body's own pip stays
    for token in ("10H", "3S", "QD", "AC", "7C"):
        face = out[TOKENS.index(token)]
        ink = _ink(face) & ~middle
        labels = _label_mask(entry, rank_class(token))
        assert ink.sum() > 30, token                     # something was printed
        assert not (ink & ~labels).any(), token          # and only inside the labels
        assert _ink(face)[middle].any()                  # the card body is kept
        for c in corners:                                 # every corner carries an index
            part = labels.copy()
            half = {"tl": (slice(0, H // 2), slice(0, W // 2)), "tr": (slice(0, H // 2), slice(W // 2, W)),
                    "br": (slice(H // 2, H), slice(W // 2, W)), "bl": (slice(H // 2, H), slice(0, W // 2))}[c]
            assert ink[half].sum() > 10, (token, c)
            assert part[half].any()


def test_red_and_black_print_in_their_colours():
    faces, base = _base()
    out, _ = reletter.reletter(faces, base, _style(("tl", "br")))
    for token, red in (("3H", True), ("3D", True), ("3S", False), ("3C", False)):
        face = out[TOKENS.index(token)][: H // 2, : W // 2, :3].astype(int)
        ink = face.min(axis=2) < 200
        reddish = (face[..., 0] - face[..., 2] > 100) & ink
        assert (reddish.sum() > ink.sum() / 2) == red, token


def test_a_tall_joker_is_labelled_by_its_first_letters():
    faces, base = _base()
    style = _style(("tl", "br"), joker="vertical") | {"x": 0.05, "y": 0.05}
    out, entry = reletter.reletter(faces, base, style)
    x1, y1, x2, y2 = entry["index_boxes"]["JK"]
    face = out[TOKENS.index("JK_black")]
    ink = _ink(face)[: H // 2 + 20, : W // 3]  # the letters, not the picture in the middle
    rows = np.nonzero(ink.any(axis=1))[0]
    # the label starts at the first letter and ends well before the last one
    assert abs(y1 * H - rows.min()) < 3
    assert y2 * H < rows.max() - 5


def test_bare_glyph_style_prints_no_pip():
    faces, base = _base()
    _, with_pip = reletter.reletter(faces, base, _style(("tl", "br"), pip=True))
    _, bare = reletter.reletter(faces, base, _style(("tl", "br"), pip=False))
    tall = with_pip["index_boxes"]["A"][3] - with_pip["index_boxes"]["A"][1]
    short = bare["index_boxes"]["A"][3] - bare["index_boxes"]["A"][1]
    assert short < 0.7 * tall


DEJAVU = reletter.FONT_ROOT / "truetype/dejavu/DejaVuSans.ttf"


def test_wide_fonts_are_grouped_by_package_and_skip_what_prints_no_letters(tmp_path):
    for folder in ("truetype/beta", "truetype/alpha", "opentype/alpha/sub"):
        (tmp_path / folder).mkdir(parents=True)
    for path in ("truetype/beta/Two.ttf", "truetype/beta/One.ttf", "truetype/alpha/Serif.ttf",
                 "opentype/alpha/sub/Deep.otf", "truetype/alpha/StandardSymbols.ttf"):
        (tmp_path / path).symlink_to(DEJAVU)
    (tmp_path / "truetype/alpha/Broken.ttf").write_bytes(b"not a font")
    (tmp_path / "truetype/alpha/notes.txt").write_text("not a font either")
    groups = reletter.wide_fonts(tmp_path)
    names = [[f.relative_to(tmp_path).as_posix() for f in g] for g in groups]
    assert names == [["opentype/alpha/sub/Deep.otf"], ["truetype/alpha/Serif.ttf"],
                     ["truetype/beta/One.ttf", "truetype/beta/Two.ttf"]]
    assert not reletter.prints_letters(tmp_path / "truetype/alpha/Broken.ttf")


def test_listed_fonts_draw_as_before_groups_and_a_group_draws_one_of_its_files():
    fonts = [[reletter.FONT_ROOT / f] for f in ("a.ttf", "b.ttf", "c.ttf")]
    pips = [[DEJAVU]]
    for seed in range(20):
        twin = np.random.default_rng(seed)
        twin.integers(7), twin.integers(150, 236), twin.integers(0, 45), twin.integers(0, 60)
        twin.integers(0, 50, 3) if twin.random() < 0.8 else None
        flat = [g[0] for g in fonts][int(twin.integers(3))]  # the draw before fonts had groups
        style = reletter._style(np.random.default_rng(seed), fonts, pips)
        assert style["font"] == str(flat)
        assert style["glyph_h"] == pytest.approx(float(twin.uniform(0.065, 0.13)))
    group = [reletter.FONT_ROOT / f"g{k}.ttf" for k in range(4)]
    drawn = {reletter._style(np.random.default_rng(seed), [group], pips)["font"] for seed in range(40)}
    assert drawn == {str(f) for f in group}

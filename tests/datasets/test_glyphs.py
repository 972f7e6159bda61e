"""Bare-glyph tiles: the glyph/pip split is measured on the art, the pip painted over."""

from __future__ import annotations

import numpy as np

from datasets import glyphs


def _face(pip: bool) -> np.ndarray:
    """A white 200x140 card; rank glyph rows 10-40 in its index box (rows 8-70), pip 50-66."""
    face = np.full((200, 140, 4), 255, np.uint8)
    face[10:40, 10:30, :3] = 0
    if pip:
        face[50:66, 12:28, :3] = (200, 0, 0)
    return face


BOX = (5 / 140, 8 / 200, 35 / 140, 70 / 200)


def test_glyph_fraction_ends_at_the_gap():
    f = glyphs.glyph_fraction(_face(pip=True), BOX)
    assert f is not None
    # glyph ends at row 40 of the card = 32 of the 62-row box, plus the margin
    assert abs(f - (32 / 62 + glyphs.MARGIN)) < 0.02


def test_a_bare_glyph_has_no_split():
    assert glyphs.glyph_fraction(_face(pip=False), BOX) is None


def test_split_quad_follows_the_print():
    quad = np.array([[0, 0], [10, 0], [10, 20], [0, 20]], float)
    glyph, pip = glyphs.split_quad(quad, "tl", 0.5)
    assert glyph[:, 1].max() == 10 and pip[:, 1].min() == 10 and glyph[:, 1].min() == 0
    # a bottom-right index is printed turned round: its glyph is at the box's bottom
    glyph, pip = glyphs.split_quad(quad, "br", 0.25)
    assert glyph[:, 1].min() == 15 and glyph[:, 1].max() == 20 and pip[:, 1].max() == 15


def _photo_and_scene(visible: float):
    rgb = np.full((100, 100, 3), 240, np.uint8)
    rgb[20:35, 40:50] = 10    # glyph
    rgb[40:55, 40:50] = 10    # pip
    quad = [[38, 18], [52, 18], [52, 57], [38, 57]]
    scene = {"cards": [{"design": "d", "rank": "A", "face_up": True, "indices": [
        {"corner": "tl", "box": [38, 18, 52, 57], "quad": quad, "visible": visible}]}]}
    return rgb, scene


def test_pip_is_painted_over_and_the_label_shrinks(monkeypatch):
    monkeypatch.setattr(glyphs, "design_fractions", lambda design: {"A": 0.48})
    rgb, scene = _photo_and_scene(visible=1.0)
    assert glyphs.bare_glyphs(rgb, scene, np.random.default_rng(0), p=1.0) == 1
    assert rgb[42:54, 41:49].min() > 200          # pip gone
    assert rgb[21:34, 41:49].max() < 60           # glyph kept
    x1, y1, x2, y2 = scene["cards"][0]["indices"][0]["box"]
    assert y1 == 18 and 36 < y2 < 39 and x1 == 38 and x2 == 52
    # the quad shrinks with it (polygon labels are drawn from it: datasets.train --polygons)
    quad = np.asarray(scene["cards"][0]["indices"][0]["quad"])
    assert np.allclose([*quad.min(axis=0), *quad.max(axis=0)], [x1, y1, x2, y2])


def test_partly_covered_indices_are_left_alone(monkeypatch):
    monkeypatch.setattr(glyphs, "design_fractions", lambda design: {"A": 0.48})
    rgb, scene = _photo_and_scene(visible=0.8)
    before = rgb.copy()
    assert glyphs.bare_glyphs(rgb, scene, np.random.default_rng(0), p=1.0) == 0
    assert np.array_equal(rgb, before) and scene["cards"][0]["indices"][0]["box"] == [38, 18, 52, 57]

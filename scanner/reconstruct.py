"""From detected rank corners to a Canasta table: physical cards, meld stacks, teams.

Corners are printed indices, not cards. This module works out which corners belong to
one physical card (the two or four indices of a fully visible card; one index of each
covered card in a column), which cards lie in one overlapping stack (column, row, fan),
which side of the table each stack faces, and from that the melds, red threes and
left-out cards (draw/discard pile, strays) of each team. Every card and meld carries a
confidence, and `TableReading.review` lists, most urgent first, what a person should
check before scoring. Pure geometry over numpy arrays: no pixels, no I/O.

Conventions: a corner's `angle` is the direction the printed index's own top points
(0 = up in the photo, 90 = right, 180 = down). An index printed upside down in a card's
bottom-right corner is, seen on its own, exactly a top-left index of the card turned
around, so both predict the same card centre; that symmetry is what pairs them.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from scanner.classes import INDEX_CLASSES, WILD_CLASSES
from scanner.corners import Corners, long_sides, print_sizes, root_areas
from scanner.ink import RED_INK
from scanner.perspective import (
    MIN_TILT_RATIO,
    UNSURE_TILT_RATIO,
    Flattening,
    flatten_corners,
    flattening,
    moved_boxes,
)
from scanner.rules import Ruleset

# Pack limits of the four-player game (two decks and four jokers).
PACK_LIMITS: dict[str, int] = {**{r: 8 for r in INDEX_CLASSES}, "JK": 4, "3R": 4, "3B": 4}

ROLE_MELD = "meld"
ROLE_RED_THREE = "red_three"
ROLE_SQUARED = "squared_top"
ROLE_UNMELDED = "unmelded"   # on a team's side but not part of a legal meld (lone card, pair)
ROLE_LEFT_OUT = "left_out"   # neither team's: discard pile, stray card


# A plain meld less likely than this to be exact goes to the review list; a card less
# likely than this to lie there with its rank too (`CardGeometry.low_confidence`, the
# service's). Chosen with the calibrations below on their fit set (t5, 900 tables of the
# held-out designs, the two readers' corners; `python -m bench.meld_confidence`): 86.7% of
# the wrong melds reviewed and 26.9% of the right ones (0.94: 82.1 / 21.9%, the old rule's
# 82.4 / 22.3%), wrong deals with nothing flagged 1.11% (old 1.56%); cards under 0.96: 74.1%
# of the wrong ones, 1.9% of the right (old 74.1 / 2.2%). Out of the fit set, t4 (804
# tables): 85.3% / 26.2% of wrong / right melds reviewed (old 79.1 / 22.9%), silent wrong
# deals 1.12% (1.37%); test 88.4 / 26.1% (81.2 / 22.5%), 0.72% (0.72%); val 89.3 / 14.6%
# (84.5 / 14.3%), 0.76% (0.38%). models/MODEL_CARD.md, "The review rules refitted".
MELD_CHECK = 0.95
CARD_CHECK = 0.96


@dataclass(frozen=True)
class CardGeometry:
    """Printed card proportions that turn one index into a card; refined per photo.

    `card_height` is the prior card height in index heights (used only when the photo
    shows neither whole cards nor columns); `aspect` is width / height; `corner_x`,
    `corner_y` where the outer corner of a top-left index box sits from the card's
    corner, as fractions of card width and height. The outer corner is used rather than
    the index centre because it hardly moves between designs and ranks (a tall
    vertical JOKER index, a wide 10), while the centre does.
    """

    card_height: float = 4.5
    aspect: float = 0.71
    corner_x: float = 0.02
    corner_y: float = 0.03
    pair_tolerance: float = 0.2       # centre disagreement allowed, in card heights
    angle_tolerance: float = 15.0     # degrees between the two indices of one card
    side_tolerance: float = 0.08      # stricter centre match for side-by-side (4-index) pairs
    low_confidence: float = CARD_CHECK  # cards below this go to the review list


@dataclass
class CardReading:
    """One physical card: rank, the corners that show it, where it lies and whose it is."""

    rank: str
    corner_ids: list[int]
    center: tuple[float, float]
    angle: float
    confidence: float
    fully_visible: bool
    stack: int = -1
    team: int | None = None
    meld: int | None = None
    role: str = ROLE_LEFT_OUT
    notes: list[str] = field(default_factory=list)
    # where the card would lie if its one visible index were a top-right one
    other_center: tuple[float, float] | None = field(default=None, repr=False)
    # seen only by a bottom index (turned round to its stack's direction)
    from_bottom: bool = field(default=False, repr=False)
    # the classifier's surest reading of the rank among the card's corners
    rank_confidence: float = field(default=1.0, repr=False)
    # where each of its corners alone puts the card (two or more corners only)
    corner_spots: dict[int, tuple[float, float]] | None = field(default=None, repr=False)
    # its outline in the photo when the table was read flattened (a photo from a seat)
    photo_outline: np.ndarray | None = field(default=None, repr=False)
    # what its confidence is worked out from (`card_evidence`, `CARD_CALIBRATION`)
    evidence: tuple[float, ...] = field(default=(), repr=False, compare=False)
    # a detector's second box on another card's index, left out (`_leave_out_unsurer`): no
    # card, so not one of the pack's copies on the table
    second_box: bool = field(default=False, repr=False)

    @property
    def is_wild(self) -> bool:
        """A two or a joker."""
        return self.rank in WILD_CLASSES

    def outline(self, size: tuple[float, float]) -> np.ndarray:
        """The card's four corners in photo pixels (top-left first, as printed), for (w, h)
        (a card read on the flattened table keeps the outline it had there, moved back)."""
        if self.photo_outline is not None:
            return self.photo_outline
        w, h = size
        a = math.radians(self.angle)
        up = np.array([math.sin(a), -math.cos(a)])
        right = np.array([math.cos(a), math.sin(a)])
        c = np.asarray(self.center, dtype=float)
        return np.array([c + up * h / 2 - right * w / 2, c + up * h / 2 + right * w / 2,
                         c - up * h / 2 + right * w / 2, c - up * h / 2 - right * w / 2])

    def to_json(self, size: tuple[float, float] | None = None) -> dict:
        """The contract's `cards` item plus the optional `role`, `angle` and `outline`."""
        out = {"card": self.rank, "team": self.team, "meld": self.meld,
               "corners": list(self.corner_ids), "confidence": round(self.confidence, 4),
               "role": self.role, "angle": round(self.angle % 360, 1)}
        if size is not None and size[1] > 0:
            out["outline"] = [[round(float(x), 1), round(float(y), 1)]
                              for x, y in self.outline(size)]
        return out


@dataclass
class MeldReading:
    """One team's meld as read: rank, natural count, wild cards, and how sure we are."""

    team: int
    rank: str
    card_ids: list[int]
    naturals: int
    wilds: list[str]
    squared: bool = False
    confidence: float = 1.0
    problems: list[str] = field(default_factory=list)
    # what its confidence is worked out from (`meld_evidence`, `MELD_CALIBRATION`)
    evidence: tuple[float, ...] = field(default=(), repr=False, compare=False)

    @property
    def size(self) -> int:
        """Number of cards, counted or guessed."""
        return self.naturals + len(self.wilds)

    def layout_json(self) -> list[str] | dict:
        """The contract's meld form: a card list, or rank/naturals/wilds for a squared canasta."""
        if self.squared:
            return {"rank": self.rank, "naturals": self.naturals, "wilds": list(self.wilds)}
        return [self.rank] * self.naturals + sorted(self.wilds, key=_wild_order)

    def to_json(self) -> dict:
        """Meld details for the scan output (optional contract field)."""
        return {"team": self.team, "rank": self.rank, "naturals": self.naturals,
                "wilds": list(self.wilds), "squared": self.squared, "cards": self.card_ids,
                "confidence": round(self.confidence, 4), "problems": list(self.problems)}


@dataclass
class TableReading:
    """Everything read from one photo's corners: cards, melds per team, red threes, review."""

    cards: list[CardReading]
    melds: list[MeldReading]
    red_threes: list[int]
    review: list[dict]
    card_size: tuple[float, float]

    def team_melds(self, team: int) -> list[MeldReading]:
        """Melds of one team, in layout order."""
        return [m for m in self.melds if m.team == team]

    def layout_json(self) -> dict:
        """The contract's `layout` (score input shape; went-out, concealed and hand left to the player)."""
        return {"teams": [{"melds": [m.layout_json() for m in self.team_melds(t)],
                           "red_threes": self.red_threes[t]} for t in (0, 1)]}

    def cards_json(self) -> list[dict]:
        """The contract's `cards` list (each with its estimated outline)."""
        return [c.to_json(self.card_size) for c in self.cards]

    def melds_json(self) -> list[dict]:
        """Per-meld details with confidences (optional contract field)."""
        return [m.to_json() for m in self.melds]


def _wild_order(token: str) -> int:
    return 0 if token == "2" else 1


# ---------------------------------------------------------------------------------------
# geometry helpers


def _unit_vectors(angle_deg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Up and right unit vectors (image coords, y down) of a thing whose top points at `angle`."""
    a = np.radians(np.asarray(angle_deg, dtype=float))
    sin, cos = np.sin(a), np.cos(a)
    # filled in place: np.stack costs more than the trigonometry on the layout's small arrays
    up, right = np.empty(a.shape + (2,)), np.empty(a.shape + (2,))
    up[..., 0], up[..., 1] = sin, -cos
    right[..., 0], right[..., 1] = cos, sin
    return up, right


def _angle_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Absolute circular difference in degrees, 0..180."""
    d = np.abs((np.asarray(a) - np.asarray(b) + 180.0) % 360.0 - 180.0)
    return d


def _axis_turn(a, b):
    """Signed turn from direction `b` to direction `a` as lines (modulo 180), -90..90 degrees."""
    return (np.asarray(a) - np.asarray(b) + 90.0) % 180.0 - 90.0


def _circular_mean(angles: np.ndarray, weights: np.ndarray | None = None) -> float:
    a = np.radians(np.asarray(angles, dtype=float))
    if weights is None:
        y, x = np.sin(a).sum(), np.cos(a).sum()
    else:
        w = np.asarray(weights, dtype=float)
        y, x = (w * np.sin(a)).sum(), (w * np.cos(a)).sum()
    return float(np.degrees(np.arctan2(y, x)) % 360)


def _unrotated_sizes(corners: Corners, angles: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each index's own (width, height) from its axis-aligned box and angle.

    Returns the widths, heights, whether the solve is well-conditioned (away from 45
    degrees) and the box's mean side, which callers scale as their fallback.
    """
    w = corners.boxes[:, 2] - corners.boxes[:, 0]
    h = corners.boxes[:, 3] - corners.boxes[:, 1]
    a = np.radians(angles)
    c, s = np.abs(np.cos(a)), np.abs(np.sin(a))
    det = c * c - s * s
    # box = [[c, s], [s, c]] @ (own_w, own_h): solvable away from 45 degrees.
    with np.errstate(divide="ignore", invalid="ignore"):
        own_w = (c * w - s * h) / det
        own_h = (c * h - s * w) / det
    return own_w, own_h, np.abs(det) > 0.5, np.sqrt(np.maximum(w * h, 1e-6))


def _index_heights(corners: Corners, angles: np.ndarray) -> np.ndarray:
    """Each index's own height (along its up axis), undoing the axis-aligned box's rotation."""
    _, ih, solvable, side = _unrotated_sizes(corners, angles)
    own = np.where(solvable & (ih > 0), ih, side * 1.15)
    # Perspective changes the size slowly across the photo: smooth over neighbours.
    if len(own) > 3:
        centres = corners.centers
        d = np.linalg.norm(centres[:, None] - centres[None], axis=-1)
        k = min(7, len(own))
        nearest = np.argsort(d, axis=1)[:, :k]
        own = np.median(own[nearest], axis=1)
    return own


def _fill_angles(corners: Corners) -> tuple[np.ndarray, np.ndarray]:
    """Angles with unknown (NaN) ones taken from the nearest known corner (or upright)."""
    angles = corners.angle.astype(float).copy()
    known = ~np.isnan(angles)
    if known.all():
        return angles, known
    if not known.any():
        return np.zeros_like(angles), known
    centres = corners.centers
    for i in np.flatnonzero(~known):
        d = np.linalg.norm(centres[known] - centres[i], axis=1)
        angles[i] = np.round(angles[known][np.argmin(d)] / 90.0) * 90.0
    return angles, known


# ---------------------------------------------------------------------------------------
# corners -> physical cards


def _index_anchors(corners: Corners, angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The outer top-left and top-right corners of each index box, in its own frame.

    Boxes are axis-aligned in the photo; the index's own width and height are recovered
    from the box and the angle (where the turn is near 45 degrees, from the box area).
    """
    own_w, own_h, solvable, side = _unrotated_sizes(corners, angles)
    ok = solvable & (own_w > 0) & (own_h > 0)
    own_w = np.where(ok, own_w, side * 0.75)
    own_h = np.where(ok, own_h, side * 1.25)
    up, right = _unit_vectors(angles)
    centres = corners.centers.astype(float)
    top = centres + up * (own_h / 2)[:, None]
    return top - right * (own_w / 2)[:, None], top + right * (own_w / 2)[:, None]


def _card_centres(anchors: tuple[np.ndarray, np.ndarray], angles: np.ndarray,
                  card_h: np.ndarray, geo: CardGeometry) -> tuple[np.ndarray, np.ndarray]:
    """Card centre if each index is a left-type index (top-left / bottom-right) or right-type."""
    up, right = _unit_vectors(angles)
    card_w = card_h * geo.aspect
    across = (card_w * (0.5 - geo.corner_x))[:, None]
    down = (card_h * (0.5 - geo.corner_y))[:, None]
    left_type = anchors[0] + right * across - up * down
    right_type = anchors[1] - right * across - up * down
    return left_type, right_type


# A pair of corners of two ranks ranks behind one of a rank by this share of the pairing
# tolerance (a card lying almost exactly on another). 0.5 until session 35, when a joker's
# bottom index went with the 8 beside its top index (docs/LAYOUT.md, session 35).
OTHER_RANK_PENALTY = 0.75


def _pair_corners(corners: Corners, angles: np.ndarray, card_h: np.ndarray,
                  geo: CardGeometry, alike: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
    """Group corners into physical cards; returns groups and each corner's type (0 left, 1 right).

    `alike` (n, n): which corners are printed one size (`_same_print`).
    """
    n = len(corners)
    centres = corners.centers.astype(float)
    anchors = _index_anchors(corners, angles)
    left_c, right_c = _card_centres(anchors, angles, card_h, geo)
    cand = np.stack([left_c, right_c], axis=1)  # (n, 2 types, 2)
    # the card size between two corners: the geometric mean of the size read at each (the
    # larger alone lets an oversized reading at a whole card's bottom index reach the
    # covered card's top index a step up)
    scale = np.sqrt(card_h[:, None] * card_h[None, :])
    adiff = _angle_diff(angles[:, None], angles[None, :])
    opposite = np.abs(adiff - 180.0) < geo.angle_tolerance
    same_dir = adiff < geo.angle_tolerance * SAME_DIR_SHARE
    same_rank = corners.class_ids[:, None] == corners.class_ids[None, :]
    dists = {(ti, tj): np.linalg.norm(cand[:, None, ti] - cand[None, :, tj], axis=-1) / scale
             for ti in (0, 1) for tj in (0, 1)}
    four_index = _four_index_evidence(dists, opposite & same_rank, geo)
    diagonals = _expected_diagonals(anchors[0], angles, scale, geo)
    dists[0, 0], off_diagonal = _diagonal_mismatch(*diagonals, scale)
    # how much further apart two indices lie than a card diagonal, in card heights
    diagonal = math.hypot(geo.aspect * (1 - 2 * geo.corner_x), 1 - 2 * geo.corner_y)
    longer = np.linalg.norm(anchors[0][:, None] - anchors[0][None], axis=-1) / scale - diagonal
    sides = np.maximum(corners.boxes[:, 2:] - corners.boxes[:, :2], 1e-6)
    sides = np.sort(sides, axis=1)  # a turn by 90 degrees swaps width and height
    # how unlike two boxes are, shorter and longer side apart (n, n, 2)
    side_ratio = np.abs(np.log(sides[:, None, :] / sides[None, :, :]))
    one_glyph = (side_ratio < math.log(1.3)).all(-1)
    deck = print_sizes(long_sides(corners.boxes))  # two decks' print sizes, if two
    pairs: list[tuple[float, int, int, int, int]] = []
    # Opposite indices: TL+BR (both left-type) or, on decks printing all four corners,
    # TR+BL (both right-type) or TL+BL; side by side (four-index decks only): TL+TR.
    # Most decks print only TL+BR: the other pairings are tried only when the photo shows
    # a card with four indices, and must fit more tightly.
    for (ti, tj), dist in dists.items():
        if (ti, tj) != (0, 0) and not four_index:
            continue
        allowed = opposite if ti == tj else (opposite | same_dir)
        # once the photo shows a four-index card, its other pairs fit more loosely: a
        # detector's boxes miss the tight fit that proves the deck by a tenth of a card
        limit = geo.pair_tolerance if ti == tj == 0 else FOUR_INDEX_PAIR * geo.side_tolerance
        ok = allowed & (dist < limit) & alike
        if (ti, tj) != (0, 0):
            # beyond the tight fit, one glyph turned: both sides of the boxes one size (a
            # two-index deck's top index beside a four-index deck's in a row is not one
            # card's other corner)
            ok &= (dist < geo.side_tolerance) | one_glyph
        # A corner whose rank disagrees may still be the same card if it fits tightly.
        ok &= same_rank | ((dist < limit * 0.4) & (ti == tj == 0))
        if ti == tj == 0:
            # Two opposite indices of a rank that have no other partner within a looser
            # fit are one card even so: a strongly tilted photo distorts a whole card
            # (near the camera, foreshortened) more than the strict tolerance allows.
            # Beyond 1.4 times the tolerance only along the card's diagonal (too big or
            # small a card): the top index of the card a step back in a column or row,
            # when the detector missed the card's own, lies off it by half a step.
            along_diagonal = off_diagonal < LOOSE_OFF_DIAGONAL
            cut_short = allowed & same_rank & ~alike & (dist < limit)
            if deck is not None:
                cut_short &= (deck[:, None] == deck[None, :]) | (dist < CUT_SHORT_FIT * limit)
            loose = allowed & same_rank & (alike | _cut_short_alike(
                side_ratio, cut_short, cand[:, 0], centres, angles, scale, geo,
                dist < CUT_SHORT_TIGHT_FIT * limit)) & (
                (dist < 1.4 * limit) | ((dist < 1.75 * limit) & along_diagonal)
                | _turned_diagonal(*diagonals))
            np.fill_diagonal(loose, False)
            alone = loose.sum(axis=1) == 1
            ok |= loose & alone[:, None] & alone[None, :]
        ii, jj = np.nonzero(np.triu(ok, 1) | np.tril(ok, -1) * (ti != tj))
        for i, j in zip(ii, jj, strict=True):
            if ti != tj and same_dir[i, j] and _index_between(int(i), int(j), centres, angles,
                                                              card_h, geo):
                continue  # a row of cards, not the two top indices of one card
            if ti == tj == 0 and side_ratio[i, j, 1] > math.log(FACE_PRINT_RATIO) and \
                    _index_on_face(int(i), int(j), corners, centres, cand[:, 0], angles,
                                   float(scale[i, j]), geo):
                continue  # two decks' indices: the card they would make shows another's
            if four_index and ti == tj and (
                    _edge_crossed(int(i), int(j), centres, angles, card_h[i], geo)
                    or _edge_crossed(int(j), int(i), centres, angles, card_h[j], geo)):
                continue  # another card's index on this card's edge: a row of cards
            # a top-left + bottom-right pair first: a side pair alone can be read two ways
            # (TR+BR of one card or TL+BL of the next), the whole card settles which
            penalty = 0.0 if ti == tj == 0 else (0.03 if ti == tj else 0.06)
            if ti == tj == 0:
                # and of two top indices a bottom index fits about as well, the one not
                # further than a card diagonal: in a column or row the covered cards'
                # top indices lie a step further back than the whole card's own
                penalty += max(float(longer[i, j]), 0.0)
            # a corner of the same rank first: in a pile a card may lie almost exactly
            # on another, whose bottom index then fits its top index as well as its own
            penalty += 0.0 if same_rank[i, j] else geo.pair_tolerance * OTHER_RANK_PENALTY
            pairs.append((float(dist[i, j]) + penalty, int(i), int(j), ti, tj))
    pairs.sort()
    group_of = list(range(n))
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    kind = np.full(n, -1)
    for _dist, i, j, ti, tj in pairs:
        gi, gj = group_of[i], group_of[j]
        if gi == gj:
            continue
        if (kind[i] >= 0 and kind[i] != ti) or (kind[j] >= 0 and kind[j] != tj):
            continue
        merged = members[gi] + members[gj]
        if len(merged) > 4:
            continue
        types = kind.copy()
        types[i], types[j] = ti, tj
        # every member must agree on where the card is (a lone TL+BR pair was checked)
        if len(merged) > 2:
            pts = np.array([cand[m, max(types[m], 0)] for m in merged])
            spread = np.linalg.norm(pts - pts.mean(axis=0), axis=1).max() / card_h[i]
            if spread > geo.pair_tolerance:
                continue
        # no two corners of one card in the same printed position
        if not _slots_consistent(merged, types, angles):
            continue
        kind[i], kind[j] = ti, tj
        for m in members[gj]:
            group_of[m] = gi
        members[gi] = merged
        del members[gj]
    kind[kind < 0] = 0
    groups = sorted(members.values(), key=min)
    return groups, kind


# Two indices of one rank whose boxes' longer sides differ by up to this factor, the shorter
# sides by under `CUT_SHORT_ACROSS`, may be one card when it is otherwise in doubt
# (`_cut_short_alike`).
CUT_SHORT_ALONG = 1.8
CUT_SHORT_ACROSS = 1.35
# Where the photo's boxes fall into two print sizes (`print_sizes`), an index of each is one
# card cut short only where they fit its diagonal within this share of the pairing tolerance:
# t4 3009, a kde-oxygen-white queen's small top index and an anglo_modern queen's tall bottom
# index of two cards side by side fit one card at 0.94 of it (a tango king cut short, t4 7189,
# at 0.18). Detector corners: t4 617 -> 618, test and val the same; from a seat 153 (meld exact
# 82.47 -> 82.52%); perfect corners the same (0.5 alike; for every photo, from a seat -1;
# docs/LAYOUT.md, session 59).
CUT_SHORT_FIT = 0.75
# Two such indices fitting one card's diagonal within this share of the pairing tolerance are
# one card with longer sides up to `CUT_SHORT_ALONG_TIGHT` apart: t4 6999, a tango queen lying
# alone (a squared-up canasta), its bottom index boxed twice as long as its top index (111 and
# 53 px), fit at 0.05 of the tolerance and was two queens, a meld of three with one unseen.
# Detector corners: t4 620 -> 621, test, val, perfect corners and from a seat the same
# (0.15-0.4 and 2.3-2.6 alike; docs/LAYOUT.md, session 59).
CUT_SHORT_TIGHT_FIT = 0.25
CUT_SHORT_ALONG_TIGHT = 2.3


def _cut_short_alike(side_ratio: np.ndarray, candidates: np.ndarray, centres_left: np.ndarray,
                     centres: np.ndarray, angles: np.ndarray, scale: np.ndarray,
                     geo: CardGeometry, tight: np.ndarray) -> np.ndarray:
    """Which `candidates` (n, n: opposite indices of one rank that fit one card but are
    not one print size, `_same_print`) are one card's indices all the same: one box cut
    short along its glyph (`side_ratio`: the log ratios of two boxes' shorter and longer
    sides, n x n x 2), and no other index on the card they would make (`_on_face`). Where
    they fit the card's diagonal closely (`tight`, n x n), the longer sides may differ by up
    to `CUT_SHORT_ALONG_TIGHT`.

    The detector boxes the rank alone on some indices and rank and pip on others (a
    kde-penguins 2's top index 40 px, its bottom index 67 px), and a partly covered
    index's box is short: one whole top card of a meld was counted twice. Their boxes
    stay one width. Cards of two decks in a fan can fit a card's diagonal the same way
    (perfect corners: a small serif J and a large J with its pip, 1.73 apart), but
    then the cards between them show their indices on the face of that card, and a
    card in full view hides whatever lies under it. On the test split's detector corners,
    four of the six whole wilds counted twice were this (docs/LAYOUT.md, session 24).
    """
    along = np.where(tight, math.log(CUT_SHORT_ALONG_TIGHT), math.log(CUT_SHORT_ALONG))
    ok = (candidates & (side_ratio[..., 1] < along)
          & (side_ratio[..., 0] < math.log(CUT_SHORT_ACROSS)))
    ok |= ok.T
    for i, j in zip(*np.nonzero(np.triu(ok, 1)), strict=True):
        on_face = _on_face(centres, (centres_left[i] + centres_left[j]) / 2, angles[i],
                           scale[i, j], geo.aspect)
        on_face[[i, j]] = False
        if on_face.any():
            ok[i, j] = ok[j, i] = False
    return ok


# A top and a bottom index whose boxes' longer sides differ by more than this factor pair
# only where no other sure index lies on the face of the card they would make
# (`_index_on_face`). Two decks' cards side by side, one upside down to the other or the two
# printing their indices at opposite corners, fit one card's diagonal with one deck's top
# index and the other's bottom index (perfect corners: t4 5419, a row of seven queens of
# kde-oxygen-white and tango read as three whole cards and one; val 1848, four red threes as
# two); the other pair's index then lies on that card's face. One deck's card under another
# shows both its indices with the other's on its middle (val 2298: a dondorf six over a six),
# so a pair of one print size is never held to it. Perfect corners val 245 -> 246, t4 729 ->
# 731; detector corners test, val and t4 the same deals (test red-three misses 10 -> 9); from a
# seat the same. 1.2-1.4 alike on perfect corners; 1.25 also reads t4 7709 on the detector's
# corners but loses test 2759 from a seat; 1.1 loses val 2298 (docs/LAYOUT.md, session 60).
FACE_PRINT_RATIO = 1.4
# ... another index lies on the face when it is sure (`LAYOUT_MIN_CONFIDENCE`), this many card
# heights clear of both indices, and clear of the card's two other index spots (a four-index
# deck's) by `FACE_SPOT_CLEAR`
FACE_CLEAR = 0.15
FACE_SPOT_CLEAR = 0.12


def _index_on_face(i: int, j: int, corners: Corners, centres: np.ndarray,
                   card_centres: np.ndarray, angles: np.ndarray, card_h: float,
                   geo: CardGeometry) -> bool:
    """Whether a sure index other than `i` and `j` lies on the face of the card a top-left
    index `i` and a bottom-right index `j` would make (`card_centres`: each index's card
    centre as a left-type index), clear of both and of the card's other two index spots."""
    centre = (card_centres[i] + card_centres[j]) / 2
    up, right = _unit_vectors(np.array([angles[i]]))
    other = ((corners.confidence >= LAYOUT_MIN_CONFIDENCE)
             & (np.linalg.norm(centres - centres[i], axis=1) > FACE_CLEAR * card_h)
             & (np.linalg.norm(centres - centres[j], axis=1) > FACE_CLEAR * card_h))
    for m in (i, j):
        # the index mirrored across the card's long axis: a four-index deck's TR or BL
        rel = centres[m] - centre
        spot = centre - (rel @ right[0]) * right[0] + (rel @ up[0]) * up[0]
        other &= np.linalg.norm(centres - spot, axis=1) > FACE_SPOT_CLEAR * card_h
    return bool(other.any() and _on_face(centres[other], centre, angles[i], card_h,
                                         geo.aspect).any())


# the side tolerance's multiple allowed for the other pairings of a four-index deck
FOUR_INDEX_PAIR = 2.0
# Two indices side by side on one card (a four-index deck's TL+TR) point the same way within
# this share of `angle_tolerance` (21 degrees): the detector reads a four-index deck's small
# glyphs 10-16 degrees apart on one card (val, dondorf: a column's covered 10s and kings each
# counted twice at 0.6); the pair must still fit the card tightly (`side_tolerance`). Val
# layouts from the detector's corners, meld exact / deal: 0.6 83.96 / 73.03%, 1.0 84.27 /
# 73.03%, 1.4 84.42 / 74.16%, 2.0 the same; perfect corners unchanged (docs/LAYOUT.md).
SAME_DIR_SHARE = 1.4
# a whole card's mismatch across its diagonal allowed for the loosest pairing, card heights
LOOSE_OFF_DIAGONAL = 0.1


def _print_heights(corners: Corners, angles: np.ndarray) -> np.ndarray:
    """Each index's own printed height in pixels (not smoothed over its neighbours)."""
    _, own_h, solvable, side = _unrotated_sizes(corners, angles)
    return np.where(solvable & (own_h > 0), own_h, side * 1.15)


# A joker's index is part of a word: a detector boxes two letters of it on one corner and
# three on the other (val, polygon-label detector: a joker's corners 42 and 69 px long, one
# card read as two jokers). Two joker corners pair within this factor.
JOKER_PRINT_RATIO = 2.0


# boxes of two print sizes (`print_sizes`) as near as this in size may still be one card's
# indices
PRINT_APART_RATIO = 1.3


def _same_print(corners: Corners) -> np.ndarray:
    """Whether two index boxes could be two corners of one card: they are one size.

    A card's indices are one printed glyph, turned: their boxes in the photo have the
    same width and height (a turn by 90 or 180 degrees swaps or keeps them). Decks print
    indices from 9% to 30% of the card, so a bottom-right index of one deck does not
    make one card with another deck's top-right index that happens to fit its diagonal.
    """
    # the longer side: box noise is a share of the box's height, the larger share of
    # a narrow side. Within a factor 1.6: a detector's box on a partly shaded index can
    # be a third short (1.4 split whole cards on detector corners; 1.8 let two decks'
    # indices pair on ground truth).
    side = long_sides(corners.boxes)
    ratio = np.abs(np.log(side[:, None] / side[None, :]))
    joker = corners.class_ids == INDEX_CLASSES.index("JK")
    alike = (ratio < math.log(1.6)) | (joker[:, None] & joker[None, :]
                                       & (ratio < math.log(JOKER_PRINT_RATIO)))
    deck = print_sizes(side)
    if deck is not None:
        # two decks printed at two sizes (`print_sizes`): one deck's index and the other's
        # make no card unless their boxes are near in size all the same. On perfect corners
        # a tango bottom index 1.5x an oxygen top index had been paired across a fan; deals
        # read right, detector corners test / val / t4 188 / 194 / 481 -> 188 / 194 / 483,
        # perfect corners val 240 -> 241, t4 704 -> 706 (docs/LAYOUT.md, session 29)
        alike &= (deck[:, None] == deck[None, :]) | (ratio < math.log(PRINT_APART_RATIO))
    return alike


def _expected_diagonals(anchors: np.ndarray, angles: np.ndarray, scale: np.ndarray,
                        geo: CardGeometry) -> tuple[np.ndarray, np.ndarray]:
    """From each corner i to each corner j: the vector between their outer corners (n, n, 2)
    and where j's would be if j were the opposite index of i's card (n, n, 2).

    The outer corners of a card's two indices lie one card diagonal (less the margins)
    apart, in the direction set by the card's angle, here the mean of both corners'
    angles (half the error of either).
    """
    down = scale * (1 - 2 * geo.corner_y)
    across = scale * geo.aspect * (1 - 2 * geo.corner_x)
    v = anchors[None, :, :] - anchors[:, None, :]  # i -> j
    a = np.radians(angles)
    # mean of angle_i and angle_j + 180, as a unit vector per pair
    cx = np.cos(a)[:, None] - np.cos(a)[None, :]
    sy = np.sin(a)[:, None] - np.sin(a)[None, :]
    norm = np.maximum(np.hypot(cx, sy), 1e-9)
    cos_m, sin_m = cx / norm, sy / norm
    # expected i -> j: right * across + down * down; right = (cos, sin), down = (-sin, cos)
    return v, np.stack([cos_m * across - sin_m * down, sin_m * across + cos_m * down], axis=-1)


def _diagonal_mismatch(v: np.ndarray, e: np.ndarray, scale: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """How far corner j is from where corner i's card has its opposite (bottom-right) index
    (`v`, `e`: `_expected_diagonals`), in card heights (n, n); also the part of that
    mismatch across the diagonal: a card bigger or smaller than measured (perspective)
    misses along it, the next card of a column or row beside it.
    """
    ex, ey = e[..., 0], e[..., 1]
    miss_x, miss_y = v[..., 0] - ex, v[..., 1] - ey
    across_diagonal = np.abs(miss_x * ey - miss_y * ex) / np.maximum(np.hypot(ex, ey), 1e-9)
    return np.hypot(miss_x, miss_y) / scale, across_diagonal / scale


# Two opposite indices one card diagonal apart (within this share of its length) and
# turned from where the read angles put it by less than this (degrees) are one card when
# in doubt (`_turned_diagonal`).
TURNED_DIAGONAL_LENGTH = 0.1
TURNED_DIAGONAL_TURN = 35.0


def _turned_diagonal(v: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Pairs (n, n) whose outer corners lie one card diagonal apart, that diagonal turned
    less than `TURNED_DIAGONAL_TURN` from where the two indices' angles put it (`v`, `e`:
    `_expected_diagonals`).

    A bare glyph's direction is read 20-30 degrees off, and a whole card's two indices
    often both the same way (tango's 4s on the test split: 156 and 338 degrees on a card
    lying at 181): they agree with each other, but the card each places misses the other's
    by a third of a card, and the card was counted twice. The distance between them is
    the card's diagonal whatever the angle.
    """
    length = np.hypot(v[..., 0], v[..., 1])
    want = np.maximum(np.hypot(e[..., 0], e[..., 1]), 1e-9)
    turn = np.degrees(np.abs(np.arctan2(v[..., 0] * e[..., 1] - v[..., 1] * e[..., 0],
                                        v[..., 0] * e[..., 0] + v[..., 1] * e[..., 1])))
    return (np.abs(length / want - 1) < TURNED_DIAGONAL_LENGTH) & (turn < TURNED_DIAGONAL_TURN)


def _four_index_evidence(dists: dict, opposite_same_rank: np.ndarray, geo: CardGeometry) -> bool:
    """Whether some card shows four indices: a TL+BR pair and a TR+BL pair on one centre."""
    tol = geo.side_tolerance
    ll = np.argwhere(np.triu(opposite_same_rank & (dists[0, 0] < tol), 1))
    rr = np.argwhere(np.triu(opposite_same_rank & (dists[1, 1] < tol), 1))
    if not len(ll) or not len(rr):
        return False
    cross = dists[0, 1]
    for i, _ in ll:
        for k, _ in rr:
            if i != k and cross[i, k] < tol:
                return True
    return False


def _index_between(i: int, j: int, centres: np.ndarray, angles: np.ndarray, card_h: np.ndarray,
                   geo: CardGeometry) -> bool:
    """Whether another index facing the same way sits in the row between indices i and j."""
    up, right = _unit_vectors(np.array([angles[i]]))
    rel = centres - centres[i]
    x = rel @ right[0]
    y = rel @ up[0]
    xj = x[j]
    lo, hi = sorted((0.0, xj))
    inside = (x > lo + 0.05 * card_h[i]) & (x < hi - 0.05 * card_h[i])
    inside &= np.abs(y) < 0.08 * card_h[i]
    inside &= _angle_diff(angles, angles[i]) < geo.angle_tolerance
    inside[[i, j]] = False
    return bool(inside.any())


def _side_pairs_toward_front(cards: list[CardReading], corners: Corners, angles: np.ndarray,
                             card_h: np.ndarray, geo: CardGeometry, kind: np.ndarray) -> None:
    """Place a card seen by a top and a bottom index of one side toward its row's whole card.

    On a four-index deck a row's covered cards each show the indices of one side, one
    above the other: the card lies to their right (its left side in view) or to their left.
    The cards over it lie the way it does, up to the row's card in full view, so the card
    lies toward a whole card of its rank (or a wild) and direction on its row's line: one
    seen by three or four indices, or by a top and a bottom index across its diagonal (a
    two-index deck's card in a row of two decks: val 1808, dondorf sixes left of a plastic
    six in full view, their side pairs placed away from it, read as gaps holding three more
    cards; perfect corners val 244 -> 245, detector corners and photos from a seat the same;
    session 60).

    A card so placed then places its row's next side pairs the same way: the cards of a fan
    turn along it, and a card two or three places from the front may be turned past
    `angle_tolerance` from it (val 1638, tens fanned 179-196 degrees, the front ten at 196:
    the ten at 179 was placed away from it and a gap holding one more ten was read; session
    61). Of another rank the whole card may be the next meld's on the same line (val 2058: a
    fan of kings beside a squared-up queen, which the kings' side pairs were placed toward
    once placed cards led on)."""
    whole = [c for c in cards if len(c.corner_ids) >= 3
             or (c.fully_visible and len(c.corner_ids) == 2
                 and kind[c.corner_ids[0]] == kind[c.corner_ids[1]]
                 and _angle_diff(angles[c.corner_ids[0]], angles[c.corner_ids[1]]) > 90)]
    pending = [c for c in cards if len(c.corner_ids) == 2
               and kind[c.corner_ids[0]] != kind[c.corner_ids[1]]
               and _angle_diff(angles[c.corner_ids[0]], angles[c.corner_ids[1]]) >= 90]
    if not whole or not pending:
        return
    left_c, right_c = _card_centres(_index_anchors(corners, angles), angles, card_h, geo)
    while whole and pending:
        placed, unplaced = [], []
        for card in pending:
            placed_now = _place_side_pair(card, whole, angles, card_h, geo, kind,
                                          (left_c, right_c))
            (placed if placed_now else unplaced).append(card)
        whole, pending = placed, unplaced


def _place_side_pair(card: CardReading, whole: list[CardReading], angles: np.ndarray,
                     card_h: np.ndarray, geo: CardGeometry, kind: np.ndarray,
                     centres: tuple[np.ndarray, np.ndarray]) -> bool:
    """Turn a side pair's card (`_side_pairs_toward_front`) to the other side of its
    indices when that puts it nearer the nearest of `whole` on its line; whether one was."""
    ids = card.corner_ids
    top = ids[0] if _angle_diff(angles[ids[0]], card.angle) < 90 else ids[1]
    up, right = _unit_vectors(np.array([card.angle]))
    h = float(card_h[top])
    here = np.asarray(card.center)
    # each index's card centre were it the other kind (left-type <-> right-type)
    left_c, right_c = centres
    spots = {m: (left_c if kind[m] else right_c)[m] for m in ids}
    there = np.mean(list(spots.values()), axis=0)
    best = None
    for w in whole:
        if w is card or _axis_diff(w.angle, card.angle) > geo.angle_tolerance:
            continue
        if w.rank != card.rank and w.rank not in WILD_CLASSES:
            continue
        rel = np.asarray(w.center) - here
        if abs(float(rel @ up[0])) > 0.15 * h or abs(float(rel @ right[0])) > 3 * h:
            continue
        d_here = float(np.linalg.norm(np.asarray(w.center) - here))
        d_there = float(np.linalg.norm(np.asarray(w.center) - there))
        if best is None or min(d_here, d_there) < best[0]:
            best = (min(d_here, d_there), d_there < d_here)
    if best is not None and best[1]:
        # the other side: the index that was the card's top-left is now its bottom-left
        card.center = (float(there[0]), float(there[1]))
        card.angle = (card.angle + 180.0) % 360.0
        card.corner_spots = {m: (float(p[0]), float(p[1])) for m, p in spots.items()}
    return best is not None


def _axis_diff(a: float, b: float) -> float:
    """How far apart two directions' lines are, degrees (0-90): a card and itself upside down
    lie on one line."""
    d = float(_angle_diff(a, b))
    return min(d, 180.0 - d)


def _placements(card: CardReading, corners: Corners, centres: np.ndarray) -> list:
    """A card's centre as placed and, when one side's top and bottom index show it, the
    centre mirrored to that side's other side."""
    out = [card.center]
    ids = card.corner_ids
    if len(ids) == 2 and _angle_diff(corners.angle[ids[0]], corners.angle[ids[1]]) > 90:
        _, right = _unit_vectors(np.array([card.angle]))
        r = right[0]
        m = centres[ids].mean(axis=0)
        if abs(float((centres[ids[1]] - centres[ids[0]]) @ r)) < 0.1 * math.dist(*centres[ids]):
            c = np.asarray(card.center, float)
            out.append(tuple(c + 2 * float((m - c) @ r) * r))
    return out


def _halves_apart(ca: CardReading, cb: CardReading, centres: np.ndarray, angles: np.ndarray,
                  card_h: float, geo: CardGeometry) -> bool:
    """Whether another index lies on the edge between two halves' indices (a row)."""
    return any(_edge_crossed(i, j, centres, angles, card_h, geo)
               for i in ca.corner_ids for j in cb.corner_ids
               if _angle_diff(angles[i], angles[j]) < geo.angle_tolerance)


def _edge_crossed(i: int, j: int, centres: np.ndarray, angles: np.ndarray, h: float,
                  geo: CardGeometry) -> bool:
    """Whether an index pointing corner i's way lies on i's card edge, between i and the
    edge's other index slot, on the side of corner j (another index of the card read).

    On a four-index deck a row of cards shows each covered card's left (or right) top and
    bottom indices, one above the other. A card read across them (a top index with a
    bottom index some cards on, or two such sides as one card) has the row's other top
    indices on its own top edge: the cards they belong to, over it, would cover one of
    the indices it was read from, and under it they would not show. `h` is the card
    height at i."""
    up, right = _unit_vectors(np.array([angles[i]]))
    rel = centres - centres[i]
    x = rel @ right[0]
    x *= 1.0 if x[j] >= 0 else -1.0
    y = rel @ up[0]
    far = h * (geo.aspect * (1 - 2 * geo.corner_x) - 2 * EDGE_CLEAR)
    inside = (x > EDGE_CLEAR * h) & (x < far) & (np.abs(y) < 0.08 * h)
    inside &= _angle_diff(angles, angles[i]) < geo.angle_tolerance
    inside[[i, j]] = False
    return bool(inside.any())


# how far from an edge's index slots another index must lie to be on the edge between
# them, in card heights
EDGE_CLEAR = 0.12


def _slots_consistent(group: list[int], types: np.ndarray, angles: np.ndarray) -> bool:
    """Each of a card's (up to four) printed positions holds at most one corner."""
    ref = angles[group[0]]
    seen = set()
    for m in group:
        flipped = _angle_diff(angles[m], ref) > 90
        slot = (max(int(types[m]), 0), bool(flipped))
        if slot in seen:
            return False
        seen.add(slot)
    return True


def _build_cards(corners: Corners, angles: np.ndarray, card_h: np.ndarray, geo: CardGeometry,
                 groups: list[list[int]], kind: np.ndarray,
                 angle_known: np.ndarray) -> list[CardReading]:
    left_c, right_c = _card_centres(_index_anchors(corners, angles), angles, card_h, geo)
    left_c, right_c = left_c.tolist(), right_c.tolist()
    known = angle_known.tolist()
    ranks = corners.ranks
    confidence = corners.confidence.tolist()
    rank_conf = corners.rank_confidence.tolist()
    angle_list = angles.tolist()
    cards = []
    for group in groups:
        ref = angle_list[group[0]]
        spots = [(right_c if kind[m] else left_c)[m] for m in group]
        centre = (sum(p[0] for p in spots) / len(spots), sum(p[1] for p in spots) / len(spots))
        # card angle: flipped indices (bottom corners) point the other way
        flipped = [abs((angle_list[m] - ref + 180.0) % 360.0 - 180.0) > 90 for m in group]
        sx = sy = 0.0
        for m, flip in zip(group, flipped, strict=True):
            a = math.radians(angle_list[m] + (180.0 if flip else 0.0))
            sx += confidence[m] * math.cos(a)
            sy += confidence[m] * math.sin(a)
        card_angle = math.degrees(math.atan2(sy, sx)) % 360.0
        votes: dict[str, float] = defaultdict(float)
        for m in group:
            votes[ranks[m]] += rank_conf[m]
        rank = max(votes, key=votes.get)
        miss = 1.0
        for m in group:
            if ranks[m] == rank:
                miss *= 1.0 - confidence[m] * 0.999
        conf = 1.0 - miss
        notes = []
        if len(votes) > 1:
            conf *= votes[rank] / sum(votes.values())
            notes.append("its corners read different ranks: " + ", ".join(sorted(votes)))
        if not any(known[m] for m in group):
            conf *= 0.8
            notes.append("orientation unknown")
        other = None
        if len(group) == 1:
            alt = right_c[group[0]] if kind[group[0]] == 0 else left_c[group[0]]
            other = (float(alt[0]), float(alt[1]))
        cards.append(CardReading(rank=rank, corner_ids=sorted(group),
                                 center=(float(centre[0]), float(centre[1])),
                                 angle=card_angle, confidence=conf,
                                 fully_visible=len(set(flipped)) == 2, notes=notes,
                                 other_center=other,
                                 corner_spots=None if len(group) == 1 else {
                                     m: (float(p[0]), float(p[1]))
                                     for m, p in zip(group, spots, strict=True)},
                                 rank_confidence=max(rank_conf[m] for m in group
                                                     if ranks[m] == rank)))
    return cards


# Two whole cards of one rank and direction whose centres lie closer than this (card
# heights) are the two halves of one four-index card: a card in full view covers any card
# it overlaps that much.
FOUR_INDEX_HALVES = 0.6


def _join_four_index_halves(cards: list[CardReading], corners: Corners, card_h: float,
                            geo: CardGeometry) -> list[CardReading]:
    """Join two whole cards that are one card read twice from its four indices.

    On a deck that prints all four corners, the pairing can read a whole card's left
    indices (top and bottom) as one card and its right ones as another: two cards in full
    view a card width apart, of one rank and direction, each with a top and a bottom
    index. Two cards in full view cannot lie that close, so they are one card, placed at
    the middle of its four indices (a four-index card's centre).
    """
    centres = corners.centers.astype(float)
    out = list(cards)
    while True:
        whole = [k for k, c in enumerate(out) if c.fully_visible and len(c.corner_ids) == 2]
        best = None
        for a_pos, a in enumerate(whole):
            for b in whole[a_pos + 1:]:
                ca, cb = out[a], out[b]
                # a half seen by one side's two indices may have been placed on the wrong
                # side of them (a row's cards lie either way), and then read upside down
                if ca.rank != cb.rank or _axis_diff(ca.angle, cb.angle) > geo.angle_tolerance:
                    continue
                d = min(math.dist(pa, pb) for pa in _placements(ca, corners, centres)
                        for pb in _placements(cb, corners, centres)) / card_h
                if d < FOUR_INDEX_HALVES and (best is None or d < best[0]) \
                        and _four_corners(centres[ca.corner_ids + cb.corner_ids],
                                          corners.angle[ca.corner_ids + cb.corner_ids],
                                          ca.angle, card_h, geo) \
                        and not _halves_apart(ca, cb, centres, corners.angle, card_h, geo):
                    best = (d, a, b)
        if best is None:
            return out
        _, a, b = best
        ca, cb = out[a], out[b]
        ids = sorted(ca.corner_ids + cb.corner_ids)
        centre = centres[ids].mean(axis=0)
        b_angle = cb.angle + (180.0 if _angle_diff(ca.angle, cb.angle) > 90 else 0.0)
        sx = math.cos(math.radians(ca.angle)) + math.cos(math.radians(b_angle))
        sy = math.sin(math.radians(ca.angle)) + math.sin(math.radians(b_angle))
        joined = CardReading(
            rank=ca.rank, corner_ids=ids, center=(float(centre[0]), float(centre[1])),
            angle=math.degrees(math.atan2(sy, sx)) % 360.0,
            confidence=1.0 - (1.0 - ca.confidence) * (1.0 - cb.confidence),
            fully_visible=True, notes=ca.notes + [n for n in cb.notes if n not in ca.notes],
            corner_spots={**(ca.corner_spots or {}), **(cb.corner_spots or {})},
            rank_confidence=max(ca.rank_confidence, cb.rank_confidence))
        out = [c for k, c in enumerate(out) if k not in (a, b)] + [joined]


def _four_corners(points: np.ndarray, angles: np.ndarray, card_angle: float, card_h: float,
                  geo: CardGeometry) -> bool:
    """Whether four indices sit at the four corners of one card turned to `card_angle`:
    two pointing its way side by side at its top, two pointing back at its bottom, the
    pairs a card width (less its margins) apart across and lined up with each other."""
    up, right = _unit_vectors(np.array([card_angle]))
    rel = points - points.mean(axis=0)
    x, y = rel @ right[0], rel @ up[0]
    top = _angle_diff(angles, card_angle) < 90
    if top.sum() != 2:
        return False
    width = geo.aspect * (1 - 2 * geo.corner_x) * card_h
    tol = 0.1 * card_h
    xt, xb = np.sort(x[top]), np.sort(x[~top])
    return bool(abs(np.ptp(y[top])) < tol and abs(np.ptp(y[~top])) < tol
                and abs(np.diff(xt)[0] - width) < 2 * tol and abs(np.diff(xb)[0] - width) < 2 * tol
                and np.abs(xt - xb).max() < tol and y[top].mean() > y[~top].mean())


# a card whose centre lies within this of a parallel card's (across the line, card
# heights) lies in a row with it
ROW_LINE = 0.06


def _choose_index_sides(cards: list[CardReading], card_h: float,
                        print_h: np.ndarray) -> None:
    """Put a one-index card where its column says: its index may be a top-right one.

    Some decks print the index only in the top-right corner. Taken for a top-left index
    it puts the card most of a card width off its column, so a card whose other
    placement lines up with the neighbouring cards of its column moves there. A deck
    prints its index in one place on every card, so the cards of one print size (a
    deck's index, `print_h` per corner) are placed together where their columns agree
    (`_print_sides`): two top-right cards next to each other in a column of another
    deck line up with each other when both are misplaced. Where the photo's indices fall
    into two print sizes (`print_sizes`), each is a deck's, whatever its ranks' heights:
    kde-oxygen-white prints a 7 two thirds the height of its queen, and the squared-up
    seven of test 1809, alone, stayed where its index taken for a top-left one put it, on
    the queens' column beside it, when its deck's queens moved (detector corners, deals:
    test 225 -> 226, val 213, t4 600 (+5099, -7699), meld exact up on all three; perfect
    corners test 259 -> 260, t4 727 -> 728; from a seat the same; docs/LAYOUT.md,
    session 54).
    """
    single = [i for i, c in enumerate(cards) if c.other_center is not None]
    if len(cards) < 2 or not single:
        return
    centres = np.array([c.center for c in cards])
    angles = np.array([c.angle for c in cards])
    up, right = _unit_vectors(angles[single])
    parallel = _angle_diff(angles[single][:, None], angles[None, :]) < 15
    parallel[np.arange(len(single)), single] = False
    # the print size of each card's index (a deck's), and which cards share it: the photo's
    # two print sizes where its indices fall into two (`print_sizes`), else near heights
    deck = print_sizes(print_h)
    if deck is not None:
        card_deck = np.array([deck[c.corner_ids[0]] for c in cards])
        one_print = card_deck[single][:, None] == card_deck[None, :]
    else:
        heights = print_h.tolist()
        size = np.array([sum(heights[m] for m in c.corner_ids) / len(c.corner_ids)
                         for c in cards])
        one_print = np.abs(np.log(size[single][:, None] / size[None, :])) < math.log(PRINT_MATE)
    is_single = np.zeros(len(cards), bool)
    is_single[single] = True
    ranks = np.array([c.rank for c in cards])
    wild = np.array([c.is_wild for c in cards])
    column_mates = (ranks[single][:, None] == ranks[None, :]) | wild[single][:, None] | wild[None, :]
    offsets, guided = [], []
    in_row = np.zeros(len(single), bool)
    for k, spots in enumerate((centres[single],
                               np.array([cards[i].other_center for i in single]))):
        rel = centres[None, :, :] - spots[:, None, :]
        along = np.abs(np.einsum("ijd,id->ij", rel, up))
        lateral = np.abs(np.einsum("ijd,id->ij", rel, right))
        # neighbours up or down the column, not beside it in a row
        close = parallel & (along > 0.12 * card_h) & (along < 1.2 * card_h)
        offsets.append(np.where(close, lateral, np.inf).min(axis=1))
        # the same, guided only by cards that do not share the card's doubt (whole cards
        # and one-index cards of another print) and that may lie in its column (its rank,
        # or a wild on either side): a misplaced card lands in the next column, of
        # another rank
        guides = close & ~(one_print & is_single[None, :]) & column_mates
        guided.append(np.where(guides, lateral, np.inf).min(axis=1))
        if k == 0:
            # a card lying in a row where it is (a parallel card beside it on its line,
            # less than half a card width away) stays: its other placement only reaches
            # a neighbouring column's card (a row spread either way fits both)
            in_row = (parallel & (along < ROW_LINE * card_h) & (lateral > 0.1 * card_h)
                      & (lateral < 0.35 * card_h)).any(axis=1)
    move = (offsets[1] < 0.12 * card_h) & (offsets[1] + 0.15 * card_h < offsets[0]) & ~in_row
    whole = np.array([len(c.corner_ids) >= 2 and c.fully_visible for c in cards])
    side = _print_sides(guided, one_print[:, single], (one_print & whole[None, :]).sum(axis=1),
                        card_h)
    move = np.where(side != 0, side > 0, move)
    for k in np.flatnonzero(move):
        card = cards[single[k]]
        card.center, card.other_center = card.other_center, card.center


# two indices whose heights are within this factor are one print (one deck's), for
# placing one-index cards by their deck where the photo shows no two print sizes
# (kde-oxygen's top-right index is half the height of most top-left ones, tango's 1.35
# times it)
PRINT_MATE = 1.25


def _print_sides(guided: list[np.ndarray], mates: np.ndarray, whole_mates: np.ndarray,
                 card_h: float) -> np.ndarray:
    """For each one-index card, its print's placement: +1 other side, -1 as read, 0 unsure.

    Each card votes where the cards of other prints (and whole cards) in its column
    say it lies (`guided`: lateral offset to the nearest of them, as read and in the
    other placement); a whole card of the print (two indices, the top-left one among
    them) votes for the placement as read. A print whose votes agree three to one,
    two or more of them, is placed so.
    """
    as_read, other = guided
    vote = np.where((other < 0.12 * card_h) & (other + 0.15 * card_h < as_read), 1,
                    np.where((as_read < 0.12 * card_h) & (as_read + 0.15 * card_h < other),
                             -1, 0))
    for_other = (mates & (vote > 0)[None, :]).sum(axis=1)
    for_read = (mates & (vote < 0)[None, :]).sum(axis=1) + whole_mates
    return np.where((for_other >= 2) & (for_other >= 3 * for_read), 1,
                    np.where((for_read >= 2) & (for_read >= 3 * for_other), -1, 0))


# wild cards a meld may hold and naturals it needs: the Classic rules' (the scoring
# engine's own figures)
MAX_WILDS = Ruleset().max_wilds
MIN_NATURALS = Ruleset().min_naturals
# a second rank of a stack read with less mean rank confidence than this is a misread
MISREAD_GROUP = 0.7
# ... unless its cards lie at another angle than the leading rank's (by more than this, in
# degrees, and not by a half turn, which is how a bare 6 and 9 are misread): a meld of its own
MISREAD_TURN = 15.0
# ... or where every one of its cards lies more than this many card widths across from the
# leading rank's nearest card (sideways from a column, along a row): a column of its own
# beside it, in one stack by a card lying between them. In test 2739 three aces read 0.57-0.69
# beside a column of tens became tens, and the tens' meld took none of them; the aces' only
# sure card became a squared-up canasta. Test meld exact 88.25 -> 88.30%, deals and the other
# sets the same, perfect corners the same (0.8-1.2 alike; docs/LAYOUT.md, session 53).
MISREAD_BESIDE = 1.0


def _split_touching_melds(cards: list[CardReading], stacks: list[list[int]],
                          card_w: float) -> list[list[int]]:
    """Split a stack holding two or more ranks with several cards each: touching melds.

    Melds laid close together can overlap a little; a discard pile shows mostly single
    cards of many ranks. Each rank with two or more naturals becomes its own stack, and
    wild cards and single odd cards go with the nearest of them. A rank with no more
    cards than the stack's leading one, read unsurely (its cards' mean rank confidence
    under 0.7), is a misread of the leading rank instead (a bare 6 and 9 are one glyph
    turned): the cards of touching melds are read surely. Not where it lies at another
    angle (`MISREAD_TURN`) or beside the leading rank's line (`MISREAD_BESIDE` of the
    cards' width `card_w`): a misread lies on its column's line.
    """
    out = []
    for stack in stacks:
        by_rank: dict[str, list[int]] = defaultdict(list)
        for i in stack:
            if not cards[i].is_wild:
                by_rank[cards[i].rank].append(i)
        groups = sorted((ids for ids in by_rank.values() if len(ids) >= 2),
                        key=lambda ids: (-len(ids), -sum(cards[i].rank_confidence for i in ids)))
        if len(groups) >= 2 and cards[groups[0][0]].rank not in ("3R", "3B"):
            lead = cards[groups[0][0]].rank
            lead_angle = _circular_mean([cards[i].angle for i in groups[0]])
            for ids in groups[1:]:
                if cards[ids[0]].rank in ("3R", "3B") or \
                        np.mean([cards[i].rank_confidence for i in ids]) >= MISREAD_GROUP:
                    continue  # a three is never a misread natural: it lies beside a meld
                turn = float(_angle_diff(_circular_mean([cards[i].angle for i in ids]), lead_angle))
                if MISREAD_TURN < turn < 180.0 - MISREAD_TURN:
                    continue  # laid at another angle: a meld of its own, not a misread
                if min(_off_line(cards, groups[0], cards[i].center)
                       for i in ids) > MISREAD_BESIDE * card_w:
                    continue  # a column of its own beside the leading rank's line
                for i in ids:
                    cards[i].notes.append(f"read as {cards[i].rank} in a column of {lead}: "
                                          f"counted as {lead}")
                    cards[i].rank = lead
                    cards[i].confidence *= 0.5
                groups[0] = groups[0] + ids
            groups = [g for g in groups if cards[g[0]].rank != lead or g is groups[0]]
        if len(groups) < 2:
            out.append(stack)
            continue
        out.extend(sorted(p) for p in _nearest_parts(cards, stack, groups))
    return out


# cards of no common rank turned this many degrees apart lie in no one line: apart (30-60
# alike on the three sets; docs/LAYOUT.md, session 49)
APART_TURN = 45.0
# a whole card this many card widths across from the nearest card of a stack's leading rank
# lies beside its line, not on it (deals right, perfect corners: t4 712 -> 714 of 804, t5,
# test and val unchanged; the detector's corners: t4 518 -> 521, val 199 -> 200, test 185 ->
# 184; docs/LAYOUT.md, session 31)
BESIDE_A_LINE = 0.6


def _whole_cards_apart(cards: list[CardReading], stacks: list[list[int]],
                       card_w: float) -> list[list[int]]:
    """Whole natural cards of another rank lying beside a stack's line: stacks of their own.

    A squared-up canasta's top card (or a stray) laid against a column touches it, and
    the two made one stack: a pile-like heap, its canasta lost. In a meld only the front
    card shows whole; a whole card of another rank more than `BESIDE_A_LINE` card widths
    sideways (across the cards' own direction) from every card of the stack's leading rank
    lies beside a column, or past the end of a row, not in it. So does the only card of
    its rank seen by one corner (a deck printing one index shows a whole card so) where no
    other card off the line lies by it (a wild or the like of its own meld, covered). A
    stack with no leading rank (no rank twice) splits into its whole cards and its cards
    seen by one corner when two or more of different ranks lie side by side, one of them
    whole (two squared-up canastas touching), or two lie turned more than `APART_TURN`
    degrees from each other (a squared-up canasta against the discard pile's top card).
    The one-corner cards: perfect corners t4 deals 718 -> 722, from the side 716 -> 720;
    the detector's t4 587, test meld exact 87.77 -> 87.82% (docs/LAYOUT.md, session 49).
    """
    out = []
    for stack in stacks:
        naturals = [i for i in stack if not cards[i].is_wild and cards[i].rank not in ("3R", "3B")]
        counts = Counter(cards[i].rank for i in naturals)
        whole = [i for i in naturals if cards[i].fully_visible and len(cards[i].corner_ids) >= 2]
        # a one-index deck shows a whole card by one corner: the only card of its rank here
        single = [i for i in naturals
                  if len(cards[i].corner_ids) == 1 and counts[cards[i].rank] == 1]
        if len(stack) < 2 or not (whole or single):
            out.append(stack)
            continue
        lead, n = counts.most_common(1)[0]
        if n >= 2:
            line = [i for i in naturals if cards[i].rank == lead]
            apart = [i for i in whole + single if cards[i].rank != lead
                     and _off_line(cards, line, cards[i].center) > BESIDE_A_LINE * card_w
                     and (i in whole or _alone_beside(cards, stack, line, i, card_w))]
        else:
            shown = whole + single
            askew = any(_axis_diff(cards[a].angle, cards[b].angle) > APART_TURN
                        for a, b in itertools.combinations(shown, 2))
            apart = shown if (whole or askew) and len({cards[i].rank for i in shown}) >= 2 else []
        if not apart:
            out.append(stack)
            continue
        rest = [i for i in stack if i not in apart]
        if rest:
            out.append(rest)
        out.extend([i] for i in apart)
    return out


def _alone_beside(cards: list[CardReading], stack: list[int], line: list[int], i: int,
                  card_w: float) -> bool:
    """Whether card `i` lies apart from every card of `stack` off its `line` too (no wild or
    other card of its own meld beside it)."""
    others = [j for j in stack if j != i and j not in line]
    return not others or _off_line(cards, others, cards[i].center) > BESIDE_A_LINE * card_w


def _off_line(cards: list[CardReading], line: list[int], point) -> float:
    """How far `point` lies from the nearest card of `line`, across the cards' own direction
    (sideways from a column, along a row)."""
    _, right = _unit_vectors(np.array([_circular_mean([cards[i].angle for i in line])]))
    centres = np.array([cards[i].center for i in line])
    return float(np.abs((centres - np.asarray(point)) @ right[0]).min())


def _red_threes_apart(cards: list[CardReading], stacks: list[list[int]]) -> list[list[int]]:
    """Each red three touching other cards is a stack of its own.

    A red three is laid down apart the moment it is drawn: it belongs to no meld or
    pile, and one lying against the discard pile would otherwise be left out with it.
    """
    out = []
    for stack in stacks:
        threes = [i for i in stack if cards[i].rank == "3R"]
        if not threes or len(threes) == len(stack):
            out.append(stack)
            continue
        out.append([i for i in stack if cards[i].rank != "3R"])
        out.extend([i] for i in threes)
    return out


def _nearest_parts(cards: list[CardReading], stack: list[int],
                   groups: list[list[int]]) -> list[list[int]]:
    """The stack's cards shared out among `groups`, each card with its nearest part.

    Part by part, as a chain: the card lying nearest any card of a part joins it first,
    so the wilds at the end of a column follow the column's own last cards (a whole
    wild below two covered ones lies nearer the next column's naturals than its own).
    """
    parts = [list(ids) for ids in groups]
    rest = [i for i in stack if not any(i in ids for ids in groups)]
    while rest:
        centres = np.array([cards[i].center for i in rest])
        best = None
        for k, part in enumerate(parts):
            pts = np.array([cards[j].center for j in part])
            dist = np.linalg.norm(centres[:, None] - pts[None], axis=-1).min(axis=1)
            r = int(np.argmin(dist))
            if best is None or dist[r] < best[0]:
                best = (float(dist[r]), r, k)
        _, r, k = best
        parts[k].append(rest.pop(r))
    return parts


def _orient_stacks(cards: list[CardReading], stacks: list[list[int]]) -> list[bool]:
    """Turn each card to its stack's direction; say which stacks show a direction at all.

    A card whose two opposite indices are both visible reads the same turned by 180
    degrees, so only covered cards (one visible end) show which way a stack faces. The
    stack's direction is their majority; whole cards, and cards seen only by their
    bottom index, are turned to it. A stack of whole cards only (a lone squared-up
    canasta, a red three) has an axis but no direction: position decides its team. So
    does a stack whose covered cards disagree (three to one or closer): a row spread to
    the left shows one deck's bottom-right indices and another deck's top-right ones,
    pointing opposite ways.
    """
    known = []
    for stack in stacks:
        telling = [i for i in stack if not cards[i].fully_visible]
        if not telling:
            known.append(False)
            continue
        weights = np.array([cards[i].confidence for i in telling])
        angs = np.array([cards[i].angle for i in telling])
        axis = _circular_mean(2 * angs, weights) / 2.0
        votes = np.where(_angle_diff(angs, axis) < 90, weights, -weights).sum()
        direction = axis if votes >= 0 else axis + 180.0
        for i in stack:
            if _angle_diff(cards[i].angle, direction) > 90:
                cards[i].angle = (cards[i].angle + 180.0) % 360.0
                cards[i].from_bottom = not cards[i].fully_visible
        # one index of a lone card reads the same as the other end of a card turned
        # round: it shows an axis, not which way the card faces
        lone = len(stack) == 1 and len(cards[stack[0]].corner_ids) == 1
        known.append(abs(votes) >= 0.5 * weights.sum() and not lone)
    return known


# A bottom index joins a top index only where their boxes' longer sides are within this
# factor (`_join_split_cards`): a card's two indices are one glyph, both in full view. t4 6369:
# a tango red three's bottom index (32 px) joined the kde-oxygen-white red three's top-right
# index (21 px) lying where that card's top would be, and the team's four red threes read three
# (the pairing's `_same_print` allows 1.6, for an index partly shaded or covered). A joker's
# word is boxed unevenly (`JOKER_PRINT_RATIO`). Detector corners: t4 deals 606 -> 607, test
# meld exact 88.93 -> 88.97%, val the same; perfect corners the same deals (val meld exact
# 90.58 -> 90.62%); 1.3 alike, 1.5 loses the test meld (docs/LAYOUT.md, session 57).
JOIN_SIDES = 1.4


def _join_split_cards(cards: list[CardReading], stacks: list[list[int]], card_h: float,
                      alike: np.ndarray, row_between: Callable[[int, int], bool] | None = None,
                      sides: np.ndarray | None = None
                      ) -> tuple[list[CardReading], list[list[int]]]:
    """Join a card seen only by its bottom index to the top index of the same card.

    In a column only the last card shows its bottom index, beside its own top index;
    when noisy angles kept the two apart, both predict the same card centre. Both
    indices must be one size (`alike`, by corner; and, given `sides`, the boxes' longer
    sides, within `JOIN_SIDES` unless a joker's): in a row spread to the left, a
    covered card's bottom-right index and another deck's top-right index may predict
    one card too. Nor is a top index a column step above the bottom one (0.6 to 1.5 of
    the step between the column's covered cards) joined: that is the covered card, the
    last card's own top index unseen; nor, where `row_between(top corner, bottom corner)`
    says a row's cards lie between them (a four-index deck's row, `_edge_crossed`). Returns
    the cards without the joined ones and the stacks renumbered.
    """
    gone: set[int] = set()
    for stack in stacks:
        bottoms = [i for i in stack if cards[i].from_bottom and len(cards[i].corner_ids) == 1]
        step_up = _covered_step(cards, stack, card_h) if bottoms else None
        for b in bottoms:
            tops = [i for i in stack if i not in gone and i != b and not cards[i].from_bottom
                    and not cards[i].fully_visible and cards[i].rank == cards[b].rank]
            if not tops:
                continue
            dist = [np.hypot(*np.subtract(cards[i].center, cards[b].center)) for i in tops]
            a = tops[int(np.argmin(dist))]
            if min(dist) > 0.3 * card_h:
                continue
            if step_up is not None and _a_step_up(cards[a].center, cards[b].center, *step_up):
                continue  # the covered card a step up, not the bottom's own top index
            top, bottom = cards[a], cards[b]
            if not alike[top.corner_ids[0], bottom.corner_ids[0]]:
                continue
            if sides is not None and top.rank != "JK" and abs(math.log(
                    sides[top.corner_ids[0]] / sides[bottom.corner_ids[0]])) > math.log(JOIN_SIDES):
                continue  # two decks' indices (a card's two are one glyph)
            if row_between is not None and row_between(top.corner_ids[0], bottom.corner_ids[0]):
                continue  # a top index and a bottom index some cards on in a row
            top.corner_ids = sorted(top.corner_ids + bottom.corner_ids)
            top.center = ((top.center[0] + bottom.center[0]) / 2,
                          (top.center[1] + bottom.center[1]) / 2)
            top.confidence = 1 - (1 - top.confidence) * (1 - bottom.confidence)
            top.fully_visible, top.other_center = True, None
            gone.add(b)
    if not gone:
        return cards, stacks
    renumber = {}
    kept = []
    for i, card in enumerate(cards):
        if i not in gone:
            renumber[i] = len(kept)
            kept.append(card)
    return kept, [[renumber[i] for i in stack if i in renumber] for stack in stacks]


# a whole card whose top index places it this share of a column step (or more, up to
# 1.5) above where its bottom index does is two cards (`_split_stretched_cards`; 0.5 and
# 0.75 read val no better)
STRETCHED = 0.6


def _a_step_up(top: tuple[float, float], bottom: tuple[float, float], step: float,
               up: np.ndarray) -> bool:
    """Whether a top index's card lies a column step above its bottom index's, straight up.

    0.6 to 1.5 steps along the column and less than half of that across it: a card
    bigger than measured (near the camera of a tilted photo) puts its bottom index
    further along the card's diagonal instead.
    """
    offset = np.subtract(top, bottom)
    apart = float(offset @ up)
    across = abs(float(offset @ np.array([-up[1], up[0]])))
    return STRETCHED * step < apart < 1.5 * step and across < apart / 2


def _covered_step(cards: list[CardReading], stack: list[int],
                  card_h: float) -> tuple[float, np.ndarray] | None:
    """The step between a column's covered cards and its up direction, if it shows one."""
    covered = [i for i in stack if not cards[i].fully_visible and not cards[i].from_bottom]
    if len(stack) < 3 or len(covered) < 2:
        return None
    up = _unit_vectors(np.array([_circular_mean(np.array([cards[i].angle
                                                          for i in stack]))]))[0][0]
    along = np.sort([-(np.asarray(cards[i].center) @ up) for i in covered])
    step = float(np.median(np.diff(along)))
    return (step, up) if 0.12 * card_h < step < 0.5 * card_h else None


def _split_stretched_cards(cards: list[CardReading], stacks: list[list[int]],
                           angles: np.ndarray, card_h: float) -> None:
    """Split a column's whole card whose top index lies a step above where its bottom says.

    When the detector misses the top index of a column's last card, the bottom index
    pairs with the covered card's top index a step up: the two corners then place the
    card a column step apart along it, not together. Such a card is two: the covered
    one (its top index) and the last one seen by its bottom index.
    """
    for stack in stacks:
        step_up = _covered_step(cards, stack, card_h)
        if step_up is None:
            continue
        for i in list(stack):
            card = cards[i]
            if not card.fully_visible or len(card.corner_ids) != 2 or not card.corner_spots:
                continue
            top, bottom = sorted(card.corner_ids,
                                 key=lambda m: _angle_diff(angles[m], card.angle))
            if not _a_step_up(card.corner_spots[top], card.corner_spots[bottom], *step_up):
                continue
            spots = card.corner_spots
            card.corner_ids, card.center = [top], spots[top]
            card.fully_visible, card.corner_spots = False, None
            cards.append(replace(card, corner_ids=[bottom], center=spots[bottom],
                                 from_bottom=True, notes=list(card.notes)))
            stack.append(len(cards) - 1)


# A card whose two opposite indices read directions within `WHOLE_AGREE` degrees of a half
# turn apart keeps its own direction where its stack's trend would turn it more than
# `WHOLE_OWN_SHIFT` degrees (`_steadier_angles`). t4 10009: a row of seven tango nines, five
# read 30-40 degrees off, its front card whole and read 178 and 359 at its two ends; turned
# with the row to 150, its two indices no longer made one card, and the row read eight nines.
# Detector corners: val 209 -> 210, t4 618 -> 620 (3509, 10009), test the same; perfect corners
# val 242 -> 244; from a seat the same (153). Shift 13-25: val 209; 9.5: t4 619 (docs/LAYOUT.md,
# session 59).
WHOLE_AGREE = 5.0
WHOLE_OWN_SHIFT = 12.0


def _indices_agree(card: CardReading, angles: np.ndarray) -> bool:
    """Whether `card` is seen by two indices whose directions lie a half turn apart within
    `WHOLE_AGREE` degrees (a whole card read alike at both ends)."""
    if len(card.corner_ids) != 2:
        return False
    first, second = (float(angles[m]) for m in card.corner_ids)
    return abs(float(_angle_diff(first, second)) - 180.0) < WHOLE_AGREE


# A card lying alone that the table's axis would turn more than this many degrees keeps its
# own reading (`_steadier_angles`): the cards of a pile lie every which way, and turned
# towards the table a pile's card swung about its index onto the meld beside it (perfect
# corners, t4 5719: a five of the discard pile read at 120 degrees, turned 29 towards the
# table's 175, joined the fan of fives above it, and the pile's seven with it). Perfect
# corners t4 731 -> 732, test and val the same; detector corners and photos from a seat the
# same deals and meld exact; 12 alike, 30 not t4 5719 (docs/LAYOUT.md, session 60).
LONE_PULL_MAX = 20.0


def _steadier_angles(cards: list[CardReading], stacks: list[list[int]], angles: np.ndarray,
                     card_h: float) -> np.ndarray:
    """Corner angles replaced by their stack's trend, averaging out one index's error.

    Cards of a column or row lie parallel and a fan turns steadily with the position
    across it, so a straight-line fit of card angle against that position (a median for
    a column) gives each card's angle with the reading noise of single indices averaged.
    Columns, rows and lone cards of a table are also laid nearly parallel to the table's
    axis, so a stack with few cards is drawn towards the axis of all of them (more so
    the noisier the readings; a lone card no further than `LONE_PULL_MAX`). Cards read
    upside down relative to their stack keep their own reading, and so do the cards of a
    pile (one lies across the others) and a whole card read alike at both ends that the
    trend would turn far (`WHOLE_OWN_SHIFT`).
    """
    out = angles.copy()
    fits = []
    for stack in stacks:
        if _has_sideways_card(cards, stack):
            continue  # a discard pile: its cards lie every which way, each keeps its own
        centres = np.array([cards[i].center for i in stack])
        card_angles = np.array([cards[i].angle for i in stack])
        mean = _circular_mean(card_angles)
        rel = (card_angles - mean + 180.0) % 360.0 - 180.0
        # a card seen only by its bottom index reads upside down: fold it back for the fit
        rel = (rel + 90.0) % 180.0 - 90.0
        _, right = _unit_vectors(np.array([mean]))
        across = centres @ right[0]
        # a fan is read off the cards near the stack's own angle: an index read turned
        # puts its card well aside (`_has_sideways_card`), which alone is no fan
        middle = statistics.median(rel.tolist())
        near = np.abs(rel - middle) <= 35.0
        fan = len(stack) >= 3 and near.sum() >= 3 and np.ptp(across[near]) > 0.25 * card_h
        if fan:
            slope, offset = np.polyfit(across[near], rel[near], 1)
            trend = offset + slope * across
        else:
            trend = np.full(len(stack), middle)
        fits.append((stack, mean, rel, trend, fan))
    # the table's axis (modulo 180 degrees) and how noisy one card's reading is
    parallel = [(mean + trend[0], len(stack), rel) for stack, mean, rel, trend, fan in fits
                if not fan]
    if parallel:
        axis = _circular_mean(np.array([2 * a for a, _, _ in parallel]),
                              np.array([n for _, n, _ in parallel], dtype=float)) / 2
        spreads = [np.median(np.abs(r - np.median(r))) for _, n, r in parallel if n >= 3]
        noise = max(1.48 * float(np.median(spreads)), 1.0) if spreads else 3.0
    for stack, mean, rel, trend, fan in fits:
        if not fan and parallel:
            # own estimate, pulled towards the axis: stacks lie within a few degrees of it
            own = mean + trend[0]
            towards = _axis_turn(axis, own)
            weight_own, weight_axis = len(stack) / noise ** 2, 1 / 3.0 ** 2
            pull = towards * weight_axis / (weight_own + weight_axis)
            if len(stack) == 1 and abs(pull) > LONE_PULL_MAX:
                pull = 0.0  # a card lying alone that far off the table's axis: a pile's
            trend = trend + pull
        elif len(stack) < 2:
            continue
        # in a column of one rank, a card seen by one index that reads well off the
        # others is an index read turned (`_has_sideways_card`): it takes the trend too
        for row, i in enumerate(stack):
            shift = trend[row] - rel[row]
            if abs(shift) > 35.0 and not (len(cards[i].corner_ids) == 1 and len(stack) >= 3
                                          and _one_rank(cards, stack)):
                continue  # turned well off its stack (a wild laid sideways): its own reading
            if abs(shift) > WHOLE_OWN_SHIFT and _indices_agree(cards[i], angles):
                continue  # a whole card read the same at both ends: its own direction
            for m in cards[i].corner_ids:
                out[m] = (angles[m] + shift) % 360.0
    return out


def _calibrate(corners: Corners, angles: np.ndarray, index_h: np.ndarray,
               geo: CardGeometry) -> tuple[np.ndarray, CardGeometry, str]:
    """Card height in pixels at each corner, the deck's aspect, and how they were measured.

    Card size is measured in pixels, not in index heights: both decks of a table are the
    same size while their indices differ (designs print them from 9% to 30% of the card),
    and only perspective changes it, slowly, across the photo. In order of preference:
    - whole cards: the top-left and bottom-right indices of a card are a card diagonal
      (less the margins) apart; each corner's mutually nearest opposite-facing corner of
      its rank, in the diagonal's direction, gives one measurement (a plane fit over
      the photo when there are several);
    - columns: covered cards are shifted by about 0.28 card heights;
    - the prior: `card_height` index heights.
    """
    centres = corners.centers.astype(float)
    anchors = _index_anchors(corners, angles)[0]
    n = len(corners)
    same = corners.class_ids[:, None] == corners.class_ids[None, :]
    opposite = np.abs(_angle_diff(angles[:, None], angles[None, :]) - 180) < geo.angle_tolerance
    ii, jj = np.nonzero(same & opposite)
    if len(ii):
        a_i, a_j = np.radians(angles[ii]), np.radians(angles[jj])
        mean = np.degrees(np.arctan2(np.sin(a_i) - np.sin(a_j), np.cos(a_i) - np.cos(a_j)))
        up, right = _unit_vectors(mean)
        v = anchors[jj] - anchors[ii]
        across, down = (v * right).sum(axis=1), -(v * up).sum(axis=1)
        length = np.hypot(across, down)
        h = (index_h[ii] + index_h[jj]) / 2
        slant = np.degrees(np.arctan2(across, down))  # about 37 degrees for a card diagonal
        ok = (across > 0) & (down > 0) & (slant > 24) & (slant < 52)
        # Playing cards are 0.56-0.75 as wide as tall (perspective adds a little). A
        # covered card's bottom index peeking out beside the next card, taken with that
        # card's top index, makes a card one column step too short, so too wide: refused
        # here, it pairs with its own top index instead.
        ok &= across / (1 - 2 * geo.corner_x) < 0.85 * down / (1 - 2 * geo.corner_y)
        ok &= (length > 2.0 * h) & (length < 16.0 * h)
        ii, jj, across, down, length = ii[ok], jj[ok], across[ok], down[ok], length[ok]
        best = np.full(n, -1)
        best_len = np.full(n, np.inf)
        for k in np.argsort(length):
            i, j = ii[k], jj[k]
            if length[k] < best_len[i]:
                best[i], best_len[i] = j, length[k]
        mutual = np.array([best[i] == j and best[j] == i for i, j in zip(ii, jj, strict=True)],
                          dtype=bool)
        if mutual.any():
            heights = down[mutual] / (1 - 2 * geo.corner_y)
            aspects = across[mutual] / (1 - 2 * geo.corner_x) / heights
            typical = np.median(heights)
            good = np.abs(heights / typical - 1) < 0.25
            # (two whole cards of sizes a third apart leave none near their median: the
            # column step or the prior decides, not an empty measurement)
            if good.any():
                heights, aspects = heights[good], aspects[good]
                where = (anchors[ii[mutual][good]] + anchors[jj[mutual][good]]) / 2
                aspect = float(np.median(aspects)) if len(aspects) >= 3 else geo.aspect
                return (_size_field(centres, where, heights), replace(geo, aspect=aspect),
                        "whole cards")
    step = _column_step(centres, angles, index_h)
    if step is not None:
        return np.full(n, step / 0.28), geo, "column step"
    return index_h * geo.card_height, geo, "prior"


def _size_field(centres: np.ndarray, where: np.ndarray, heights: np.ndarray) -> np.ndarray:
    """Card height at each corner, from the measurements, following perspective.

    Seen by a pinhole camera, a flat table's inverse depth is a plane over the photo,
    and a card's size in pixels is proportional to it: so a plane is fitted to the
    inverse heights (a plane through the heights themselves bends the wrong way at the
    near edge of a tilted photo).
    """
    if len(heights) < 6:
        return np.full(len(centres), float(np.median(heights)))
    design = np.c_[np.ones(len(where)), where]
    inverse = 1.0 / heights
    coef, *_ = np.linalg.lstsq(design, inverse, rcond=None)
    residual = np.abs(heights * (design @ coef) - 1)
    keep = residual < 0.1
    if keep.sum() >= 6:
        coef, *_ = np.linalg.lstsq(design[keep], inverse[keep], rcond=None)
    field = 1.0 / np.maximum(np.c_[np.ones(len(centres)), centres] @ coef, 1e-6)
    # a plane fitted to a corner of the photo must not run wild elsewhere
    return np.clip(field, 0.7 * heights.min(), 1.3 * heights.max())


def _column_step(centres: np.ndarray, angles: np.ndarray, index_h: np.ndarray) -> float | None:
    """Median distance from an index to the next one down its column, if columns show."""
    steps = []
    for i in range(len(centres)):
        up, right = _unit_vectors(np.array([angles[i]]))
        v = centres - centres[i]
        down = -(v @ up[0])
        lateral = np.abs(v @ right[0])
        ok = (down > 0.5 * index_h[i]) & (down < 4 * index_h[i]) & (lateral < 0.4 * index_h[i])
        ok &= _angle_diff(angles, angles[i]) < 15
        if ok.any():
            steps.append(float(down[ok].min()))
    return float(np.median(steps)) if len(steps) >= 3 else None


# ---------------------------------------------------------------------------------------
# cards -> stacks


def _stacks(cards: list[CardReading], card_h: float, aspect: float) -> list[list[int]]:
    """Connected groups of cards whose (slightly shrunk) outlines overlap."""
    n = len(cards)
    if n == 0:
        return []
    centres = np.array([c.center for c in cards])
    up, right = _unit_vectors(np.array([c.angle for c in cards]))
    hh = card_h * 0.5 * 0.9
    hw = card_h * aspect * 0.5 * 0.85
    d = centres[:, None] - centres[None]
    close = np.linalg.norm(d, axis=-1) < 2 * np.hypot(hh, hw)
    ii, jj = np.nonzero(np.triu(close, 1))
    links: list[tuple[int, int]] = []
    if len(ii):
        delta = centres[jj] - centres[ii]
        axes = np.stack([up[ii], right[ii], up[jj], right[jj]], axis=1)  # (p, 4, 2)
        proj = np.abs(np.einsum("pad,pd->pa", axes, delta))
        rad_i = hh * np.abs(np.einsum("pad,pd->pa", axes, up[ii])) + \
            hw * np.abs(np.einsum("pad,pd->pa", axes, right[ii]))
        rad_j = hh * np.abs(np.einsum("pad,pd->pa", axes, up[jj])) + \
            hw * np.abs(np.einsum("pad,pd->pa", axes, right[jj]))
        overlap = (proj < rad_i + rad_j).all(axis=1)
        links = list(zip(ii[overlap].tolist(), jj[overlap].tolist(), strict=True))
    return _linked_groups(range(n), links)


def _linked_groups(items, links) -> list[list[int]]:
    """The connected groups of `items` (ints) joined by `links` (pairs of them), each in
    ascending order, ordered by their first."""
    parent = {i: i for i in items}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for i, j in links:
        parent[find(i)] = find(j)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in parent:
        groups[find(i)].append(i)
    return sorted((sorted(g) for g in groups.values()), key=min)


# ---------------------------------------------------------------------------------------
# stacks -> teams


# How far in front of its team's nearest row (card heights) a lone card along the table may
# lie and still be that team's (a squared-up canasta's top card), when it lies more than
# that far from the middle between the teams (else 0.35, as for any stack). Perfect
# corners: t4 deals 709 -> 712 of 804, t5 788 -> 792 of 900; detector corners t4 516 ->
# 518; test and val unchanged, none lost (docs/LAYOUT.md, session 31).
LONE_CARD_REACH = 0.75
# Red threes that face one team from more than this many card heights inside the other
# team's half of the table are the other team's (detector corners, deals: test 214 -> 215,
# val 208 -> 209, t4 and perfect corners unchanged; docs/LAYOUT.md, session 49).
RED_THREE_SIDE_REACH = 1.0
# A second lone card left out as a pile this many card heights or more from the middle is
# a squared-up canasta (`_assign_teams`): perfect corners val 238 -> 239, every other set and
# the detector's corners the same (0.36 alike; docs/LAYOUT.md, session 52).
ONE_PILE_REACH = 0.5
# A stack facing one team that lies among the other team's rows (not past that team's
# front row towards the middle by more than this, in card heights), where the teams'
# front rows do not cross, is the other team's: a short column laid or read upside down
# in a team's front row (t4 6569, a joker and an 8). Detector corners: t4 meld exact
# 86.38 -> 86.49%, deals the same on the three sets (0.25-1.0 alike); perfect corners t4
# +1 meld. A meld-like column facing the other team sets that team's edge, so the edges
# cross and this does not apply (session 49's objection to side over direction).
AMONG_ROWS = 0.5
# A lone card (not a red three) turned more than this many degrees off the table's axis
# is not laid along it: a discard pile's top card turned 35-55 degrees, seen by one index,
# had been taken for the squared-up canasta of a team with no melds. Deals: detector
# corners t4 585 -> 586, perfect corners t4 717 -> 718 (from the side 715 -> 716); test,
# val and photos from a seat unchanged (30-40 alike; 25 and 20 lose t4 deals; docs/LAYOUT.md,
# session 49).
LONE_CARD_ALIGN = 35.0
# A meld-like stack along the table with no direction of its own more than this many card
# heights from the middle is its side's, even between the rows the teams' sure stacks
# mark (a row of two decks whose covered indices point opposite ways had been left out as
# a pile: detector corners t4 meld exact 86.23 -> 86.24%, deals and every other set the
# same; docs/LAYOUT.md, session 49).
UNDIRECTED_MELD_REACH = 1.0


def _assign_teams(cards: list[CardReading], stacks: list[list[int]], oriented: list[bool],
                  image_size: tuple[int, int], card_h: float,
                  aspect: float = CardGeometry.aspect) -> tuple[list[int | None], list[float], float]:
    """Team per stack (0 faces the bottom edge, 1 across, None for neither) and a confidence.

    Orientation decides first: the table's axis is the dominant card direction modulo
    180 degrees; of its two directions, the one nearer upright is team 0's. Position
    comes second: meld-like stacks (three or more cards of one rank) mark where each
    team's cards end, and what lies in the band between the teams (draw and discard
    pile, strays) belongs to neither, whichever way it points. Returns per-stack team,
    per-stack confidence and team 0's up angle.
    """
    if not stacks:
        return [], [], 0.0
    stack_angle = []
    stack_weight = []
    for k, s in enumerate(stacks):
        angs = np.array([cards[i].angle for i in s])
        w = np.array([cards[i].confidence for i in s])
        # a stack of whole cards shows no direction: each card's reads either way round, so
        # the stack's is an axis (a joker read at 0 degrees beside a king at 182 lie along
        # one line, not across at 91; val 1968, 2448, 2528: whole melds left out as piles)
        turns = 1 if oriented[k] else 2
        stack_angle.append(_circular_mean(turns * angs, w) / turns)
        # agreement of the stack's cards: 1 for a column, lower for a messy pile
        a = np.radians(turns * angs)
        agree = float(np.hypot((w * np.cos(a)).sum(), (w * np.sin(a)).sum()) / max(w.sum(), 1e-6))
        stack_weight.append(len(s) * agree)
    stack_angle = np.array(stack_angle)
    stack_weight = np.array(stack_weight)
    # axis from doubled angles: both teams vote for the same axis
    axis = _circular_mean(2 * stack_angle, stack_weight ** 2) / 2.0
    cand = np.array([axis % 360, (axis + 180) % 360])
    up0 = float(cand[np.argmin(_angle_diff(cand, 0.0))])
    u0, _ = _unit_vectors(np.array([up0]))
    u0 = u0[0]
    # position along team 0's up direction: larger = further from team 0, towards team 1
    card_along = np.array([np.dot(c.center, u0) for c in cards])
    along = np.array([card_along[s].mean() for s in stacks])
    diff0 = _angle_diff(stack_angle, up0)
    facing = np.where(diff0 < 50, 0, np.where(diff0 > 130, 1, -1))
    aligned = facing >= 0
    # a lone card is a squared-up canasta's top (laid square with its team's melds) or
    # lies along the table only within LONE_CARD_ALIGN; further turned, it is a pile's
    lone = np.array([len(s) == 1 and cards[s[0]].rank != "3R" for s in stacks])
    aligned &= ~lone | (diff0 < LONE_CARD_ALIGN) | (diff0 > 180 - LONE_CARD_ALIGN)
    facing = np.where(np.array(oriented), facing, -1)  # whole cards only: no direction
    if abs(_angle_diff(up0, 0.0) - 90) < 20 and (facing >= 0).any():
        # photo taken from the table's side: neither team faces the bottom edge; call
        # team 0 the one lower in the photo so the answer is at least stable
        y0 = np.mean([cards[i].center[1] for k, s in enumerate(stacks) if facing[k] == 0
                      for i in s] or [0.0])
        y1 = np.mean([cards[i].center[1] for k, s in enumerate(stacks) if facing[k] == 1
                      for i in s] or [0.0])
        if (facing == 1).any() and (facing == 0).any() and y1 > y0:
            up0 = (up0 + 180) % 360
            u0 = -u0
            card_along, along = -card_along, -along
            facing = np.where(facing >= 0, 1 - facing, -1)
    meld_content = np.array([_is_meld_like(cards, s) for s in stacks])
    meld_like = meld_content & (facing >= 0)
    pile_like = np.array([_is_pile_like(cards, s) for s in stacks])
    # where each team's cards end towards the middle: its melds, else its other cards; with
    # no meld on the table, its red threes only (t4 3979, nobody melded: the discard pile, a
    # whole four with a 2 across it, no pile by its ranks, was taken for team 1's row, and
    # all four red threes for team 1's; perfect corners t4 728 -> 729, detector corners and
    # photos from a seat the same deals; docs/LAYOUT.md, session 60)
    red_three_stacks = np.array([all(cards[i].rank == "3R" for i in s) for s in stacks])
    edge: list[float | None] = []
    for team in (0, 1):
        pick = meld_like & (facing == team)
        if not pick.any():
            pick = (facing == team) & ~pile_like
            if not meld_like.any():
                pick &= red_three_stacks
        if not pick.any():
            edge.append(None)
            continue
        ends = [card_along[s].max() if team == 0 else card_along[s].min()
                for k, s in enumerate(stacks) if pick[k]]
        edge.append(max(ends) if team == 0 else min(ends))
    w, h = image_size
    if edge[0] is not None and edge[1] is not None and edge[1] <= edge[0]:
        # a stack read facing the wrong way among the other team's rows: the teams' rows
        # cross; their edges again from the stacks on each side of the table's widest gap
        edge = _uncrossed_edges(stacks, meld_like, facing, card_along, along) or edge
    mid = float(np.array([w / 2, h / 2]) @ u0)
    band = 0.0
    both = edge[0] is not None and edge[1] is not None and edge[1] > edge[0]
    if both:
        mid, band = (edge[0] + edge[1]) / 2, (edge[1] - edge[0]) / 2
    elif edge[0] is not None or edge[1] is not None:
        # one team's rows only (the other melded nothing or shows whole cards only): the
        # piles lie about 1.4 card heights past its last row, as at a real table
        known = 0 if edge[0] is not None else 1
        band = 1.4 * card_h
        mid = edge[known] + (band if known == 0 else -band)
    teams: list[int | None] = []
    confs: list[float] = []
    for k in range(len(stacks)):
        side = 0 if along[k] < mid else 1  # position: team 0 below the middle
        offset = abs(along[k] - mid) / card_h  # distance from the middle, in card heights
        beyond = any(e is not None and (along[k] - e) * (1 if t == 0 else -1) > 0.5 * card_h
                     for t, e in enumerate(edge))  # past a team's last row, towards the middle
        if both:
            # strictly between the two teams' nearest rows: piles, strays; a lone card along
            # the table's axis well off the middle may be a squared-up canasta's top card
            # laid a little in front of its team's row
            reach = LONE_CARD_REACH if (offset > LONE_CARD_REACH and aligned[k]
                                        and not pile_like[k] and len(stacks[k]) == 1) else 0.35
            between = edge[0] + reach * card_h < along[k] < edge[1] - reach * card_h
            central = not meld_like[k] and (between or (pile_like[k] and
                                                        offset < band / card_h - 0.5))
            # a meld's cards along the table whose covered indices point both ways (a row
            # of two decks, one printing its index at the other end), well inside one
            # team's half: that team's meld, not a pile between the rows
            central &= not (meld_content[k] and aligned[k] and not oriented[k]
                            and offset > UNDIRECTED_MELD_REACH)
        elif band > 0:
            central = not meld_like[k] and offset < 0.75
        else:
            # no team's rows mark the middle (their melds show no direction): a lone card
            # within half a card height of the photo's middle is the discard pile's top, not
            # a squared-up canasta (perfect corners t4 722 -> 723, from the side 720 -> 721;
            # the detector's t4 587 -> 588; 0.3-0.75 alike; docs/LAYOUT.md, session 49)
            central = (pile_like[k] and beyond) or (len(stacks[k]) == 1 and offset < 0.5)
        # a red three is laid down the moment it is drawn, never discarded: whatever
        # its place, it is some team's (its direction, else its side of the table)
        red_threes = bool(red_three_stacks[k])
        # one index of a lone card reads the same as the other end of a card turned round:
        # it shows an axis, not which way the card faces
        one_index = len(stacks[k]) == 1 and len(cards[stacks[k][0]].corner_ids) == 1
        if central and not red_threes:
            teams.append(None)
            confs.append(0.5)
        elif red_threes and one_index:
            teams.append(side)  # laid in front of its team: its side of the table decides
            confs.append(0.9 if offset > 0.5 else 0.5)
        elif red_threes and facing[k] >= 0 and facing[k] != side and \
                offset > RED_THREE_SIDE_REACH:
            # a 3 read the wrong way round is a 3 still, and an unseen design's 3 is where
            # the readers' direction fails most: red threes well inside one team's half
            # are that team's, whichever way they seem to face
            teams.append(side)
            confs.append(0.7)
        elif (both and facing[k] >= 0 and facing[k] != side
              and (along[k] - edge[side]) * (1 if side == 0 else -1) < AMONG_ROWS * card_h):
            # facing the other team from among this team's rows: laid, or read, upside down
            teams.append(side)
            confs.append(0.7)
        elif facing[k] >= 0:
            teams.append(int(facing[k]))
            confs.append(1.0 if facing[k] == side or offset < 0.5 else 0.7)
        elif aligned[k] and not oriented[k] and not pile_like[k]:
            teams.append(side)  # whole cards along the table's axis: their side decides
            confs.append(0.9 if offset > 0.5 else 0.5)
        elif (offset > 1.0 and not pile_like[k] and not beyond) or red_threes:
            teams.append(side)  # sideways but well inside one team's half
            confs.append(0.5)
        else:
            teams.append(None)
            confs.append(0.5)
    # The table has one discard pile. A lone card along the table's axis left out as a pile
    # more than ONE_PILE_REACH card heights from the middle, with something else left out
    # nearer the middle a card height or more away, is its side's squared-up canasta laid
    # a little in front of its team's rows (val 998: a squared-up seven 0.62 card heights from
    # the middle, beside its team's squared-up tens; the pile's top lay 0.05 from it).
    offsets = np.abs(along - mid) / card_h
    left_out = [k for k in range(len(stacks)) if teams[k] is None]
    places = {k: np.mean([cards[i].center for i in stacks[k]], axis=0) for k in left_out}
    for k in left_out:
        if (lone[k] and aligned[k] and not pile_like[k] and offsets[k] > ONE_PILE_REACH
                and any(offsets[j] < offsets[k] and np.linalg.norm(places[j] - places[k]) > card_h
                        for j in left_out)):
            teams[k] = 0 if along[k] < mid else 1
            confs[k] = 0.5
    # A team melds a rank in one stack. A lone natural lying more than half a card height
    # past its team's nearest row towards the middle, or a meld-like heap more than a card
    # height past all of the team's other meld-like stacks (two at least), that holds a
    # rank another of the team's meld-like stacks holds and lies off that stack's line
    # (not a part of it split off), is the discard pile or a stray, not that meld's. A
    # second row of melds lies as far out but never shares a rank with the first. Perfect
    # corners: t4 deals 714 -> 716; the detector's: t4 521 -> 522; every other set
    # unchanged (docs/LAYOUT.md, session 31).
    for k, stack in enumerate(stacks):
        t = teams[k]
        if t is None or edge[t] is None:
            continue
        sign = 1.0 if t == 0 else -1.0
        others = [j for j in range(len(stacks)) if j != k and teams[j] == t and meld_like[j]]
        ranks = _natural_ranks(cards, stack) - {"3R", "3B"}
        if len(stack) == 1:
            past = sign * (along[k] - edge[t]) > 0.5 * card_h
        else:
            past = meld_like[k] and len(others) >= 2 and \
                sign * along[k] - max(sign * along[j] for j in others) > card_h
        if not past or not ranks:
            continue
        centre = np.mean([cards[i].center for i in stack], axis=0)
        for j in others:
            line = [i for i in stacks[j] if cards[i].rank in ranks]
            if line and _off_line(cards, line, centre) > BESIDE_A_LINE * card_h * aspect:
                teams[k] = None
                break
    return teams, confs, up0


def _natural_ranks(cards: list[CardReading], stack: list[int]) -> set[str]:
    return {cards[i].rank for i in stack if not cards[i].is_wild}


def _rank_majority(cards: list[CardReading], stack: list[int]) -> tuple[int, int]:
    """Count of the stack's commonest natural rank, and of its other naturals."""
    counts = Counter(cards[i].rank for i in stack if not cards[i].is_wild)
    if not counts:
        return 0, 0
    top = counts.most_common(1)[0][1]
    return top, sum(counts.values()) - top


def _has_sideways_card(cards: list[CardReading], stack: list[int]) -> bool:
    """Whether a card lies across the others: a wild discarded sideways to freeze the pile.

    A meld's cards lie parallel (a fan turns some 10 degrees a card, its ends at most
    about 40 degrees from its middle); a card turned 60 or more off the stack's axis is
    not laid in a meld.
    """
    if len(stack) < 2:
        return False
    angles = np.array([cards[i].angle for i in stack])
    axis = _circular_mean(2 * angles) / 2.0
    off = _angle_diff(angles, axis)
    across = np.minimum(off, 180.0 - off) > 60.0
    if across.any() and _one_rank(cards, stack):
        # a card seen by one index in a stack of one rank: rather an index read turned
        # (the small indices of some decks read 45 degrees and more off a tenth of the
        # time) than a card laid across a meld
        # ... but a wild square across the naturals in a heap of a few cards is the
        # pile's freezing card, one index showing or not (`_frozen_by`)
        across &= (np.array([len(cards[i].corner_ids) >= 2 for i in stack])
                   | _frozen_by(cards, stack))
    return bool(across.any())


# A wild laid across a heap of at most this many cards, within this many degrees of square
# to its naturals, freezes a discard pile, even seen by one index. A misread index of a
# column's wild reads 60-75 degrees off (test 709, t4 4959); a false wild corner by a long
# column is no pile either (t4 8129, 7449). t4 deals 594 -> 596 (7149, 9559: a pile's two
# naturals and a wild across them read as a meld), perfect corners t4 725 -> 727, no deal
# lost on any set (75-80 degrees alike; no length limit loses 8129 and 7449;
# docs/LAYOUT.md, session 52).
FROZEN_PILE_MAX = 4
FROZEN_ACROSS = 80.0


def _frozen_by(cards: list[CardReading], stack: list[int]) -> np.ndarray:
    """Which cards of `stack` are wilds laid square across its naturals, in a heap of a few
    cards (`FROZEN_PILE_MAX`): a discard pile frozen by a wild turned across it."""
    wild = np.array([cards[i].is_wild for i in stack])
    if len(stack) > FROZEN_PILE_MAX or wild.all():
        return np.zeros(len(stack), bool)
    angles = np.array([cards[i].angle for i in stack])
    axis = _circular_mean(2 * angles[~wild]) / 2.0
    return wild & (np.abs(_axis_turn(angles, axis)) >= FROZEN_ACROSS)


def _one_rank(cards: list[CardReading], stack: list[int]) -> bool:
    """Whether a stack's naturals, two or more, are all of one rank (wilds aside)."""
    top, others = _rank_majority(cards, stack)
    return top >= 2 and others == 0


def _uncrossed_edges(stacks: list[list[int]], meld_like: np.ndarray, facing: np.ndarray,
                     card_along: np.ndarray, along: np.ndarray) -> list[float] | None:
    """Each team's edge towards the middle where a stack read facing one team lies among
    the other's rows (the edges cross), or None.

    The teams' melds lie on either side of the band between them, the table's widest gap
    along its axis: of the gaps between meld-like stacks (their mean place) with mostly
    team 0's stacks below and team 1's above, the widest splits the table; each team's
    edge is then its own-facing stacks' on its own side. A stack facing a team from the
    other side marks no edge (`_assign_teams` gives it the side it lies among). `along`:
    each stack's mean place along the table's axis, `card_along` each card's.
    Validation sets (the detector's corners): val deals 210 -> 211, t4 meld exact 86.62 ->
    86.68%; docs/LAYOUT.md, session 51.
    """
    pick = np.flatnonzero(meld_like).tolist()
    cuts = sorted(float(along[k]) for k in pick)
    best = None
    for a, b in itertools.pairwise(cuts):
        t = (a + b) / 2
        below = [facing[k] == 0 for k in pick if along[k] < t]
        above = [facing[k] == 1 for k in pick if along[k] > t]
        if 2 * sum(below) <= len(below) or 2 * sum(above) <= len(above):
            continue
        if best is None or b - a > best[0]:
            best = (b - a, t)
    if best is None:
        return None
    t = best[1]
    e0 = [card_along[stacks[k]].max() for k in pick if facing[k] == 0 and along[k] < t]
    e1 = [card_along[stacks[k]].min() for k in pick if facing[k] == 1 and along[k] > t]
    if max(e0) >= min(e1):
        return None
    return [float(max(e0)), float(min(e1))]


def _is_meld_like(cards: list[CardReading], stack: list[int]) -> bool:
    """Three or more parallel cards, their naturals (bar a misread or so) of one rank: a meld."""
    top, others = _rank_majority(cards, stack)
    return (len(stack) >= 3 and top >= 2 and top >= 3 * others
            and not _has_sideways_card(cards, stack))


def _is_pile_like(cards: list[CardReading], stack: list[int]) -> bool:
    """Several natural ranks in one heap with none clearly leading, or a card across: a pile."""
    top, others = _rank_majority(cards, stack)
    return (others > 0 and top < 3 * others) or _has_sideways_card(cards, stack)


# ---------------------------------------------------------------------------------------
# teams -> melds


# The layout counts every corner it uses as a card, so a false corner costs more here than
# in the detector's own metric: photo corners under this confidence are left to the player
# (on 30 val scenes with the v2 models, meld exact 49.5% using all corners the detector
# reports at its 0.3 gate, 58.2% at 0.4, 50.0% at 0.5; on the test scenes it mostly cuts
# the layouts that break a rule, 52 -> 35 of 92; docs/LAYOUT.md) ...
LAYOUT_MIN_CONFIDENCE = 0.4
# ... unless a line of surer cards has an empty place for them (`_supported_corners`): two
# thirds of the detector's corners from 0.3 to 0.4 are real indices, most of the rest a
# second box on an index or a false one off the line. `scan_photo` asks the detector for
# corners down to this floor, under the detector's own gate (0.3; 0.28 since the 6/9
# reader, 0.25 since session 28, models/MODEL_CARD.md): on 100 val scenes with
# detector v4, meld exact 78.0% -> 79.3% and deal score 56.2% -> 60.7% at 0.25 (0.2: 79.1%
# / 59.6%, 0.1: 78.4% / 53.9%; `bench_layout --supported-gate`, docs/LAYOUT.md). 0.2 since
# session 20: with the shipped models' corners, val + v52 (317 scenes) read 206 deals right
# at 0.2 and 0.18, 204 at 0.25 and 0.22, 202 at 0.15 (docs/LAYOUT.md, session 20).
LAYOUT_SUPPORTED_CONFIDENCE = 0.2
# Between the two, the right corners are unsure by the detector's score (test, shipped
# models: median score 0.32-0.45, rank probability 0.85) and the false ones by the reader
# (rank probability 0.53-0.71): a corner from SURE_READING_FLOOR whose rank the reader
# gives SURE_READING or more counts as sure (val layouts, detector v5: meld exact 82.7% ->
# 82.9%, deal 68.5% -> 69.7%; 0.9: 82.7% / 67.4%, 0.98: unchanged; docs/LAYOUT.md).
# 0.9 since session 21, when every crop under 0.99 came to be read in four turns (its
# rank probability an average): deals read right on test, v52, val and u13 561 -> 565 of
# 859, none fewer on any set (0.95 -> 0.9; 0.85 reads as 0.9 on test and v52).
SURE_READING = 0.9
SURE_READING_FLOOR = 0.3
# A photo the layout finds tilted (from a seat) counts corners from this confidence up
# (`read_table(tilted_confidence=)`): its far indices score lower, by the detector and the
# readers both. From a seat (`bench_layout --keystone 0.5`, session 41's corners) val / test
# deals 130 / 130 -> 133 / 134, from above test / val / t4 209 / 206 / 577 -> 209 / 206 / 576
# (0.3: 133 / 136 and 210 / 205 / 576; the whole photo's gate at 0.35 instead, seat 136 / 132).
# docs/LAYOUT.md, session 42.
LAYOUT_TILTED_CONFIDENCE = 0.35
# Under the supported floor a corner is faint, and mostly not an index (or another rank's);
# from this confidence one still counts where it takes an empty place of a line of cards of
# its rank (`read_table(faint_confidence=)`, `_faint_on_places`; `scan_photo` asks the
# detector for corners down to it). Test 1899: a column of fours with three cards hidden and
# one read at 0.16 on its place; the detector's corners: test deals 228 -> 229, meld exact
# test 88.69 -> 88.78%, val 86.90 -> 87.00%, t4 86.83 -> 86.92%, no deal lost on any set; the
# same deals from 0.05 to 0.15; photos from a seat and perfect corners the same deals
# (docs/LAYOUT.md, session 55).
LAYOUT_FAINT_CONFIDENCE = 0.08
# A red three lies apart from the melds, where no line supports it: a corner read as one
# from the supported floor up, its rank read this surely, counts. On the test and val
# splits' detector corners the layout left 17 such corners unused, all on red threes (under
# 0.5: 9 on red threes, 3 on 2s); test deals 65.22 -> 65.58%, the other sets and perfect
# corners the same (docs/LAYOUT.md, session 24).
RED_THREE_READING = 0.5
# Review items that say a reading breaks or stretches a rule (not one unsure card, a pile
# or an unused corner): the fewer, the likelier the reading (`read_table`'s choice between
# a mildly tilted photo read as shot and read flattened).
TROUBLE_KINDS = frozenset({"not_a_meld", "meld_rule", "pack_count", "lone_wild", "black_three",
                           "card_note"})


# A joker's index is a vertical JOKER, labelled by its first letters (the part a meld
# column leaves showing: J, O and most of the K). On a joker in full view the detector also
# finds the rest of the word, and reads its K as a king: a K corner in line under a joker
# corner, less than a label's length on, is that letter, not a card (val, detector v4: the 6
# corners this drops all lie on a joker; real kings beside a joker sat a quarter label or more
# aside).
JOKER_LETTER_ALONG = (0.2, 0.9)  # how far on under the joker's box centre, in its lengths
JOKER_LETTER_ACROSS = 0.15       # how far aside, in its lengths
JOKER_LETTER_TURN = 45.0         # the two read in about the same direction (degrees)
# A detector that boxes only the J and O leaves the letter K further on than that, just
# where a king tightly stacked on the joker would show its index. The two differ in what the
# joker shows: a king lying on the joker covers its lower half, so only a joker whose two
# indices make one whole card can show its word's K. Under such a joker, a K corner whose box
# starts before the joker's box has ended by a quarter of their mean length is the letter
# (val, three detectors: the letter's box overlaps the joker's or leaves at most 0.20 of
# their length; real kings under a joker 0.27 or more).
JOKER_WHOLE_LETTER_GAP = 0.25
# The lower part of the word is also read as a second joker: a JK corner in line under a
# joker corner and nearer than a column step (val: every such pair nearer than 0.86 box
# lengths lay on one card, the nearest two jokers of a column 0.90 apart) is that part.
JOKER_TAIL_ALONG = 0.85
JOKER_TAIL_ACROSS = 0.2
# Under a whole joker (no card lies on it) the rest of its word is the only print in line:
# a JK corner there is taken by the letter K's gap rule, and may lie further aside (the
# lower letters are boxed off the word's axis by up to a third of a box length).
JOKER_WHOLE_TAIL_ACROSS = 0.35


def joker_letters(corners: Corners, whole: np.ndarray | None = None) -> np.ndarray:
    """Mask of the corners that are the rest of a vertical JOKER under a joker corner: its K
    read as a king, or its lower letters read as another joker. `whole` marks the joker
    corners known to belong to a joker in full view (its K is looked for further on)."""
    out = np.zeros(len(corners), bool)
    jokers = np.flatnonzero(corners.class_ids == INDEX_CLASSES.index("JK"))
    kings = np.flatnonzero(corners.class_ids == INDEX_CLASSES.index("K"))
    if not len(jokers):
        return out
    centres = corners.centers
    size = corners.boxes[:, 2:] - corners.boxes[:, :2]
    for j in jokers:
        if np.isnan(corners.angle[j]):
            continue
        up, right = _unit_vectors(np.array([corners.angle[j]]))
        length = np.abs(size @ up[0])  # each box's extent along the joker's card
        is_whole = whole is not None and bool(whole[j])
        # (others, nearest along, farthest along unless whole, farthest aside) in its lengths
        for others, lo, hi, aside in (
                (kings, JOKER_LETTER_ALONG[0], JOKER_LETTER_ALONG[1], JOKER_LETTER_ACROSS),
                (jokers, 0.0, JOKER_TAIL_ALONG,
                 JOKER_WHOLE_TAIL_ACROSS if is_whole else JOKER_TAIL_ACROSS)):
            if not len(others):
                continue
            d = centres[others] - centres[j]
            along, across = -(d @ up[0]), d @ right[0]
            turn = _angle_diff(corners.angle[others], corners.angle[j])
            if is_whole:  # on, up to a gap after the joker's box (not a fixed distance)
                mean = (length[j] + length[others]) / 2
                far = along - mean < JOKER_WHOLE_LETTER_GAP * mean
            else:
                far = along < hi * length[j]
            near = ((along > lo * length[j]) & far & (np.abs(across) < aside * length[j])
                    & ~(turn >= JOKER_LETTER_TURN))
            out[others[near]] = True
    return out


# Given boxes (N, 4) where the layout expects an index, where one lies near each and what
# the readers read there: boxes (N, 4) and class probabilities (N, classes).
Find = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def _moved_find(find: Find, flat) -> Find:
    """`find` asked in a flattened table's pixels (`flat`, `scanner.perspective`)."""
    def moved(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found, probs = find(moved_boxes(flat.to_photo, boxes))
        return moved_boxes(flat.to_flat, found), probs
    return moved


def read_table(corners: Corners, image_size: tuple[int, int],
               geometry: CardGeometry | None = None, min_confidence: float = 0.0,
               supported_confidence: float | None = None,
               ink: Callable[[list[int]], list[str | None]] | None = None,
               tilted_confidence: float | None = None,
               look: Callable[[np.ndarray], np.ndarray] | None = None,
               faint_confidence: float | None = None,
               find: Find | None = None) -> TableReading:
    """Read physical cards, melds per team, red threes and a review list from corners.

    A photo taken from a seat (the far cards' indices smaller than the near ones') is read
    on the table made flat again (`scanner.perspective`: fitted to the sizes of the corners
    of `min_confidence` and more), and its cards' places, directions and outlines are
    moved back into the photo; the review says so. Where the sizes change less than
    `MIN_TILT_RATIO` (but `UNSURE_TILT_RATIO` or more) across the photo, the table is read
    both ways and the flattened reading is kept only if it breaks fewer rules (`_trouble`).
    A photo found tilted is read (both ways) counting corners from `tilted_confidence` where
    that is lower than `min_confidence` (the far indices of a photo from a seat score lower;
    `scan_photo` passes `LAYOUT_TILTED_CONFIDENCE`); the tilt itself is fitted to the corners
    of `min_confidence`. The rest is `read_flat_table`'s (`look` and `find` are given boxes
    in the photo's pixels either way).
    """
    flat = flattening(corners, image_size, corners.confidence >= min_confidence,
                      min_ratio=UNSURE_TILT_RATIO)
    if flat is None:
        return read_flat_table(corners, image_size, geometry, min_confidence,
                               supported_confidence, ink, look, faint_confidence, find)
    tilted = min_confidence if tilted_confidence is None else min(min_confidence,
                                                                   tilted_confidence)
    flat_look = None if look is None else \
        (lambda boxes: look(moved_boxes(flat.to_photo, boxes)))
    flat_find = None if find is None else _moved_find(find, flat)
    reading = read_flat_table(flatten_corners(corners, flat), flat.size, geometry,
                              tilted, supported_confidence, ink, flat_look, faint_confidence,
                              flat_find)
    if flat.ratio < MIN_TILT_RATIO:
        # a mild tilt, or two decks whose indices differ in size: the reading as shot
        # stands unless the flattened one breaks fewer rules
        as_shot = read_flat_table(corners, image_size, geometry, tilted,
                                  supported_confidence, ink, look, faint_confidence, find)
        if _trouble(as_shot) <= _trouble(reading):
            return as_shot
    reading.review.append(_item("perspective", 0.95, f"photo taken at an angle (the near "
                                f"indices {flat.ratio:.1f}x the size of the far ones): read "
                                "with the perspective undone; a photo from straight above "
                                "reads best"))
    reading.review.sort(key=lambda r: (r["priority"], r["kind"]))
    return _back_in_photo(reading, flat)


def _trouble(reading: TableReading) -> int:
    """How many rules a reading breaks or stretches: its review items that are not about
    one unsure card, a pile or an unused corner."""
    return sum(item["kind"] in TROUBLE_KINDS for item in reading.review)


def _back_in_photo(reading: TableReading, flat: Flattening) -> TableReading:
    """`reading`, made on the flattened table, with its cards' places, directions and
    outlines moved back into the photo."""
    for card in reading.cards:
        outline = card.outline(reading.card_size)
        centre = np.asarray([card.center], float)
        card.angle = float(flat.angles_to(centre, [card.angle], flat=False)[0])
        card.center = tuple(float(v) for v in flat.to_photo(centre)[0])
        if card.other_center is not None:
            card.other_center = tuple(float(v) for v in flat.to_photo([card.other_center])[0])
        card.corner_spots = None
        card.photo_outline = flat.to_photo(outline)
    return reading


def read_flat_table(corners: Corners, image_size: tuple[int, int],
                    geometry: CardGeometry | None = None, min_confidence: float = 0.0,
                    supported_confidence: float | None = None,
                    ink: Callable[[list[int]], list[str | None]] | None = None,
                    look: Callable[[np.ndarray], np.ndarray] | None = None,
                    faint_confidence: float | None = None,
                    find: Find | None = None) -> TableReading:
    """Read physical cards, melds per team, red threes and a review list from the corners
    of a photo taken from above (every card one size).

    `image_size` is (width, height) of the photo the corners are in. Corners below
    `min_confidence` are not used (they belong to no card): every corner counts as a card
    here, so the layout can want a stricter gate than the detector's own. Corners from
    `supported_confidence` up to `min_confidence` are used where they fill an empty
    place on a column or row of surer cards of their rank (or a wild); those from
    `SURE_READING_FLOOR` whose rank the reader reads with `SURE_READING` or more are used
    as sure ones (but far from every corner sure by its score: `_far_from_the_table`), and
    so are red threes from `supported_confidence` read with
    `RED_THREE_READING` or more, and two of one rank that show one whole card together
    (`_whole_unsure_cards`). Corners from `faint_confidence` up to `supported_confidence`
    are used only where they take an empty place of a column or row of their rank
    (`_faint_on_places`). `ink`, given corner numbers, says the colour of their ink ("red",
    "black" or None where unsure; `scanner.ink` measures it on the photo): it is asked about a
    squared-up canasta's top card, whose colour tells a natural canasta from a mixed one
    (`_squared_guess`); an `ink` that also says how red their ink is (`ink.redness(ids)`, as
    `scanner.ink.CornerInk` does) settles the colour of a team's threes read both ways or black
    alone (`_threes_by_ink`). `look`, given boxes (N, 4) in the corners' pixels, says
    what the index reader reads in each (class probabilities, `INDEX_CLASSES` then none):
    it is asked about the index places of hidden cards inferred in gaps
    (`_look_at_hidden`) and where a line of cards may hold one unseen (`_look_along_lines`).
    `find`, given such boxes, says where an index lies near each and what is read there
    (boxes, probabilities): asked where `look` read no card of the line.
    """
    geo = geometry or CardGeometry()
    letters = joker_letters(corners)
    # a K (or JK) further on under a joker is its word's letter only if the joker is whole:
    # which jokers are whole shows in a first reading with the unsure corners too (a whole
    # joker's second index is often unsure), the reading that also finds supported corners
    maybe_letters = (joker_letters(corners, np.ones(len(corners), bool)) & ~letters).any()
    floor = min_confidence if supported_confidence is None else supported_confidence
    used = (corners.confidence >= min_confidence) & ~letters
    sure = used.copy()  # sure by the detector's score
    if supported_confidence is not None:
        # an unsure corner the reader is sure of: unsure by the detector's score alone
        used |= ((corners.confidence >= max(SURE_READING_FLOOR, floor))
                 & (corners.rank_confidence >= SURE_READING) & ~letters)
        used &= ~_far_from_the_table(corners, used & ~sure, sure)
        used &= ~_between_neighbours(corners, used & ~sure, sure)
        used |= ((corners.confidence >= floor) & (corners.class_ids == INDEX_CLASSES.index("3R"))
                 & (corners.rank_confidence >= RED_THREE_READING) & ~letters)
        # a red three beside another in a row: from the faint floor, however unsurely read
        red_floor = floor if faint_confidence is None else min(faint_confidence, floor)
        for _ in range(RED_THREE_ROW_ROUNDS):
            used |= _red_threes_in_a_row(corners, used, floor, red_floor) & ~letters
    candidates = (corners.confidence >= floor) & ~used & ~letters
    # an unsure box on the gap between two sure neighbours, over one of their indices
    candidates &= ~_between_neighbours(corners, candidates, sure, NEIGHBOURS_OVERLAP)
    first = None  # the reading with the unsure corners: (its corners, its result)
    if (candidates.any() or maybe_letters) and used.any():
        first_ids = np.flatnonzero(used | candidates)
        first = (first_ids, _read_cards(corners, first_ids, image_size, geo))
        cards, stacks, typical_h, seen_geo, _ = first[1]
        if maybe_letters:
            whole = np.zeros(len(corners), bool)
            for card in cards:
                # (a four-index deck's covered joker shows its two top indices: not whole;
                # taken for whole, the king's index a column step under it was read as its
                # word's K, val 1598; perfect corners val 248 -> 249, session 61)
                if card.rank == "JK" and len(card.corner_ids) >= 2 and card.fully_visible:
                    whole[card.corner_ids] = True
            letters |= joker_letters(corners, whole)
            used &= ~letters
        if candidates.any():
            used[_whole_unsure_cards(cards, stacks, candidates & ~letters, corners)] = True
            # a supported card supports the next one along its line: repeat until none joins
            firm = used.copy()
            for _ in range(SUPPORT_ROUNDS):
                before = int(used.sum())
                used[_supported_corners(cards, stacks, used, typical_h, corners.centers,
                                        seen_geo.aspect, firm, corners.boxes)] = True
                used &= ~letters
                if int(used.sum()) == before:
                    break
    listed = ~used & ~letters  # the unused corners put up for review
    if faint_confidence is not None and supported_confidence is not None:
        if used.any():
            used[_faint_on_places(corners, used, letters, faint_confidence, floor, image_size,
                                  geo)] = True
        listed = ~used & ~letters & (corners.confidence >= floor)  # (not the faint ones)
    unsure = _unsure_corners(np.flatnonzero(listed), min_confidence)
    if not used.any():
        return TableReading([], [], [0, 0], unsure, (0.0, 0.0))
    used_ids = np.flatnonzero(used)
    if first is not None and np.array_equal(first[0], used_ids):
        # every unsure corner was taken: the first reading is this one (nothing changed it)
        cards, stacks, typical_h, geo, stack_team = first[1]
    else:
        cards, stacks, typical_h, geo, stack_team = _read_cards(corners, used_ids, image_size, geo)
    _infer_hidden_cards(cards, stacks, typical_h, _print_groups(corners, used_ids),
                        long_sides(corners.boxes))
    if look is not None:
        _look_at_wilds(cards, stacks, corners, look)
        _look_at_hidden(cards, stacks, corners, look)
        _look_along_lines(cards, stacks, corners, look, typical_h, find)
    review: list[dict] = _within_the_pack(cards)
    if ink is not None and hasattr(ink, "redness"):
        _threes_by_ink(cards, typical_h, ink.redness)
    melds, red_threes = _form_melds(cards, stacks, stack_team, typical_h, review, ink)
    _check_pack(cards, review)
    loose = (corners.confidence >= floor) & ~used & ~letters
    _calibrate_melds(melds, cards, corners.centers[loose], typical_h, review)
    _calibrate_cards(cards, melds)
    for idx, card in enumerate(cards):
        if card.confidence < geo.low_confidence and card.corner_ids:
            review.append(_item("low_confidence_card", card.confidence,
                                f"card {idx} ({card.rank}): check it ({_percent(card.confidence)} "
                                "sure)", cards=[idx], team=card.team))
        for note in card.notes:
            review.append(_item("card_note", card.confidence, f"card {idx}: {note}",
                                cards=[idx], team=card.team))
    review += unsure
    review.sort(key=lambda r: (r["priority"], r["kind"]))
    return TableReading(cards, melds, red_threes, review,
                        (typical_h * geo.aspect, typical_h))


def _faint_on_places(corners: Corners, used: np.ndarray, letters: np.ndarray, faint: float,
                     floor: float, image_size: tuple[int, int], geo: CardGeometry) -> list[int]:
    """Corners from `faint` up to `floor` that take an empty place of a column or row of
    `used` cards of their rank (`_supported_corners`, `places_only`): they are read with
    the used ones, and every card not held by a used corner is seen by faint ones alone.

    Only those of the rank of the used corner nearest them are read with the used ones (a
    faint misread of another rank inside a column would split it or pair with its cards).
    """
    ids = np.flatnonzero((corners.confidence >= faint) & (corners.confidence < floor)
                         & ~used & ~letters)
    held = np.flatnonzero(used)
    if not len(ids):
        return []
    nearest = np.linalg.norm(corners.centers[ids, None] - corners.centers[held][None],
                             axis=-1).argmin(axis=1)
    ids = ids[corners.class_ids[ids] == corners.class_ids[held[nearest]]]
    if not len(ids):
        return []
    cards, stacks, card_h, seen_geo, _ = _read_cards(corners, np.union1d(held, ids),
                                                     image_size, geo)
    return _supported_corners(cards, stacks, used, card_h, corners.centers, seen_geo.aspect,
                              used, corners.boxes, places_only=True)


def _read_cards(corners: Corners, used: np.ndarray, image_size: tuple[int, int],
                geo: CardGeometry
                ) -> tuple[list[CardReading], list[list[int]], float, CardGeometry,
                           list[int | None]]:
    """Cards (corner ids in the caller's numbers), stacks, card height, geometry, stack teams.

    Only the corners numbered in `used` take part; misreads inside a column are fixed.
    """
    given, given_boxes = corners.centers.astype(float), corners.boxes
    corners = corners.select(used)
    keep_local, twins_local = _duplicates(corners)
    keep = used[keep_local]  # the caller's corner numbers
    # duplicates dropped beside each kept corner, all in the caller's numbers
    twins = {int(keep[p]): [int(used[j]) for j in js] for p, js in twins_local.items()}
    # a duplicated index lies where its boxes agree, weighted by confidence: of two boxes
    # read about as surely, the surer is often the one shifted off the index
    merged = corners.boxes.copy()
    for p, js in twins_local.items():
        ids = [keep_local[p]] + js
        w = corners.confidence[ids]
        merged[keep_local[p]] = (corners.boxes[ids] * w[:, None]).sum(axis=0) / w.sum()
    corners = Corners(merged, corners.class_ids, corners.confidence, corners.angle,
                      corners.rank_confidence).select(keep_local)
    angles, angle_known = _fill_angles(corners)
    index_h = _index_heights(corners, angles)
    card_h, geo, _how = _calibrate(corners, angles, index_h, geo)
    again, more = _same_corner_twins(corners, angles, card_h)
    if more:
        for p, js in more.items():
            twins.setdefault(int(keep[p]), []).extend(
                d for j in js for d in [int(keep[j])] + twins.pop(int(keep[j]), []))
        keep, corners = keep[again], corners.select(again)
        angles, angle_known, card_h = angles[again], angle_known[again], card_h[again]
    typical_h = float(np.median(card_h))
    alike = _same_print(corners)
    print_h = _print_heights(corners, angles)
    # Two passes: the cards and stacks of the first give each corner a steadier angle
    # (its neighbours' in the stack), and the second pairs and places cards with it.
    for _ in range(2):
        groups, kind = _pair_corners(corners, angles, card_h, geo, alike)
        cards = _build_cards(corners, angles, card_h, geo, groups, kind, angle_known)
        cards = _join_four_index_halves(cards, corners, typical_h, geo)
        _side_pairs_toward_front(cards, corners, angles, card_h, geo, kind)
        _choose_index_sides(cards, typical_h, print_h)
        stacks = _split_touching_melds(cards, _stacks(cards, typical_h, geo.aspect),
                                       typical_h * geo.aspect)
        stacks = _whole_cards_apart(cards, stacks, typical_h * geo.aspect)
        stacks = _red_threes_apart(cards, stacks)
        oriented = _orient_stacks(cards, stacks)
        steadier = _steadier_angles(cards, stacks, angles, typical_h)
        if np.percentile(_angle_diff(steadier, angles), 90) < 2.0:
            break  # the angles were steady already: a second pass would change nothing
        angles = steadier
    centres = corners.centers.astype(float)
    four_index = any(len(c.corner_ids) >= 3 for c in cards)  # a card shows three indices
    cards, stacks = _join_split_cards(
        cards, stacks, typical_h, alike,
        (lambda i, j: _edge_crossed(i, j, centres, angles, typical_h, geo)) if four_index else None,
        long_sides(corners.boxes))
    _split_stretched_cards(cards, stacks, angles, typical_h)
    stack_team, stack_conf, _ = _assign_teams(cards, stacks, oriented, image_size,
                                               typical_h, geo.aspect)
    for k, s in enumerate(stacks):
        for i in s:
            cards[i].stack = k
            cards[i].team = stack_team[k]
            if stack_conf[k] < 1.0:
                cards[i].confidence *= 0.6 + 0.4 * stack_conf[k]
    for card in cards:  # back to the caller's corner numbers, duplicates included
        card.corner_spots = None  # (by the local numbers)
        ids = [int(keep[i]) for i in card.corner_ids]
        card.corner_ids = sorted(ids + [d for i in ids for d in twins.get(i, [])])
    _fix_misreads(cards, stacks, given, typical_h, given_boxes)
    return cards, stacks, typical_h, geo, stack_team


# A corner sure by its reading alone (`SURE_READING`, its detector score under the gate) lying
# farther than this many of its own box heights (about three card heights) from every corner
# sure by its score is print elsewhere on the table, not a card: test 1879, the "4" of a
# score pad's "1744" (0.35, read 1.00) became a team's squared-up canasta. Test deals 220 ->
# 221, val, t4 and photos from a seat (`--keystone 0.5`) the same (15-20: a t4 meld fewer;
# 40 misses 1879; docs/LAYOUT.md, session 52).
LONE_READING_REACH = 25.0


def _far_from_the_table(corners: Corners, by_reading: np.ndarray, firm: np.ndarray) -> np.ndarray:
    """Mask of the `by_reading` corners lying more than `LONE_READING_REACH` of their own
    box heights from every `firm` corner (none where no corner is firm)."""
    out = np.zeros(len(corners), bool)
    ids, anchors = np.flatnonzero(by_reading), corners.centers[firm]
    if not len(ids) or not len(anchors):
        return out
    nearest = np.linalg.norm(corners.centers[ids, None] - anchors[None], axis=-1).min(axis=1)
    out[ids] = nearest > LONE_READING_REACH * (corners.boxes[ids, 3] - corners.boxes[ids, 1])
    return out


# A corner sure only by its reading whose centre lies in the middle of the way between two
# sure corners of its rank read the same way (from 0.3 to 0.7 of it, within 0.3 index lengths
# across), these less than `NEIGHBOURS_APART` index lengths apart, is a box on the gap between
# two neighbouring indices of a row, not a card: no index fits between them. Val 2038: a row of
# aces 1.6 index widths apart, a box read A (1.00, score 0.35) straddling the third and fourth
# aces' indices counted a seventh ace. Detector corners: val 206 -> 207, test and t4 the same;
# 3.0 alike (docs/LAYOUT.md, session 57). The corners from the supported floor are held to
# it too, where they also cover a neighbour's index (`NEIGHBOURS_OVERLAP`).
NEIGHBOURS_APART = 2.2
NEIGHBOURS_TURN = 20.0  # read the same way: within this many degrees
# An unsure corner (from the supported floor, under the layout's gate) there is such a box
# only if it also covers this share of its own area or more of one of the two indices: a fan's
# unsure cards lie between sure ones as closely, but beside them. t4 5259: a box at 0.31 on
# the gap between two tens' indices made a fifth ten. Detector corners: t4 610 -> 611, test and
# val the same; 0.35 also t4 10439, 0.3 also val 2258 but loses test 1069 (the fan of tens);
# with no overlap asked, val +2, t4 +2 -1, test -1; 0.5 the same as 0.4 (docs/LAYOUT.md,
# session 57).
NEIGHBOURS_OVERLAP = 0.4


def _between_neighbours(corners: Corners, by_reading: np.ndarray, firm: np.ndarray,
                        overlap: float = 0.0) -> np.ndarray:
    """Mask of the `by_reading` corners lying between two neighbouring `firm` corners of
    their rank (`NEIGHBOURS_APART`), each covering at least `overlap` of its own box's area
    of one of them."""
    out = np.zeros(len(corners), bool)
    centres, boxes = corners.centers, corners.boxes
    sides = boxes[:, 2:] - boxes[:, :2]
    firm_ids = np.flatnonzero(firm)
    ids = np.flatnonzero(by_reading)
    if not len(ids):
        return out
    inter, area = _box_overlaps(boxes)
    covered = inter / np.maximum(area[:, None], 1e-6)  # (k, m): the share of box k under box m
    for k in ids:
        same = firm_ids[(corners.class_ids[firm_ids] == corners.class_ids[k])
                        & (_angle_diff(corners.angle[firm_ids], corners.angle[k]) < NEIGHBOURS_TURN)]
        for n, a in enumerate(same):
            for b in same[n + 1:]:
                way = centres[b] - centres[a]
                apart = float(np.hypot(*way))
                if apart < 1e-6:
                    continue
                way /= apart
                # the indices' mean length along the way between them
                length = float(np.abs(way) @ (sides[a] + sides[b])) / 2
                rel = centres[k] - centres[a]
                t = float(rel @ way) / apart
                across = abs(float(rel @ np.array([-way[1], way[0]])))
                if apart < NEIGHBOURS_APART * length and 0.3 < t < 0.7 and across < 0.3 * length \
                        and max(covered[k, a], covered[k, b]) >= overlap:
                    out[k] = True
    return out


# rounds of support: a card taken in one round supports the next along its line
SUPPORT_ROUNDS = 4
# Two unsure corners of one rank that pair as one card's two indices are that card from
# this confidence (`_whole_unsure_cards`).
WHOLE_UNSURE_FLOOR = 0.25
# ... each read as that rank with this probability or more (as a lone red three needs,
# `RED_THREE_READING`).
WHOLE_UNSURE_READING = 0.5


def _whole_unsure_cards(cards: list[CardReading], stacks: list[list[int]],
                        candidates: np.ndarray, corners: Corners) -> np.ndarray:
    """Numbers of the unsure corners (`candidates`) that show a whole card together: two
    or more of one rank, each `WHOLE_UNSURE_FLOOR` or more and read as that rank with
    `WHOLE_UNSURE_READING` or more, paired as one card of the reading with them (`cards`),
    with no surer corner on it.

    No line of sure cards supports a card lying alone (a squared-up canasta's top card),
    but two indices of one rank at the opposite corners of one card are rarely both false.
    Only a card lying alone in that reading (its stack holds no other card, unsure or
    not): the whole front card of a column of unsure cards stays as unsure as they are
    (taken alone it would read as a squared-up canasta). Measured on the shipped corners
    (docs/LAYOUT.md, session 48): deals test 210 -> 211, val 207 -> 208, t4 585 -> 585,
    none lost."""
    out: list[int] = []
    for card in cards:
        ids = np.asarray(card.corner_ids, int)
        if (len(ids) >= 2 and len(stacks[card.stack]) == 1 and candidates[ids].all()
                and len(set(corners.class_ids[ids].tolist())) == 1
                and corners.confidence[ids].min() >= WHOLE_UNSURE_FLOOR
                and corners.rank_confidence[ids].min() >= WHOLE_UNSURE_READING):
            out.extend(ids.tolist())
    return np.asarray(out, int)


# a line's step within this share of a whole number of the table's steps holds cards unseen
TABLE_STEP_FIT = 0.15


# A red three lies apart from the melds, but beside the team's other red threes: a corner
# read as a red three from the faint floor up, however unsurely its rank is read, lying
# `RED_THREE_ROW_REACH` index lengths or less from a red three's corner (one in use, or one
# from the supported floor) and pointing its way (within `RED_THREE_ROW_TURN` degrees), is
# the next red three of the row; a corner taken so places the next one (`RED_THREE_ROW_ROUNDS`).
# Val 1928: a whole red three and the next one's top index at 0.35, its rank read 0.49, one
# index along; t4 5269: a red three read 0.12 one index past the unsure top index of a whole
# one. Detector corners: val 205 -> 206, t4 607 -> 608 deals, red-three misses test / val /
# t4 11 / 20 / 54 -> 10 / 16 / 43, no deal lost on any set; perfect corners the same
# (docs/LAYOUT.md, session 57). Since session 62 a corner read as a black three from the
# supported floor joins the row too, its colour then settled by the row's ink
# (`_threes_by_ink`): test 2209, a small red three read black at 0.24 beside the team's two
# red threes (test deals 235 -> 236, red threes missed test 9 -> 8, t4 38 -> 37; val,
# perfect corners and photos from a seat the same; from the faint floor the same deals).
# The turn 30 degrees until session 62: t4 3649, two red threes' top indices read 0.24-0.28
# (rank 0.41-0.42), their directions 41 degrees apart (small bare glyphs); red-three misses
# val 15 -> 14, t4 39 -> 38, no deal moved on any set or from a seat (60 alike;
# docs/LAYOUT.md, session 62).
RED_THREE_ROW_REACH = 5.0
RED_THREE_ROW_TURN = 45.0
RED_THREE_ROW_ROUNDS = 2
# (under this many index lengths, a second box on the same index)
RED_THREE_ROW_APART = 0.6


def _red_threes_in_a_row(corners: Corners, used: np.ndarray, floor: float,
                         faint: float) -> np.ndarray:
    """The unused corners read as red threes from `faint`, or as black threes from `floor`,
    that lie in a row with a red three's corner in use (`used`) or from `floor`
    (`RED_THREE_ROW_REACH`). A black three so taken is a card whose colour its row's ink
    settles (`_threes_by_ink`): a small deck's red three read black."""
    red = corners.class_ids == INDEX_CLASSES.index("3R")
    black = corners.class_ids == INDEX_CLASSES.index("3B")
    anchors = np.flatnonzero(red & (used | (corners.confidence >= floor)))
    out = np.zeros(len(corners), bool)
    if not len(anchors):
        return out
    centres, sides = corners.centers, long_sides(corners.boxes)
    for k in np.flatnonzero(~used & ((red & (corners.confidence >= faint))
                                     | (black & (corners.confidence >= floor)))):
        apart = np.linalg.norm(centres[anchors] - centres[k], axis=1) / sides[anchors]
        turn = _angle_diff(corners.angle[anchors], corners.angle[k])
        out[k] = bool(((apart >= RED_THREE_ROW_APART) & (apart <= RED_THREE_ROW_REACH)
                       & (turn <= RED_THREE_ROW_TURN) & (anchors != k)).any())
    return out


def _supported_corners(cards: list[CardReading], stacks: list[list[int]], sure: np.ndarray,
                       card_h: float, centres: np.ndarray | None = None,
                       aspect: float = CardGeometry.aspect,
                       firm: np.ndarray | None = None,
                       boxes: np.ndarray | None = None,
                       places_only: bool = False) -> list[int]:
    """Unsure corners the sure ones support: of a sure corner's card, or on a line's place.

    A column or row is laid with one step, so its sure cards (those with a corner of
    `sure` confidence) of its rank or wild mark a lattice of places. A card seen only by
    unsure corners is taken when it shows the line's rank or a wild and lies on that
    line, or on the line of the four of them nearest to it: within 0.12 card heights
    across it, a whole number of steps (within a quarter step) from the nearest sure
    card (a column laid by hand drifts off a lattice counted from its first card), at
    most one step past either end. A detector's second box on an index falls between
    places or on a held one, a false corner off the line. Where the sure cards form no
    straight line, a card on the chord of a fan's empty place (`_fills_a_gap`), or one
    next to a sure card yet off every sure card's spot (`_clear_place`, unless its rank
    is a misread's), is taken too, and so is one on the chord between two sure cards
    whose index lies clear of the nearer one's, given `boxes` (the corners' boxes:
    `_tight_place`, a row laid closer than `CLEAR_OF_SURE`). An unsure corner that joins
    a sure corner's card is taken as well: it is the card's other end (or a duplicate of
    the sure one). A stack with fewer than two sure cards, or only sure wilds, may still
    be a line of its own (`_line_of_their_own`), unless none is sure and its indices are
    boxed small (`_smaller_print`, given `boxes`). No unsure corner lying inside a sure
    whole card is taken (given `centres`, the corners' centres): nothing shows through a
    card in full view, so it is print on that card (the letters of a JOKER, a court
    figure), not a card one step past a column's front end (a whole card with a sure
    corner of another on its face is a mistaken pair: ignored; a corner of the whole
    card's own rank may be its real index, the pair a mistake). A wild read surely
    (`SURE_READING`) is the exception: it is the wild laid on the natural's middle, which
    leaves the natural's far index showing (t4 8249: a joker at 0.25, read 1.00, over a
    queen whose bottom index showed; t4 deals 603 -> 604, test, val, perfect corners and
    photos from a seat the same, and the same for a sure reading of any rank; session 55).
    Nor is one read `MISREAD_QUARTER` degrees or more off the direction of the line's
    nearest sure card (upside down is on it; a fan turns along its cards): a line's cards
    lie along it, and print on a card's face read sideways is no index (test 1419: a jack's
    figure read as a 2 turned 88 degrees, 0.21, became a second wild of the jacks; test
    deals 227 -> 228, val, t4, perfect corners and photos from a seat the same; 45 degrees
    a t4 meld fewer; docs/LAYOUT.md, session 55).
    A fan whose sure cards lie far apart (most of its cards read unsurely) shows no chord
    to fill; a card on its arc, between its first and last sure card, is taken
    (`_on_fan_arc`).
    `firm` (default `sure`) are the corners sure in their own right: only their cards
    bring their other corners along (a corner taken in an earlier round places the next
    card of its line, but a second box paired into its card stays out).
    `places_only` (the corners not `sure` are faint ones, scored under the supported
    floor): an unsure card is taken only on an empty place of its line's lattice
    (`_fills_a_place`), read as the line's rank itself (no misread, no wild); no other
    rule applies, and a sure card brings no other end along.
    Returns the corners (caller's numbers) of the supported cards.
    """
    later_round = firm is not None and bool((sure & ~firm).any())
    firm = sure if firm is None else firm
    # the corners' sizes, and under what size a stack read unsurely throughout is print on a
    # card rather than a line of cards (`_smaller_print`)
    sizes = root_areas(boxes) if boxes is not None else None
    small_print = (SMALL_PRINT_ALONE * float(np.median(sizes[firm]))
                   if sizes is not None and firm.any() else None)
    out: list[int] = []
    steps = _table_steps(cards, stacks, sure, card_h)
    whole: list[CardReading] = []
    if centres is not None:
        # a card with another sure corner on its face is two cards paired by mistake
        others = np.flatnonzero(sure)
        whole = [c for c in cards if c.fully_visible and len(c.corner_ids) >= 2
                 and any(sure[m] for m in c.corner_ids)
                 and not _inside_card(centres[np.setdiff1d(others, c.corner_ids)],
                                      c, card_h, aspect).any()]
    for stack in stacks:
        held = [i for i in stack if any(sure[m] for m in cards[i].corner_ids)]
        unsure = [i for i in stack if i not in held and cards[i].corner_ids]
        # an unsure index of a card a sure one shows: without it, the sure bottom index
        # of a whole card may pair with the covered card's top index a step up
        if not places_only:
            out.extend(m for i in held if any(firm[m] for m in cards[i].corner_ids)
                       for m in cards[i].corner_ids if not sure[m])
        ranks = Counter(cards[i].rank for i in held if not cards[i].is_wild)
        if unsure and (len(held) < 2 or not ranks) and not places_only:
            # (sure wild cards alone do not say the line's rank)
            if not held and _smaller_print(cards, unsure, sizes, small_print):
                continue  # print on a card's back or face, not a line of cards
            out.extend(_line_of_their_own(cards, stack, card_h, whole, centres, aspect,
                                          SELF_LINE_MIN if held else SELF_LINE_MIN_ALONE))
            continue
        if not unsure or len(held) < 2 or not ranks:
            continue
        rank = ranks.most_common(1)[0][0]
        line = [i for i in held if cards[i].rank == rank or cards[i].is_wild]
        angle = _circular_mean(np.array([cards[i].angle for i in line]))
        pts = np.array([cards[i].center for i in line])
        arc = _fan_arc(cards, line, angle, card_h)
        for i in unsure:
            card = cards[i]
            if card.rank != rank and not card.is_wild:
                continue
            if later_round and _misread(card):
                continue  # a place a taken card opened is for a card read as its rank
            laid_on = card.is_wild and card.rank_confidence >= SURE_READING
            if not laid_on and any(_inside_card(centres[card.corner_ids], w, card_h, aspect).any()
                                   for w in whole if w.rank != card.rank):
                continue
            centre = np.asarray(card.center)
            # the whole line, else its four cards nearest the card (a stack may join a
            # column to a neighbour, or bend)
            by_distance = np.argsort(np.linalg.norm(pts - centre, axis=1))
            near = pts[by_distance[:4]]
            on_place = (_fills_a_place(centre, pts, angle, card_h, steps)
                        or _fills_a_place(centre, near, angle, card_h, steps))
            if places_only:
                if on_place and card.rank == rank and not _misread(card):
                    out.extend(card.corner_ids)
                continue
            if _axis_diff(card.angle, cards[line[by_distance[0]]].angle) >= MISREAD_QUARTER:
                continue  # print on a card's face read sideways, not an index of the line
            if (on_place
                    or _fills_a_gap(centre, pts, card_h)
                    or (_clear_place(centre, pts, card_h) and not _misread(card))
                    or (boxes is not None and not _misread(card)
                        and _tight_place(centre, pts, boxes[card.corner_ids[0]], card_h))
                    or (arc is not None and _on_fan_arc(centre, pts, arc, card_h))):
                out.extend(card.corner_ids)
    return out


# A stack's sure cards are a fan when they turn steadily with their place across it, at
# least this many degrees end to end ...
FAN_ARC_TURN = 12.0
# ... each within this many degrees of that trend, and their centres within this share of a
# card height of one arc (a parabola across the fan) ...
FAN_ARC_TREND = 3.0
FAN_ARC_FIT = 0.05
# ... and an unsure card of the fan's rank within this share of a card height of the arc,
# between its first and last sure card, clear of every sure one (by `FAN_ARC_FIT`: a
# second box on a sure index lies on its card's place), is a card of the fan
# (test 1069: a fan of eight tens, four read from 0.24 to 0.33). The detector's corners:
# test deals 219 -> 220, val and t4 the same; perfect corners the same; 0.12 (and an 8
# degree turn) loses a val deal (docs/LAYOUT.md, session 51).
FAN_ARC_REACH = 0.08


def _fan_arc(cards: list[CardReading], line: list[int], angle: float,
             card_h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The arc a fan's sure cards (`line`, at mean `angle`) lie on, if they are a fan:
    (across and up unit vectors, the parabola of up against across), else None."""
    if len(line) < 3:
        return None
    up, right = (v[0] for v in _unit_vectors(np.array([angle])))
    pts = np.array([cards[i].center for i in line])
    across = pts @ right
    if np.ptp(across) <= 0.25 * card_h:
        return None  # a column: no spread across to turn along (as `_steadier_angles`)
    turn = _axis_turn([cards[i].angle for i in line], angle)
    slope, offset = np.polyfit(across, turn, 1)
    if abs(slope) * np.ptp(across) < FAN_ARC_TURN or \
            np.abs(turn - (offset + slope * across)).max() > FAN_ARC_TREND:
        return None
    height = pts @ up
    arc = np.polyfit(across, height, 2)
    if np.abs(height - np.polyval(arc, across)).max() > FAN_ARC_FIT * card_h:
        return None
    return right, up, arc


def _on_fan_arc(centre: np.ndarray, pts: np.ndarray,
                arc: tuple[np.ndarray, np.ndarray, np.ndarray], card_h: float) -> bool:
    """Whether a card at `centre` lies on a fan's `arc` (`_fan_arc`) between its sure
    cards (`pts`), clear of them."""
    right, up, parabola = arc
    across, here = pts @ right, float(centre @ right)
    return bool(across.min() < here < across.max()
                and abs(float(centre @ up) - np.polyval(parabola, here)) <= FAN_ARC_REACH * card_h
                and np.linalg.norm(pts - centre, axis=1).min() >= FAN_ARC_FIT * card_h)


# unsure cards of one rank on a regular line of at least this many stand by themselves
SELF_LINE_MIN = 3
# ... and of at least this many in a stack where no card is sure: a meld of three whose
# cards all read unsurely, one of them missed (inferred in the gap it leaves, or counted
# unseen as a meld's third). Beside a sure card an unsure one is more often a second box
# or print near it (a squared canasta's top taken for a column of two). Test deals 211 ->
# 214, val 208 and t4 585 the same (docs/LAYOUT.md, session 48).
SELF_LINE_MIN_ALONE = 2
# A line of this many cards or more stands where the step that fits it whole
# (`_line_lattice`) places each card, though one gap is a third of its median gap off: small
# indices read unsurely are placed a few hundredths of a card off their places (val 1958: a
# column of four aces read 0.31-0.41, gaps 23, 22 and 30 px). Three cards fit such a lattice
# by chance too often (0.25 and 0.37 card heights apart: a step of 0.21 with a card unseen).
# Detector corners: t4 deals 596 -> 597, val meld exact 86.59 -> 86.64%, test and perfect
# corners the same; from three cards t4 598 but the uneven three stand (docs/LAYOUT.md,
# session 53).
SELF_LATTICE_MIN = 4


def _line_of_their_own(cards: list[CardReading], stack: list[int], card_h: float,
                       whole: list[CardReading], centres: np.ndarray | None,
                       aspect: float, least: int) -> list[int]:
    """Corners of a stack's unsure cards that stand by themselves as a column or row.

    A deck the detector knows badly is read unsure throughout, so a meld of it may have
    fewer than two sure cards to support the rest. At least `least` cards (`SELF_LINE_MIN`,
    or `SELF_LINE_MIN_ALONE` where no card of the stack is sure) of
    the stack's commonest rank (two of them naturals) or wild, on one straight line
    (within 0.12 card heights, each card seen by one index placed by `_placed`) a whole
    number of one step apart (within a quarter step, the step 0.12-0.7 card heights, at
    most three steps between two cards), are taken together: false corners (print on a
    card's face, an index read twice) do not fall on such a lattice. A line of
    `SELF_LATTICE_MIN` cards or more may instead fit the lattice `_line_lattice` finds for
    it whole. None of them may lie on the face of a sure whole card of another rank
    (`whole`). Red threes lie apart and are never a line.
    """
    naturals = Counter(cards[i].rank for i in stack
                       if not cards[i].is_wild and cards[i].corner_ids)
    if not naturals:
        return []
    rank, count = naturals.most_common(1)[0]
    line = [i for i in stack
            if cards[i].corner_ids and (cards[i].rank == rank or cards[i].is_wild)]
    if count < 2 or len(line) < least or rank == "3R":
        return []
    if centres is not None and any(
            _inside_card(centres[cards[i].corner_ids], w, card_h, aspect).any()
            for i in line for w in whole if w.rank != cards[i].rank):
        return []
    angle = _circular_mean(np.array([cards[i].angle for i in line]))
    pts = np.array([_placed(cards[i], centres, angle, card_h) for i in line])
    for along_axis, across_axis in _line_axes(angle):
        along, across = pts @ along_axis, pts @ across_axis
        if np.ptp(along) < 0.1 * card_h:
            continue
        fit = np.polyfit(along, across, 1)
        if np.abs(across - np.polyval(fit, along)).max() > 0.12 * card_h:
            continue
        gaps = np.diff(np.sort(along))
        step = _line_step(along, by_hand=False)
        if gaps.min() < 0.5 * step or not 0.12 * card_h <= step <= 0.7 * card_h:
            continue
        m = gaps / step
        if (np.abs(m - np.round(m)) > 0.25).any() or m.max() > 3.25:
            if len(line) < SELF_LATTICE_MIN:
                continue
            lattice = _line_lattice(gaps, 0.12 * card_h, 0.7 * card_h)
            if lattice is None or max(lattice[1]) > 3 or gaps.min() < 0.5 * lattice[0]:
                continue
        return [c for i in line for c in cards[i].corner_ids]
    return []


# A stack read unsurely throughout is no line of its own when its indices are boxed smaller
# than this share of the sure corners' (the median of either): print on a card, not cards.
# A deck's back may show cards (val's kde-nicu-white: a fan of four aces), whose indices the
# detector reads at 0.23-0.38, boxed 0.42-0.64 the size of the photo's sure indices; two or
# three of them made a meld of aces (val 138, 538, 2178). A second deck printing smaller
# indices is read from its own sure cards (two decks' prints differ by up to half). Val deals
# 210 -> 213, test, t4 and photos from a seat the same deals; 0.7 and 0.8 alike, 0.55 val
# 138 and 538 not (docs/LAYOUT.md, session 60).
SMALL_PRINT_ALONE = 0.75


def _smaller_print(cards: list[CardReading], ids: list[int], sizes: np.ndarray | None,
                   floor: float | None) -> bool:
    """Whether cards `ids`' corners are boxed smaller than `floor` (their median of `sizes`,
    the corners' `root_areas`; `floor`: `SMALL_PRINT_ALONE` of the sure corners' median, None
    without boxes or sure corners)."""
    if sizes is None or floor is None:
        return False
    return bool(np.median(sizes[[m for i in ids for m in cards[i].corner_ids]]) < floor)


# how far inside a card's edges a point must lie to be on it, in card heights (an index
# of the next card in a column lies just past the edge)
INSIDE_MARGIN = 0.05


def _inside_card(points: np.ndarray, card: CardReading, card_h: float, aspect: float) -> np.ndarray:
    """Which of `points` (N, 2) lie on `card`'s face, clear of its edges."""
    return _on_face(points, card.center, card.angle, card_h, aspect)


def _on_face(points: np.ndarray, center, angle: float, card_h: float,
             aspect: float) -> np.ndarray:
    """Which of `points` (N, 2) lie on the face of a card at `center` whose top points at
    `angle`, clear of its edges by `INSIDE_MARGIN`."""
    up, right = _unit_vectors(np.array([angle]))
    rel = np.asarray(points, float).reshape(-1, 2) - np.asarray(center, float)
    return ((np.abs(rel @ up[0]) < (0.5 - INSIDE_MARGIN) * card_h)
            & (np.abs(rel @ right[0]) < (0.5 * aspect - INSIDE_MARGIN) * card_h))


def _placed(card: CardReading, centres: np.ndarray | None, angle: float,
            card_h: float) -> np.ndarray:
    """Where a card seen by one index lies on a line at `angle`: turned about that index.

    A single index's angle errs by several degrees (tens on small bare glyphs), which
    swings its card about the index: placed at its line's angle instead, a column of
    such cards lines up as its indices do. Given `centres` (the corners'), a card whose
    corners (an index and its duplicate boxes) lie within a tenth of a card of their mean
    is turned; one seen by two or more indices, or any card without `centres`, keeps
    its own centre.
    """
    centre = np.asarray(card.center, dtype=float)
    if centres is None or not card.corner_ids:
        return centre
    at = centres[card.corner_ids]
    anchor = at.mean(axis=0)
    if np.linalg.norm(at - anchor, axis=1).max() > 0.1 * card_h:
        return centre
    # the card's offset from its index, read in the card's frame, laid out in the line's
    up, right = _unit_vectors(np.array([card.angle, angle]))
    v = centre - anchor
    return anchor + (v @ up[0]) * up[1] + (v @ right[0]) * right[1]


def _line_axes(angle: float) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """(along, across) unit vectors of a column and of a row of cards at `angle`."""
    up, right = _unit_vectors(np.array([angle]))
    return (-up[0], right[0]), (right[0], -up[0])


# A line laid by hand has its gaps of one step within this ratio of its smallest (a gap hiding
# a card is two steps). A line's step was the median of its gaps but the largest (of two gaps,
# the smaller): a row of three sure tens 26 and 33 px apart took 26 px for its step, and the
# unsure first ten 34 px before them lay 1.3 steps off, past the line (t4 10989). The median of
# the single gaps (but for a line of unsure cards alone, `_line_of_their_own`, which must show
# a steady step: three unsure sevens 0.25 and 0.37 card heights apart are no line): the
# detector's corners, test deals 229 -> 230, t4 601 -> 603, val 213 (meld exact 88.78 ->
# 88.83%, 86.92 -> 86.99%, 87.00%); 1.7 the same, 1.35 two deals fewer; the lines of unsure
# cards alone by it too, a t4 deal more (7099); perfect corners the same (docs/LAYOUT.md,
# session 55).
SINGLE_GAP = 1.5


def _line_step(along: np.ndarray, by_hand: bool = True) -> float:
    """A line's regular step: the median of its single gaps, those up to `SINGLE_GAP`
    times its smallest (a longer gap may hide a card). Not `by_hand` (a line of unsure
    cards alone, which must show a steady step to stand): the median of its gaps but the
    largest, of two gaps the smaller."""
    gaps = np.diff(np.sort(along))
    if by_hand:
        return float(np.median(gaps[gaps <= SINGLE_GAP * gaps.min()]))
    return float(np.median(np.sort(gaps)[: max(1, len(gaps) - 1)])
                 if len(gaps) >= 3 else gaps.min())


def _table_steps(cards: list[CardReading], stacks: list[list[int]], sure: np.ndarray,
                 card_h: float) -> tuple[float | None, float | None]:
    """The step of the table's columns and of its rows, read off their sure cards.

    A team lays its columns with one step (and its rows with another): where a line
    shows only two sure cards two or three steps apart, the table's step says where
    the places between them are. None where no line of three or more sure cards shows
    it.
    """
    found: tuple[list[float], list[float]] = ([], [])
    for stack in stacks:
        held = [i for i in stack if any(sure[m] for m in cards[i].corner_ids)]
        if len(held) < 3 or len(_natural_ranks(cards, held)) != 1:
            continue
        pts = np.array([cards[i].center for i in held])
        angle = _circular_mean(np.array([cards[i].angle for i in held]))
        for k, (along_axis, across_axis) in enumerate(_line_axes(angle)):
            along, across = pts @ along_axis, pts @ across_axis
            if np.ptp(along) < 0.1 * card_h or np.ptp(across) > 0.3 * card_h:
                continue
            step = _line_step(along)
            if 0.1 * card_h <= step <= 0.5 * card_h:
                found[k].append(step)
    return tuple(float(np.median(f)) if f else None for f in found)


def _fills_a_place(centre: np.ndarray, line: np.ndarray, angle: float, card_h: float,
                   table_steps: tuple[float | None, float | None] = (None, None)) -> bool:
    """Whether a card at `centre` takes an empty place of the column or row of cards `line`.

    A line whose own step is two or three of the table's (`table_steps`, for columns and
    rows) is taken to have cards missing between its cards: its places are the table's.
    The middle of a gap of about two steps is a place too, off the lattice or not
    (`_mid_gap`).
    """
    if len(line) < 2:
        return False
    for (along_axis, across_axis), table_step in zip(_line_axes(angle), table_steps,
                                                     strict=True):
        along, across = line @ along_axis, line @ across_axis
        if np.ptp(along) < 0.1 * card_h or np.ptp(across) > 0.3 * card_h:
            continue
        places = np.sort(along)
        gaps = np.diff(places)
        step = _line_step(along)
        if gaps.min() < 0.1 * card_h or step > 0.7 * card_h:
            continue  # two cards on one spot, or cards apart: not a clean line
        if table_step is not None:
            m = round(step / table_step)
            if m >= 2 and abs(step / m - table_step) <= TABLE_STEP_FIT * table_step:
                step /= m
        fit = np.polyfit(along, across, 1) if len(line) > 2 else [0.0, across.mean()]
        a, c = centre @ along_axis, centre @ across_axis
        place = (a - places[np.argmin(np.abs(places - a))]) / step
        return bool(abs(c - np.polyval(fit, a)) <= 0.12 * card_h
                    and (abs(place - round(place)) <= 0.25 or _mid_gap(places, a, step))
                    and np.abs(places - a).min() >= 0.5 * step
                    and places[0] - 1.3 * step <= a <= places[-1] + 1.3 * step)
    return False


# A card within this share of a step of the middle of a gap of 1.5 to 2.5 steps between two
# cards of its line takes the place there, a whole number of steps off its neighbours or not:
# a gap a hand left 1.6 steps wide holds one card, nearer one end (test 2799: a five at 0.20
# in a row of fives laid unevenly; detector corners test 231 -> 232, t4 meld exact 87.04 ->
# 87.06%, val and photos from a seat the same, perfect corners the same; 0.1 alike, 0.05 not
# the test deal, 0.2 loses t4 4139: a partly shown bottom index of a mixed-deck column; docs/
# LAYOUT.md, session 56).
GAP_MIDDLE = 0.15


def _mid_gap(places: np.ndarray, a: float, step: float) -> bool:
    """Whether `a` (along a line whose cards lie at the sorted `places`) lies within
    `GAP_MIDDLE` steps of the middle of a gap of 1.5 to 2.5 steps."""
    if not places[0] < a < places[-1]:
        return False
    k = int(np.searchsorted(places, a))
    low, high = places[k - 1], places[k]
    return bool(1.5 * step <= high - low <= 2.5 * step
                and abs(a - (low + high) / 2) <= GAP_MIDDLE * step)


def _along_chord(point: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[float, float]:
    """Where `point` lies along the chord from `start` to `end` (0 at start, 1 at end),
    and how far off it (pixels)."""
    chord, rel = end - start, point - start
    length = float(np.hypot(*chord))
    return (float(rel @ chord) / length ** 2,
            abs(float(chord[0] * rel[1] - chord[1] * rel[0])) / length)


def _fills_a_gap(centre: np.ndarray, line: np.ndarray, card_h: float) -> bool:
    """Whether a card at `centre` takes an empty place between two cards of a fan or line.

    A fan's cards lie on an arc, a whole number of its steps apart: no straight line
    holds them, but between two of them a few steps apart the arc is nearly their chord.
    The step is the median distance from each card to its nearest; the card must lie
    within 0.12 card heights of the chord of two cards two or three steps apart (each
    step within 15% of the fan's), on a whole step between them (within a quarter),
    with no card already there.
    """
    if len(line) < 3:
        return False
    dist = np.linalg.norm(line[:, None] - line[None], axis=-1)
    np.fill_diagonal(dist, np.inf)
    step = float(np.median(dist.min(axis=1)))
    if not 0.1 * card_h <= step <= 0.7 * card_h:
        return False
    if np.linalg.norm(line - centre, axis=1).min() < 0.5 * step:
        return False  # a place already held
    for a in range(len(line)):
        for b in range(a + 1, len(line)):
            length = float(np.hypot(*(line[b] - line[a])))
            m = round(length / step)
            if m < 2 or m > 3 or abs(length / m - step) > 0.15 * step:
                continue
            t, off = _along_chord(centre, line[a], line[b])
            place = t * m
            if off <= 0.12 * card_h and 0.75 <= place <= m - 0.75 \
                    and abs(place - round(place)) <= 0.25:
                return True
    return False


def _clear_place(centre: np.ndarray, line: np.ndarray, card_h: float) -> bool:
    """Whether a card at `centre` lies next to the sure cards `line`, on a spot of its own.

    Where the sure cards of a stack form no lattice to read places from (misplaced
    one-index cards, a fan read with noisy angles, a column joined to its neighbour), a
    card of their rank is taken when it lies within half a card height of one of them
    but off every one's spot by 0.18 card heights or more (`CLEAR_OF_SURE`): a
    detector's second box on an index sits within a third of an index of it, and the
    cards of a column or row lie a step (0.2 card heights or more) apart.
    """
    nearest = float(np.linalg.norm(line - centre, axis=1).min())
    return CLEAR_OF_SURE * card_h <= nearest <= 0.5 * card_h


# A row laid closer than `CLEAR_OF_SURE` (test 2799: four fives 0.10-0.17 card heights
# apart, the middle two read at 0.28 and 0.2) shows each covered card's index beside the next
# one's: an unsure card there is a card of its own when its index lies clear of the nearer sure
# card's, at least this share of its own index's length along the way to it off (a detector's
# second box on an index overlaps it) ...
TIGHT_CLEAR = 0.8
# ... on the chord between two sure cards of the line at most this many card heights apart,
# within this share of a card height across it. The detector's corners: t4 deals 600 -> 601
# (9719: a column of aces printing one top-right index), test and val the same; perfect
# corners the same (docs/LAYOUT.md, session 55).
TIGHT_CHORD = 1.2
TIGHT_ACROSS = 0.05


def _tight_place(centre: np.ndarray, line: np.ndarray, box: np.ndarray, card_h: float) -> bool:
    """Whether a card at `centre`, its index in `box`, lies between two sure cards of `line`
    with its index clear of the nearer one's (`TIGHT_CLEAR`, `TIGHT_CHORD`)."""
    dist = np.linalg.norm(line - centre, axis=1)
    k = int(np.argmin(dist))
    if not 0.0 < dist[k] <= 0.5 * card_h:
        return False
    way = (centre - line[k]) / dist[k]
    length = abs(way[0]) * (box[2] - box[0]) + abs(way[1]) * (box[3] - box[1])
    if dist[k] < TIGHT_CLEAR * length:
        return False
    for a in range(len(line)):
        for b in range(a + 1, len(line)):
            if np.hypot(*(line[b] - line[a])) > TIGHT_CHORD * card_h:
                continue
            t, across = _along_chord(centre, line[a], line[b])
            if 0.0 < t < 1.0 and across <= TIGHT_ACROSS * card_h:
                return True
    return False


def _misread(card: CardReading) -> bool:
    """Whether the card's rank is its column's, not its own reading (`_fix_misreads`)."""
    return any(note.startswith("read as ") for note in card.notes)


# an unsure card this far (card heights) from every sure card of its stack is a card of
# its own (`_clear_place`)
CLEAR_OF_SURE = 0.18


def _unsure_corners(unused: np.ndarray, min_confidence: float) -> list[dict]:
    """The review entry for the corners not used (none if there are none)."""
    if not len(unused):
        return []
    return [_item("unsure_corners", 0.8, f"{len(unused)} corner(s) read with confidence under "
                  f"{min_confidence:.2f} not used as cards (a false detection, or a card to "
                  f"add by hand)", corners=[int(i) for i in unused])]


# two boxes of one rank overlapping more than this (IoU) may be one index read twice
DUPLICATE_IOU = 0.3
# ... and more than this, they are one index whatever directions they are read in: test
# layouts from the detector's corners, meld exact 83.92 -> 84.02% at 0.5, v52 83.33 ->
# 83.46% (deals 66.67 -> 67.11%), val the same, u13 71.13 -> 70.98% (one meld); with the
# turned diagonal, 0.4 reads 4 more test melds right (84.35 -> 84.55%), the other sets and
# perfect corners the same (0.35 as 0.4, 0.6 less; docs/LAYOUT.md, session 24)
DUPLICATE_ANY_TURN_IOU = 0.4
# A box of one rank lying this much inside another's, read the same way within 60 degrees,
# is that index's again however surely both are read: the detector boxes a tall index once
# whole and once its upper half, both at 0.75-0.8 (u13). Val deals 72.73 -> 73.11%, u13
# 40.66 -> 41.76%, test and v52 the same, perfect corners the same (docs/LAYOUT.md, session 24).
DUPLICATE_INSIDE = 0.9
# An unsure box (under 0.7) overlapping more than this (IoU) a sure one (`LAYOUT_MIN_CONFIDENCE`)
# of another rank, read a quarter turn or more (`MISREAD_QUARTER`) from it, is that index boxed
# again and misread (t4 4559: a king's index in a column of kings also boxed as a jack, 0.57,
# read 150 degrees turned, IoU 0.31; as a second jack on team 0's side it kept the jacks'
# squared-up canasta from being one). The detector's corners: t4 613 -> 614, from a seat 152 ->
# 153, test and val the same; perfect corners the same. 0.1 to 0.3 alike; with no turn asked,
# 0.3 also val +1 but two t4 red threes lost; with neither box sure, a t4 deal lost
# (docs/LAYOUT.md, session 58)
DUPLICATE_OTHER_RANK_IOU = 0.2
# two indices of one rank whose outer corners lie closer than this (card heights) are one
TWIN_CORNER = 0.06
# ... when the smaller box lies this much inside the other (a box on part of the glyph). Test
# 139: a row of kings of two decks, tango's index (37 px wide) and anglo_modern's (22 px) of
# two neighbouring cards boxed 15 px apart, their inner corners 8 px apart, 0.6 of the smaller
# inside, were one king. The detector's corners: test deals 232 -> 233, t4 611 -> 612, from a
# seat 149 -> 151, val the same (a meld lost in a deal already wrong: val 2048, a ten boxed
# 21 and 32 px wide, 0.51 inside); perfect corners the same; 0.6-0.8 the same, 0.5 test
# 139 not, 0.9 a test deal lost (docs/LAYOUT.md, session 58)
TWIN_INSIDE = 0.7


def _keep_surest(same: np.ndarray, confidence: np.ndarray) -> tuple[np.ndarray, dict[int, list[int]]]:
    """Greedy from the surest corner: each kept corner drops the corners `same` pairs it with.

    Returns the kept indices and, by position among the kept, the dropped ones beside each.
    """
    same = same.copy()
    np.fill_diagonal(same, False)
    twins: dict[int, list[int]] = {}
    dropped = np.zeros(len(confidence), bool)
    for i in np.argsort(-confidence):
        if dropped[i]:
            continue
        for j in np.flatnonzero(same[i] & ~dropped):
            dropped[j] = True
            twins.setdefault(int(i), []).append(int(j))
    keep = np.flatnonzero(~dropped)
    position = {int(k): p for p, k in enumerate(keep)}
    return keep, {position[i]: js for i, js in twins.items()}


def _same_corner_twins(corners: Corners, angles: np.ndarray,
                       card_h: np.ndarray) -> tuple[np.ndarray, dict[int, list[int]]]:
    """Corners to keep, and the ones dropped beside each: two boxes on one printed corner.

    A detector's second, smaller box on an index (part of the glyph) may overlap the
    first little, yet share its outer corner, and so put its card on the same spot. Two
    corners of one rank facing one way (within 20 degrees), one of them unsure (under
    0.7), whose outer top-left or top-right corners lie within 0.06 card heights are one
    index, read by the surer, when the smaller lies mostly inside the other
    (`TWIN_INSIDE`): the indices of two cards of a column or row lie a step apart, but
    two decks print their indices at different places and sizes, and a wide index beside
    a narrow one of the next card may end where it ends. Indices are local to `corners`.
    """
    n = len(corners)
    left, right = _index_anchors(corners, angles)
    scale = np.minimum(card_h[:, None], card_h[None, :])
    near = np.zeros((n, n), bool)
    for anchor in (left, right):
        near |= np.linalg.norm(anchor[:, None] - anchor[None], axis=-1) < TWIN_CORNER * scale
    near &= corners.class_ids[:, None] == corners.class_ids[None, :]
    near &= _angle_diff(angles[:, None], angles[None, :]) < 20
    near &= np.minimum(corners.confidence[:, None], corners.confidence[None, :]) < 0.7
    near &= _box_inside(corners.boxes) >= TWIN_INSIDE
    return _keep_surest(near, corners.confidence)


def _box_overlaps(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intersection areas of every pair of (x1, y1, x2, y2) boxes (n, n), and their areas."""
    lo = np.maximum(boxes[:, None, :2], boxes[None, :, :2])
    hi = np.minimum(boxes[:, None, 2:], boxes[None, :, 2:])
    return np.prod(np.clip(hi - lo, 0.0, None), axis=-1), np.prod(boxes[:, 2:] - boxes[:, :2],
                                                                   axis=-1)


def _box_iou(boxes: np.ndarray) -> np.ndarray:
    """Intersection over union of every pair of (x1, y1, x2, y2) boxes, (n, n)."""
    inter, area = _box_overlaps(boxes)
    return inter / np.maximum(area[:, None] + area[None, :] - inter, 1e-9)


def _duplicates(corners: Corners) -> tuple[np.ndarray, dict[int, list[int]]]:
    """Corners to keep, and for each kept one the duplicates of it that were dropped.

    A detector can report one printed index twice (overlapping tiles or scales); two
    corners on one spot facing one way are one index, read by the surer of the two. So
    are two boxes of one rank overlapping by more than 0.3 (intersection over union)
    whose angles agree within 60 degrees, one of them read unsurely (under 0.7): the
    detector's second box on an index is often shifted by a third of the box, its
    angle read apart, and it is the unsure one, while the indices of two cards of a
    column rarely overlap that much (two decks' indices in one column can). Two such
    boxes overlapping by more than 0.4 are one index however far apart their angles
    are read: the direction of a thin bare glyph is read a quarter or more off (a
    kde-oxygen-white 9 read at 60 and at 352 degrees on one box; such a natural was
    counted twice in its meld). A box lying almost wholly inside another of its rank,
    read the same way, is one index whatever the confidences (a tall index boxed once
    whole and once its upper half). An unsure box of any rank overlapping a sure one
    (`DUPLICATE_OTHER_RANK_IOU`) and read a quarter turn or more from it is a second box
    on that index, misread.
    """
    centres = corners.centers
    size = np.minimum(corners.heights, corners.boxes[:, 2] - corners.boxes[:, 0])
    d = np.linalg.norm(centres[:, None] - centres[None], axis=-1)
    angles = np.nan_to_num(corners.angle.astype(float))
    turn = _angle_diff(angles[:, None], angles[None, :])
    same_spot = (d < 0.35 * np.minimum(size[:, None], size[None, :])) & (turn < 30)
    same_rank = corners.class_ids[:, None] == corners.class_ids[None, :]
    unsure = np.minimum(corners.confidence[:, None], corners.confidence[None, :]) < 0.7
    overlap = _box_iou(corners.boxes)
    same_spot |= same_rank & unsure & (overlap > DUPLICATE_IOU) & (turn < 60)
    same_spot |= same_rank & unsure & (overlap > DUPLICATE_ANY_TURN_IOU)
    same_spot |= same_rank & (_box_inside(corners.boxes) > DUPLICATE_INSIDE) & (turn < 60)
    sure = np.maximum(corners.confidence[:, None], corners.confidence[None, :]) \
        >= LAYOUT_MIN_CONFIDENCE
    same_spot |= unsure & sure & (overlap > DUPLICATE_OTHER_RANK_IOU) & (turn >= MISREAD_QUARTER)
    return _keep_surest(same_spot, corners.confidence)


def _box_inside(boxes: np.ndarray) -> np.ndarray:
    """(n, n): the share of the smaller of two boxes that lies inside the other."""
    inter, area = _box_overlaps(boxes)
    return inter / np.maximum(np.minimum(area[:, None], area[None, :]), 1e-6)


# the naturals whose index the reader mistakes for a joker's (the JOKER word's letters)
JOKER_LOOKALIKES = ("J", "K")
# a lone natural of another rank in a column read at most this surely is a misread (0.9
# until session 23; 0.8: u13 deals 37.36 -> 38.46%, meld exact the same or better on test,
# val, v52 and u13; 0.95 a u13 deal fewer; docs/LAYOUT.md, session 23)
MISREAD_BELOW = 0.8
# ... and inside the column's line (its cards on both sides of it, at its angle) read at
# most this surely (the detector's corners: test deals 218 -> 219, t4 590 -> 593 of 804,
# val and perfect corners the same; 0.99 a test meld fewer; docs/LAYOUT.md, session 51)
MISREAD_INSIDE_BELOW = 0.95
# ... where a card read turned a quarter off the line counts as inside it when its index lies
# this many card heights or more from the stack's other indices (test 2059: an eight's index
# read as a king lying sideways, 0.85, between two eights 0.25 card heights away, kept the
# king's squared-up canasta beside it from being one; t4 11889: a joker's K, 0.16 from the
# joker's index. Detector corners: test meld exact 88.44 -> 88.49%, deals the same on the
# three sets and from a seat, perfect corners the same; docs/LAYOUT.md, session 54)
MISREAD_CLEAR = 0.2
# (turned this many degrees or more: a quarter turn, about, as an index read sideways)
MISREAD_QUARTER = 60.0


def _leading_rank(cards: list[CardReading], stack: list[int]
                  ) -> tuple[str, Counter] | None:
    """A team's stack's commonest natural rank, two or more cards of it, and the count of
    each natural rank in it; None for a stack no team owns, of wilds or threes."""
    if not stack or cards[stack[0]].team is None:
        return None
    counts = Counter(cards[i].rank for i in stack if not cards[i].is_wild)
    if not counts:
        return None
    rank, n = counts.most_common(1)[0]
    if rank in ("3R", "3B") or n < 2:
        return None
    return rank, counts


def _fix_misreads(cards: list[CardReading], stacks: list[list[int]], centres: np.ndarray,
                  card_h: float, boxes: np.ndarray | None = None) -> None:
    """Relabel a lone odd rank inside a column of another rank: almost always a misread.

    Melds lie apart, so a single natural (or a three, which is never in a meld) of rank
    X overlapping a stack of rank R, read with `MISREAD_BELOW` or less, is most likely
    an R read wrong; lying inside R's line (R cards on both sides of it, at its angle, or
    read a quarter turned on an empty place of it: `_inside_its_line`), read with
    `MISREAD_INSIDE_BELOW` or less: a touching meld lies past a line's end or beside it.
    A misread read a quarter turned is laid on the line (`_turn_to_its_line`); `centres`
    are the corners' centres. A wild card is a card of its column as often as not, so it
    keeps its reading, but for a joker read with low confidence (below 0.6, where a card
    goes to the review list anyway) in a column of jacks or kings: the reader mistakes the
    J and K of a jack's or king's index for the JOKER word's letters; not one whose box
    (given `boxes`, the corners' boxes) is far narrower than the column's own indices
    (`_narrow_joker`). It is noted for review.

    Why not every unsure wild: of the wilds this turned into their column's rank on the
    test split's detector corners, 10 of 12 were wilds (every 2, and jokers in columns of
    other ranks); with jokers in J and K columns only, meld exact and deals read right rose
    or held on every set (u13 deals 35.16 -> 37.36%; docs/LAYOUT.md, session 23).
    """
    for stack in stacks:
        lead = _leading_rank(cards, stack)
        if lead is None:
            continue
        rank, counts = lead
        n = counts[rank]
        if n < 2 * (sum(counts.values()) - n):
            continue
        for i in stack:
            card = cards[i]
            if card.rank == rank or counts[card.rank] > 1:
                continue
            if card.is_wild and not (card.rank == "JK" and rank in JOKER_LOOKALIKES):
                continue
            if card.is_wild and boxes is not None and _narrow_joker(cards, stack, i, rank, boxes):
                continue  # a joker's word, not the column's index
            limit = 0.6 if card.is_wild else MISREAD_BELOW
            if not card.is_wild and card.rank_confidence > limit \
                    and _inside_its_line(cards, stack, i, rank, centres, card_h):
                limit = MISREAD_INSIDE_BELOW
            if card.rank_confidence > limit:
                continue  # read surely: a card of another meld or pile touching this one
            card.notes.append(f"read as {card.rank} in a column of {rank}: counted as {rank}")
            card.rank = rank
            card.confidence *= 0.5
            _turn_to_its_line(cards, stack, i, rank, centres, card_h)


# A joker read unsurely in a column of jacks or kings is their index misread, unless its
# box's narrow side is at most this share of the column's indices' median (test 1179: a
# kde-oxygen-white joker's word 5 px wide beside kings' indices 12-13 px wide, read a joker
# at 0.57 where the kings' wilds begin, was counted a fifth king). The detector's corners:
# test deals 226 -> 227, meld exact val 86.85 -> 86.90%, t4 86.82 -> 86.83%; 0.6 the same deal,
# 0.9 a t4 deal fewer; perfect corners the same (docs/LAYOUT.md, session 55).
NARROW_JOKER = 0.75


def _narrow_joker(cards: list[CardReading], stack: list[int], i: int, rank: str,
                  boxes: np.ndarray) -> bool:
    """Whether card `i`'s index boxes are far narrower than those of its stack's cards of
    `rank` (`NARROW_JOKER`)."""
    narrow = np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    theirs = [m for j in stack if cards[j].rank == rank for m in cards[j].corner_ids]
    if not cards[i].corner_ids or not theirs:
        return False
    mine = float(narrow[cards[i].corner_ids].min())
    return mine <= NARROW_JOKER * float(np.median(narrow[theirs]))


def _line_angle(cards: list[CardReading], stack: list[int], i: int, rank: str) -> float:
    """The mean direction of the stack's cards of `rank`, card `i` left out."""
    return _circular_mean(np.array([cards[j].angle for j in stack
                                    if j != i and cards[j].rank == rank]))


def _turn_to_its_line(cards: list[CardReading], stack: list[int], i: int, rank: str,
                      centres: np.ndarray, card_h: float) -> None:
    """A misread card seen by one index read `MISREAD_QUARTER` degrees or more off its
    stack's line of `rank` is laid at the line's angle, turned about that index
    (`_placed`): its direction was misread with its rank, and left so it would lie off its
    place in the line (a gap there would seem to hide one more card)."""
    card = cards[i]
    if len(card.corner_ids) != 1:
        return
    angle = _line_angle(cards, stack, i, rank)
    if _axis_diff(card.angle, angle) >= MISREAD_QUARTER:
        card.center = tuple(float(v) for v in _placed(card, centres, angle, card_h))
        card.angle = angle


def _inside_its_line(cards: list[CardReading], stack: list[int], i: int, rank: str,
                     centres: np.ndarray | None = None, card_h: float = 0.0) -> bool:
    """Whether card `i` lies inside its stack's line of `rank` (and wilds), at the line's
    angle (within `MISREAD_TURN`, or half turned): cards of the line on both sides of it
    along the column or row. Another meld touching a line lies past its end or beside it.

    Given `centres` (the corners') and `card_h`, a card seen by one index read turned about
    a quarter off the line (`MISREAD_QUARTER` degrees or more) lies inside it too where,
    turned to the line (`_placed`), it lies between the line's cards with its index
    `MISREAD_CLEAR` card heights or more from every other index of the stack: the reader
    misread the index's direction with its rank (a second box on a card's index, a joker's
    letter, lies nearer).
    """
    line = [j for j in stack if j != i and (cards[j].rank == rank or cards[j].is_wild)]
    angle = _line_angle(cards, stack, i, rank)
    where = np.asarray(cards[i].center)
    turn = _axis_diff(cards[i].angle, angle)
    if turn > MISREAD_TURN:
        if centres is None or len(cards[i].corner_ids) != 1 or turn < MISREAD_QUARTER:
            return False
        index = centres[cards[i].corner_ids[0]]
        others = [m for j in stack if j != i for m in cards[j].corner_ids]
        if others and np.linalg.norm(centres[others] - index, axis=1).min() \
                < MISREAD_CLEAR * card_h:
            return False
        where = _placed(cards[i], centres, angle, card_h)
    pts = np.array([cards[j].center for j in line])
    # along the column or the row, whichever way its cards spread
    axis = max((a for a, _ in _line_axes(angle)), key=lambda a: float(np.ptp(pts @ a)))
    along, here = pts @ axis, float(where @ axis)
    return bool((along < here).any() and (along > here).any())


def _infer_hidden_cards(cards: list[CardReading], stacks: list[list[int]],
                        card_h: float, prints: dict[int, int] | None = None,
                        sides: np.ndarray | None = None) -> None:
    """Add the cards a gap in a column or row shows to be hidden (under a hand, a finger).

    A team's columns are laid with one step, and a row with its own: a gap of m steps
    between two visible cards of a meld-like stack hides m - 1 cards, most likely
    naturals of the stack's rank. They are added with no corners, low confidence and a
    note for the review list. `prints` (corner number -> print size, `_print_groups`)
    holds a gap between two decks' cards to a closer fit (`MIXED_GAP_FIT`); where the
    photo's indices fall into no two print sizes, `sides` (each corner's box's longer side,
    by corner number) tells the gap's two cards' prints apart (`_two_prints`). A wide gap
    (`MISREAD_END_GAP`) to a card past the line's end counted as its rank against its own
    reading hides nothing: that card is print away from the line. A fan's gaps
    are read along its arc (`_infer_fan_gaps`); before a column's are read, a second box
    lying on one of its cards' places is taken out of it (`_leave_out_second_box`), so
    the gaps are measured between cards only.
    """
    _join_split_columns(cards, stacks, card_h)
    column_steps: dict[int, tuple[int, list[float]]] = {}  # stack -> (team, its gaps)
    lines = []
    for k, stack in enumerate(stacks):
        if not stack:
            continue
        team = cards[stack[0]].team
        ranks = _natural_ranks(cards, stack)
        if team is None or len(stack) < 2 or len(ranks) != 1 or "3R" in ranks:
            continue
        _leave_out_second_box_in_fan(cards, stack, card_h, prints)
        if _infer_fan_gaps(cards, stack, k, team, next(iter(ranks)), card_h, prints):
            continue
        angle = _circular_mean(np.array([cards[i].angle for i in stack]))
        _leave_out_second_box(cards, stack, angle, card_h)
        up, right = _unit_vectors(np.array([angle]))
        pts = np.array([cards[i].center for i in stack])
        down_pos, across_pos = -(pts @ up[0]), pts @ right[0]
        for along, lateral, kind in ((down_pos, across_pos, "column"),
                                     (across_pos, down_pos, "row")):
            if np.ptp(along) < 0.1 * card_h:
                continue
            # straight within a quarter card (perspective may tilt the line): a column laid
            # by hand wanders sideways, and a one-index card's place is read to a few
            # hundredths of a card (angle noise swings the card about its index)
            drift = lateral - np.polyval(np.polyfit(along, lateral, 1), along) \
                if len(stack) > 2 else lateral - lateral.mean()
            if np.ptp(lateral) > 0.4 * card_h or np.ptp(drift) > 0.25 * card_h:
                continue
            order = np.argsort(along)
            gaps = np.diff(along[order])
            if gaps.min() < 0.1 * card_h:
                continue  # two cards on one spot: not a clean column or row
            lines.append((k, kind, order, gaps, next(iter(ranks)), angle, up[0], right[0]))
            if kind == "column":
                column_steps[k] = (team, gaps.tolist())
    for k, kind, order, gaps, rank, angle, up, right in lines:
        stack = stacks[k]
        team = cards[stack[0]].team
        gaps = _print_offset_out(cards, [stack[o] for o in order], gaps, prints, card_h)
        own = _regular_steps(gaps)
        team_steps = [g for t, gs in column_steps.values() if t == team for g in gs]
        # a column's own steps where it has enough (perspective changes the step across
        # the photo), else the team's: a team lays its columns with one step
        pool = own if len(own) >= 2 or kind == "row" or len(team_steps) < 3 else team_steps
        if len(pool) < 2:
            continue
        step = float(np.median(pool))
        if not 0.12 * card_h < step < 0.7 * card_h:
            continue
        direction = -up if kind == "column" else right
        # a line with several steps of its own: the spacing near that step that puts all
        # its cards on one regular lattice (reading noise makes single gaps uneven, the
        # line as a whole is regular); else each gap against the step
        lattice = _line_lattice(gaps, 0.85 * step, 1.2 * step) if len(own) >= 2 else None
        # the team's other columns' regular steps: a lattice far from them is the column's
        # cards swung about their indices (each card turned a few degrees its own way moves
        # its index-read place), not cards hidden between them
        others = [g for j, (t, gs) in column_steps.items() if j != k and t == team
                  for g in _regular_steps(gs)]
        if lattice is not None and kind == "column" and len(others) >= 3 and \
                abs(lattice[0] / float(np.median(others)) - 1) > TEAM_STEP_OFF:
            lattice = None
            step = float(np.median(others))
        if lattice is not None:
            step, in_gap = lattice
        else:
            in_gap = [int(round(gap / step)) if abs(gap - round(gap / step) * step)
                      <= 0.3 * step else 1 for gap in gaps]
        for g, m in enumerate(in_gap):
            if m < 2 or (m == 2 and abs(gaps[g] / step - 2) > MIXED_GAP_FIT
                         and _two_prints(cards, [stack[order[g]], stack[order[g + 1]]], prints,
                                         sides)):
                continue
            start = np.array(cards[stack[order[g]]].center)
            # between two wilds the hidden card is most likely a wild too; else a natural
            before, after = cards[stack[order[g]]], cards[stack[order[g + 1]]]
            if m >= MISREAD_END_GAP and ((g == 0 and _misread(before))
                                         or (g == len(gaps) - 1 and _misread(after))):
                continue  # a misread far past the line's end: print elsewhere, not its card
            guess = "2" if before.is_wild and after.is_wild else rank
            _add_hidden(cards, stack, k, team, guess, angle,
                        [start + direction * step * extra for extra in range(1, m)],
                        f"hidden card inferred from a gap in the {kind}: counted as a {guess}")
        if kind == "column":
            _infer_hidden_first(cards, stacks, k, rank, angle, step, card_h)


def _box_like(corners: Corners, m: int, centre: np.ndarray) -> np.ndarray:
    """A box the size of corner `m`'s, centred at `centre`."""
    half = (corners.boxes[m, 2:] - corners.boxes[m, :2]) / 2
    return np.concatenate([centre - half, centre + half])


# A card inferred hidden in a gap is counted as its line's rank, but the detector misses
# jokers most (their index is a word, a star, a picture in another design): the index may
# show though no corner was found on it. Read again where its index lies (`_look_at_hidden`),
# one read as a wild this surely is that wild. On the detector's corners, of the 77 cards
# inferred on a true card's place (test and val), 69 had their rank right; of the 8 others
# 6 were jokers, 3 of them read as jokers 0.95-1.00 there; no other card read as a wild
# over 0.6. Deals read right: test 221 -> 222, val 211 -> 212, t4 the same (0.7 alike;
# docs/LAYOUT.md, session 53). Since session 58 a wild read less surely counts too where it
# is read surer than the rank the card was counted as: a joker's word shares the J and K of
# jacks and kings, and a hidden joker in their columns reads 0.37-0.58 a joker, a few
# hundredths a king or jack (val 1168, t4 6829, 9069). Detector corners: val 207 -> 208, t4
# 614 -> 615 (t4 7239 lost: a hidden king read 0.56 a joker), test the same; from a seat the
# same deals, meld exact 82.33 -> 82.43% (0.25 alike; 0.2 a test deal lost, 0.15 three; 0.4
# and 0.55 gain val 1168 alone; docs/LAYOUT.md, session 58).
LOOK_WILD = 0.3


def _look_at_hidden(cards: list[CardReading], stacks: list[list[int]], corners: Corners,
                    look: Callable[[np.ndarray], np.ndarray]) -> None:
    """Ask `look` about the index place of every hidden card of a team's stack; one read as
    a wild `LOOK_WILD` or more, and surer than as the rank it was counted as, becomes that
    wild (noted).

    A hidden card's index lies where its stack's nearest card seen by a top index (read
    the card's own way) shows it: that index's offset from its card's centre, turned to the
    hidden card's direction, in a box of that index's size.
    """
    boxes, hidden = [], []
    for k, card in enumerate(cards):
        if card.corner_ids or card.team is None or not 0 <= card.stack < len(stacks):
            continue
        tops = [(float(np.hypot(*np.subtract(cards[i].center, card.center))), i, m)
                for i in stacks[card.stack] for m in cards[i].corner_ids
                if _shows_top(cards[i], m, corners)]
        if not tops:
            continue
        _, i, m = min(tops)
        boxes.append(_index_box(cards[i], m, corners, np.asarray(card.center), card.angle))
        hidden.append(k)
    if not boxes:
        return
    probs = np.asarray(look(np.array(boxes)))
    for k, p in zip(hidden, probs, strict=True):
        counted = p[INDEX_CLASSES.index(cards[k].rank)]
        for wild in sorted(WILD_CLASSES):
            read = p[INDEX_CLASSES.index(wild)]
            if read >= LOOK_WILD and read > counted and cards[k].rank != wild:
                cards[k].notes.append(f"its index read where it lies: a {wild}")
                cards[k].rank = wild


# A wild read in a team's stack of one rank is often that rank misread: asked about its
# index again, the readers read the stack's rank there this surely or more only where it is
# (corners on the true meld cards of test and val: a true wild's index 1 in 4,849 times, a
# natural read as a wild 5 in 32). Only a wild read less surely than 1 - this is asked (its
# rank's share leaves no room for more). Detector corners: test deals 234 -> 235 (119: a
# seven read a 2 at 0.60, a seven at 0.39), t4 621 -> 622, val, perfect corners and photos
# from a seat the same; 0.1 loses a val and a t4 deal (jokers read their column's rank 0.10
# and 0.12; docs/LAYOUT.md, session 62).
LOOK_WILD_NATURAL = 0.2


def _look_at_wilds(cards: list[CardReading], stacks: list[list[int]], corners: Corners,
                   look: Callable[[np.ndarray], np.ndarray]) -> None:
    """Ask `look` about the indices of the unsure wild cards of each team's stack with two
    or more naturals of one rank; one whose index reads as that rank `LOOK_WILD_NATURAL` or
    more is that rank (noted)."""
    asks = []  # (card, corner, the stack's rank)
    for stack in stacks:
        lead = _leading_rank(cards, stack)
        if lead is None:
            continue
        rank = lead[0]
        asks.extend((i, m, rank) for i in stack if cards[i].is_wild
                    for m in cards[i].corner_ids
                    if corners.rank_confidence[m] < 1.0 - LOOK_WILD_NATURAL)
    if not asks:
        return
    probs = np.asarray(look(corners.boxes[[m for _, m, _ in asks]]))
    for (i, _, rank), p in zip(asks, probs, strict=True):
        read = float(p[INDEX_CLASSES.index(rank)])
        if read >= LOOK_WILD_NATURAL and cards[i].is_wild:
            cards[i].notes.append(f"read as {cards[i].rank}, and as {rank} {_percent(read)}, "
                                  f"in a column of {rank}: counted as {rank}")
            cards[i].rank = rank


# ... and a column of one rank may hold a card the detector missed where no gap was read as
# hiding one: past its front card when that shows its top index alone (a whole card shows its
# bottom index too, unless its deck prints none), or midway across a gap of about two steps
# off the column's lattice (of a fan, two chords). The index place there read as the line's
# rank or a wild this surely is that card (`_look_along_lines`). Detector corners: the front,
# t4 deals 597 -> 598, val meld exact 86.69 -> 86.75%, test and the seat the same (0.6 alike;
# 0.4 loses test 1099); the columns' gaps too, t4 598 -> 599 (from 1.4 steps alike); the
# fans' gaps too, test 222 -> 223 (any stack ordered by its cards' turn: 49 deals lost on the
# three sets). One step before a column's first card: val 368 lost (docs/LAYOUT.md, session
# 53). 0.75 until session 56: t4 8749's queen read 0.70 in a column's gap (her own corner,
# read 47 degrees off, had paired with another card's); t4 605 -> 606, val meld exact 87.06 ->
# 87.11%, test the same (0.6 alike, 0.55 loses test 1099; docs/LAYOUT.md, session 56).
LOOK_PAST = 0.65
# the gaps looked into, in the line's steps
LOOK_GAP = (1.6, 2.5)
# a column whose cards spread wider than this many card heights across it is none to look
# along (test 119: seven aces laid by hand 0.43 card heights from side to side, one hidden in
# a gap of 2.4 steps; 0.4 until session 59: test meld exact 89.02 -> 89.07%, t4 87.22 ->
# 87.23%, no deal moved on any set; 0.6 test alike, t4 none; docs/LAYOUT.md, session 59)
LOOK_ACROSS = 0.5
# A place guessed from a line's step lies up to a third of an index off its card's index
# (test 1689: a column's front seven 11 px below the place, its index 20 px tall), and a
# crop that far off reads unsurely (0.31 where the index's own box reads 0.78). Where
# `look` read no card, the detector looks for the index near the place (`find`,
# `OnnxDetector.find_near`); one found there and read as the line's rank this surely is
# that card, unless it is a card's index already (its centre within `FOUND_HELD` of its
# long side of a corner of a card: the column's front card's bottom index, a neighbour).
# Detector corners: test deals 230 -> 231, t4 604 -> 605, val the same (meld exact 87.00 ->
# 87.06%); 0.45 alike, 0.75 wins only test 1689; without the held check, a val and a t4
# deal lost (docs/LAYOUT.md, session 56).
LOOK_FOUND = 0.6
FOUND_HELD = 0.5
# A row's back card (the end its indices lie toward) is looked for one step past it (test
# 2099: a row of eight tango jacks and three wilds, the back jack unseen, found there at 0.61).
# Only on a straight row, its indices read within ROW_TURN degrees of their mean direction
# (test 1519 and 2729 are fans whose turn `_fan_places` does not take: a step past the end
# lay on the end card's own index), and a step of ROW_CLEAR of the back index's extent along
# the row or more (closer, the place is the back index itself). Detector corners: test 237 ->
# 238, t4 624 -> 625, from a seat 153 -> 154, val the same; ROW_TURN 20 alike (test meld exact
# lower). An index found there nearer a card's corner than the place is that card's (val 1168,
# t4 8669: a second box on the back index read 0.62-0.64; docs/LAYOUT.md, session 63).
ROW_TURN = 10.0
ROW_CLEAR = 0.9
# A column's back card is looked for one step before it too (val 2388, t4 7029), by the
# detector's search alone, as the line's rank (asked of the reader too, val 928's 2 read
# there, off the column, was lost; the search alone finds the same cards) and only while the
# pack has copies of the rank off the teams' sides (val 1678: a ninth five). An index the search finds
# for any place is its card's only if its box is within FOUND_LIKE of the place's (the line's
# index's) width and height: a card of the line prints its index alike (t4 5959: past a column
# of kings, the discard pile's king turned 45 degrees, boxed 34 x 32 px against 33 x 54).
# Detector corners: val 214 -> 215, t4 625 -> 626, test and from a seat the same; without the
# likeness check val 213, t4 625 (+1 -1); FOUND_LIKE 0.35 alike, 0.25 loses test 119
# (docs/LAYOUT.md, session 63).
FOUND_LIKE = 0.5
# The search costs about 2.7 ms a place (2 cores), and a column's back place, asked of every
# column, tripled its use (layout p50 18 -> 41 ms). The reader, asked there first (not taken
# at its word), reads the column's rank under BACK_HINT where nothing of the kind lies; only
# the other places go on to the search: p50 41 -> 30 ms, the same deals on the three sets and
# from a seat; 0.05 loses t4 7029, whose back index the reader read at 0.02-0.05 a third of
# an index off (docs/LAYOUT.md, session 63).
BACK_HINT = 0.02


def _look_along_lines(cards: list[CardReading], stacks: list[list[int]], corners: Corners,
                      look: Callable[[np.ndarray], np.ndarray], card_h: float,
                      find: Find | None = None) -> None:
    """Look for the cards a team's line of one rank (a column, a fan or a row) may hide: in
    its gaps and past its front card (`_column_places`, `_fan_places`) and past a row's
    back card (`_row_back`), `look` is asked first, and one read as the line's rank or a
    wild `LOOK_PAST` or more is a card there (no corners, noted); before a column's back
    card (`_column_back`) and past a fan's ends (`_fan_ends`), only with `find` and while
    the pack has copies of the rank off the teams' sides, it is not taken at its word (a
    box guessed off a line's end may lie on other print: val 928, a 2 read there), only
    asked whether it sees the rank at all (`BACK_HINT`).
    Where no card is read, an index `find` finds near the place, read as the line's
    rank `LOOK_FOUND` or more, is that card, unless it is a card's index already (its centre
    within `FOUND_HELD` of its long side of a card's corner, or nearer that corner than the
    place) or boxed otherwise than the line's indices (`FOUND_LIKE`)."""
    boxes, where = [], []
    on_sides = Counter(c.rank for c in cards if c.team is not None)
    for k, stack in enumerate(stacks):
        ranks = _natural_ranks(cards, stack)
        if (len(stack) < 2 or cards[stack[0]].team is None or len(ranks) != 1 or "3R" in ranks
                or sum(bool(cards[i].corner_ids) for i in stack) < 2):
            continue
        rank = next(iter(ranks))
        inside = (_column_places(cards, stack, corners, card_h)
                  or _fan_places(cards, stack, corners, card_h))
        spent = on_sides[rank] >= PACK_LIMITS.get(rank, 8)
        ends = [] if spent or find is None else (_column_back(cards, stack, corners, card_h)
                                                  or _fan_ends(cards, stack, corners, card_h))
        row_back = [] if inside or ends else _row_back(cards, stack, corners, card_h)
        for places, read in ((inside, True), (row_back, True), (ends, False)):
            for box, centre, angle in places:
                boxes.append(box)
                where.append((k, rank, centre, angle, read))
    if not boxes:
        return
    probs = np.asarray(look(np.array(boxes)))
    reads = [next((r for r in (rank, *sorted(WILD_CLASSES))
                   if p[INDEX_CLASSES.index(r)] >= LOOK_PAST), None) if read else None
             for (_, rank, _, _, read), p in zip(where, probs, strict=True)]
    # a column's back or a fan's end goes to the search only where the reader sees a trace
    # of its rank
    unread = [j for j, read in enumerate(reads) if read is None
              and (where[j][4] or probs[j, INDEX_CLASSES.index(where[j][1])] >= BACK_HINT)]
    if find is not None and unread:
        asked = np.array([boxes[j] for j in unread])
        found, found_probs = find(asked)
        held = [m for card in cards for m in card.corner_ids]
        centres = (found[:, :2] + found[:, 2:]) / 2
        clear = np.ones(len(unread), bool)
        if held:
            to_held = np.linalg.norm(centres[:, None] - corners.centers[held][None],
                                     axis=-1).min(axis=1)
            to_place = np.linalg.norm(centres - (asked[:, :2] + asked[:, 2:]) / 2, axis=1)
            clear = (to_held >= FOUND_HELD * long_sides(found)) & (to_held >= to_place)
        # the place's box is the line's index's size: a card of the line prints it alike
        sides = np.maximum(found[:, 2:] - found[:, :2], 1e-6) / np.maximum(
            asked[:, 2:] - asked[:, :2], 1e-6)
        like = (np.abs(np.log(sides)) < np.log(1 + FOUND_LIKE)).all(axis=1)
        for j, p, ok in zip(unread, found_probs, clear & like, strict=True):
            rank = where[j][1]
            if ok and p[INDEX_CLASSES.index(rank)] >= LOOK_FOUND:
                reads[j] = rank
    for (k, _, centre, angle, _), read in zip(where, reads, strict=True):
        if read is not None:
            _add_hidden(cards, stacks[k], k, cards[stacks[k][0]].team, read, angle, [centre],
                        f"its index read where a card of its line may lie unseen: a {read}")


def _shows_top(card: CardReading, m: int, corners: Corners) -> bool:
    """Whether `card`'s corner `m` is its top index: read the card's own way (a bottom index
    is printed upside down)."""
    return bool(_angle_diff(float(corners.angle[m]), card.angle) < 45.0)


def _top_index(cards: list[CardReading], ids: list[int], corners: Corners):
    """The first of the cards `ids` seen by a top index (`_shows_top`), and that index's
    corner number; None if none is."""
    return next(((cards[i], m) for i in ids for m in cards[i].corner_ids
                 if _shows_top(cards[i], m, corners)), None)


def _index_box(card: CardReading, m: int, corners: Corners, centre: np.ndarray,
               angle: float) -> np.ndarray:
    """The box of the index of a card at `centre` turned to `angle`, where `card`'s index
    `m` lies on `card` (its offset from the card's centre turned with the card)."""
    up, right = _unit_vectors(np.array([card.angle, angle]))
    offset = corners.centers[m] - np.asarray(card.center)
    return _box_like(corners, m, centre + (offset @ up[0]) * up[1] + (offset @ right[0]) * right[1])


def _column_line(cards: list[CardReading], stack: list[int], card_h: float):
    """A column's (angle, up vector, its cards' order from the back, gaps, step), or None if
    the stack is no column: cards laid one below the other along their own direction, within
    `LOOK_ACROSS` card heights from side to side, a step of 0.12-0.7 card heights."""
    angle = _circular_mean(np.array([cards[i].angle for i in stack]))
    up, right = (v[0] for v in _unit_vectors(np.array([angle])))
    pts = np.array([cards[i].center for i in stack])
    down = -(pts @ up)
    order = np.argsort(down)
    gaps = np.diff(down[order])
    step = float(np.median(gaps))
    if (np.ptp(pts @ right) > LOOK_ACROSS * card_h or gaps.min() < 0.1 * card_h
            or not 0.12 * card_h < step < 0.7 * card_h):
        return None
    return angle, up, order, gaps, step


def _column_places(cards: list[CardReading], stack: list[int], corners: Corners,
                   card_h: float) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Where a column may hold a card unseen, as (index box, card centre, angle): midway
    across each gap of `LOOK_GAP` steps, and one step past its front card when that is seen
    by its top index alone. Nothing if the stack is no column."""
    line = _column_line(cards, stack, card_h)
    if line is None:
        return []
    angle, up, order, gaps, step = line
    out = []
    for g in np.flatnonzero((gaps >= LOOK_GAP[0] * step) & (gaps <= LOOK_GAP[1] * step)):
        pair = [stack[order[g]], stack[order[g + 1]]]
        top = _top_index(cards, pair, corners)
        if top is not None:
            middle = np.mean([cards[i].center for i in pair], axis=0)
            out.append((_index_box(*top, corners, middle, angle), middle, angle))
    front = cards[stack[order[-1]]]
    if not front.fully_visible and len(front.corner_ids) == 1 and \
            _top_index(cards, [stack[order[-1]]], corners) is not None:
        m = front.corner_ids[0]
        out.append((_box_like(corners, m, corners.centers[m] - up * step),
                    np.asarray(front.center) - up * step, angle))
    return out


def _column_back(cards: list[CardReading], stack: list[int], corners: Corners,
                 card_h: float) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Where a column's back card may lie unseen, as [(index box, card centre, angle)]: one
    step before its back card (the one whose top index the others leave showing last, at
    the end the indices lie toward), seen by its top index. Empty if the stack is no
    column; a card missed there leaves no gap to see."""
    line = _column_line(cards, stack, card_h)
    top = None if line is None else _top_index(cards, [stack[line[2][0]]], corners)
    if top is None:
        return []
    angle, up, _, _, step = line
    back, m = top
    return [(_box_like(corners, m, corners.centers[m] + up * step),
             np.asarray(back.center) + up * step, angle)]


def _row_back(cards: list[CardReading], stack: list[int], corners: Corners,
              card_h: float) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Where a row's back card may lie unseen, as [(index box, card centre, angle)]: one
    step past its back card. Each card of a row covers the one before it but for the strip
    its index is printed on, so the back card is the end its indices lie toward; a card
    missed there leaves no gap to see. Only a straight row (its indices read within
    `ROW_TURN` of their mean direction: a fan's ends read alike otherwise) whose step clears
    an index (`ROW_CLEAR` of the back index's extent along the row: a place nearer is the
    back card's own index). Empty if the stack is no such row."""
    own = [float(corners.angle[m]) + (0.0 if _shows_top(cards[i], m, corners) else 180.0)
           for i in stack for m in cards[i].corner_ids]
    angle = _circular_mean(np.array(own))
    if max(_angle_diff(a, angle) for a in own) > ROW_TURN:
        return []
    up, right = (v[0] for v in _unit_vectors(np.array([angle])))
    pts = np.array([cards[i].center for i in stack])
    along = pts @ right
    order = np.argsort(along)
    gaps = np.diff(along[order])
    step = float(np.median(gaps))
    if (np.ptp(pts @ up) > LOOK_ACROSS * card_h or gaps.min() < 0.06 * card_h
            or not 0.08 * card_h < step < 0.6 * card_h):
        return []
    card, m = _top_index(cards, stack, corners) or (None, None)
    if card is None:
        return []
    side = float(np.sign((corners.centers[m] - np.asarray(card.center)) @ right))
    top = _top_index(cards, [stack[order[0] if side < 0 else order[-1]]], corners)
    if side == 0 or top is None:
        return []
    back, m = top
    box = corners.boxes[m]
    if step < ROW_CLEAR * (abs((box[2] - box[0]) * right[0]) + abs((box[3] - box[1]) * right[1])):
        return []
    shift = side * step * right
    return [(_box_like(corners, m, corners.centers[m] + shift), np.asarray(back.center) + shift,
             angle)]


def _fan_line(cards: list[CardReading], stack: list[int], card_h: float):
    """A fan's (cards' order in turn, their centres in it, chord lengths, median chord), or
    None if the stack is no fan: three cards or more turning `FAN_ARC_TURN` degrees or more
    end to end, each chord across them, all one way (as `_infer_fan_gaps`)."""
    if len(stack) < 3:
        return None
    turn, order, pts, chords, lengths = _in_turn(cards, stack)
    step = float(np.median(lengths))
    _, right = _unit_vectors(np.array([_circular_mean([cards[i].angle for i in stack])]))
    across = (chords @ right[0]) / np.maximum(lengths, 1e-9)
    if (np.ptp(turn) < FAN_ARC_TURN or np.abs(across).min() < 0.8 or np.ptp(np.sign(across)) > 0
            or lengths.min() < 0.08 * card_h or not 0.1 * card_h <= step <= 0.7 * card_h):
        return None
    return order, pts, lengths, step


def _fan_ends(cards: list[CardReading], stack: list[int], corners: Corners,
              card_h: float) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Where a fan may hold a card unseen past either end, as (index box, card centre,
    angle): a chord and a turn on from its end card, as far as from the card before it (t4
    9509: a fan of five kings, its end king missed, leaves no gap). Nothing if the stack is
    no fan (`_fan_line`)."""
    fan = _fan_line(cards, stack, card_h)
    if fan is None:
        return []
    order = fan[0]
    out = []
    for end, before in ((order[0], order[1]), (order[-1], order[-2])):
        top = _top_index(cards, [stack[end]], corners)
        if top is None:
            continue
        card, prev = cards[stack[end]], cards[stack[before]]
        centre = 2 * np.asarray(card.center) - np.asarray(prev.center)
        angle = (card.angle + ((card.angle - prev.angle + 180.0) % 360.0 - 180.0)) % 360.0
        out.append((_index_box(*top, corners, centre, angle), centre, angle))
    return out


def _fan_places(cards: list[CardReading], stack: list[int], corners: Corners,
                card_h: float) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Where a fan may hold a card unseen, as (index box, card centre, angle): midway across
    each chord of `LOOK_GAP` chords between two cards next in turn, clear of every card.
    Nothing if the stack is no fan (`_fan_line`)."""
    fan = _fan_line(cards, stack, card_h)
    if fan is None:
        return []
    order, pts, lengths, step = fan
    out = []
    for g in np.flatnonzero((lengths >= LOOK_GAP[0] * step) & (lengths <= LOOK_GAP[1] * step)):
        pair = [stack[order[g]], stack[order[g + 1]]]
        middle = np.mean([cards[i].center for i in pair], axis=0)
        top = _top_index(cards, pair, corners)
        if top is None or np.linalg.norm(pts - middle, axis=1).min() < 0.6 * step:
            continue
        angle = float(_circular_mean(np.array([cards[i].angle for i in pair])))
        out.append((_index_box(*top, corners, middle, angle), middle, angle))
    return out


# Two decks print their indices at their own places on the card, so a card's place read
# from its index is off by its print's offset: in a line alternating two prints the gaps
# from one print to the other are long and those back short (val 1878: a row of fours and
# wilds of two decks, gaps 19-24 and 32-36 px, read as a lattice of 18.7 px steps hiding two
# cards). Where a line steps both ways between two print sizes (`print_sizes`), the offset
# is half the difference of the two ways' mean gaps; taken out, a line whose regular gaps
# agree better is read on them. An offset is a few hundredths of a card height (the three
# sets' perfect corners, every line stepping both ways: median 0.03, 95% under 0.09); one past
# this share is taken for a hidden card, not print. Perfect corners val 247 -> 248, t4 732 ->
# 733 (9089); detector corners val 213 -> 214, test and t4 the same deals and meld exact, from
# a seat the same (docs/LAYOUT.md, session 61).
PRINT_OFFSET_MAX = 0.12


def _print_offset_out(cards: list[CardReading], ids: list[int], gaps: np.ndarray,
                      prints: dict[int, int] | None, card_h: float) -> np.ndarray:
    """A line's gaps (between its cards `ids`, in order) with the offset between its two
    print sizes' index places taken out (`PRINT_OFFSET_MAX`), where that makes it more
    regular; else `gaps`."""
    if prints is None or any(not cards[i].corner_ids for i in ids):
        return gaps
    group = [prints.get(cards[i].corner_ids[0], -1) for i in ids]
    if len(set(group)) != 2 or -1 in group:
        return gaps
    a, b = sorted(set(group))
    steps = list(zip(group[:-1], group[1:], strict=True))
    forth = [float(gap) for gap, way in zip(gaps, steps, strict=True) if way == (a, b)]
    back = [float(gap) for gap, way in zip(gaps, steps, strict=True) if way == (b, a)]
    if not forth or not back:
        return gaps
    offset = (float(np.mean(forth)) - float(np.mean(back))) / 2
    if abs(offset) > PRINT_OFFSET_MAX * card_h:
        return gaps
    evened = np.diff(np.concatenate([[0.0], np.cumsum(gaps)]) - offset * (np.array(group) == b))
    if (evened <= 0).any() or _spread(evened) >= _spread(gaps):
        return gaps
    return evened


def _spread(gaps: np.ndarray) -> float:
    """How uneven a line's regular steps are: their range over their median."""
    regular = _regular_steps(gaps)
    return float(np.ptp(regular) / np.median(regular))


def _regular_steps(gaps) -> list[float]:
    """A line's smallest gaps, all but its largest: the regular steps (a gap may hide a card)."""
    return sorted(gaps)[: max(1, len(gaps) - 1)]


# a column's lattice step more than this share off the team's other columns' step is read
# against theirs (the detector's corners: t4 deals 593 -> 594, test meld exact 88.16 ->
# 88.20%; perfect corners val 237 -> 238, t4 723 -> 725; 0.1 loses a t4 deal, 0.2-0.3 win
# fewer; docs/LAYOUT.md, session 51)
TEAM_STEP_OFF = 0.15
# no card is hidden in a gap of this many steps or more between a line's last card and one
# counted as its rank against its own reading (`_misread`) past it: such a card is print
# away from the line (t4 8719: a king's box at 0.37 on no index, three steps past a column
# of eight jacks, was counted as a jack and two jacks inferred hidden before it; the readers
# read jokers at their places). The detector's corners: t4 612 -> 613, from a seat 151 ->
# 152, test and val the same; perfect corners the same; any gap of two steps or more loses
# a test meld (119: a six read as a 9 two steps past its column); docs/LAYOUT.md,
# session 58
MISREAD_END_GAP = 3


# A fan's cards turn by one angle step each (7-10 degrees in the data engine's fans; the
# readings' angles wander a few): its cards must turn at least this many degrees a card ...
FAN_MIN_TURN = 4.0
# ... and a gap of m chords hides cards only where the cards turn m angle steps across it,
# within this share of a step (a gap of 4.9 steps' turn read as a chord of 4 is no gap of
# 4). Detector corners, deals read right: test 215 -> 216, val 209 and t4 588 the same;
# perfect corners test 259 and t4 723 the same, val 236 -> 237 (docs/LAYOUT.md, session 50).
FAN_GAP_TURN = 0.65


def _in_turn(cards: list[CardReading], stack: list[int]):
    """A stack's cards in the order they turn (as a fan's do): each card's turn off their
    mean direction (degrees, in the stack's order), that order, their centres in it, and
    the chords between cards next in it with their lengths."""
    angles = np.array([cards[i].angle for i in stack])
    turn = (angles - _circular_mean(angles) + 180.0) % 360.0 - 180.0
    order = np.argsort(turn)
    pts = np.array([cards[stack[i]].center for i in order])
    chords = np.diff(pts, axis=0)
    return turn, order, pts, chords, np.linalg.norm(chords, axis=1)


def _infer_fan_gaps(cards: list[CardReading], stack: list[int], k: int, team: int,
                    rank: str, card_h: float, prints: dict[int, int] | None = None) -> bool:
    """Whether a stack is a fan; if so, add the cards an empty place in it shows hidden.

    A fan (cards turned about a point below them, each a step further round) is no
    straight line: read along an axis, its arc squeezes the steps at its ends, and a
    gap in it fits no lattice. Ordered by their angle, its cards' centres lie a chord
    apart, each chord across the cards (a fan spreads sideways, all one way), and the
    cards turn card by card (`FAN_MIN_TURN`). A gap of m chords (on the lattice
    `_line_lattice` fits, steps 0.1-0.7 card heights) where the cards also turn m angle
    steps (`FAN_GAP_TURN`) hides m - 1 cards, counted as naturals of the fan's rank
    (wilds between two wilds), as in a column. Returns whether it added any: a fan with
    none is left to the line reading, which counts a gap of a flat fan as a row's. Two
    decks' prints in one fan set its cards' centres unevenly: left alone (perfect
    corners, t4: two deals lost without this).
    """
    if len(stack) < 3 or _two_prints(cards, stack, prints):
        return False
    angles = np.array([cards[i].angle for i in stack])
    turn, order, pts, chords, gaps = _in_turn(cards, stack)
    turns = np.diff(turn[order])
    if gaps.min() < 0.08 * card_h:
        return False
    _, right = _unit_vectors(angles[order][:-1] + turns / 2)
    across = np.einsum("ij,ij->i", chords, right) / gaps
    if np.abs(across).min() < 0.8 or np.ptp(np.sign(across)) > 0:
        return False
    step = float(np.median(sorted(gaps)[: len(gaps) - 1]))
    lattice = _line_lattice(gaps, 0.85 * step, 1.2 * step) \
        if 0.1 * card_h <= step <= 0.7 * card_h else None
    if lattice is None:
        return False
    in_gap = lattice[1]
    single = [t for t, m in zip(turns, in_gap, strict=True) if m == 1]
    if len(single) < 2:
        return False
    turn_step = float(np.median(single))
    if turn_step < FAN_MIN_TURN or min(single) < 0.25 * turn_step:
        return False  # not turning card by card: a row, or a card misplaced
    added = False
    for g, m in enumerate(in_gap):
        if m < 2 or abs(turns[g] / turn_step - m) > FAN_GAP_TURN:
            continue
        before, after = cards[stack[order[g]]], cards[stack[order[g + 1]]]
        guess = "2" if before.is_wild and after.is_wild else rank
        start, end = pts[g], pts[g + 1]
        _add_hidden(cards, stack, k, team, guess,
                    float(_circular_mean(np.array([before.angle, after.angle]))),
                    [start + (end - start) * j / m for j in range(1, m)],
                    f"hidden card inferred from a gap in the fan: counted as a {guess}")
        added = True
    return added


# A detector's second box on an index, shifted off it further than `_duplicates` and
# `_same_corner_twins` allow (a box taking in the suit pip too), makes a card of its own
# on the spot of the index's card: in a column (or a fan: `_leave_out_second_box_in_fan`,
# test deals 224 -> 225, t4 meld exact 86.75 -> 86.73%, val, perfect corners and from a
# seat the same; docs/LAYOUT.md, session 54), the unsurer of two cards of one rank on one
# spot, read under this confidence, is that second box ...
SECOND_BOX_BELOW = 0.7
# ... where every card of the column lies within this many degrees of its angle (a fan
# read along an axis puts two cards on one spot). Detector corners, deals read right:
# test 216 -> 218, val 209 -> 210, t4 588 -> 590, none lost; perfect corners unchanged
# (0.8-0.9 alike, 0.6 t4 589; rows too: t4 loses six, fans of one deck read with the
# stack's angle; docs/LAYOUT.md, session 50).
SECOND_BOX_TURN = 8.0


def _leave_out_second_box_in_fan(cards: list[CardReading], stack: list[int], card_h: float,
                                 prints: dict[int, int] | None = None) -> None:
    """Take out of a fan of four or more the card lying on another's place.

    A fan's cards, in the order they turn, lie a chord apart and turn an angle step each.
    Where exactly one pair of them next in turn lies closer than 0.35 of the median chord
    (and a tenth of a card height) and turns less than half the median step, both
    naturals of one rank, the unsurer, seen by one corner and read under
    `SECOND_BOX_BELOW`, is left out (noted): a second box on the other's index, or one
    straddling two indices (test 2729: a box across two jacks' indices, read 0.97 a jack,
    made a fan of seven jacks eight). As `_leave_out_second_box` for a column. A fan of two
    prints (`_two_prints`) places its cards unevenly and is left alone, and so are wilds:
    two decks' twos read from different corners lie close in a fan (t4 4499).
    """
    if len(stack) < 4 or _two_prints(cards, stack, prints):
        return
    turn, order, _, _, lengths = _in_turn(cards, stack)
    if np.ptp(turn) < FAN_ARC_TURN:
        return
    close = lengths < min(0.1 * card_h, 0.35 * float(np.median(lengths)))
    if close.sum() != 1:
        return
    g = int(np.argmax(close))
    pair = (stack[order[g]], stack[order[g + 1]])
    turns = np.abs(np.diff(turn[order]))
    if (cards[pair[0]].rank == cards[pair[1]].rank and not cards[pair[0]].is_wild
            and turns[g] <= 0.5 * float(np.median(turns))):
        _leave_out_unsurer(cards, stack, pair, "fan")


def _leave_out_unsurer(cards: list[CardReading], stack: list[int], pair: tuple[int, int],
                       line: str) -> None:
    """Leave out of `stack` the unsurer of two cards on one place of its `line` (a column
    or a fan) when it is seen by one corner and read under `SECOND_BOX_BELOW` (noted): a
    second box on the other's index, not a card."""
    weak = min(pair, key=lambda i: cards[i].confidence)
    if cards[weak].confidence >= SECOND_BOX_BELOW or len(cards[weak].corner_ids) != 1:
        return
    cards[weak].team = None
    cards[weak].second_box = True
    cards[weak].notes.append(f"on the place of another card of its {line}: a second box on "
                             "that card's index, left out")
    stack.remove(weak)


def _leave_out_second_box(cards: list[CardReading], stack: list[int], angle: float,
                          card_h: float) -> None:
    """Take out of a column of four or more the card lying on another's place.

    A column's cards lie a step apart along it. Where exactly one pair of its cards, of
    one rank, lies closer along it than 0.35 of its median step (and a tenth of a card
    height), within a quarter card of each other across it, the unsurer of the two,
    seen by one corner and read under `SECOND_BOX_BELOW`, is left out (noted): a second
    box on the other's index, not a card.
    """
    if len(stack) < 4 or _angle_diff(np.array([cards[i].angle for i in stack]),
                                     angle).max() >= SECOND_BOX_TURN:
        return
    along_axis, across_axis = _line_axes(angle)[0]
    pts = np.array([cards[i].center for i in stack])
    along, across = pts @ along_axis, pts @ across_axis
    if np.ptp(across) > 0.4 * card_h:
        return  # not one column
    order = np.argsort(along)
    gaps = np.diff(along[order])
    close = gaps < min(0.1 * card_h, 0.35 * float(np.median(gaps)))
    if close.sum() != 1:
        return
    g = int(np.argmax(close))
    pair = (stack[order[g]], stack[order[g + 1]])
    if (cards[pair[0]].rank == cards[pair[1]].rank
            and abs(across[order[g]] - across[order[g + 1]]) < 0.25 * card_h):
        _leave_out_unsurer(cards, stack, pair, "column")


def _within_the_pack(cards: list[CardReading]) -> list[dict]:
    """Keep the teams' cards of a rank within the pack's copies (8 of a rank in two decks).

    A gap in a column shows that a card lies there, not which: counted as a natural of
    the column's rank, it may take the table past the pack's copies of that rank, and
    then it is a wild (`_likelier_unseen_wild`). Past the pack even
    so, the least sure cards of the rank seen by one corner (a false or second box on
    an index, or one end of a whole card taken for a card of its own) are left out,
    noted for review. Returns the review items (`pack_count`) for them.
    """
    review = []
    on_sides = Counter(c.rank for c in cards if c.team is not None)
    on_table = Counter(c.rank for c in cards if not c.second_box)  # wilds: the pile's too
    for rank, n in sorted(on_sides.items()):
        excess = n - PACK_LIMITS.get(rank, 8)
        if excess <= 0 or rank in WILD_CLASSES:
            continue
        hidden = [c for c in cards if c.rank == rank and not c.corner_ids and c.team is not None]
        for card in hidden[:excess]:
            wild = _likelier_unseen_wild(on_table)
            if on_table[wild] >= PACK_LIMITS[wild]:
                break
            card.rank = wild
            on_sides[rank] -= 1
            on_sides[wild] += 1
            on_table[rank] -= 1
            on_table[wild] += 1
            card.notes.append(f"the pack holds no more {rank}: counted as a {wild}")
        excess = on_sides[rank] - PACK_LIMITS.get(rank, 8)
        if excess > 0:
            seen = sorted((c for c in cards if c.rank == rank and c.team is not None
                           and len(c.corner_ids) == 1), key=lambda c: c.confidence)
            for card in seen[:excess]:
                card.notes.append(f"the pack holds no more {rank}: left out, least sure")
                card.team = None
            ids = [cards.index(c) for c in seen[:excess]]
            review.append(_item("pack_count", 0.05, f"{on_sides[rank]} cards of {rank} read "
                                f"on the teams' sides; the pack holds "
                                f"{PACK_LIMITS.get(rank, 8)}: the least sure left out",
                                cards=ids))
    return review


def _likelier_unseen_wild(on_table: Counter) -> str:
    """The wild a hidden card past its column's pack is taken for: the one whose copies the
    photo has shown the smaller share of (test 2169: three jokers and three twos show, so a
    covered card is the pack's fifth two sooner than its last joker); a joker when they are
    even, the wild a detector misses most."""
    unseen = {w: (PACK_LIMITS[w] - on_table[w]) / PACK_LIMITS[w] for w in ("JK", "2")}
    return "2" if unseen["2"] > unseen["JK"] else "JK"


# the most cards a line's lattice may hide (a hand over the middle of a column hides four or
# five; each costs a tenth of a step of fit, so a regular line takes the fewest that fit)
LATTICE_HIDDEN_MAX = 6


def _line_lattice(gaps: np.ndarray, shortest: float,
                  longest: float) -> tuple[float, list[int]] | None:
    """The step of a line of cards and the whole steps in each gap, if the line is regular.

    Of the spacings (between `shortest` and `longest`) that put the first and the last
    card on whole steps, the one the cards fit best, each hidden card costing a tenth of
    a step of fit; None if no spacing with up to `LATTICE_HIDDEN_MAX` hidden cards puts
    every card within 0.3 of a step of its place.
    """
    positions = np.concatenate([[0.0], np.cumsum(gaps)])
    best, best_cost = None, np.inf
    for hidden in range(LATTICE_HIDDEN_MAX + 1):
        step = positions[-1] / (len(gaps) + hidden)
        if not shortest < step < longest:
            continue
        slots = np.round(positions / step)
        misfit = float(np.abs(positions - slots * step).max() / step)
        cost = misfit + 0.1 * hidden
        if misfit < 0.3 and (np.diff(slots) >= 1).all() and cost < best_cost:
            best, best_cost = (float(step), np.diff(slots).astype(int).tolist()), cost
    return best


def _join_split_columns(cards: list[CardReading], stacks: list[list[int]], card_h: float) -> None:
    """Join the two visible parts of one column whose middle is hidden (under a hand).

    Two stacks of one team are one column when they point the same way, lie on one line,
    their natural ranks agree, and the upper part's last card is covered (a column's
    last card, fully visible, has nothing below it). The line is measured across the
    longer part's direction: a lone card's own is read a few degrees off, which over a
    hidden middle of a card height or more puts the parts apart (val 2978: a ten read at
    192 degrees, 1.4 card heights above two tens at 188; detector corners val 208 -> 209,
    perfect corners val 241 -> 242, test, t4 and from a seat the same; docs/LAYOUT.md,
    session 58). The emptied stack stays as [].
    """
    changed = True
    while changed:
        changed = False
        live = [k for k, s in enumerate(stacks) if s and cards[s[0]].team is not None]
        ranks_of = {k: _natural_ranks(cards, stacks[k]) for k in live}
        angle_of = {k: _circular_mean(np.array([cards[i].angle for i in stacks[k]])) for k in live}
        centre_of = {k: np.mean([cards[i].center for i in stacks[k]], axis=0) for k in live}
        reach_of = {k: max(np.hypot(*np.subtract(cards[i].center, centre_of[k]))
                           for i in stacks[k]) for k in live}
        for a in live:
            for b in live:
                if a == b or not stacks[a] or not stacks[b]:
                    continue
                if cards[stacks[a][0]].team != cards[stacks[b][0]].team:
                    continue
                if np.hypot(*(centre_of[a] - centre_of[b])) > \
                        reach_of[a] + reach_of[b] + 3.5 * card_h:
                    continue  # too far apart to be one column
                ranks = ranks_of[a] | ranks_of[b]
                if len(ranks) > 1 or ranks & {"3R", "3B"}:
                    continue
                ang_a = angle_of[a]
                lone = cards[stacks[b][0]]
                turn = False
                if _angle_diff(ang_a, angle_of[b]) > 8:
                    # a lone index shows an axis, not a direction: below a column, on its
                    # line and read upside down, it is the bottom index of its last card
                    turn = (len(stacks[b]) == 1 and len(lone.corner_ids) == 1
                            and not lone.from_bottom
                            and _angle_diff(ang_a, angle_of[b] + 180.0) <= 8)
                    if not turn:
                        continue
                # across the line of the longer part, whose direction more cards tell
                along = angle_of[b] if len(stacks[b]) > len(stacks[a]) else ang_a
                up, right = _unit_vectors(np.array([along]))
                pa = np.array([cards[i].center for i in stacks[a]])
                pb = np.array([cards[i].center for i in stacks[b]])
                down_a, down_b = -(pa @ up[0]), -(pb @ up[0])
                if not _on_one_line(pa @ right[0], pb @ right[0], card_h):
                    continue
                gap = down_b.min() - down_a.max()  # b below a
                if not 0.2 * card_h < gap < 3.5 * card_h:
                    continue
                if cards[stacks[a][int(np.argmax(down_a))]].fully_visible:
                    continue  # a's last card is whole: the column ends there
                if turn:
                    lone.angle, lone.from_bottom = (lone.angle + 180.0) % 360.0, True
                stacks[a].extend(stacks[b])
                for i in stacks[b]:
                    cards[i].stack = a
                stacks[b] = []
                ranks_of[a] = ranks
                changed = True


def _on_one_line(lateral_a: np.ndarray, lateral_b: np.ndarray, card_h: float) -> bool:
    """Whether two parts of a column lie on one line: within 0.15 card heights across of
    each other, or the lower part within 0.1 of the upper part's median where that part
    itself wanders up to a quarter card (one card of a hand-laid column placed off).
    """
    if np.ptp(np.concatenate([lateral_a, lateral_b])) <= 0.15 * card_h:
        return True
    return bool(np.ptp(lateral_a) <= 0.25 * card_h
                and np.abs(lateral_b - np.median(lateral_a)).max() <= 0.1 * card_h)


# Two decks print their indices at their own places on the card, so a line mixing them is
# uneven by that difference: a gap of about two steps between cards of two print sizes
# (`print_sizes`) hides a card only within this share of a step of two. Perfect corners,
# deals read right: test 258 -> 259, t4 706 -> 709, val the same; detector corners the
# same on the three sets (docs/LAYOUT.md, session 29).
MIXED_GAP_FIT = 0.15


def _print_groups(corners: Corners, used: np.ndarray) -> dict[int, int] | None:
    """The print size (`print_sizes`) of each corner numbered in `used`; None for one size."""
    groups = print_sizes(long_sides(corners.boxes[used]))
    return None if groups is None else dict(zip(used.tolist(), groups.tolist(), strict=True))


# Where the photo's indices fall into no two print sizes (`print_sizes`: detector boxes vary
# too much for a clean split), the two cards either side of a gap in a line whose indices'
# boxes differ by more than this factor in their longer sides are of two prints all the same
# (`_two_prints`). t4 7289 and 7549: hidden cards inferred in a gap between two decks' cards
# of a column, whose indices sit at their own places on the card. Detector corners: t4 608 ->
# 610 (meld exact 87.06 -> 87.11%), val the same, test the same deals (meld exact 88.97 ->
# 88.93%: test 729's hidden eight, in such a gap, no longer inferred); perfect corners the
# same (their boxes split cleanly); from a seat 150 -> 149 (419, not readable: perspective
# makes a column's near indices larger). 1.25 loses test 879 and 1489, 1.5 gains t4 7549 alone;
# asked by the fan rules about a whole stack too, the same from above and 148 from a seat
# (docs/LAYOUT.md, session 57).
PRINT_SIDES_APART = 1.4


def _two_prints(cards: list[CardReading], ids: list[int], prints: dict[int, int] | None,
                sides: np.ndarray | None = None) -> bool:
    """Whether the cards `ids` show indices of two print sizes (by `prints`, else by their
    boxes' `sides`, `PRINT_SIDES_APART`)."""
    if prints is None:
        if sides is None:
            return False
        own = [sides[cards[i].corner_ids[0]] for i in ids if cards[i].corner_ids]
        return len(own) > 1 and max(own) > PRINT_SIDES_APART * min(own)
    return len({prints.get(cards[i].corner_ids[0]) for i in ids if cards[i].corner_ids}) > 1


def _add_hidden(cards: list[CardReading], stack: list[int], k: int, team: int, rank: str,
                angle: float, centres: list[np.ndarray], note: str) -> None:
    for centre in centres:
        cards.append(CardReading(rank=rank, corner_ids=[], center=(float(centre[0]),
                                                                   float(centre[1])),
                                 angle=angle, confidence=0.3, fully_visible=False, stack=k,
                                 team=team, notes=[note]))
        stack.append(len(cards) - 1)


def _wanders(cards: list[CardReading], stack: list[int], card_h: float) -> bool:
    """Whether a stack's cards spread more than 0.15 card heights across its own direction
    (no column). Its own: the column whose start is measured against it may be read turned
    several degrees (test 1459: sevens read at 189 degrees beside fives at 186), and a long
    column seen along that axis wanders off it. Detector corners, deals: test 223 -> 224,
    val 212 -> 213, t4 599 -> 600; perfect corners val 239 -> 240 (docs/LAYOUT.md,
    session 54)."""
    _, right = _unit_vectors(np.array([_circular_mean(np.array([cards[i].angle
                                                                for i in stack]))]))
    return bool(np.ptp(np.array([cards[i].center for i in stack]) @ right[0]) > 0.15 * card_h)


def _infer_hidden_first(cards: list[CardReading], stacks: list[list[int]], k: int, rank: str,
                        angle: float, step: float, card_h: float) -> None:
    """Add the first cards of a column that starts whole steps below its neighbours.

    Melds of one row start level (the first card of each column, a squared canasta, a
    row of cards all sit on one line), so a column whose first visible card is m steps
    lower than its neighbours' first cards has m cards hidden above it. Between two
    neighbours the line runs through both; at the end of a row it is fitted to the
    row's starts (perspective tilts it), and must agree with the nearest one. A single
    neighbour is no line: melds are not laid exactly level, and one neighbour a step
    higher (a squared canasta beside a column) hid nothing as often as a card.
    """
    stack = stacks[k]
    team = cards[stack[0]].team
    up, right = _unit_vectors(np.array([angle]))
    up, right = up[0], right[0]
    pts = np.array([cards[i].center for i in stack])
    start = float((-(pts @ up)).min())
    lateral = float((pts @ right).mean())
    # the nearest stack start on each side; perspective tilts a row's line in the photo,
    # so the reference is read off the line through both where there are two
    found: list[tuple[float, float]] = []  # (lateral, start) of the other stacks
    for j, other in enumerate(stacks):
        if j == k or not other or cards[other[0]].team != team or cards[other[0]].rank == "3R":
            continue  # red threes lie apart, a little off the meld line
        o = np.array([cards[i].center for i in other])
        if len(other) > 1 and _wanders(cards, other, card_h):
            continue  # only columns and lone squared-up canastas start on the row's line
        o_start = float((-(o @ up)).min())
        o_lateral = float((o @ right).mean())
        gap = o_lateral - lateral
        if abs(gap) > 2.5 * card_h or not -0.5 * card_h < start - o_start < 0.6 * card_h:
            continue
        found.append((o_lateral, o_start))
    found.sort(key=lambda f: abs(f[0] - lateral))
    left = [f for f in found if f[0] < lateral]
    right_of = [f for f in found if f[0] > lateral]
    if left and right_of:
        (x0, s0), (x1, s1) = left[0], right_of[0]
        reference = s0 + (s1 - s0) * (lateral - x0) / (x1 - x0)
        tolerance = 0.3
    elif found and abs(found[0][0] - lateral) <= 1.6 * card_h:
        if len(found) >= 2:
            # at the end of the row: the row's line, read off the two nearest starts
            xs, ss = np.array(found).T
            slope, offset = np.polyfit(xs, ss, 1)
            reference = offset + slope * lateral
            tolerance = 0.25
            if round((start - reference) / step) != round((start - found[0][1]) / step):
                return  # the line and the nearest start disagree: no clear gap
        else:
            return  # one neighbour alone: no line to measure against
    else:
        return
    m = int(round((start - reference) / step))
    if m < 1 or abs(start - reference - m * step) > tolerance * step:
        return
    first = pts[int(np.argmin(-(pts @ up)))]
    _add_hidden(cards, stack, k, team, rank, angle,
                [first + up * step * extra for extra in range(1, m + 1)],
                f"hidden card inferred above a column that starts below its neighbours: "
                f"counted as a {rank}")


def _item(kind: str, priority: float, message: str, **extra) -> dict:
    out = {"kind": kind, "priority": round(float(priority), 4), "message": message}
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


# A red three of a small deck is often read as a black three (the reader learnt the colour
# from ink it sees thin and dark there): t4 6339, a red three alone on team 0's side read
# black at 0.79; t4 7179, four red threes in a row, three read black (a black threes' meld and
# one red three counted). The ink measured on the index (`scanner.ink.ink_redness`, on the
# photo) of such a three is a little red (0.04-0.27, t4) where that of the black threes read
# black is under 0.05 on all but a few (95th percentile 0.06-0.09 on the three sets): one
# three's alone does not tell them apart, but a row's together, and a lone black three is a
# red one misread more often than not (a team lays none alone: 5 of 7 on the three sets).
# So each team's threes lying together (centres within this many card heights, one to the
# next) that are no black threes' meld (read red and black both, or one or two read black
# alone) take the colour of their ink's mean redness: red from THREE_INK_RED; not where one
# card's ink is plainly red and another's black (a black threes' meld beside red threes
# from a seat, test: the mean made them all red, a meld lost). Detector corners: t4 deals
# 622 -> 624 (9159, 10749), red threes missed 43 -> 39 (val 16 -> 15), test the same;
# perfect corners and photos from a seat the same; 0.03 alike, 0.08 loses t4 10749
# (docs/LAYOUT.md, session 62).
THREE_ROW_REACH = 0.5
THREE_INK_RED = 0.05


def _threes_by_ink(cards: list[CardReading], card_h: float,
                   redness: Callable[[list[int]], np.ndarray]) -> None:
    """Settle the colour of each team's group of threes lying together (centres within
    `THREE_ROW_REACH` card heights, one to the next) that is no black threes' meld: one read
    red and one black, or one or two read black alone. Their mean ink redness (`redness`,
    given corner numbers) `THREE_INK_RED` or more makes them red threes, less black ones;
    unless one card's ink reads red (`scanner.ink.RED_INK`) and another's under
    `THREE_INK_RED`: the ink then tells card from card (a black threes' meld beside the red
    threes, from a seat), and each keeps its reading."""
    threes = [i for i, c in enumerate(cards)
              if c.rank in ("3R", "3B") and c.corner_ids and c.team is not None]
    together = [(a, b) for a, b in itertools.combinations(threes, 2)
                if cards[a].team == cards[b].team and np.hypot(*np.subtract(
                    cards[a].center, cards[b].center)) <= THREE_ROW_REACH * card_h]
    for group in _linked_groups(threes, together):
        read = {cards[i].rank for i in group}
        if not (read == {"3R", "3B"} or (read == {"3B"} and len(group) <= 2)):
            continue
        red = [np.asarray(redness(list(cards[i].corner_ids)), float) for i in group]
        per_card = [float(np.nanmean(r)) for r in red if not np.isnan(r).all()]
        if not per_card:
            continue
        if max(per_card) >= RED_INK and min(per_card) < THREE_INK_RED:
            continue  # their ink tells red from black card by card: each as it was read
        colour = "3R" if float(np.nanmean(np.concatenate(red))) >= THREE_INK_RED else "3B"
        for i in group:
            if cards[i].rank != colour:
                was, now = ("black", "red") if colour == "3R" else ("red", "black")
                cards[i].notes.append(f"read as a {was} three; its row's ink reads {now}")
                cards[i].rank = colour


def _card_ink(card: CardReading, ink: Callable[[list[int]], list[str | None]] | None
              ) -> str | None:
    """A card's ink colour: its corners' where those that are sure agree, else None."""
    if ink is None or not card.corner_ids:
        return None
    seen = set(ink(list(card.corner_ids))) - {None}
    return seen.pop() if len(seen) == 1 else None


def _squared_guess(left: int, ink: str | None) -> tuple[int, int]:
    """(naturals, wilds) guessed under a squared-up canasta's top card: seven cards, the
    commonest canasta. Players top a natural canasta with a red card and a mixed one with
    a black card: red, seven naturals; black, six naturals and a wild (the fewest wilds
    a mixed canasta has); unknown, seven naturals. Never more naturals than the pack
    still holds (`left`); a canasta has at most three wilds."""
    naturals = min(6 if ink == "black" else 7, left)
    return naturals, 7 - naturals


def _form_melds(cards: list[CardReading], stacks: list[list[int]],
                stack_team: list[int | None], card_h: float,
                review: list[dict], ink: Callable[[list[int]], list[str | None]] | None = None
                ) -> tuple[list[MeldReading], list[int]]:
    red_threes = [0, 0]
    # Naturals by (team, rank): a team has one meld per rank.
    naturals: dict[tuple[int, str], list[int]] = defaultdict(list)
    wilds: list[int] = []
    black_threes: dict[int, list[int]] = defaultdict(list)
    for idx, card in enumerate(cards):
        if card.team is None:
            card.role = ROLE_LEFT_OUT
            continue
        if card.rank == "3R":
            card.role = ROLE_RED_THREE
            red_threes[card.team] += 1
        elif card.rank == "3B":
            black_threes[card.stack].append(idx)
        elif card.is_wild:
            wilds.append(idx)
        else:
            naturals[(card.team, card.rank)].append(idx)
    # Left out: anything neither team owns (piles, strays), reported once per stack.
    for k, s in enumerate(stacks):
        if stack_team[k] is None and s:
            labels = " ".join(cards[i].rank for i in s)
            review.append(_item("left_out", 0.9, f"left out (pile or stray, not facing "
                                f"either team): {labels}", cards=list(s)))

    # Wilds join the natural group of the stack they sit in (nearest natural of that stack).
    wild_home: dict[int, tuple[int, str]] = {}
    for w in wilds:
        card = cards[w]
        mates = [i for i in stacks[card.stack] if not cards[i].is_wild
                 and cards[i].rank not in ("3R", "3B") and cards[i].team == card.team]
        # two or more wilds in a stack of their own are a meld's column whose naturals
        # went unseen, not strays of the meld beside them
        wild_column = len(stacks[card.stack]) >= 2 and all(
            cards[i].is_wild for i in stacks[card.stack])
        if not mates and not wild_column:
            near = [i for key, ids in naturals.items() if key[0] == card.team for i in ids]
            dists = [np.hypot(*np.subtract(cards[i].center, card.center)) for i in near]
            if near and min(dists) < 1.2 * card_h:
                mates = [near[int(np.argmin(dists))]]
                card.notes.append("wild card not overlapping any meld; put with the nearest")
        if mates:
            nearest = min(mates, key=lambda i: np.hypot(*np.subtract(cards[i].center,
                                                                     card.center)))
            wild_home[w] = (card.team, cards[nearest].rank)
        else:
            card.role = ROLE_UNMELDED
            review.append(_item("lone_wild", 0.3, f"wild card {card.rank} (card {w}) is not "
                                "in any meld", cards=[w], team=card.team))

    _rehome_surplus_wilds(cards, naturals, wild_home, card_h)
    # a second box on an index is no card: t4 11069's extra queen box left the pack no room
    # for a squared-up canasta of queens under the one lying alone
    on_table = Counter(c.rank for c in cards if not c.second_box)
    melds: list[MeldReading] = []
    for (team, rank), ids in sorted(naturals.items(), key=lambda kv: (kv[0][0], min(kv[1]))):
        wild_ids = [w for w, home in wild_home.items() if home == (team, rank)]
        member_ids = sorted(ids + wild_ids)
        meld = MeldReading(team=team, rank=rank, card_ids=member_ids, naturals=len(ids),
                           wilds=[cards[w].rank for w in sorted(wild_ids)])
        meld_stacks = {cards[i].stack for i in member_ids}
        # a card lying alone (some decks print a single index, so one corner may be all)
        alone = len(member_ids) == 1 and len(stacks[cards[member_ids[0]].stack]) == 1
        # cards of this rank the pack still has for a squared canasta under this one: the
        # teams' cards counted, not a pile's, whose overlapped cards are read least surely
        # (t4 3689: a discard read as a sixth queen, 0.93, left four queens' meld and a
        # lone queen no room for a squared-up canasta; t4 616 -> 617)
        on_sides = sum(c.rank == rank and c.team is not None for c in cards)
        left = PACK_LIMITS.get(rank, 8) - (on_sides - 1)
        if alone and left >= 4:
            # One visible card lying alone: a squared-up canasta seen from above. Its top
            # card's colour says natural or mixed; the counts are a guess.
            top_ink = _card_ink(cards[member_ids[0]], ink)
            meld.squared = True
            meld.naturals, n_wild = _squared_guess(left, top_ink)
            meld.wilds = ["2"] * n_wild
            meld.confidence = 0.35 * cards[member_ids[0]].confidence
            top = {"red": ", red card on top (natural)",
                   "black": ", black card on top (mixed)"}.get(top_ink or "", "")
            wilds = f", {n_wild} wild{'s' if n_wild > 1 else ''}" if n_wild else ""
            meld.problems.append(f"squared-up canasta{top}: count it (guessed "
                                 f"{meld.naturals} naturals{wilds})")
            cards[member_ids[0]].role = ROLE_SQUARED
        elif meld.size == 2 and _pair_in_a_line(cards, stacks, member_ids) \
                and on_table[rank] < PACK_LIMITS.get(rank, 8):
            # Two cards of a rank lying in one stack on a team's side: no meld has fewer
            # than three, so a third lies there unseen (its only index missed or covered).
            # Counted as a natural of the rank, placed a step before the first.
            member_ids = _add_unseen_natural(
                cards, stacks, meld, member_ids, on_table,
                f"third card of a meld seen as two: counted as a {rank}",
                f"a meld needs 3 cards: a third, unseen, counted as a {rank}")
            meld.confidence = 0.5 * min(cards[i].confidence for i in member_ids)
        elif meld.size < 3:
            for i in member_ids:
                cards[i].role = ROLE_UNMELDED
            review.append(_item("not_a_meld", 0.2, f"team {team}: {meld.size} card(s) of "
                                f"{rank} are not a meld (a meld needs 3)", cards=member_ids,
                                team=team))
            continue
        else:
            meld.confidence = _combined([cards[i].confidence for i in member_ids])
            if len(meld_stacks) > 1:
                meld.problems.append(f"cards of {rank} in {len(meld_stacks)} separate stacks "
                                     "joined (one meld per rank)")
                meld.confidence *= 0.9
            if meld.naturals == 1 and len(meld_stacks) == 1 \
                    and on_table[rank] < PACK_LIMITS.get(rank, 8):
                # a meld holds two naturals or more: the second lies there unseen
                member_ids = _add_unseen_natural(
                    cards, stacks, meld, member_ids, on_table,
                    f"second natural of a meld: counted as a {rank}",
                    f"a meld needs 2 naturals: a second, unseen, counted as a {rank}")
            elif meld.naturals < MIN_NATURALS:
                meld.problems.append(f"fewer than {MIN_NATURALS} natural cards")
            if len(meld.wilds) > MAX_WILDS:
                meld.problems.append(f"more than {MAX_WILDS} wild cards")
            if meld.problems and any(not p.startswith("cards of") for p in meld.problems):
                meld.confidence *= 0.5
        meld_index = sum(1 for m in melds if m.team == team)
        for i in member_ids:
            cards[i].meld = meld_index
            if cards[i].role != ROLE_SQUARED:
                cards[i].role = ROLE_MELD
        melds.append(meld)

    # Black threes: a meld only as a group of 3 or 4 (going out), else left out.
    for _stack, ids in sorted(black_threes.items()):
        team = cards[ids[0]].team
        problems = []
        if len(ids) == 2 and team is not None and _pair_in_a_line(cards, stacks, ids) \
                and on_table["3B"] < PACK_LIMITS["3B"]:
            # laid on a team's side, black threes are a meld: the third lies there unseen
            ids = sorted(ids + [_add_unseen_card(cards, stacks, ids, "3B",
                                                 "third black three: counted")])
            problems.append("a meld needs 3 cards: a third black three, unseen, counted")
        if 3 <= len(ids) <= 4 and team is not None:
            meld = MeldReading(team=team, rank="3B", card_ids=sorted(ids), naturals=len(ids),
                               wilds=[], confidence=min(cards[i].confidence for i in ids),
                               problems=problems)
            meld_index = sum(1 for m in melds if m.team == team)
            for i in ids:
                cards[i].meld = meld_index
                cards[i].role = ROLE_MELD
            melds.append(meld)
        else:
            for i in ids:
                cards[i].role = ROLE_UNMELDED
            review.append(_item("black_three", 0.4, f"{len(ids)} black three(s) not in a "
                                "group of 3-4: not a meld", cards=sorted(ids), team=team))
    # Rule problems and squared canastas go to the review list.
    for m in melds:
        mi = _team_number(melds, m)
        for p in m.problems:
            review.append(_item("squared_canasta" if m.squared else "meld_rule",
                                m.confidence, f"team {m.team} meld {mi} ({m.rank}): {p}",
                                cards=m.card_ids, team=m.team, meld=mi))
    for team in (0, 1):
        if red_threes[team] > 4:
            review.append(_item("pack_count", 0.1, f"team {team} has {red_threes[team]} red "
                                "threes; the pack holds 4", team=team))
    _sort_team_melds(melds)
    return melds, red_threes


def meld_evidence(meld: MeldReading, cards: list[CardReading], loose: np.ndarray,
                  card_h: float) -> tuple[float, ...]:
    """What says how likely a plain meld is read exactly (`MELD_CALIBRATION` weighs it).

    The logit of the cards' combined confidence and of the least sure card's; how many of
    its cards were counted unseen (inferred in a gap or to make a legal meld); its rule
    problems; whether it joins separate stacks; how many of its cards carry a note (a
    misread counted as the column's rank, corners that disagree); and how many corners
    the layout left unused lie on its line (within 0.6 card heights of one of its cards:
    a card it may be missing or one of its cards read twice).
    """
    ids = meld.card_ids
    seen = [i for i in ids if cards[i].corner_ids]
    conf = [cards[i].confidence for i in seen] or [0.5]
    combined = _combined(conf)
    unseen = len(ids) - len(seen)
    rules = sum(not p.startswith("cards of") for p in meld.problems)
    joined = float(any(p.startswith("cards of") for p in meld.problems))
    noted = sum(bool(cards[i].notes) for i in seen)
    near = 0
    if len(loose) and seen:
        centres = np.array([cards[i].center for i in seen])
        d = np.linalg.norm(loose[:, None, :] - centres[None], axis=-1).min(axis=1)
        near = int((d < 0.6 * card_h).sum())
    return (_logit(combined), _logit(min(conf)), float(unseen), float(rules), joined,
            float(noted), float(near), float(len(ids)))


def _combined(confidences: list[float]) -> float:
    """Cards' confidences as one: the geometric mean of their mean and the least sure."""
    mean = float(np.prod(confidences)) ** (1.0 / max(len(confidences), 1))
    return (mean * min(confidences)) ** 0.5


def _logit(p: float) -> float:
    p = min(max(p, 1e-3), 1 - 1e-3)
    return math.log(p / (1 - p))


# Weights of `meld_evidence` (and the bias last) in a logistic model of "this plain meld is
# read exactly", fitted on the detector's corners of 900 tables of the held-out designs that
# nothing else was tuned on (build/scenes-t5: `python -m datasets.build --scenes 10000
# --seed 5 --split test --out build/scenes-t5`; the shipped models; `python -m
# bench.meld_confidence --scenes-dir build/scenes-t5/test --fit`, 414 wrong melds of 5,660);
# None keeps the cards' combined confidence. A squared-up canasta keeps its own (its count
# is a guess).
MELD_CALIBRATION: tuple[float, ...] | None = (
    3.7238, -1.8361, -1.5614, -0.7404, -3.7577, -1.0083, -1.4113, 0.0756, 1.4829)


def _calibrate_melds(melds: list[MeldReading], cards: list[CardReading], loose: np.ndarray,
                     card_h: float, review: list[dict]) -> None:
    """Each plain meld's confidence as the chance it is read exactly; unlikely ones to review."""
    for m in melds:
        if m.squared:
            continue
        m.evidence = meld_evidence(m, cards, loose, card_h)
        if MELD_CALIBRATION is None:
            continue
        m.confidence = _probability(MELD_CALIBRATION, m.evidence)
        if m.confidence < MELD_CHECK:
            mi = _team_number(melds, m)
            review.append(_item("meld_check", m.confidence,
                                f"team {m.team} meld {mi} ({m.rank}): count its cards "
                                f"(read {m.size}, {_percent(m.confidence)} sure)",
                                cards=m.card_ids, team=m.team, meld=mi))


def _team_number(melds: list[MeldReading], meld: MeldReading) -> int:
    """A meld's number among its team's (the `meld` of its cards and of review items)."""
    return [x for x in melds if x.team == meld.team].index(meld)


def _percent(p: float) -> str:
    """A chance for a person: 37%, or "under 1%"."""
    return "under 1%" if p < 0.005 else f"{p:.0%}"


def card_evidence(card: CardReading, meld: MeldReading | None) -> tuple[float, ...]:
    """What says how likely a card is there and of its rank (`CARD_CALIBRATION` weighs it).

    The logit of its confidence and of the reader's surest reading of its rank; whether
    its place is counted unseen (no corner), in full view (two or more corners) or seen
    by one index; whether it carries a note; its role (in a meld, a red three, on a team's
    side in no meld, left out); and the logit of its meld's confidence (plain melds).
    """
    seen = bool(card.corner_ids)
    in_meld = card.role in (ROLE_MELD, ROLE_SQUARED)
    meld_p = meld.confidence if meld is not None and not meld.squared else 0.9
    return (_logit(card.confidence) if seen else 0.0, _logit(card.rank_confidence) if seen else 0.0,
            float(not seen), float(len(card.corner_ids) >= 2), float(bool(card.notes)),
            float(in_meld), float(card.role == ROLE_RED_THREE),
            float(card.role == ROLE_UNMELDED), _logit(meld_p) if in_meld else 0.0)


# Weights of `card_evidence` (bias last) in a logistic model of "this card lies there with
# this rank", fitted like `MELD_CALIBRATION` (`python -m bench.meld_confidence --fit`); None
# keeps the corners' combined confidence.
CARD_CALIBRATION: tuple[float, ...] | None = (
    1.4079, 0.1991, -2.6061, 0.0732, -1.9336, 1.7633, 3.2483, -0.6911, 0.0978, 2.5499)


def _calibrate_cards(cards: list[CardReading], melds: list[MeldReading]) -> None:
    """Each card's confidence as the chance it lies there with the rank read."""
    by_team = {t: [m for m in melds if m.team == t] for t in (0, 1)}
    for card in cards:
        meld = None
        if card.team is not None and card.meld is not None \
                and card.meld < len(by_team.get(card.team, [])):
            meld = by_team[card.team][card.meld]
        card.evidence = card_evidence(card, meld)
        if CARD_CALIBRATION is not None:
            card.confidence = _probability(CARD_CALIBRATION, card.evidence)


def _probability(calibration: tuple[float, ...], evidence: tuple[float, ...]) -> float:
    """The logistic model's chance: weights, then the bias last."""
    *w, b = calibration
    return 1.0 / (1.0 + math.exp(-(b + float(np.dot(w, evidence)))))


def _pair_in_a_line(cards: list[CardReading], stacks: list[list[int]], pair: list[int]) -> bool:
    """Whether two cards are the whole of one stack, parallel.

    A whole card whose two indices read different ranks counts too (until session 58 it
    did not): test 749, orell 6, joker, 6 in a column, the whole six's top index read as a
    10 (0.24), its bottom one as a 6 (0.50), the first six's only index as a 10 (0.29,
    left out): the pair is the meld's six and joker, and the third card is counted
    unseen. The detector's corners: test deals 233 -> 234, val, t4 and from a seat the
    same; perfect corners the same (docs/LAYOUT.md, session 58).
    """
    stack = {cards[i].stack for i in pair}
    if len(stack) != 1 or sorted(stacks[stack.pop()]) != sorted(pair):
        return False
    a, b = (cards[i] for i in pair)
    return bool(_angle_diff(a.angle, b.angle) < 15.0)


def _add_unseen_card(cards: list[CardReading], stacks: list[list[int]], members: list[int],
                     rank: str, note: str) -> int:
    """Add an unseen natural of a meld a step before its first card; its index."""
    angle = _circular_mean(np.array([cards[i].angle for i in members]))
    up = _unit_vectors(np.array([angle]))[0][0]
    pts = sorted((np.asarray(cards[i].center) for i in members), key=lambda p: -(p @ up))
    centre = pts[0] + (pts[0] - pts[1])
    home = cards[members[0]]
    _add_hidden(cards, stacks[home.stack], home.stack, home.team, rank, angle, [centre],
                note)
    return len(cards) - 1


def _add_unseen_natural(cards: list[CardReading], stacks: list[list[int]], meld,
                        members: list[int], on_table: Counter, note: str, problem: str) -> list[int]:
    """Count an unseen natural into `meld` (its card noted with `note`, the meld with
    `problem`); returns the meld's card ids with it."""
    hidden = _add_unseen_card(cards, stacks, members, meld.rank, note)
    members = sorted(members + [hidden])
    meld.card_ids = members
    meld.naturals += 1
    on_table[meld.rank] += 1
    meld.problems.append(problem)
    return members


def _rehome_surplus_wilds(cards: list[CardReading], naturals: dict[tuple[int, str], list[int]],
                          wild_home: dict[int, tuple[int, str]], card_h: float) -> None:
    """Move wilds a meld holds beyond three to a neighbouring meld of the team that has room.

    A meld holds at most three wild cards, so a fourth is most likely a neighbouring
    meld's (the whole last card of the next column, lying against this one): of the
    surplus candidates (whole cards: a covered wild lies inside its own column), the
    one lying nearest another meld of the team (within 1.2 card heights of its
    naturals, relative to its distance to its own) goes there, if that meld holds
    fewer than three. Noted for review.
    """
    def distance(w: int, ids: list[int]) -> float:
        return min(math.dist(cards[w].center, cards[i].center) for i in ids)

    held: dict[tuple[int, str], list[int]] = defaultdict(list)
    for w, home in wild_home.items():
        held[home].append(w)
    for home, ws in list(held.items()):
        while len(ws) > MAX_WILDS:
            best = None
            for w in ws:
                if not cards[w].fully_visible:
                    continue  # a covered wild lies inside its column
                own = distance(w, naturals[home])
                for key, ids in naturals.items():
                    if key[0] != home[0] or key == home or len(ids) < 2 \
                            or len(held[key]) >= MAX_WILDS:
                        continue
                    d = distance(w, ids)
                    if d < 1.2 * card_h and (best is None or d - own < best[0]):
                        best = (d - own, w, key)
            if best is None:
                break
            _, w, key = best
            ws.remove(w)
            held[key].append(w)
            wild_home[w] = key
            cards[w].notes.append(f"a fourth wild of the {home[1]} meld: put with the "
                                  f"{key[1]} meld next to it")


def _sort_team_melds(melds: list[MeldReading]) -> None:
    """Keep melds grouped by team (layout order); card `meld` indices were set in that order."""
    melds.sort(key=lambda m: m.team)


def _check_pack(cards: list[CardReading], review: list[dict]) -> None:
    counts = Counter(c.rank for c in cards if c.role != ROLE_LEFT_OUT)
    for rank, n in sorted(counts.items()):
        if n > PACK_LIMITS.get(rank, 8):
            ids = [i for i, c in enumerate(cards) if c.rank == rank and c.role != ROLE_LEFT_OUT]
            review.append(_item("pack_count", 0.05, f"{n} cards of {rank} on the table; the "
                                f"pack holds {PACK_LIMITS[rank]}", cards=ids))

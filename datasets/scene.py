"""Scene geometry and ground truth of one synthetic Canasta table photo (no pixels).

`make_scene(rng, ...)` deals a legal end-of-deal Classic Canasta table (two decks and
four jokers; melds, red threes, black-three meld, squared-up canastas, hands, draw and
discard piles), lays it out on a table the way players do (team 0's melds face the
bottom edge, team 1's are rotated 180 degrees), photographs it with a virtual phone
(image size, card scale, in-plane rotation, perspective tilt) and returns a `Scene`: every
card's outline in photo pixels, every printed index box with the fraction of it left
visible, the melds, clutter polygons, and the deal layout in the contract's score format.
`datasets/render.py` draws the pixels from exactly this geometry, so the labels are
right by construction. A design's card shape and index position are `CardGeometry`
fractions of the card, measured from the art by `datasets/art.py`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scanner.classes import INDEX_CLASSES

SUITS = ("S", "H", "D", "C")
RED_SUITS = ("H", "D")
NATURAL_RANKS = ("A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4")
ALL_RANKS = NATURAL_RANKS + ("3", "2")
WILD_RANKS = ("2", "JK")

# The four corners of a card where an index can be printed, in card-local order
# (x right, y down, both in [0, 1]). The bottom pair is printed upside down.
CORNER_NAMES = ("tl", "tr", "br", "bl")


@dataclass(frozen=True)
class CardGeometry:
    """A design's card shape and index placement, as fractions of the card.

    `aspect` is width / height. `index_box` is the top-left index (rank + suit pip)
    as (x1, y1, x2, y2) fractions of card width / height; the other corners mirror
    it. `index_corners` lists the corners that carry an index (`("tl", "br")` for
    most decks, all four for some). `index_boxes` overrides the box per rank class
    (`"10"`, `"JK"`, ...) where the art differs, e.g. a tall vertical JOKER index;
    `card_boxes` overrides it per card (`"JS"`) where one card prints its index elsewhere
    (`datasets.art.card_boxes`). `corner_radius` is the rounding of the card corners, as a
    fraction of width.
    """

    aspect: float = 0.714
    index_box: tuple[float, float, float, float] = (0.03, 0.025, 0.17, 0.25)
    index_corners: tuple[str, ...] = ("tl", "br")
    index_boxes: Mapping[str, tuple[float, float, float, float]] = field(default_factory=dict)
    corner_radius: float = 0.06
    card_boxes: Mapping[str, tuple[float, float, float, float]] = field(default_factory=dict)

    def box_for(self, rank_class: str, token: str | None = None) -> tuple[float, float, float, float]:
        """Top-left index box of a card of this rank class (fractions of the card); of the
        card `token` itself where it has its own."""
        if token is not None and token in self.card_boxes:
            return tuple(self.card_boxes[token])  # type: ignore[return-value]
        return tuple(self.index_boxes.get(rank_class, self.index_box))  # type: ignore[return-value]

    def corner_boxes(self, rank_class: str, token: str | None = None
                     ) -> list[tuple[str, tuple[float, float, float, float], float]]:
        """(corner, box in card fractions, rotation of the print in degrees) for each index."""
        x1, y1, x2, y2 = self.box_for(rank_class, token)
        mirrored = {
            "tl": ((x1, y1, x2, y2), 0.0),
            "tr": ((1 - x2, y1, 1 - x1, y2), 0.0),
            "br": ((1 - x2, 1 - y2, 1 - x1, 1 - y1), 180.0),
            "bl": ((x1, 1 - y2, x2, 1 - y1), 180.0),
        }
        return [(c, *mirrored[c]) for c in CORNER_NAMES if c in self.index_corners]


DEFAULT_GEOMETRY = CardGeometry()


@dataclass(frozen=True)
class SceneParams:
    """Knobs of the scene generator (defaults: the issue's ranges).

    - `megapixels`: photo size range (log-uniform); `aspects`: long/short side ratios.
    - `portrait_p`: chance the photo is taller than wide.
    - `card_frac`: card height as a fraction of the photo's long side (6-15 %); the
      layout is shrunk below the drawn value if it would not fit, never below the minimum.
    - `max_tilt_deg`: camera tilt off vertical (perspective); `max_roll_deg`: in-plane
      rotation of the whole table.
    - `went_out_p`: chance a team went out (else the deal ended on the draw pile).
    - `melds_per_team`: (min, max) melds per team; `canasta_p`: chance a meld is a
      canasta; `squared_p`: chance a canasta is squared up (one card visible);
      `black_three_p`: chance the team that went out melded black threes.
    - `second_design_p`: chance the two decks have different face designs.
    - `closeup_p`, `closeup_card_frac`: chance of a close shot of part of the table with
      bigger cards (like the real validation photos; `Scene.complete` is then usually
      false), and its card size range as a fraction of the long side.
    - `max_mess`: how sloppy a team may lay its melds (0: tidy columns; 1: shifted and
      turned cards whose covered corners can peek out).
    - `lens_p`, `lens_k1`: chance of radial lens distortion and the range of its
      coefficient k1 (negative: barrel), see `distort_points`.
    - `clutter`: draw clutter (score pad, coins, fingers, face-down hands).
    """

    megapixels: tuple[float, float] = (2.0, 12.0)
    aspects: tuple[float, ...] = (4 / 3, 4 / 3, 4 / 3, 3 / 2, 16 / 9)
    portrait_p: float = 0.25
    card_frac: tuple[float, float] = (0.06, 0.15)
    max_tilt_deg: float = 20.0
    max_roll_deg: float = 8.0
    went_out_p: float = 0.85
    melds_per_team: tuple[int, int] = (1, 7)
    canasta_p: float = 0.45
    squared_p: float = 0.25
    black_three_p: float = 0.12
    second_design_p: float = 0.3
    clutter: bool = True
    closeup_p: float = 0.1
    closeup_card_frac: tuple[float, float] = (0.15, 0.4)
    lens_p: float = 0.6
    max_mess: float = 1.0
    lens_k1: tuple[float, float] = (-0.04, 0.02)


# ----------------------------------------------------------------------------- cards

def rank_class(token: str) -> str:
    """Index class of a suited card token: `KH` -> `K`, `3D` -> `3R`, `JK` -> `JK`."""
    if token == "JK":
        return "JK"
    rank, suit = token[:-1], token[-1]
    if rank == "3":
        return "3R" if suit in RED_SUITS else "3B"
    return rank


def full_pack() -> list[tuple[str, int, str]]:
    """The 108 physical cards as (token, deck, joker colour or '')."""
    cards = []
    for deck in (0, 1):
        for suit in SUITS:
            for rank in ALL_RANKS:
                cards.append((rank + suit, deck, ""))
        cards.append(("JK", deck, "red"))
        cards.append(("JK", deck, "black"))
    return cards


class _Pack:
    """The cards not yet placed, drawn by rank class with the rng."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.cards = full_pack()
        rng.shuffle(self.cards)  # type: ignore[arg-type]

    def count(self, cls: str) -> int:
        return sum(1 for c in self.cards if rank_class(c[0]) == cls)

    def take(self, cls: str, n: int = 1, prefer_suits: Sequence[str] = ()) -> list[tuple[str, int, str]]:
        """Remove n cards of a rank class (preferring some suits first)."""
        pool = [c for c in self.cards if rank_class(c[0]) == cls]
        if len(pool) < n:
            raise ValueError(f"pack has {len(pool)} of {cls}, need {n}")
        if prefer_suits:
            pool.sort(key=lambda c: c[0][-1] not in prefer_suits)
        taken = pool[:n]
        for c in taken:
            self.cards.remove(c)
        return taken

    def take_random(self, n: int, exclude: set[str] = frozenset()) -> list[tuple[str, int, str]]:  # type: ignore[assignment]
        pool = [c for c in self.cards if rank_class(c[0]) not in exclude]
        n = min(n, len(pool))
        taken = pool[:n]
        for c in taken:
            self.cards.remove(c)
        return taken


@dataclass
class _MeldDeal:
    team: int
    rank: str  # index class: natural rank or "3B"
    cards: list[tuple[str, int, str]]  # physical cards, naturals first then wilds
    squared: bool = False

    @property
    def naturals(self) -> int:
        return sum(1 for c in self.cards if rank_class(c[0]) not in WILD_RANKS)

    @property
    def wilds(self) -> list[str]:
        return [rank_class(c[0]) for c in self.cards if rank_class(c[0]) in WILD_RANKS]


@dataclass
class _Deal:
    melds: list[_MeldDeal]
    red_threes: list[list[tuple[str, int, str]]]  # per team
    hands: list[list[tuple[str, int, str]]]  # per team (both partners)
    went_out: int | None
    concealed: bool
    discard: list[tuple[str, int, str]]  # bottom first, top last
    draw: list[tuple[str, int, str]]


def deal_table(rng: np.random.Generator, params: SceneParams = SceneParams()) -> _Deal:
    """A legal end-of-deal: melds per team, red threes, hands, piles; conserves 108 cards."""
    pack = _Pack(rng)
    went_out = int(rng.integers(2)) if rng.random() < params.went_out_p else None
    melds: list[_MeldDeal] = []
    lo, hi = params.melds_per_team
    for team in (0, 1):
        # a team that did not go out sometimes melded nothing (its red threes count against it)
        if team != went_out and rng.random() < 0.06:
            continue
        n_melds = int(rng.integers(lo, hi + 1))
        ranks = [str(r) for r in rng.permutation(NATURAL_RANKS)[:n_melds]]
        need_canasta = team == went_out
        team_melds = []
        for i, rank in enumerate(ranks):
            # wilds in the pack are shared: keep the count honest
            wild_left = pack.count("2") + pack.count("JK")
            nat_left = pack.count(rank)
            want_canasta = (need_canasta and i == 0) or rng.random() < params.canasta_p
            if want_canasta:
                size = int(rng.choice([7, 7, 7, 7, 8, 8, 9, 10, 12]))
                n_wild = 0 if rng.random() < 0.45 else int(rng.integers(1, 4))
            else:
                size = int(rng.choice([3, 3, 4, 4, 5, 6]))
                n_wild = int(rng.choice([0, 0, 0, 1, 1, 2, 3]))
            n_wild = min(n_wild, size - 2, wild_left, 3)
            n_nat = size - n_wild
            if n_nat > nat_left:
                n_nat = nat_left
                if n_nat < 2:
                    continue
                # keep it a canasta if we must, with up to three wilds
                if want_canasta and n_nat + min(3, wild_left) >= 7:
                    n_wild = max(n_wild, 7 - n_nat)
            if need_canasta and i == 0 and n_nat + n_wild < 7:
                n_wild = min(3, wild_left, max(0, 7 - n_nat))
            if n_nat + n_wild < 3:
                n_wild = min(3, wild_left, 3 - n_nat)
                if n_nat + n_wild < 3:
                    continue  # not enough cards of this rank left for a meld
            cards = pack.take(rank, n_nat)
            for _ in range(n_wild):
                kind = "JK" if (pack.count("JK") and (rng.random() < 0.35 or not pack.count("2"))) else "2"
                cards += pack.take(kind, 1)
            team_melds.append(_MeldDeal(team, rank, cards))
        if need_canasta and not any(len(m.cards) >= 7 for m in team_melds):
            raise _Retry("no canasta for the team that went out")
        if team == went_out and rng.random() < params.black_three_p and pack.count("3B") >= 3:
            team_melds.append(_MeldDeal(team, "3B", pack.take("3B", int(rng.integers(3, min(4, pack.count("3B")) + 1)))))
        for m in team_melds:
            if len(m.cards) >= 7 and m.rank != "3B" and rng.random() < params.squared_p:
                m.squared = True
        melds += team_melds
    # red threes: usually all four are down by the end; an undrawn one stays in the stock
    red_threes: list[list[tuple[str, int, str]]] = [[], []]
    for card in pack.take("3R", 4):
        # when the draw pile ran out, every red three has been drawn and put down
        if went_out is None or rng.random() < 0.92:
            red_threes[int(rng.integers(2))].append(card)
        else:
            pack.cards.insert(int(rng.integers(len(pack.cards) + 1)), card)
    # hands: the player who went out holds nothing; partners and the other team hold some
    hands: list[list[tuple[str, int, str]]] = [[], []]
    for team in (0, 1):
        players = 1 if team == went_out else 2
        for _ in range(players):
            n = int(rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 13]))
            hands[team] += pack.take_random(n, exclude={"3R"})
    concealed = went_out is not None and rng.random() < 0.05
    discard = pack.take_random(int(rng.choice([1, 1, 2, 3, 5, 8, 12])), exclude={"3R"})
    if went_out is None:
        # the deal ended because the draw pile ran out (or a last red three was drawn)
        discard = pack.take_random(len(pack.cards)) + discard
    draw = list(pack.cards)
    return _Deal(melds, red_threes, hands, went_out, concealed, discard, draw)


class _Retry(Exception):
    """The random deal cannot satisfy a rule; draw again."""


# ----------------------------------------------------------------------------- geometry

def _rot(deg: float) -> np.ndarray:
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


def card_quad(center: Sequence[float], width: float, height: float, rot_deg: float) -> np.ndarray:
    """(4,2) corners TL, TR, BR, BL of a card centred at `center`, rotated clockwise by rot_deg
    (y down, so a positive angle turns the card's top to the right)."""
    half = np.array([[-width / 2, -height / 2], [width / 2, -height / 2],
                     [width / 2, height / 2], [-width / 2, height / 2]])
    # y points down: a clockwise turn on screen is the usual rotation matrix with +angle
    return half @ _rot(rot_deg).T + np.asarray(center, dtype=float)


def homography_from_unit(quad: np.ndarray) -> np.ndarray:
    """3x3 H mapping the unit square (0,0),(1,0),(1,1),(0,1) onto quad's four points."""
    src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    return _homography(src, np.asarray(quad, dtype=float))


def _homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    rows = []
    for (x, y), (u, v) in zip(src, dst, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, -u])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, -v])
    _, _, vt = np.linalg.svd(np.array(rows))
    h = vt[-1].reshape(3, 3)
    return h / h[2, 2]


def apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply a 3x3 homography to (N,2) points."""
    pts = np.asarray(pts, dtype=float).reshape(-1, 2)
    p = np.c_[pts, np.ones(len(pts))] @ h.T
    return p[:, :2] / p[:, 2:3]


def distort_points(pts: np.ndarray, k1: float, width: int, height: int) -> np.ndarray:
    """Radial lens distortion of (N,2) photo points: r' = r (1 + k1 r^2), r in half long sides."""
    if k1 == 0:
        return np.asarray(pts, dtype=float)
    c = np.array([width / 2, height / 2])
    d = (np.asarray(pts, dtype=float) - c) / (max(width, height) / 2)
    r2 = (d ** 2).sum(axis=-1, keepdims=True)
    return c + d * (1 + k1 * r2) * (max(width, height) / 2)


def undistort_points(pts: np.ndarray, k1: float, width: int, height: int, iterations: int = 12) -> np.ndarray:
    """Inverse of `distort_points` (fixed-point iteration; exact to well under a pixel)."""
    if k1 == 0:
        return np.asarray(pts, dtype=float)
    c = np.array([width / 2, height / 2])
    half = max(width, height) / 2
    target = (np.asarray(pts, dtype=float) - c) / half
    d = target.copy()
    for _ in range(iterations):
        d = target / (1 + k1 * (d ** 2).sum(axis=-1, keepdims=True))
    return c + d * half


def up_angle(outline: np.ndarray) -> float:
    """Direction the card's top points in the photo (0 = up, 90 = right), from TL,TR,BR,BL."""
    top = (outline[0] + outline[1]) / 2
    bottom = (outline[2] + outline[3]) / 2
    dx, dy = top - bottom
    return float(math.degrees(math.atan2(dx, -dy)) % 360.0)


def points_in_polygon(pts: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """Boolean mask of (N,2) points inside a simple polygon (even-odd rule), vectorised."""
    x, y = pts[:, 0:1], pts[:, 1:2]
    px, py = poly[:, 0], poly[:, 1]
    qx, qy = np.roll(px, -1), np.roll(py, -1)
    crosses = (py > y) != (qy > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        xint = px + (y - py) * (qx - px) / (qy - py)
    inside = crosses & (x < xint)
    return (inside.sum(axis=1) % 2) == 1


# ----------------------------------------------------------------------------- scene

@dataclass
class SceneCard:
    """One physical card placed on the table (outline and indices in photo pixels)."""

    id: int
    card: str
    rank: str
    design: str
    deck: int
    team: int | None
    meld: int | None
    role: str
    face_up: bool
    outline: np.ndarray  # (4,2) TL, TR, BR, BL as printed
    z: int
    joker: str = ""
    indices: list[dict[str, Any]] = field(default_factory=list)

    @property
    def angle(self) -> float:
        return up_angle(self.outline)

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.id, "card": self.card, "rank": self.rank, "design": self.design,
            "deck": self.deck, "team": self.team, "meld": self.meld, "role": self.role,
            "face_up": self.face_up, "outline": _r(self.outline), "angle": round(self.angle, 2),
            "z": self.z, "indices": self.indices,
        }
        if self.joker:
            out["joker"] = self.joker
        return out


@dataclass
class Clutter:
    """A non-card object on the table: `score_pad`, `coin`, `finger`, `pen`; polygon in photo px."""

    kind: str
    polygon: np.ndarray
    z: int
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "polygon": _r(self.polygon), "z": self.z, **self.params}


@dataclass
class Scene:
    """Everything known about one synthetic photo; `to_json()` is the scene file format."""

    seed: int | None
    split: str
    width: int
    height: int
    card_height_px: float
    cards: list[SceneCard]
    melds: list[dict[str, Any]]
    layout: dict[str, Any]
    clutter: list[Clutter]
    stock: dict[str, Any]
    camera: dict[str, Any]
    designs: list[str]
    complete: bool = True
    background: str = ""
    file: str = ""
    render: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The scene ground truth (format in docs/ARCHITECTURE.md)."""
        return {
            "seed": self.seed, "split": self.split,
            "image": {"file": self.file, "width": self.width, "height": self.height},
            "card_height_px": round(self.card_height_px, 2),
            "designs": self.designs, "background": self.background, "complete": self.complete,
            "camera": self.camera,
            "cards": [c.to_json() for c in self.cards],
            "melds": self.melds,
            "layout": self.layout,
            "stock": self.stock,
            "clutter": [c.to_json() for c in self.clutter],
            "render": self.render,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))

    def index_labels(self, min_visible: float = 0.6) -> list[dict[str, Any]]:
        """Flat list of readable indices: card id, rank class, box, quad, angle, visible."""
        out = []
        for c in self.cards:
            for ix in c.indices:
                if ix["visible"] >= min_visible:
                    out.append({"card_id": c.id, "rank": c.rank, **ix})
        return out


def _r(a: np.ndarray) -> list:
    return np.round(np.asarray(a, dtype=float), 2).tolist()


@dataclass
class _Placed:
    """A card in table units (card height = 1) before the camera."""

    phys: tuple[str, int, str]
    center: np.ndarray
    rot: float  # degrees clockwise; 0 = top of card points up the photo
    role: str
    team: int | None
    meld: int | None
    face_up: bool


def make_scene(
    rng: np.random.Generator,
    designs: Mapping[str, CardGeometry] | None = None,
    *,
    params: SceneParams = SceneParams(),
    split: str = "train",
    seed: int | None = None,
    backgrounds: Sequence[str] = (),
) -> Scene:
    """A random legal end-of-deal table photographed from above, with full ground truth.

    `designs` maps a design name to its `CardGeometry` (default: one generic design);
    the scene uses one design for both decks, or two with `params.second_design_p`.
    `backgrounds` are table-texture names for the renderer (one is picked).
    """
    designs = dict(designs or {"generic": DEFAULT_GEOMETRY})
    scene = None
    for _attempt in range(6):
        deal = _deal_legal(rng, params)
        names = sorted(designs)
        deck_design = [names[int(rng.integers(len(names)))]] * 2
        if len(names) > 1 and rng.random() < params.second_design_p:
            deck_design[1] = names[int(rng.integers(len(names)))]
        # one card shape per scene (both decks are bridge/poker size in practice): deck 0's
        aspect = designs[deck_design[0]].aspect
        placed, clutter_units = _lay_out(rng, deal, designs, deck_design, aspect, params)
        scene = _photograph(rng, deal, placed, clutter_units, designs, deck_design, aspect,
                            params, split, seed, backgrounds)
        # a table too crowded to fit at the smallest card size is dealt again (usually)
        if scene.complete or scene.camera["closeup"] or rng.random() < 0.1:
            break
    assert scene is not None
    return scene


def _deal_legal(rng: np.random.Generator, params: SceneParams) -> _Deal:
    for _ in range(100):
        try:
            return deal_table(rng, params)
        except _Retry:
            continue
    raise RuntimeError("could not deal a legal table")  # pragma: no cover


def _lay_out(rng, deal: _Deal, designs, deck_design, aspect: float, params: SceneParams):
    """Place every card in table units: team 0 below the centre, team 1 rotated above it."""
    placed: list[_Placed] = []
    clutter: list[dict[str, Any]] = []
    w, h = aspect, 1.0
    team_extent = []
    team_cards: list[list[_Placed]] = [[], []]

    def shows_left(physical: Sequence[tuple[str, int, str]]) -> bool:
        """Whether every card's deck prints an index on its left side (top- or bottom-left).

        Players spread an overlapping row or fan so that the covered cards' ranks show;
        a deck printing its index only on the right (top-right) is spread to the left.
        """
        return all({"tl", "bl"} & set(designs[deck_design[deck]].index_corners)
                   for _, deck, _ in physical)

    for team in (0, 1):
        cards: list[_Placed] = []
        melds = [(i, m) for i, m in enumerate(deal.melds) if m.team == team]
        order = list(rng.permutation(len(melds))) if rng.random() < 0.3 else list(range(len(melds)))
        gap = w * float(rng.uniform(0.08, 0.45))
        # how carefully this team lays its cards: 0 tidy, 1 sloppy (shifts and turns)
        mess = params.max_mess * float(rng.uniform(0, 1)) ** 2
        # each card shifted just enough that the index of the card above stays readable
        index_bottom = max(designs[d].box_for("10")[3] for d in deck_design)
        step_y = index_bottom + float(rng.uniform(0.01, 0.08))
        rows = 1 if len(melds) <= int(rng.integers(4, 9)) else 2
        max_cols = math.ceil(len(melds) / rows) if melds else 1
        x = 0.0
        row_y = 0.0
        row_height = 0.0
        col = 0
        for k in order:
            mi, meld = melds[k]
            style = "column"
            r = rng.random()
            if not meld.squared and r < 0.12:
                style = "row"
            elif not meld.squared and r < 0.22 and len(meld.cards) <= 8:
                style = "fan"
            if col >= max_cols:
                # wrap: a second row of melds further from the player (up the photo)
                x, col = 0.0, 0
                row_y += row_height + float(rng.uniform(0.15, 0.4))
                row_height = 0.0
            jitter_rot = float(rng.normal(0, 2.0 + 4.0 * mess))
            order_cards = list(meld.cards)
            if rng.random() < 0.4:
                # wilds are not always added last: some players tuck them in anywhere
                order_cards = [order_cards[i] for i in rng.permutation(len(order_cards))]
            if meld.squared:
                # the visible top card: red natural on a natural canasta, black on a mixed
                want = RED_SUITS if not meld.wilds else ("S", "C")
                nat = [c for c in order_cards if rank_class(c[0]) not in WILD_RANKS]
                top = next((c for c in nat if c[0][-1] in want), nat[0])
                cards.append(_Placed(top, np.array([x + w / 2, row_y + h / 2]), jitter_rot,
                                     "squared_top", team, mi, True))
                x += w + gap
                row_height = max(row_height, h)
            elif style == "column":
                n = len(order_cards)
                for i, c in enumerate(order_cards):
                    cy = row_y + h / 2 + i * step_y + abs(float(rng.normal(0, 0.01)))
                    cx = x + w / 2 + float(rng.normal(0, 0.012 + 0.03 * mess))
                    cards.append(_Placed(c, np.array([cx, cy]), jitter_rot + float(rng.normal(0, 1.0 + 3.0 * mess)),
                                         "meld", team, mi, True))
                x += w + gap
                row_height = max(row_height, h + (n - 1) * step_y)
            elif style == "row":
                step_x = w * float(rng.uniform(0.22, 0.32))
                n = len(order_cards)
                # each next card on top, shifted so the covered card's index strip shows:
                # to the right (left strip shows), or to the left for decks printing no
                # left-side index (the right strip with its top-right or bottom-right index)
                first, sign = (x + w / 2, 1.0) if shows_left(order_cards) else \
                    (x + w / 2 + (n - 1) * step_x, -1.0)
                for i, c in enumerate(order_cards):
                    cx = first + sign * i * step_x + float(rng.normal(0, 0.01))
                    cy = row_y + h / 2 + float(rng.normal(0, 0.012))
                    cards.append(_Placed(c, np.array([cx, cy]), jitter_rot + float(rng.normal(0, 1.0)),
                                         "meld", team, mi, True))
                x += w + (n - 1) * step_x + gap
                row_height = max(row_height, h)
            else:  # fan: turn around a pivot below the cards, like a hand of cards laid down
                n = len(order_cards)
                shift = float(rng.uniform(0.13, 0.2))  # card-to-card shift at the index
                spread = math.degrees(math.asin(shift / 1.1))
                pivot = np.array([x + w / 2 + (n - 1) * shift / 2, row_y + h * 1.6])
                # later cards on top, turned clockwise (spreading right), or mirrored
                # (spreading left) for decks printing no left-side index
                turn = 1.0 if shows_left(order_cards) else -1.0
                for i, c in enumerate(order_cards):
                    ang = turn * (i - (n - 1) / 2) * spread
                    center = pivot + _rot(ang) @ np.array([0.0, -1.1 * h])
                    cards.append(_Placed(c, center, ang + jitter_rot, "meld", team, mi, True))
                x += w + (n - 1) * shift + gap + 0.15
                row_height = max(row_height, h * 1.35)
            col += 1
        # red threes set apart at one end of the team's melds, as a short overlapping row
        if deal.red_threes[team]:
            side_right = rng.random() < 0.5
            n3 = len(deal.red_threes[team])
            if cards:
                corners = np.concatenate([card_quad(p.center, w, h, p.rot) for p in cards])
                left, right = corners[:, 0].min(), corners[:, 0].max()
            else:
                left, right = 0.0, 0.0
            space = float(rng.uniform(0.2, 0.6))
            rx = (right + space) if side_right else left - space - w - (n3 - 1) * w * 0.3
            ry = float(rng.uniform(0, 0.3))
            rot0 = float(rng.normal(0, 3))
            # overlapping like a row: spread left for decks printing no left-side index
            first, sign = (rx, 1.0) if shows_left(deal.red_threes[team]) else \
                (rx + (n3 - 1) * w * 0.3, -1.0)
            for i, c in enumerate(deal.red_threes[team]):
                cards.append(_Placed(c, np.array([first + w / 2 + sign * i * w * 0.3, ry + h / 2]),
                                     rot0 + float(rng.normal(0, 1.5)), "red_three", team, None, True))
        team_cards[team] = cards
        if cards:
            xs = np.array([p.center[0] for p in cards])
            ys = np.array([p.center[1] for p in cards])
            team_extent.append((xs.min() - w / 2, xs.max() + w / 2, ys.min() - h / 2, ys.max() + h / 2))
        else:
            team_extent.append((0.0, w, 0.0, h))

    # team 0 below the centre piles, team 1 above, rotated 180 degrees to face the far edge
    center_gap = float(rng.uniform(1.2, 2.2))
    for team in (0, 1):
        x0, x1, y0, y1 = team_extent[team]
        cx = (x0 + x1) / 2 + float(rng.normal(0, 0.3))
        for p in team_cards[team]:
            local = p.center - np.array([cx, y0])  # top of the team's block at y=0
            if team == 0:
                p.center = local + np.array([0.0, center_gap / 2])
            else:
                p.center = -local - np.array([0.0, center_gap / 2])
                p.rot = p.rot + 180.0
            placed.append(p)

    # centre: draw pile (face down, squared) and discard pile (face up, a little messy)
    pile_x = float(rng.uniform(-1.2, 0.2))
    pile_rot = float(rng.uniform(0, 360)) if rng.random() < 0.3 else float(rng.normal(0, 8))
    if deal.draw:
        # only the top few cards of a squared stack matter for the picture
        for i, c in enumerate(deal.draw[-3:]):
            off = np.array([i * 0.004, -i * 0.004])
            placed.append(_Placed(c, np.array([pile_x, 0.0]) + off, pile_rot + float(rng.normal(0, 0.6)),
                                  "draw_pile", None, None, False))
    if deal.discard:
        dx = pile_x + w * float(rng.uniform(1.15, 1.6))
        base_rot = float(rng.uniform(0, 360)) if rng.random() < 0.5 else float(rng.normal(0, 15))
        shown = deal.discard[-6:]
        for i, c in enumerate(shown):
            sideways = rank_class(c[0]) in WILD_RANKS and i < len(shown) - 1
            rot = base_rot + float(rng.normal(0, 7)) + (90.0 if sideways else 0.0)
            off = rng.normal(0, 0.05, size=2)
            placed.append(_Placed(c, np.array([dx, 0.0]) + off, rot, "discard", None, None, True))

    # hands: each team's remaining cards, face down near its own edge
    for team in (0, 1):
        cards = deal.hands[team]
        if not cards or not params.clutter:
            continue
        # beside the team's melds (never on them), usually half off the photo's edge
        own = [p.center for p in placed if p.team == team] or [p.center for p in placed]
        own_pts = np.array(own)
        spread = rng.random() < 0.5
        fan = len(cards) * 0.12 if spread else 0.0
        if rng.random() < 0.5:
            hx = own_pts[:, 0].max() + w + float(rng.uniform(0.3, 1.0))
        else:
            hx = own_pts[:, 0].min() - w - fan - float(rng.uniform(0.3, 1.0))
        hy = float(own_pts[:, 1].mean() + rng.normal(0, 0.5))
        rot = (0.0 if team == 0 else 180.0) + float(rng.normal(0, 20))
        for i, c in enumerate(cards):
            if spread:
                off = _rot(rot) @ np.array([i * 0.12, 0.0])
            else:
                off = rng.normal(0, 0.03, size=2)
            placed.append(_Placed(c, np.array([hx, hy]) + off, rot + float(rng.normal(0, 3)),
                                  "hand", team, None, False))

    if params.clutter:
        clutter = _clutter_units(rng, placed, w, h)
    return placed, clutter


def _clutter_units(rng, placed: list[_Placed], w: float, h: float) -> list[dict[str, Any]]:
    """Score pad, coins, pen, fingers in table units; fingers enter from an edge later."""
    centers = np.array([p.center for p in placed]) if placed else np.zeros((1, 2))
    lo, hi = centers.min(axis=0), centers.max(axis=0)
    items: list[dict[str, Any]] = []
    if rng.random() < 0.45:
        pw, ph = float(rng.uniform(0.9, 1.4)), float(rng.uniform(1.2, 1.8))
        cx = float(rng.choice([lo[0] - pw * 0.9, hi[0] + pw * 0.9]))
        cy = float(rng.uniform(lo[1], hi[1]))
        poly = card_quad((cx, cy), pw, ph, float(rng.normal(0, 15)))
        items.append({"kind": "score_pad", "poly": poly, "on_top": False})
    for _ in range(int(rng.choice([0, 0, 1, 2, 3, 5]))):
        r = float(rng.uniform(0.08, 0.14))
        cx = float(rng.uniform(lo[0] - 1, hi[0] + 1))
        cy = float(rng.uniform(lo[1] - 0.5, hi[1] + 0.5))
        t = np.linspace(0, 2 * math.pi, 24, endpoint=False)
        poly = np.c_[cx + r * np.cos(t), cy + r * np.sin(t)]
        items.append({"kind": "coin", "poly": poly, "on_top": rng.random() < 0.5})
    if rng.random() < 0.2:
        cx = float(rng.uniform(lo[0], hi[0]))
        cy = float(rng.uniform(lo[1], hi[1]))
        poly = card_quad((cx, cy), 0.05, float(rng.uniform(0.9, 1.3)), float(rng.uniform(0, 180)))
        items.append({"kind": "pen", "poly": poly, "on_top": True})
    return items


def _camera_matrix(rng, params: SceneParams, width: int, height: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Homography of a phone tilted up to max_tilt_deg off vertical (rotation about its centre)."""
    tilt = abs(float(rng.normal(0, params.max_tilt_deg / 2)))
    tilt = min(tilt, params.max_tilt_deg)
    azimuth = float(rng.uniform(0, 2 * math.pi))
    f = max(width, height) * float(rng.uniform(0.75, 1.15))  # phone main camera: ~26 mm eq.
    ax, ay = math.radians(tilt) * math.cos(azimuth), math.radians(tilt) * math.sin(azimuth)
    rx = np.array([[1, 0, 0], [0, math.cos(ax), -math.sin(ax)], [0, math.sin(ax), math.cos(ax)]])
    ry = np.array([[math.cos(ay), 0, math.sin(ay)], [0, 1, 0], [-math.sin(ay), 0, math.cos(ay)]])
    k = np.array([[f, 0, width / 2], [0, f, height / 2], [0, 0, 1]])
    hm = k @ (rx @ ry) @ np.linalg.inv(k)
    return hm / hm[2, 2], {"tilt_deg": round(tilt, 2), "azimuth_deg": round(math.degrees(azimuth), 1),
                           "focal_px": round(f, 1)}


def _photograph(rng, deal: _Deal, placed: list[_Placed], clutter_units, designs, deck_design,
                aspect: float, params: SceneParams, split: str, seed: int | None,
                backgrounds: Sequence[str]) -> Scene:
    """Choose the photo size, scale, roll and tilt; map everything to pixels; compute visibility."""
    mp = math.exp(rng.uniform(math.log(params.megapixels[0]), math.log(params.megapixels[1])))
    ratio = float(rng.choice(params.aspects))
    long_side = math.sqrt(mp * 1e6 * ratio)
    short_side = long_side / ratio
    portrait = rng.random() < params.portrait_p
    width, height = (int(short_side), int(long_side)) if portrait else (int(long_side), int(short_side))
    width -= width % 2
    height -= height % 2

    roll = float(rng.normal(0, params.max_roll_deg / 2))
    roll = max(-params.max_roll_deg, min(params.max_roll_deg, roll))
    hcam, camera = _camera_matrix(rng, params, width, height)
    long_px = max(width, height)
    unit = 0.1 * long_px  # provisional card height; the final scale is fitted below

    # the important content (melds, red threes, piles), rolled, tilted, then fitted to the photo
    core = [p for p in placed if p.role not in ("hand",)]
    pts = np.concatenate([card_quad(p.center, aspect, 1.0, p.rot) for p in core]) @ _rot(roll).T
    mid = (pts.min(axis=0) + pts.max(axis=0)) / 2
    centre = np.array([width / 2, height / 2])

    def flat(p: np.ndarray) -> np.ndarray:
        return apply_h(hcam, (np.asarray(p, dtype=float).reshape(-1, 2) @ _rot(roll).T - mid) * unit + centre)

    tilted = flat(pts)
    lo, hi = tilted.min(axis=0), tilted.max(axis=0)
    span = hi - lo
    margin = float(rng.uniform(0.02, 0.08))
    fit = min(width * (1 - 2 * margin) / span[0], height * (1 - 2 * margin) / span[1])
    scale = float(rng.uniform(*params.card_frac)) * long_px / unit
    scale = min(scale, fit)
    # never smaller than the minimum card size: a crowded table is then cut at the edges
    scale = max(scale, params.card_frac[0] * long_px / unit)
    slack = np.maximum(np.array([width, height]) - span * scale, 0) / 2
    offset = centre + rng.uniform(-1, 1, size=2) * slack * 0.8
    bbox_mid = (lo + hi) / 2
    closeup = rng.random() < params.closeup_p
    if closeup:
        # a close shot of part of the table: big cards, the photo centred on one of them
        scale = float(rng.uniform(*params.closeup_card_frac)) * long_px / unit
        bbox_mid = tilted[int(rng.integers(len(tilted)))] + rng.normal(0, 0.5, size=2) * unit
        offset = centre
    card_px = unit * scale
    k1 = float(rng.uniform(*params.lens_k1)) if rng.random() < params.lens_p else 0.0
    camera.update({"roll_deg": round(roll, 2), "megapixels": round(width * height / 1e6, 2),
                   "closeup": closeup, "k1": round(k1, 4)})
    k1 = camera["k1"]  # the rounded value, so the renderer undoes exactly what the labels use

    def to_photo(p: np.ndarray) -> np.ndarray:
        return distort_points((flat(p) - bbox_mid) * scale + offset, k1, width, height)

    cards: list[SceneCard] = []
    z = 0
    # draw order: piles and melds in placement order, so each later card lies on the earlier
    clutter: list[Clutter] = []
    under = [c for c in clutter_units if not c["on_top"]]
    over = [c for c in clutter_units if c["on_top"]]
    for item in under:
        clutter.append(Clutter(item["kind"], to_photo(item["poly"]), z))
        z += 1
    for i, p in enumerate(placed):
        token, deck, joker = p.phys
        quad = to_photo(card_quad(p.center, aspect, 1.0, p.rot))
        cards.append(SceneCard(i, token, rank_class(token), deck_design[deck], deck, p.team, p.meld,
                               p.role, p.face_up, quad, z, joker))
        z += 1
    for item in over:
        clutter.append(Clutter(item["kind"], to_photo(item["poly"]), z))
        z += 1
    if params.clutter and rng.random() < 0.25:
        clutter.append(_finger(rng, width, height, z))
        z += 1

    _fill_indices(cards, clutter, designs, width, height)
    melds_json, layout = _ground_truth(rng, deal, cards)
    stock = {
        "draw_pile": [c[0] for c in deal.draw],
        "discard_pile": [c[0] for c in deal.discard],
        "hidden": {str(i): [c[0] for c in m.cards] for i, m in enumerate(deal.melds) if m.squared},
    }
    design_names = sorted(set(deck_design))
    bg = str(backgrounds[int(rng.integers(len(backgrounds)))]) if backgrounds else ""
    shown = np.concatenate([c.outline for c in cards if c.role in ("meld", "squared_top", "red_three")]
                           or [np.zeros((1, 2))])
    complete = bool(np.all((shown >= 0) & (shown <= [width, height])))
    return Scene(seed, split, width, height, card_px, cards, melds_json, layout, clutter, stock,
                 camera, design_names, complete, bg)


def _finger(rng, width: int, height: int, z: int) -> Clutter:
    """A finger/thumb entering from the bottom or a side edge (rounded polygon)."""
    edge = int(rng.integers(3))
    length = float(rng.uniform(0.12, 0.25)) * max(width, height)
    thick = length * float(rng.uniform(0.22, 0.3))
    t = np.linspace(0, math.pi, 12)
    tip = np.c_[thick / 2 * np.cos(t), -length + thick / 2 * (1 - np.sin(t)) * -1]
    poly = np.r_[[[thick / 2, thick]], tip, [[-thick / 2, thick]]]
    ang = float(rng.normal(0, 20))
    if edge == 0:
        base = np.array([rng.uniform(0.1, 0.9) * width, height])
    elif edge == 1:
        base, ang = np.array([0.0, rng.uniform(0.4, 0.95) * height]), ang + 90
    else:
        base, ang = np.array([float(width), rng.uniform(0.4, 0.95) * height]), ang - 90
    poly = poly @ _rot(ang).T + base
    return Clutter("finger", poly, z)


# sample grid inside an index box, in box fractions: visibility is the share not covered
_GRID = np.stack(np.meshgrid(np.linspace(0.06, 0.94, 6), np.linspace(0.05, 0.95, 9)), -1).reshape(-1, 2)


def _fill_indices(cards: list[SceneCard], clutter: list[Clutter], designs, width: int, height: int) -> None:
    """Project each face-up card's printed indices and measure how much of each is visible."""
    occluders = [(c.z, c.outline) for c in cards] + [(k.z, k.polygon) for k in clutter]
    occ_z = np.array([o[0] for o in occluders])
    occ_box = np.array([[o[1][:, 0].min(), o[1][:, 1].min(), o[1][:, 0].max(), o[1][:, 1].max()]
                        for o in occluders])
    for card in cards:
        if not card.face_up:
            continue
        geom = designs[card.design]
        hmat = homography_from_unit(card.outline)
        for corner, (x1, y1, x2, y2), print_rot in geom.corner_boxes(card.rank, card.card):
            quad = apply_h(hmat, np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]]))
            grid = np.c_[x1 + _GRID[:, 0] * (x2 - x1), y1 + _GRID[:, 1] * (y2 - y1)]
            pts = apply_h(hmat, grid)
            seen = (pts[:, 0] >= 0) & (pts[:, 0] < width) & (pts[:, 1] >= 0) & (pts[:, 1] < height)
            bx1, by1 = quad.min(axis=0)
            bx2, by2 = quad.max(axis=0)
            cand = np.nonzero((occ_z > card.z) & (occ_box[:, 0] < bx2) & (occ_box[:, 2] > bx1)
                              & (occ_box[:, 1] < by2) & (occ_box[:, 3] > by1))[0]
            for k in cand:
                if not seen.any():
                    break
                seen &= ~points_in_polygon(pts, occluders[k][1])
            card.indices.append({
                "corner": corner,
                "box": [round(float(bx1), 2), round(float(by1), 2), round(float(bx2), 2), round(float(by2), 2)],
                "quad": _r(quad),
                "visible": round(float(seen.mean()), 3),
                "angle": round((card.angle + print_rot) % 360.0, 2),
            })


def _ground_truth(rng, deal: _Deal, cards: list[SceneCard]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Meld records (with the card ids shown) and the contract's score input."""
    melds_json = []
    teams: list[dict[str, Any]] = []
    per_team_index = [0, 0]
    meld_number: dict[int, int] = {}
    for i, m in enumerate(deal.melds):
        meld_number[i] = per_team_index[m.team]
        per_team_index[m.team] += 1
    for c in cards:
        if c.meld is not None:
            c.meld = meld_number[c.meld]
    for i, m in enumerate(deal.melds):
        ids = [c.id for c in cards if c.team == m.team and c.meld == meld_number[i]
               and c.role in ("meld", "squared_top")]
        melds_json.append({
            "team": m.team, "meld": meld_number[i], "rank": m.rank, "naturals": m.naturals,
            "wilds": m.wilds, "squared": m.squared, "card_ids": ids,
            "cards": [c[0] for c in m.cards],
        })
    for team in (0, 1):
        melds: list[Any] = []
        for m in deal.melds:
            if m.team != team:
                continue
            if m.squared:
                melds.append({"rank": m.rank, "naturals": m.naturals, "wilds": m.wilds})
            else:
                melds.append([rank_class(c[0]) for c in m.cards])
        teams.append({
            "name": f"Team {team}",
            "melds": melds,
            "red_threes": len(deal.red_threes[team]),
            "went_out": deal.went_out == team,
            "concealed": bool(deal.concealed and deal.went_out == team),
            "hand": [rank_class(c[0]) for c in deal.hands[team]],
        })
    layout = {"rules": {"players": 4, "target": 5000}, "teams": teams}
    return melds_json, layout


def all_index_classes_ok(scene: Scene) -> bool:
    """Every card's rank is one of the detector's index classes."""
    return all(c.rank in INDEX_CLASSES for c in scene.cards)


"""The JSON the service reads and writes, as Pydantic models (they make the OpenAPI docs).

The stateless endpoints speak the contract of `shared/CONTRACT.md` exactly (a layout in,
the score out; a photo in, the scan out); their models document that JSON and let
unknown optional fields through, because the scoring engine, not this file, decides
what a legal layout is. Game and deal models are the service's own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# ---- the contract -------------------------------------------------------------------


class SquaredMeld(BaseModel):
    """A squared-up canasta counted by hand."""

    rank: str = Field(examples=["K"])
    naturals: int = Field(ge=0, examples=[7])
    wilds: list[str] = Field(default_factory=list, examples=[["2"]])


class LayoutTeam(BaseModel):
    """One team's side of the table at the end of a deal."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    total_before: int | None = None
    melds: list[list[str] | SquaredMeld] = Field(default_factory=list)
    red_threes: int | list[str] = 0
    went_out: bool | None = None
    concealed: bool | None = None
    hand: list[str] | None = None
    hand_points: int | None = None


class Layout(BaseModel):
    """A deal layout (input of `canasta-scan score`)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"example": {
        "rules": {"players": 4, "target": 5000},
        "teams": [
            {"name": "Us", "total_before": 1200, "melds": [["K"] * 7, ["A", "A", "2"]],
             "red_threes": 2, "went_out": True, "concealed": False, "hand": []},
            {"name": "Them", "total_before": 950, "melds": [["9", "9", "JK"]],
             "red_threes": 1, "went_out": False, "hand": ["Q", "4", "2"]}]}})

    rules: dict[str, Any] | None = None
    teams: list[LayoutTeam]


class TeamScore(BaseModel):
    """One team's score of a deal."""

    name: str
    card_points: int
    canasta_bonus: int
    red_three_bonus: int
    going_out_bonus: int
    hand_penalty: int
    deal_score: int
    natural_canastas: int
    mixed_canastas: int
    total_after: int
    next_minimum_meld: int


class DealScore(BaseModel):
    """Output of `canasta-scan score`."""

    model_config = ConfigDict(extra="allow")

    teams: list[TeamScore]
    game_over: bool
    winner: str | None


class Problem(BaseModel):
    """An error: what is wrong, and for a broken Canasta rule, which rule."""

    model_config = ConfigDict(extra="allow")

    detail: str | list[Any]
    rule: str | None = None


class ScanImage(BaseModel):
    width: int
    height: int


class ScanCorner(BaseModel):
    model_config = ConfigDict(extra="allow")

    card: str
    box: list[float]
    confidence: float
    angle: float | None = None


class ScanCard(BaseModel):
    model_config = ConfigDict(extra="allow")

    card: str
    team: int | None = None
    meld: int | None = None
    corners: list[int] = Field(default_factory=list)
    confidence: float | None = None


class ScanResult(BaseModel):
    """Output of `canasta-scan scan --json`."""

    model_config = ConfigDict(extra="allow")

    image: ScanImage
    corners: list[ScanCorner]
    cards: list[ScanCard]
    layout: dict[str, Any]


# ---- games --------------------------------------------------------------------------


class TeamIn(BaseModel):
    """A team as the players name it; `starting_total` resumes a game scored on paper."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=60, examples=["Us"])
    players: list[Annotated[str, Field(max_length=60)]] = Field(default_factory=list,
                                                                max_length=3)
    starting_total: int = Field(default=0, ge=-100_000, le=100_000)


class GameIn(BaseModel):
    """A new game."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {
        "players": 4, "target": 5000,
        "teams": [{"name": "Us", "players": ["Ann", "Bob"]},
                  {"name": "Them", "players": ["Cy", "Di"], "starting_total": 1200}]}})

    players: int = Field(default=4, examples=[4])
    target: int = Field(default=5000, gt=0, le=1_000_000)
    rules: dict[str, Any] = Field(default_factory=dict,
                                  description="house options of `scanner.rules.Ruleset`")
    teams: list[TeamIn] = Field(min_length=2, max_length=3)


class TeamState(BaseModel):
    index: int
    name: str
    players: list[str]
    starting_total: int
    total: int
    next_minimum_meld: int
    progress: float = Field(description="total / target, for the progress bar")


class DealSummary(BaseModel):
    id: int
    number: int
    status: Literal["draft", "confirmed"]
    version: int
    created_at: datetime
    confirmed_at: datetime | None
    deal_scores: list[int] | None = Field(description="each team's deal score, once confirmed")
    totals_after: list[int] | None


class GameOut(BaseModel):
    """A game: rules, teams with their totals, deals, and whether it is over."""

    id: int
    token: str | None = Field(default=None, description="returned only when the game is "
                              "created: send it as `Authorization: Bearer <token>`")
    rules: dict[str, Any]
    target: int
    teams: list[TeamState]
    game_over: bool
    winner: str | None
    deals: list[DealSummary]


# ---- deals --------------------------------------------------------------------------


class PhotoOut(BaseModel):
    seq: int
    sha256: str
    width: int
    height: int
    team: int | None
    view_url: str
    annotated_url: str
    original_url: str


class DealOut(BaseModel):
    """A deal with its editable table, the layout it makes, and its score or its problem."""

    id: int
    game_id: int
    number: int
    status: Literal["draft", "confirmed"]
    version: int
    created_at: datetime
    confirmed_at: datetime | None
    photos: list[PhotoOut]
    table: dict[str, Any] = Field(description="teams -> melds -> cards with ids and boxes")
    corrections: list[dict[str, Any]]
    outcome: dict[str, Any]
    layout: dict[str, Any] = Field(description="the contract layout sent to scoring")
    score: dict[str, Any] | None = Field(description="the score (a preview while a draft)")
    problem: dict[str, Any] | None = Field(description="why the layout does not score yet")
    review: list[dict[str, Any]] = Field(description="what to check first: melds to count, low-confidence cards, cards in no meld")
    scans: list[dict[str, Any]] = Field(description="what the scanner read, per photo")


class Versioned(BaseModel):
    """The deal version a change is based on (required to change a confirmed deal)."""

    model_config = ConfigDict(extra="forbid")

    version: int | None = None


class SetCard(Versioned):
    """Change the rank (or suit) of a card."""

    op: Literal["set_card"]
    card_id: str
    card: str = Field(examples=["Q"])


class DeleteCard(Versioned):
    """Remove a card that is not there (or was read twice)."""

    op: Literal["delete"]
    card_id: str


class AddCard(Versioned):
    """Add a missed card to a meld, a new meld ("new") or the red threes ("red_threes")."""

    op: Literal["add"]
    card: str
    team: int | None = None
    meld: str | None = Field(default=None, description='meld id, "new", "red_threes"; default: '
                             'a red three goes to the red threes, other cards to a new meld')


class MoveCard(Versioned):
    """Move a card to another meld or team ("new", "red_threes", "unplaced" or a meld id)."""

    op: Literal["move"]
    card_id: str
    team: int | None = None
    meld: str = "new"


class SquareMeld(Versioned):
    """Count a squared-up canasta by hand (a meld id, or "new" for the team)."""

    op: Literal["square"]
    team: int | None = None
    meld: str = "new"
    rank: str
    naturals: int = Field(ge=0, le=24)
    wilds: list[str] = Field(default_factory=list, max_length=8)


class UnsquareMeld(Versioned):
    """Undo `square` on a meld."""

    op: Literal["unsquare"]
    meld: str


class CheckMeld(Versioned):
    """Say a meld the scanner was unsure of is counted right (it leaves the review list)."""

    op: Literal["check"]
    meld: str


Correction = Annotated[SetCard | DeleteCard | AddCard | MoveCard | SquareMeld | UnsquareMeld
                       | CheckMeld, Field(discriminator="op")]


class TeamOutcome(BaseModel):
    """How the deal ended for a team: went out, concealed, and the cards left in hand."""

    model_config = ConfigDict(extra="forbid")

    went_out: bool = False
    concealed: bool = False
    hand: list[str] | None = Field(default=None, max_length=60)
    hand_points: int | None = Field(default=None, ge=0, le=10_000)


class OutcomeIn(Versioned):
    teams: list[TeamOutcome] = Field(min_length=2, max_length=3)


class LayoutIn(Versioned):
    """Replace a deal's cards and outcome with a whole layout (contract `teams`)."""

    teams: list[LayoutTeam] = Field(min_length=2, max_length=3)

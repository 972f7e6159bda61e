"""Canasta cards as small values, and the contract's card tokens.

A `Card` is a rank (`Rank`) and, when known, a suit. `parse_card` reads the contract's
tokens (`K`, `KH`, `10S`, `2C`, `3R`, `3H`, `3B`, `JK`, alias `JOKER`; any case) and
refuses anything else with a `CardError` naming the token. A card knows what kind it is
in the game (natural, wild, red or black three) and its point value, which is the same
whether it lies in a meld or is left in a hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CardError(ValueError):
    """A card token that is not a Canasta card; the message names the token."""


class Rank(StrEnum):
    """The ranks that matter in Canasta: naturals 4..A, the wild 2 and joker, threes by colour."""

    ACE = "A"
    KING = "K"
    QUEEN = "Q"
    JACK = "J"
    TEN = "10"
    NINE = "9"
    EIGHT = "8"
    SEVEN = "7"
    SIX = "6"
    FIVE = "5"
    FOUR = "4"
    TWO = "2"
    JOKER = "JK"
    RED_THREE = "3R"
    BLACK_THREE = "3B"

    @property
    def is_natural(self) -> bool:
        """True for 4 up to ace, the ranks a meld is built from.

        >>> Rank.KING.is_natural, Rank.TWO.is_natural, Rank.BLACK_THREE.is_natural
        (True, False, False)
        """
        return self in NATURAL_RANKS

    @property
    def is_wild(self) -> bool:
        """True for twos and jokers."""
        return self in (Rank.TWO, Rank.JOKER)

    @property
    def points(self) -> int:
        """Point value of one card of this rank (a red three scores only as a bonus, so 0).

        >>> Rank.JOKER.points, Rank.ACE.points, Rank.KING.points, Rank.SEVEN.points
        (50, 20, 10, 5)
        """
        return _POINTS[self]


NATURAL_RANKS: tuple[Rank, ...] = (
    Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK, Rank.TEN, Rank.NINE,
    Rank.EIGHT, Rank.SEVEN, Rank.SIX, Rank.FIVE, Rank.FOUR,
)
"""Natural ranks, high to low."""

WILD_RANKS: tuple[Rank, ...] = (Rank.TWO, Rank.JOKER)

_POINTS: dict[Rank, int] = {
    Rank.JOKER: 50,
    Rank.ACE: 20,
    Rank.TWO: 20,
    Rank.KING: 10, Rank.QUEEN: 10, Rank.JACK: 10, Rank.TEN: 10, Rank.NINE: 10, Rank.EIGHT: 10,
    Rank.SEVEN: 5, Rank.SIX: 5, Rank.FIVE: 5, Rank.FOUR: 5,
    Rank.BLACK_THREE: 5,
    # Red threes never sit in a meld or stay in a hand; they score by count as a bonus.
    Rank.RED_THREE: 0,
}

SUITS = ("S", "H", "D", "C")
_RED_SUITS = ("H", "D")
_BLACK_SUITS = ("S", "C")


@dataclass(frozen=True, order=True)
class Card:
    """One card: its rank and, when the token named it, its suit (`None` otherwise)."""

    rank: Rank
    suit: str | None = None

    def __post_init__(self) -> None:
        if self.suit is None:
            return
        if self.suit not in SUITS or self.rank is Rank.JOKER:
            raise CardError(f"{self.rank.value} cannot have suit {self.suit!r}")
        if self.rank is Rank.RED_THREE and self.suit not in _RED_SUITS:
            raise CardError(f"a red three cannot be of suit {self.suit}")
        if self.rank is Rank.BLACK_THREE and self.suit not in _BLACK_SUITS:
            raise CardError(f"a black three cannot be of suit {self.suit}")

    @property
    def token(self) -> str:
        """The contract token, upper case: `K`, `KH`, `3H`, `3R`, `JK`.

        >>> parse_card("kh").token, parse_card("3d").token, parse_card("joker").token
        ('KH', '3D', 'JK')
        """
        if self.suit is None:
            return self.rank.value
        if self.rank in (Rank.RED_THREE, Rank.BLACK_THREE):
            return "3" + self.suit
        return self.rank.value + self.suit

    @property
    def points(self) -> int:
        """Point value of the card in a meld or in a hand."""
        return self.rank.points

    @property
    def is_natural(self) -> bool:
        """True for 4 up to ace."""
        return self.rank.is_natural

    @property
    def is_wild(self) -> bool:
        """True for twos and jokers."""
        return self.rank.is_wild

    @property
    def is_red_three(self) -> bool:
        """True for the three of hearts or diamonds."""
        return self.rank is Rank.RED_THREE

    @property
    def is_black_three(self) -> bool:
        """True for the three of spades or clubs."""
        return self.rank is Rank.BLACK_THREE

    def __str__(self) -> str:
        return self.token


_RANK_BY_TOKEN: dict[str, Rank] = {r.value: r for r in Rank if r not in (Rank.RED_THREE, Rank.BLACK_THREE)}


def parse_card(token: object) -> Card:
    """Read one contract token (case-insensitive); raise `CardError` naming it if unknown.

    >>> parse_card("10s")
    Card(rank=<Rank.TEN: '10'>, suit='S')
    >>> parse_card("3C").rank is Rank.BLACK_THREE
    True
    >>> try:
    ...     parse_card("3")
    ... except CardError as err:
    ...     print(err)
    unknown card token '3': a three must say its colour (3R, 3B, 3H, 3D, 3S or 3C)
    """
    if not isinstance(token, str):
        raise CardError(f"unknown card token {token!r}: a card is a string such as 'K', 'KH' or 'JK'")
    text = token.strip().upper()
    if text in ("JK", "JOKER"):
        return Card(Rank.JOKER)
    if text == "3":
        raise CardError(
            f"unknown card token {token!r}: a three must say its colour (3R, 3B, 3H, 3D, 3S or 3C)"
        )
    if text == "3R":
        return Card(Rank.RED_THREE)
    if text == "3B":
        return Card(Rank.BLACK_THREE)
    if text in ("3H", "3D"):
        return Card(Rank.RED_THREE, text[1])
    if text in ("3S", "3C"):
        return Card(Rank.BLACK_THREE, text[1])
    rank = _RANK_BY_TOKEN.get(text)
    if rank is not None and rank is not Rank.JOKER:
        return Card(rank)
    if len(text) >= 2 and text[-1] in SUITS:
        rank = _RANK_BY_TOKEN.get(text[:-1])
        if rank is not None and rank is not Rank.JOKER:
            return Card(rank, text[-1])
    raise CardError(f"unknown card token {token!r}")


def parse_rank(token: object) -> Rank:
    """Read a rank token (`K`, `10`, `2`, `JK`, `3B`...; a suit is allowed and ignored)."""
    return parse_card(token).rank

"""House rules as one value: which Canasta is being played and what each thing scores.

A `Ruleset` says how many play (2, 3, 4 or 6), the game target, and every number or
house option the rule texts in `shared/seeds/` name that changes what a deal scores or
which layouts are legal. Its defaults are Classic four-player Canasta (two decks and four
jokers, 5,000 to win). Everything that follows from the number of players (decks in the
pack, copies of each card, canastas needed to go out, teams at the table) is derived here,
so scoring code never branches on player counts itself.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field, fields

from scanner.cards import Card, Rank

PLAYER_COUNTS = (2, 3, 4, 6)


class RulesetError(ValueError):
    """A `rules` object that does not describe a playable Canasta."""


@dataclass(frozen=True)
class Ruleset:
    """The rules of one game; `Ruleset()` is Classic four-player Canasta.

    >>> Ruleset().decks, Ruleset().canastas_to_go_out, Ruleset(players=6).decks
    (2, 1, 3)
    >>> Ruleset(players=2).canastas_to_go_out, Ruleset(players=6).canastas_to_go_out
    (2, 2)
    """

    players: int = 4
    target: int = 5000
    # Canastas a team needs before anyone of it may go out (None: 2 for 2 or 6 players, else 1).
    canastas_to_go_out: int | None = None
    natural_canasta_bonus: int = 500
    mixed_canasta_bonus: int = 300
    going_out_bonus: int = 100
    # Extra for going out concealed (whole hand in one turn): 100 more, 200 in all.
    concealed_bonus: int = 100
    red_three_bonus: int = 100
    # From this many red threes a team scores each one double (all four = 800 with two
    # decks; with three decks five = 1,000 and six = 1,200). None: 4 for two decks, 5 for three.
    red_threes_double_from: int | None = None
    min_naturals: int = 2
    max_wilds: int = 3
    # House rule of some tables (Hoyle, kitchen-table text): never more wilds than naturals.
    wilds_at_most_naturals: bool = False
    # Minimum first meld by the team's total: below 0 -> 15, then (from total, minimum).
    negative_minimum_meld: int = 15
    minimum_meld_steps: tuple[tuple[int, int], ...] = field(
        default=((0, 50), (1500, 90), (3000, 120))
    )

    def __post_init__(self) -> None:
        _require_int(self.players, "players")
        if self.players not in PLAYER_COUNTS:
            raise RulesetError(f"players must be 2, 3, 4 or 6, not {self.players}")
        _require_int(self.target, "target")
        if self.target <= 0:
            raise RulesetError(f"target must be positive, not {self.target}")
        if self.canastas_to_go_out is None:
            object.__setattr__(self, "canastas_to_go_out", 2 if self.players in (2, 6) else 1)
        if self.red_threes_double_from is None:
            object.__setattr__(self, "red_threes_double_from", 4 if self.decks == 2 else 5)
        for name in (
            "canastas_to_go_out", "natural_canasta_bonus", "mixed_canasta_bonus",
            "going_out_bonus", "concealed_bonus", "red_three_bonus", "red_threes_double_from",
            "min_naturals", "max_wilds", "negative_minimum_meld",
        ):
            value = getattr(self, name)
            _require_int(value, name)
            if value < 0:
                raise RulesetError(f"{name} must not be negative, not {value}")
        if not isinstance(self.wilds_at_most_naturals, bool):
            raise RulesetError("wilds_at_most_naturals must be true or false")
        if self.min_naturals < 1:
            raise RulesetError("min_naturals must be at least 1")
        steps = tuple(tuple(step) for step in self.minimum_meld_steps)
        if not steps or any(len(s) != 2 for s in steps):
            raise RulesetError("minimum_meld_steps must be a list of [from_total, minimum] pairs")
        for step in steps:
            for value in step:
                _require_int(value, "minimum_meld_steps")
        if [s[0] for s in steps] != sorted({s[0] for s in steps}) or steps[0][0] != 0:
            raise RulesetError("minimum_meld_steps must start at total 0 and rise strictly")
        object.__setattr__(self, "minimum_meld_steps", steps)

    @property
    def decks(self) -> int:
        """Standard decks in the pack: three for six players, else two."""
        return 3 if self.players == 6 else 2

    @property
    def pack_size(self) -> int:
        """Cards in the pack: 52 per deck plus two jokers per deck (108 or 162)."""
        return 54 * self.decks

    @property
    def team_counts(self) -> tuple[int, ...]:
        """How many teams (sides) a deal may have.

        Two players play one against one; three play one against two (or each alone); six
        play as two teams of three or three teams of two.
        """
        return {2: (2,), 3: (2, 3), 4: (2,), 6: (2, 3)}[self.players]

    def players_per_team(self, teams: int) -> int | None:
        """Players in each team when all teams are the same size, else None (3 players, 2 teams)."""
        return self.players // teams if self.players % teams == 0 else None

    def copies(self, card: Card) -> int:
        """How many cards like `card` the pack holds (a suited card: one per deck).

        >>> from scanner.cards import parse_card
        >>> [Ruleset().copies(parse_card(t)) for t in ("K", "KH", "2", "JK", "3R", "3D")]
        [8, 2, 8, 4, 4, 2]
        """
        if card.suit is not None:
            return self.decks
        if card.rank is Rank.JOKER:
            return 2 * self.decks
        if card.rank in (Rank.RED_THREE, Rank.BLACK_THREE):
            return 2 * self.decks
        return 4 * self.decks

    @property
    def red_threes_in_pack(self) -> int:
        """Red threes in the pack (4, or 6 with three decks)."""
        return 2 * self.decks

    def red_threes_bonus(self, count: int) -> int:
        """Bonus for `count` red threes of a team that melded (negate it if the team did not).

        >>> [Ruleset().red_threes_bonus(n) for n in range(5)]
        [0, 100, 200, 300, 800]
        >>> [Ruleset(players=6).red_threes_bonus(n) for n in (4, 5, 6)]
        [400, 1000, 1200]
        """
        each = self.red_three_bonus
        if count >= self.red_threes_double_from:  # type: ignore[operator]
            each *= 2
        return count * each

    def minimum_meld(self, total: int) -> int:
        """Minimum first meld for a team whose game total is `total`.

        >>> [Ruleset().minimum_meld(t) for t in (-5, 0, 1495, 1500, 2995, 3000)]
        [15, 50, 50, 90, 90, 120]
        """
        if total < 0:
            return self.negative_minimum_meld
        minimum = self.minimum_meld_steps[0][1]
        for from_total, step_minimum in self.minimum_meld_steps:
            if total >= from_total:
                minimum = step_minimum
        return minimum

    @classmethod
    def from_json(cls, data: object) -> Ruleset:
        """Read the layout's `rules` object; a misspelt option is refused, other unknown ones are ignored.

        >>> Ruleset.from_json({"players": 2, "target": 3000}).canastas_to_go_out
        2
        """
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise RulesetError("rules must be an object such as {\"players\": 4, \"target\": 5000}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        for key in unknown:
            # A misspelt house option silently ignored would score the deal wrongly, but an
            # option another program adds (a variant name, a note) must not stop scoring.
            near = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
            if near:
                raise RulesetError(f"unknown rules option {key!r}: did you mean {near[0]!r}?")
        data = {k: v for k, v in data.items() if k in known}
        options = dict(data)
        if "minimum_meld_steps" in options:
            steps = options["minimum_meld_steps"]
            if not isinstance(steps, list | tuple) or not all(
                isinstance(s, list | tuple) for s in steps
            ):
                raise RulesetError("minimum_meld_steps must be a list of [from_total, minimum] pairs")
            options["minimum_meld_steps"] = tuple(tuple(s) for s in steps)
        for name in ("players", "target"):
            if name in options:
                options[name] = _as_int(options[name])
        return cls(**options)

    def to_json(self) -> dict:
        """The rules as a JSON-able dict (every option spelt out)."""
        data = asdict(self)
        data["minimum_meld_steps"] = [list(s) for s in self.minimum_meld_steps]
        return data


def _as_int(value: object) -> object:
    # JSON writers sometimes emit 5000.0; an integral float is the same number.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _require_int(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesetError(f"{name} must be a whole number, not {value!r}")

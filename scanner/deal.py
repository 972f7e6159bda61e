"""The table at the end of a deal, read from the contract's layout JSON, and its rules.

`DealLayout.from_json` turns a layout (see `shared/CONTRACT.md`) into values: a `Ruleset`,
and per team its `Meld`s, red threes, whether it went out (concealed or not) and the
cards or points left in hand. A malformed layout raises `LayoutError` saying where.
`DealLayout.violations()` lists every Canasta rule the table breaks (a meld of two cards,
four wilds, two melds of one rank, black threes melded by a team that did not go out,
more copies of a card than the pack holds, ...); each `RuleViolation` names its rule and
the meld or card. Nothing here scores: that is `scanner.scoring`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from scanner.cards import Card, CardError, Rank, parse_card
from scanner.rules import Ruleset, RulesetError

CANASTA_SIZE = 7
"""Cards in a meld that make it a canasta."""

BLACK_THREE_GROUP_MAX = 4
"""Black threes melded when going out: a group of three or four."""

MOST_COPIES = 12
"""Most cards of one rank any pack holds (three decks): a sanity cap on counts in a layout."""


class LayoutError(ValueError):
    """A layout that cannot be read as a deal (wrong shape, unknown card, bad number)."""


class RuleViolation(LayoutError):
    """A layout that breaks a Canasta rule; `.rule` is the rule's id, `.where` the meld or card."""

    def __init__(self, rule: str, message: str, where: str = "") -> None:
        self.rule = rule
        self.message = message
        self.where = where
        self.violations: tuple[RuleViolation, ...] = (self,)
        text = f"breaks rule {rule}: {message}"
        super().__init__(f"{text} ({where})" if where else text)


RULES: dict[str, str] = {
    "unknown-card": "every card must be a Canasta card token",
    "team-count": "the number of teams must fit the number of players",
    "meld-min-cards": "a meld needs at least 3 cards",
    "meld-min-naturals": "a meld needs at least 2 natural cards",
    "meld-max-wilds": "a meld may hold at most 3 wild cards",
    "meld-wilds-over-naturals": "house rule: a meld may not hold more wild cards than natural cards",
    "meld-one-rank": "a meld is cards of one rank",
    "wild-meld": "wild cards cannot make a meld on their own",
    "one-meld-per-rank": "a team has one meld for each rank",
    "red-three-in-meld": "red threes are never melded",
    "red-three-in-hand": "red threes go on the table at once and are never held",
    "black-threes-only-going-out": "black threes are melded only by the team that went out",
    "black-threes-no-wilds": "a meld of black threes holds no wild card",
    "black-threes-with-naturals": "black threes cannot go in a meld of another rank",
    "black-threes-max-4": "black threes are melded as a group of three or four",
    "going-out-needs-canasta": "a team needs a canasta to go out",
    "concealed-needs-going-out": "only a team that went out can have gone out concealed",
    "one-team-goes-out": "only one team can go out in a deal",
    "went-out-with-cards": "a player who goes out has no cards left",
    "hand-points": "cards in hand are worth a multiple of 5 points",
    "pack-copies": "no more copies of a card than the pack holds",
}
"""Rule id -> the rule in words, as refusals quote it."""


def _violation(rule: str, where: str, detail: str = "") -> RuleViolation:
    message = RULES[rule] + (f": {detail}" if detail else "")
    return RuleViolation(rule, message, where)


@dataclass(frozen=True)
class Meld:
    """One team's group of cards of one rank (or black threes when going out).

    `squared` marks a meld given by counts (`{"rank": "K", "naturals": 7, "wilds": ["2"]}`),
    as a squared-up canasta is counted; it scores exactly like the same cards listed.
    """

    cards: tuple[Card, ...]
    squared: bool = False
    declared_rank: Rank | None = None

    @classmethod
    def of(cls, *tokens: str) -> Meld:
        """A meld from card tokens.

        >>> Meld.of("K", "K", "K", "K", "K", "K", "K").points
        70
        """
        return cls(tuple(parse_card(t) for t in tokens))

    @property
    def naturals(self) -> tuple[Card, ...]:
        """The natural cards (4 up to ace)."""
        return tuple(c for c in self.cards if c.is_natural)

    @property
    def wilds(self) -> tuple[Card, ...]:
        """The wild cards (twos and jokers)."""
        return tuple(c for c in self.cards if c.is_wild)

    @property
    def rank(self) -> Rank | None:
        """The meld's rank: its naturals' rank, `3B` for black threes, None if mixed or none."""
        if self.declared_rank is not None:
            return self.declared_rank
        ranks = {c.rank for c in self.cards if not c.is_wild}
        return ranks.pop() if len(ranks) == 1 else None

    @property
    def is_black_threes(self) -> bool:
        """True for a group of black threes (melded only when going out)."""
        return self.rank is Rank.BLACK_THREE

    @property
    def is_canasta(self) -> bool:
        """Seven or more cards of a natural rank.

        >>> Meld.of("9", "9", "9", "9", "9", "2", "JK").is_canasta
        True
        """
        return len(self.cards) >= CANASTA_SIZE and self.rank is not None and self.rank.is_natural

    @property
    def is_natural(self) -> bool:
        """No wild card in it (a natural canasta, once it has seven cards)."""
        return not self.wilds

    @property
    def points(self) -> int:
        """The card points of the meld (the canasta bonus is separate)."""
        return sum(c.points for c in self.cards)

    def canasta_bonus(self, rules: Ruleset) -> int:
        """500 for a natural canasta, 300 for a mixed one, 0 for a meld that is no canasta."""
        if not self.is_canasta:
            return 0
        return rules.natural_canasta_bonus if self.is_natural else rules.mixed_canasta_bonus

    def describe(self) -> str:
        """The meld as the layout gave it, for messages."""
        if self.squared:
            rank = self.declared_rank.value if self.declared_rank else "?"
            return json.dumps(
                {"rank": rank, "naturals": len(self.naturals) + _count_threes(self),
                 "wilds": [c.token for c in self.wilds]}
            )
        return json.dumps([c.token for c in self.cards])

    @classmethod
    def from_json(cls, data: object, where: str = "meld") -> Meld:
        """A meld from a list of tokens or from `{"rank", "naturals", "wilds"}`."""
        if isinstance(data, list | tuple):
            return cls(tuple(_parse_cards(data, where)))
        if isinstance(data, dict):
            return cls._from_counts(data, where)
        raise LayoutError(
            f"{where}: a meld is a list of cards or "
            f'{{"rank": "K", "naturals": 7, "wilds": ["2"]}}, not {_show(data)}'
        )

    @classmethod
    def _from_counts(cls, data: dict, where: str) -> Meld:
        if "rank" not in data:
            raise LayoutError(f"{where}: a meld given by counts needs \"rank\" ({_show(data)})")
        try:
            rank = parse_card(data["rank"]).rank
        except CardError as err:
            raise _violation("unknown-card", where, str(err)) from None
        naturals = _as_count(data.get("naturals", 0), f"{where} naturals")
        if naturals > MOST_COPIES:
            # Refused before the cards are built, so a huge count cannot exhaust memory.
            raise _violation("pack-copies", where, f"{naturals} naturals; no pack holds {MOST_COPIES + 1}")
        wild_tokens = data.get("wilds", [])
        if wild_tokens is None:
            wild_tokens = []
        if not isinstance(wild_tokens, list):
            raise LayoutError(
                f'{where}: "wilds" lists the wild cards, such as ["2", "JK"], not {_show(wild_tokens)}'
            )
        wilds = _parse_cards(wild_tokens, where)
        for card in wilds:
            if not card.is_wild:
                raise LayoutError(f'{where}: "wilds" lists only 2s and jokers, not {card.token!r}')
        return cls(tuple([Card(rank)] * naturals + wilds), squared=True, declared_rank=rank)


def _count_threes(meld: Meld) -> int:
    return sum(1 for c in meld.cards if c.rank in (Rank.RED_THREE, Rank.BLACK_THREE))


@dataclass(frozen=True)
class TeamLayout:
    """One team's side of the table when the deal ends.

    `hand` lists the cards left in both partners' hands; when only their total was
    counted it is None and `hand_points` holds it.
    """

    name: str
    melds: tuple[Meld, ...] = ()
    red_threes: int = 0
    went_out: bool = False
    concealed: bool = False
    hand: tuple[Card, ...] | None = ()
    hand_points: int | None = None
    total_before: int = 0
    red_three_cards: tuple[Card, ...] = ()

    @property
    def hand_penalty_points(self) -> int:
        """Points of the cards left in hand (a positive number; scoring subtracts it)."""
        if self.hand is None:
            return self.hand_points or 0
        return sum(c.points for c in self.hand)

    @property
    def has_melded(self) -> bool:
        """True if the team put down any meld this deal."""
        return bool(self.melds)

    @property
    def canastas(self) -> int:
        """How many canastas the team has."""
        return sum(1 for m in self.melds if m.is_canasta)

    def cards(self) -> list[Card]:
        """Every card of the team's this layout names (melds, hand, red threes)."""
        cards = [c for m in self.melds for c in m.cards]
        cards += list(self.hand or ())
        named = list(self.red_three_cards)
        cards += named + [Card(Rank.RED_THREE)] * (self.red_threes - len(named))
        return cards

    @classmethod
    def from_json(cls, data: object, index: int) -> TeamLayout:
        """One team of the layout (`index` from 0 names it `Team 1`... when unnamed)."""
        label = f"team {index + 1}"
        if not isinstance(data, dict):
            raise LayoutError(f"{label}: a team is an object with melds, red_threes, ..., not {_show(data)}")
        name = data.get("name")
        if name is None:
            name = f"Team {index + 1}"
        if not isinstance(name, str):
            raise LayoutError(f"{label}: name must be a string, not {_show(name)}")
        label = f"team {json.dumps(name)}"

        melds_data = data.get("melds") or []
        if not isinstance(melds_data, list):
            raise LayoutError(f"{label}: melds must be a list of melds, not {_show(melds_data)}")
        melds = tuple(
            Meld.from_json(m, f"{label} meld {i + 1}") for i, m in enumerate(melds_data)
        )

        red_data = data.get("red_threes", 0)
        red_cards: list[Card] = []
        if isinstance(red_data, list):
            red_cards = _parse_cards(red_data, f"{label} red_threes")
            for card in red_cards:
                if not card.is_red_three:
                    raise LayoutError(f"{label}: red_threes lists only red threes, not {card.token!r}")
            red_threes = len(red_cards)
        else:
            red_threes = _as_count(red_data, f"{label} red_threes")
            if red_threes > MOST_COPIES:
                raise _violation("pack-copies", f"{label} red_threes", f"{red_threes} red threes")

        went_out = _as_flag(data.get("went_out"), f"{label} went_out")
        concealed = _as_flag(data.get("concealed"), f"{label} concealed")

        hand_data = data.get("hand")
        points_data = data.get("hand_points")
        hand: tuple[Card, ...] | None
        hand_points: int | None = None
        if points_data is not None:
            if hand_data:
                raise LayoutError(f"{label}: give the hand as cards or as hand_points, not both")
            hand_points = _as_count(points_data, f"{label} hand_points")
            hand = None
        else:
            if hand_data is None:
                hand_data = []
            if not isinstance(hand_data, list):
                raise LayoutError(f"{label}: hand must be a list of cards, not {_show(hand_data)}")
            hand = tuple(_parse_cards(hand_data, f"{label} hand"))

        total_before = _as_int(data.get("total_before", 0), f"{label} total_before")
        return cls(
            name=name, melds=melds, red_threes=red_threes, went_out=went_out,
            concealed=concealed, hand=hand, hand_points=hand_points,
            total_before=total_before, red_three_cards=tuple(red_cards),
        )


Team = TeamLayout
"""The game's word for it."""


@dataclass(frozen=True)
class DealLayout:
    """The whole table at the end of a deal: the rules and each team's side."""

    teams: tuple[TeamLayout, ...]
    rules: Ruleset = Ruleset()

    @classmethod
    def from_json(cls, data: object) -> DealLayout:
        """Read a contract layout; raise `LayoutError` if it is malformed (rules are not checked).

        >>> layout = DealLayout.from_json({"teams": [{"melds": [["K", "K", "2"]]}, {}]})
        >>> layout.teams[0].melds[0].points, layout.teams[1].name
        (40, 'Team 2')
        """
        if not isinstance(data, dict):
            raise LayoutError(f'a layout is an object with "teams", not {_show(data)}')
        try:
            rules = Ruleset.from_json(data.get("rules"))
        except RulesetError as err:
            raise LayoutError(f"rules: {err}") from None
        teams_data = data.get("teams")
        if not isinstance(teams_data, list) or not teams_data:
            raise LayoutError(f'a layout needs "teams", a list of the teams, not {_show(teams_data)}')
        teams = tuple(TeamLayout.from_json(t, i) for i, t in enumerate(teams_data))
        names = Counter(t.name for t in teams)
        for name, count in names.items():
            if count > 1:
                raise LayoutError(f"two teams are named {json.dumps(name)}; names tell the winner apart")
        return cls(teams=teams, rules=rules)

    def violations(self) -> list[RuleViolation]:
        """Every rule the table breaks, in layout order (empty for a legal deal)."""
        rules = self.rules
        found: list[RuleViolation] = []
        if len(self.teams) not in rules.team_counts:
            allowed = " or ".join(str(n) for n in rules.team_counts)
            found.append(_violation(
                "team-count", f"{len(self.teams)} teams",
                f"{rules.players} players play as {allowed} teams",
            ))
        for team in self.teams:
            found += _team_violations(team, rules, len(self.teams))
        going_out = [t for t in self.teams if t.went_out]
        if len(going_out) > 1:
            names = " and ".join(f"team {json.dumps(t.name)}" for t in going_out)
            found.append(_violation("one-team-goes-out", names))
        found += _pack_violations(self.teams, rules)
        return found

    def check(self) -> None:
        """Raise the first `RuleViolation` (listing the others in its message) if any."""
        found = self.violations()
        if not found:
            return
        first = found[0]
        if len(found) > 1:
            more = "; ".join(str(v) for v in found[1:])
            combined = RuleViolation(first.rule, first.message, f"{first.where}; also {more}")
            combined.where = first.where
            combined.violations = tuple(found)
            raise combined
        raise first


def _team_violations(team: TeamLayout, rules: Ruleset, team_count: int) -> list[RuleViolation]:
    label = f"team {json.dumps(team.name)}"
    found: list[RuleViolation] = []
    seen_ranks: dict[Rank, int] = {}
    for i, meld in enumerate(team.melds):
        where = f"{label} meld {i + 1} {meld.describe()}"
        found += _meld_violations(meld, team, rules, where)
        rank = meld.rank
        if rank is None or not (rank.is_natural or rank is Rank.BLACK_THREE):
            continue
        if rank in seen_ranks:
            found.append(_violation(
                "one-meld-per-rank", where,
                f"meld {seen_ranks[rank] + 1} is already of rank {rank.value}",
            ))
        else:
            seen_ranks[rank] = i
    if team.went_out and team.canastas < rules.canastas_to_go_out:  # type: ignore[operator]
        need = rules.canastas_to_go_out
        found.append(_violation(
            "going-out-needs-canasta", label,
            f"it went out with {team.canastas} canasta(s); {rules.players} players need {need}",
        ))
    if team.concealed and not team.went_out:
        found.append(_violation("concealed-needs-going-out", label))
    if team.went_out and rules.players_per_team(team_count) == 1 and team.hand_penalty_points:
        found.append(_violation(
            "went-out-with-cards", label,
            "its only player went out, so its hand must be empty",
        ))
    for card in team.hand or ():
        if card.is_red_three:
            found.append(_violation("red-three-in-hand", f"{label} hand card {card.token}"))
    if team.hand_points is not None and team.hand_points % 5:
        found.append(_violation("hand-points", f"{label} hand_points {team.hand_points}"))
    return found


def _meld_violations(meld: Meld, team: TeamLayout, rules: Ruleset, where: str) -> list[RuleViolation]:
    cards = meld.cards
    red = [c for c in cards if c.is_red_three]
    black = [c for c in cards if c.is_black_three]
    wilds = meld.wilds
    naturals = meld.naturals
    if red:
        return [_violation("red-three-in-meld", where, f"card {red[0].token}")]
    if meld.declared_rank is not None and meld.declared_rank.is_wild:
        return [_violation("wild-meld", where)]
    found: list[RuleViolation] = []
    if black:
        if naturals:
            found.append(_violation(
                "black-threes-with-naturals", where, f"card {black[0].token} with {naturals[0].token}"
            ))
            return found
        if wilds:
            found.append(_violation("black-threes-no-wilds", where, f"card {wilds[0].token}"))
        if len(black) < 3:
            found.append(_violation("meld-min-cards", where, f"it has {len(cards)}"))
        if len(black) > BLACK_THREE_GROUP_MAX:
            found.append(_violation("black-threes-max-4", where, f"it has {len(black)}"))
        if not team.went_out:
            found.append(_violation("black-threes-only-going-out", where))
        return found
    natural_ranks = sorted({c.rank.value for c in naturals})
    if len(natural_ranks) > 1:
        found.append(_violation("meld-one-rank", where, f"it mixes {', '.join(natural_ranks)}"))
    if len(cards) < 3:
        found.append(_violation("meld-min-cards", where, f"it has {len(cards)}"))
    if len(naturals) < rules.min_naturals:
        if not naturals:
            found.append(_violation("wild-meld", where))
        else:
            found.append(_violation("meld-min-naturals", where, f"it has {len(naturals)}"))
    if len(wilds) > rules.max_wilds:
        found.append(_violation("meld-max-wilds", where, f"it has {len(wilds)}"))
    if rules.wilds_at_most_naturals and len(wilds) > len(naturals):
        found.append(_violation(
            "meld-wilds-over-naturals", where, f"{len(wilds)} wilds, {len(naturals)} naturals"
        ))
    return found


def _pack_violations(teams: tuple[TeamLayout, ...], rules: Ruleset) -> list[RuleViolation]:
    cards = [c for t in teams for c in t.cards()]
    by_rank = Counter(c.rank for c in cards)
    by_suited = Counter(c for c in cards if c.suit is not None)
    found: list[RuleViolation] = []
    pack = f"{rules.decks} decks and {2 * rules.decks} jokers"
    for rank in Rank:
        count, limit = by_rank[rank], rules.copies(Card(rank))
        if count > limit:
            name = {"3R": "red threes", "3B": "black threes", "JK": "jokers", "2": "twos"}.get(
                rank.value, f"cards of rank {rank.value}"
            )
            found.append(_violation(
                "pack-copies", f"card {rank.value}",
                f"{count} {name} on the table and in hand; {pack} hold {limit}",
            ))
    for card, count in sorted(by_suited.items()):
        limit = rules.copies(card)
        if count > limit:
            found.append(_violation(
                "pack-copies", f"card {card.token}",
                f"{count} copies of {card.token}; {pack} hold {limit}",
            ))
    return found


def _parse_cards(tokens: list, where: str) -> list[Card]:
    if not isinstance(tokens, list | tuple):
        raise LayoutError(f"{where}: expected a list of cards, not {_show(tokens)}")
    cards = []
    for token in tokens:
        try:
            cards.append(parse_card(token))
        except CardError as err:
            raise _violation("unknown-card", where, str(err)) from None
    return cards


def _as_int(value: object, where: str) -> int:
    # JSON writers sometimes emit 1200.0; an integral float is the same number.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise LayoutError(f"{where} must be a whole number, not {_show(value)}")
    return value


def _as_count(value: object, where: str) -> int:
    number = _as_int(value, where)
    if number < 0:
        raise LayoutError(f"{where} must not be negative, not {number}")
    return number


def _as_flag(value: object, where: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise LayoutError(f"{where} must be true or false, not {_show(value)}")
    return value


def _show(value: object) -> str:
    text = json.dumps(value) if _jsonable(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _jsonable(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True

"""Score a deal of Canasta: pure functions from a `DealLayout` to a `DealScore`.

Each team's deal score is the sum of five parts, as the rules count them: the points of
the cards it melded, its canasta bonuses (500 natural, 300 mixed), its red threes (100
each, 800 for all four; negative if the team melded nothing), going out (100, or 200
concealed) and minus the cards left in both partners' hands. The deal score is added to
the team's game total, which sets its minimum first meld next deal; the game is over
when a total reaches the target and one team is strictly ahead. `score_layout_json` is
the contract's `canasta-scan score` in one call: layout JSON in, score JSON out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from scanner.deal import DealLayout, TeamLayout
from scanner.rules import Ruleset


@dataclass(frozen=True)
class TeamScore:
    """One team's deal score in parts, and where it leaves the team in the game.

    The parts are signed so that `deal_score` is their plain sum: `hand_penalty` is zero
    or negative, and `red_three_bonus` is negative for a team that melded nothing.
    """

    name: str
    card_points: int
    canasta_bonus: int
    red_three_bonus: int
    going_out_bonus: int
    hand_penalty: int
    natural_canastas: int
    mixed_canastas: int
    total_before: int
    next_minimum_meld: int

    @property
    def deal_score(self) -> int:
        """The deal's score: the sum of the parts."""
        return (
            self.card_points + self.canasta_bonus + self.red_three_bonus
            + self.going_out_bonus + self.hand_penalty
        )

    @property
    def total_after(self) -> int:
        """The team's game total after this deal."""
        return self.total_before + self.deal_score

    def to_json(self) -> dict:
        """The contract's per-team score object."""
        return {
            "name": self.name,
            "card_points": self.card_points,
            "canasta_bonus": self.canasta_bonus,
            "red_three_bonus": self.red_three_bonus,
            "going_out_bonus": self.going_out_bonus,
            "hand_penalty": self.hand_penalty,
            "deal_score": self.deal_score,
            "natural_canastas": self.natural_canastas,
            "mixed_canastas": self.mixed_canastas,
            "total_after": self.total_after,
            "next_minimum_meld": self.next_minimum_meld,
        }


@dataclass(frozen=True)
class DealScore:
    """Every team's score for the deal, and whether the game is over and who won."""

    teams: tuple[TeamScore, ...]
    game_over: bool
    winner: str | None

    def to_json(self) -> dict:
        """The contract's output of `canasta-scan score`."""
        return {
            "teams": [t.to_json() for t in self.teams],
            "game_over": self.game_over,
            "winner": self.winner,
        }


def score_team(team: TeamLayout, rules: Ruleset) -> TeamScore:
    """Score one team's side of the table (the layout must already be legal)."""
    natural = sum(1 for m in team.melds if m.is_canasta and m.is_natural)
    mixed = sum(1 for m in team.melds if m.is_canasta and not m.is_natural)
    red_threes = rules.red_threes_bonus(team.red_threes)
    going_out = 0
    if team.went_out:
        going_out = rules.going_out_bonus + (rules.concealed_bonus if team.concealed else 0)
    score = TeamScore(
        name=team.name,
        card_points=sum(m.points for m in team.melds),
        canasta_bonus=natural * rules.natural_canasta_bonus + mixed * rules.mixed_canasta_bonus,
        # Red threes of a team that never got on the table count against it.
        red_three_bonus=red_threes if team.has_melded else -red_threes,
        going_out_bonus=going_out,
        hand_penalty=-team.hand_penalty_points,
        natural_canastas=natural,
        mixed_canastas=mixed,
        total_before=team.total_before,
        next_minimum_meld=0,
    )
    # The minimum follows the total after the parts are summed, so it is set last.
    return replace(score, next_minimum_meld=rules.minimum_meld(score.total_after))


def game_result(totals: dict[str, int], target: int) -> tuple[bool, str | None]:
    """(game over, winner) from the totals after a deal.

    The game ends when some total reaches the target; the highest total wins, even if
    another team crossed the target too; an exact tie for the lead plays another deal.

    >>> game_result({"Us": 5010, "Them": 4000}, 5000)
    (True, 'Us')
    >>> game_result({"Us": 5100, "Them": 5200}, 5000)
    (True, 'Them')
    >>> game_result({"Us": 5100, "Them": 5100}, 5000)
    (False, None)
    """
    if not any(total >= target for total in totals.values()):
        return False, None
    best = max(totals.values())
    leaders = [name for name, total in totals.items() if total == best]
    if len(leaders) > 1:
        return False, None
    return True, leaders[0]


def score_deal(layout: DealLayout) -> DealScore:
    """Score a deal; raise `RuleViolation` (naming rule and meld or card) if it breaks a rule.

    >>> layout = DealLayout.from_json({"teams": [
    ...     {"name": "Us", "melds": [["K"] * 7], "went_out": True},
    ...     {"name": "Them", "melds": [], "hand": ["Q"]}]})
    >>> [t.deal_score for t in score_deal(layout).teams]
    [670, -10]
    """
    layout.check()
    teams = tuple(score_team(t, layout.rules) for t in layout.teams)
    game_over, winner = game_result({t.name: t.total_after for t in teams}, layout.rules.target)
    return DealScore(teams=teams, game_over=game_over, winner=winner)


def score_layout_json(data: object) -> dict:
    """The contract's `score`: a layout as parsed JSON in, the score as a JSON-able dict out.

    Raises `LayoutError` (or its `RuleViolation`) for a layout that is malformed or illegal.
    """
    return score_deal(DealLayout.from_json(data)).to_json()

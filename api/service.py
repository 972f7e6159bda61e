"""What the routes do with games and deals, as plain functions of a session.

Routes stay thin: they check access, parse the request and call these. Everything that
changes totals (confirming, editing or undoing a confirmed deal) ends in `rescore_game`,
which re-scores every confirmed deal in order with the totals before it, inside the
caller's transaction, so the stored scores always agree with each other and a failure
anywhere rolls the whole change back.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import secrets
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from api import table as tables
from api.models import Deal, Game, Team, utcnow
from scanner.deal import LayoutError, RuleViolation
from scanner.rules import Ruleset, RulesetError
from scanner.scoring import score_layout_json


class ServiceError(Exception):
    """A request that cannot be done; `status` is the HTTP status the route answers with."""

    def __init__(self, status: int, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.extra = extra


def hash_token(token: str) -> str:
    """SHA-256 of a game token (tokens are 256-bit random, so no slow hash is needed)."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(game: Game, token: str) -> bool:
    """Constant-time check of a presented token against the stored hash."""
    return hmac.compare_digest(game.token_hash, hash_token(token))


def ruleset(game: Game) -> Ruleset:
    """The game's rules as the scoring engine reads them."""
    return Ruleset.from_json(game.rules)


def create_game(session: Session, rules: dict[str, Any],
                teams: list[dict[str, Any]]) -> tuple[Game, str]:
    """A new game and its secret token (returned once, stored only hashed)."""
    try:
        rs = Ruleset.from_json(rules)
    except RulesetError as exc:
        raise ServiceError(422, f"rules: {exc}") from exc
    names = [t["name"] for t in teams]
    if len(set(names)) != len(names):
        raise ServiceError(422, "two teams have the same name; names tell the winner apart")
    if len(teams) not in rs.team_counts:
        allowed = " or ".join(str(n) for n in rs.team_counts)
        raise ServiceError(422, f"{rs.players} players play as {allowed} teams, not {len(teams)}")
    token = secrets.token_urlsafe(32)
    game = Game(token_hash=hash_token(token), rules=rs.to_json())
    game.teams = [Team(index=i, name=t["name"], players=list(t.get("players") or []),
                       starting_total=int(t.get("starting_total") or 0))
                  for i, t in enumerate(teams)]
    session.add(game)
    session.commit()
    return game, token


def totals_before(game: Game, upto: Deal | None = None) -> list[int]:
    """Each team's game total before deal `upto` (or after every confirmed deal)."""
    totals = [t.starting_total for t in game.teams]
    for deal in game.deals:
        if upto is not None and deal.number >= upto.number:
            break
        if deal.status == "confirmed" and deal.score:
            totals = [t["total_after"] for t in deal.score["teams"]]
    return totals


def layout_for(game: Game, deal: Deal, totals: list[int] | None = None) -> dict[str, Any]:
    """The contract layout of a deal: its table and outcome, with names, rules and totals."""
    if totals is None:
        totals = totals_before(game, deal)
    teams = []
    for team, cards, outcome, total in zip(game.teams, tables.layout_teams(deal.table),
                                           deal.outcome["teams"], totals, strict=True):
        entry: dict[str, Any] = {"name": team.name, "total_before": total, **cards,
                                 "went_out": bool(outcome.get("went_out")),
                                 "concealed": bool(outcome.get("concealed"))}
        if outcome.get("hand_points") is not None:
            entry["hand_points"] = outcome["hand_points"]
        else:
            entry["hand"] = list(outcome.get("hand") or [])
        teams.append(entry)
    rules = {"players": game.rules["players"], "target": game.rules["target"]}
    extra = {k: v for k, v in game.rules.items() if k not in rules}
    # Only options that differ from the engine's defaults are passed, so the layout
    # stays readable and identical to what `canasta-scan score` would be given.
    defaults = Ruleset(players=rules["players"], target=rules["target"]).to_json()
    rules |= {k: v for k, v in extra.items() if defaults.get(k) != v}
    return {"rules": rules, "teams": teams}


def score_or_problem(layout: dict[str, Any]) -> tuple[dict[str, Any] | None,
                                                       dict[str, Any] | None]:
    """(score, None) for a legal layout, else (None, problem naming the rule)."""
    try:
        return score_layout_json(layout), None
    except RuleViolation as exc:
        return None, {"detail": str(exc), "rule": exc.rule, "where": exc.where,
                      "violations": [{"rule": v.rule, "detail": str(v), "where": v.where}
                                     for v in exc.violations]}
    except LayoutError as exc:
        return None, {"detail": str(exc), "rule": None, "where": None, "violations": []}


def rescore_game(game: Game) -> None:
    """Re-score every confirmed deal in order with the totals before it (no commit).

    Raises `ServiceError(422)` if a confirmed deal no longer scores, so the caller's
    transaction is rolled back and nothing changes.
    """
    totals = [t.starting_total for t in game.teams]
    for deal in game.deals:
        if deal.status != "confirmed":
            continue
        score, problem = score_or_problem(layout_for(game, deal, totals))
        if score is None:
            assert problem is not None
            raise ServiceError(422, f"deal {deal.number}: {problem['detail']}",
                               rule=problem["rule"])
        if score != deal.score:
            deal.score = score
        totals = [t["total_after"] for t in score["teams"]]


def game_state(game: Game) -> dict[str, Any]:
    """Totals, next minimum meld, game over and winner after the confirmed deals."""
    rs = ruleset(game)
    confirmed = [d for d in game.deals if d.status == "confirmed" and d.score]
    totals = totals_before(game)
    game_over, winner = False, None
    for deal in confirmed:
        if deal.score["game_over"]:
            game_over, winner = True, deal.score["winner"]
            break
    return {
        "teams": [{"index": t.index, "name": t.name, "players": t.players,
                   "starting_total": t.starting_total, "total": total,
                   "next_minimum_meld": rs.minimum_meld(total),
                   "progress": round(max(0, total) / rs.target, 4)}
                  for t, total in zip(game.teams, totals, strict=True)],
        "game_over": game_over,
        "winner": winner,
    }


def new_deal(session: Session, game: Game, proposed: dict[str, Any]) -> Deal:
    """A draft deal with a proposed table (flushed, not committed)."""
    if game_state(game)["game_over"]:
        raise ServiceError(409, "the game is over; start a new game")
    number = (session.scalar(select(func.max(Deal.number)).where(Deal.game_id == game.id))
              or 0) + 1
    deal = Deal(number=number, status="draft", proposed=proposed, corrections=[],
                table=copy.deepcopy(proposed),
                outcome={"teams": [{"went_out": False, "concealed": False, "hand": [],
                                    "hand_points": None} for _ in game.teams]})
    game.deals.append(deal)
    try:
        session.flush()
    except IntegrityError as exc:  # another deal took this number at the same moment
        session.rollback()
        raise ServiceError(409, "another deal was started at the same moment; reload") from exc
    return deal


def check_version(deal: Deal, version: int | None, *, required: bool) -> None:
    """Optimistic concurrency: a change based on an older version of the deal is refused."""
    if version is None:
        if required:
            raise ServiceError(428, "give the deal's current version (it is confirmed, and "
                               "changing it changes the totals)", version=deal.version)
        return
    if version != deal.version:
        raise ServiceError(409, f"the deal was changed meanwhile (version {deal.version}, "
                           f"you sent {version}); reload it and try again",
                           version=deal.version)


def change_table(game: Game, deal: Deal, corrections: list[dict[str, Any]],
                 version: int | None) -> None:
    """Set the deal's corrections (replayed on the proposed table); re-score if confirmed."""
    check_version(deal, version, required=deal.status == "confirmed")
    _set_table(deal, corrections)
    if deal.status == "confirmed":
        rescore_game(game)


def set_outcome(game: Game, deal: Deal, teams: list[dict[str, Any]], version: int | None) -> None:
    """Set went-out, concealed and hands; re-score if the deal is confirmed."""
    check_version(deal, version, required=deal.status == "confirmed")
    _set_outcome(game, deal, teams)
    if deal.status == "confirmed":
        rescore_game(game)


def _set_table(deal: Deal, corrections: list[dict[str, Any]]) -> None:
    try:
        table = tables.replay(deal.proposed, corrections)
    except tables.CorrectionError as exc:
        raise ServiceError(422, str(exc)) from exc
    deal.corrections = corrections
    deal.table = table


def _set_outcome(game: Game, deal: Deal, teams: list[dict[str, Any]]) -> None:
    if len(teams) != len(game.teams):
        raise ServiceError(422, f"this game has {len(game.teams)} teams; got {len(teams)}")
    outcome = []
    for i, team in enumerate(teams):
        hand = team.get("hand")
        if hand and team.get("hand_points") is not None:
            raise ServiceError(422, f"team {i}: give the hand as cards or as hand_points, "
                               "not both")
        try:
            hand = [tables.normalize_card(c) for c in hand or []]
        except tables.CorrectionError as exc:
            raise ServiceError(422, f"team {i} hand: {exc}") from exc
        outcome.append({"went_out": bool(team.get("went_out")),
                        "concealed": bool(team.get("concealed")),
                        "hand": hand, "hand_points": team.get("hand_points")})
    deal.outcome = {"teams": outcome}


def confirm(game: Game, deal: Deal, version: int | None) -> None:
    """Score a draft and count it: one transaction with the re-scoring (caller commits)."""
    if deal.status == "confirmed":
        raise ServiceError(409, "the deal is already confirmed")
    check_version(deal, version, required=False)
    for earlier in game.deals:
        if earlier.number < deal.number and earlier.status == "confirmed" and earlier.score \
                and earlier.score["game_over"]:
            raise ServiceError(409, f"the game is over ({earlier.score['winner']} won in "
                               f"deal {earlier.number})")
    _, problem = score_or_problem(layout_for(game, deal))
    if problem is not None:
        raise ServiceError(422, problem["detail"], rule=problem["rule"], where=problem["where"])
    deal.status = "confirmed"
    deal.confirmed_at = utcnow()
    rescore_game(game)


def reopen(game: Game, deal: Deal, version: int | None) -> None:
    """Undo a confirmation: the deal is a draft again and the later totals follow."""
    if deal.status != "confirmed":
        raise ServiceError(409, "the deal is not confirmed")
    check_version(deal, version, required=True)
    deal.status = "draft"
    deal.confirmed_at = None
    deal.score = None
    rescore_game(game)


def delete_deal(session: Session, game: Game, deal: Deal, version: int | None) -> None:
    """Remove a deal (a confirmed one needs its version); later totals follow."""
    check_version(deal, version, required=deal.status == "confirmed")
    session.delete(deal)
    session.flush()
    session.expire(game, ["deals"])
    rescore_game(game)


def attach_scan(game: Game, deal: Deal, scan: Any, team: int | None,
                from_team: int | None) -> None:
    """Make a new scan the deal's proposed table (all of it, or one team's side of it).

    The corrections made so far are folded into the new proposal (for a one-team
    re-scan) or dropped with the old reading (for a whole new photo): they named cards
    of the old reading.
    """
    if deal.status != "draft":
        raise ServiceError(409, "the deal is confirmed; reopen it to scan again")
    if team is None:
        proposed = tables.table_from_scan(scan.result, scan.seq, len(game.teams))
    else:
        if not 0 <= team < len(game.teams):
            raise ServiceError(422, f"no team {team} in this game")
        try:
            proposed = tables.merge_team_scan(deal.table, scan.result, scan.seq, team,
                                              team if from_team is None else from_team)
        except tables.CorrectionError as exc:
            raise ServiceError(422, str(exc)) from exc
    deal.scans.append(scan)
    deal.proposed = proposed
    deal.corrections = []
    deal.table = copy.deepcopy(proposed)


def replace_layout(game: Game, deal: Deal, teams: list[dict[str, Any]],
                   version: int | None) -> None:
    """Set a deal's cards and outcome from a whole layout (contract `teams`) at once."""
    check_version(deal, version, required=deal.status == "confirmed")
    op = {"op": "replace", "teams": [
        {"melds": t.get("melds") or [],
         # The contract allows red threes as a count or as the list of the cards.
         "red_threes": len(t["red_threes"]) if isinstance(t.get("red_threes"), list)
         else t.get("red_threes") or 0}
        for t in teams]}
    _set_table(deal, [*deal.corrections, op])
    _set_outcome(game, deal, [{"went_out": t.get("went_out"), "concealed": t.get("concealed"),
                               "hand": t.get("hand"), "hand_points": t.get("hand_points")}
                              for t in teams])
    if deal.status == "confirmed":
        rescore_game(game)

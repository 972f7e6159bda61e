"""Games: create one (get its token), read its totals and deals."""

from __future__ import annotations

from fastapi import APIRouter

from api import present, service
from api.deps import GameDep, SessionDep
from api.schemas import DealSummary, GameIn, GameOut, Problem

router = APIRouter(prefix="/api/games", tags=["games"])
AUTH_ERRORS = {401: {"model": Problem, "description": "no token"},
               404: {"model": Problem, "description": "no such game for this token"}}


@router.post("", status_code=201, response_model=GameOut, responses={422: {"model": Problem}})
def create_game(body: GameIn, session: SessionDep) -> GameOut:
    """Start a game; the answer carries the game's secret token (shown only this once)."""
    rules = {**body.rules, "players": body.players, "target": body.target}
    game, token = service.create_game(session, rules, [t.model_dump() for t in body.teams])
    return present.game_out(game, token)


@router.get("/{game_id}", response_model=GameOut, responses=AUTH_ERRORS)
def get_game(game: GameDep) -> GameOut:
    """Totals, next minimum meld per team, deals, and the winner once the game is over."""
    return present.game_out(game)


@router.get("/{game_id}/deals", response_model=list[DealSummary], responses=AUTH_ERRORS)
def list_deals(game: GameDep) -> list[DealSummary]:
    """The game's deals in order, with each deal's scores once confirmed."""
    return present.game_out(game).deals

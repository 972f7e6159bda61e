"""Request dependencies: the database session, the current game (by its token), the detector.

Access to a game is by its secret token only: no token is a 401; a token that is not
this game's is a 404, the same answer as for a game that does not exist, so a token
never reveals which other games exist.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from api.models import Deal, Game
from api.service import ServiceError, token_matches
from api.settings import Settings

bearer = HTTPBearer(auto_error=False, description="the game's token, from creating the game")


def get_settings(request: Request) -> Settings:
    """The app's settings."""
    return request.app.state.settings


def get_session(request: Request) -> Iterator[Session]:
    """One database session per request; rolled back unless the route committed."""
    with request.app.state.sessionmaker() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_game(game_id: int, session: SessionDep,
             credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
             ) -> Game:
    """The game of the URL, if the request carries its token."""
    if credentials is None or not credentials.credentials:
        raise ServiceError(401, "this game needs its token: Authorization: Bearer <token>")
    game = session.get(Game, game_id)
    if game is None or not token_matches(game, credentials.credentials):
        raise ServiceError(404, f"no game {game_id} for this token")
    return game


GameDep = Annotated[Game, Depends(get_game)]


def get_deal(deal_id: int, game: GameDep, session: SessionDep) -> Deal:
    """A deal of the current game."""
    deal = session.get(Deal, deal_id)
    if deal is None or deal.game_id != game.id:
        raise ServiceError(404, f"no deal {deal_id} in game {game.id}")
    return deal


DealDep = Annotated[Deal, Depends(get_deal)]


def get_detector(request: Request) -> Any:
    """The loaded corner detector, or 503 while the model is loading or missing."""
    state = request.app.state
    if state.detector is None:
        raise ServiceError(503, f"the detector model is not ready: {state.model_error or 'loading'}")
    return state.detector


DetectorDep = Annotated[Any, Depends(get_detector)]


def commit(session: Session) -> None:
    """Commit, turning a lost race with another writer into a 409."""
    try:
        session.commit()
    except StaleDataError as exc:
        session.rollback()
        raise ServiceError(409, "the deal was changed by someone else meanwhile; reload it") from exc
    except IntegrityError as exc:
        session.rollback()
        raise ServiceError(409, "a conflicting change was made meanwhile; try again") from exc

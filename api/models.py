"""The stored state of games: games, their teams, deals and the photos scanned for them.

A game keeps only what players entered (team names, rules, starting totals, and a hash
of its secret token). A deal keeps its editable table (cards with their boxes), the
player's corrections, the outcome (who went out, hands) and, once confirmed, its score.
Running totals are not stored separately: each confirmed deal stores the score it got
with the totals before it, and every change re-scores all confirmed deals in order in
the same transaction, so later totals always follow an edited or undone deal.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, TypeDecorator, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from api.db import Base


def utcnow() -> datetime:
    """Timezone-aware now, stored as UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator):
    """A UTC timestamp that reads back timezone-aware on every database.

    SQLite keeps no time zone, so without this the same column would read back naive
    there and aware on PostgreSQL, and the API would print two formats.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: object) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC)
        return value

    def process_result_value(self, value: datetime | None, dialect: object) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class Game(Base):
    """A game of Canasta played to a target by two or three teams."""

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64))
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    teams: Mapped[list[Team]] = relationship(
        back_populates="game", order_by="Team.index", cascade="all, delete-orphan")
    deals: Mapped[list[Deal]] = relationship(
        back_populates="game", order_by="Deal.number", cascade="all, delete-orphan")


class Team(Base):
    """A side of the game: a partnership or a single player."""

    __tablename__ = "teams"
    __table_args__ = (UniqueConstraint("game_id", "index"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(60))
    players: Mapped[list[str]] = mapped_column(JSON)
    starting_total: Mapped[int] = mapped_column(Integer, default=0)

    game: Mapped[Game] = relationship(back_populates="teams")


class Deal(Base):
    """One deal: a draft being checked, then a confirmed deal that counts.

    `version` is bumped by SQLAlchemy on every update (optimistic concurrency): a write
    based on an older version fails instead of silently overwriting someone else's edit.
    """

    __tablename__ = "deals"
    __table_args__ = (UniqueConstraint("game_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(12), default="draft")
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    confirmed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    proposed: Mapped[dict[str, Any]] = mapped_column(JSON)
    corrections: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    table: Mapped[dict[str, Any]] = mapped_column(JSON)
    outcome: Mapped[dict[str, Any]] = mapped_column(JSON)
    score: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)

    game: Mapped[Game] = relationship(back_populates="deals")
    scans: Mapped[list[Scan]] = relationship(
        back_populates="deal", order_by="Scan.seq", cascade="all, delete-orphan")

    __mapper_args__ = {"version_id_col": version}


class Scan(Base):
    """One photo of a deal and what the scanner read from it."""

    __tablename__ = "scans"
    __table_args__ = (UniqueConstraint("deal_id", "seq"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    deal_id: Mapped[int] = mapped_column(ForeignKey("deals.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    photo_sha256: Mapped[str] = mapped_column(String(64))
    photo_ext: Mapped[str] = mapped_column(String(8))
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    team: Mapped[int | None] = mapped_column(Integer, default=None)
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    deal: Mapped[Deal] = relationship(back_populates="scans")

"""Database engine, sessions and schema migrations (SQLAlchemy 2 + Alembic).

SQLite (a file in the data directory) by default, PostgreSQL when the settings give a
`postgresql://` URL. The schema is owned by the Alembic migrations in
`api/migrations/`, which the app runs at startup, so an old database is upgraded in
place and a new one is created; the ORM classes in `api/models.py` must match them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


class Base(DeclarativeBase):
    """Declarative base of the service's tables."""


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets foreign keys, WAL and a busy timeout."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            # WAL lets the page read totals while a confirm is being written.
            cur.execute("PRAGMA journal_mode=WAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def run_migrations(engine: Engine) -> None:
    """Bring the database schema to the newest migration (idempotent)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "head")


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Session factory; objects stay readable after commit so routes can build responses."""
    return sessionmaker(engine, expire_on_commit=False)


def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One session per request, rolled back if the request fails before committing."""
    with factory() as session:
        try:
            yield session
        except BaseException:
            session.rollback()
            raise

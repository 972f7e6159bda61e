"""The Alembic migrations create exactly the tables the ORM models describe."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from api.db import Base, make_engine, run_migrations


def test_migrations_match_the_models(tmp_path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'canasta.db'}")
    run_migrations(engine)
    run_migrations(engine)  # idempotent: a restart on an up-to-date database is a no-op
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == []

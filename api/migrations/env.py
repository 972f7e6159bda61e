"""Alembic environment: runs migrations on the connection the app hands over."""

from __future__ import annotations

from alembic import context

import api.models  # noqa: F401  (registers the tables on Base.metadata)
from api.db import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - the app always passes its connection
    raise RuntimeError("run migrations through api.db.run_migrations(engine)")

context.configure(connection=connection, target_metadata=Base.metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()

"""Fixtures of the API tests: an app on SQLite (and, marked `postgres`, on PostgreSQL).

The detector is a fake and the scan step returns a fixed reading of a small generated
photo, so these tests check what the service does with a reading, not the vision code
(`test_scan_pipeline.py` runs the real pipeline with a ground-truth detector).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import FakeDetector, GameClient, ScanRecorder, make_game
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from api.app import create_app
from api.settings import Settings


def _psycopg_url(url: str) -> str:
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def _fresh_schema(url: str, schema: str, create: bool) -> None:
    """Drop (and recreate) this process's schema, so each test starts from migrations."""
    engine = create_engine(_psycopg_url(url))
    with engine.begin() as conn:
        conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        if create:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The database URL of the test (None = SQLite in the data directory).

    On PostgreSQL each test process works in its own schema (search_path), so two test
    runs sharing the server do not drop each other's tables.
    """
    if request.param == "sqlite":
        yield None
        return
    url = os.environ.get("DATABASE_URL_TEST")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("DATABASE_URL_TEST is not set (source scripts/ci-services.sh)")
        pytest.skip("DATABASE_URL_TEST is not set (source scripts/ci-services.sh)")
    schema = f"canasta_test_{os.getpid()}"
    _fresh_schema(url, schema, create=True)
    sep = "&" if "?" in url else "?"
    yield f"{url}{sep}options=-csearch_path%3D{schema}"
    _fresh_schema(url, schema, create=False)


@pytest.fixture
def settings(tmp_path: Path, backend: str | None) -> Settings:
    return Settings(data_dir=tmp_path / "data", database_url=backend, load_model=False,
                    max_json_bytes=64 * 1024)


@pytest.fixture
def scan_recorder() -> ScanRecorder:
    return ScanRecorder()


@pytest.fixture
def client(settings: Settings, scan_recorder: ScanRecorder) -> Iterator[TestClient]:
    app = create_app(settings, detector=FakeDetector())
    app.state.scan = scan_recorder
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client
    app.state.engine.dispose()


@pytest.fixture
def game(client: TestClient) -> GameClient:
    return make_game(client)

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


def _reset_postgres(url: str) -> None:
    """Drop every table of the test database, so each test starts from migrations."""
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str | None:
    """The database URL of the test (None = SQLite in the data directory)."""
    if request.param == "sqlite":
        return None
    url = os.environ.get("DATABASE_URL_TEST")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("DATABASE_URL_TEST is not set (source scripts/ci-services.sh)")
        pytest.skip("DATABASE_URL_TEST is not set (source scripts/ci-services.sh)")
    _reset_postgres(url)
    return url


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

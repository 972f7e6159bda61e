"""Settings of the web service, read once from the environment (pydantic-settings).

Everything the service needs to know about its surroundings lives here and is passed
explicitly: where games and photos are stored, which database to use, and the limits
that protect it from oversized uploads. Environment variables use the `CANASTA_` prefix
(`CANASTA_DATA_DIR=/srv/canasta`), except `DATABASE_URL`, the name hosting tools use.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Service configuration; defaults run a self-contained SQLite service under `./var/`."""

    model_config = SettingsConfigDict(env_prefix="CANASTA_", extra="ignore")

    data_dir: Path = Path("var")
    """SQLite database and stored photos (by content hash) go here."""

    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "CANASTA_DATABASE_URL"))
    """SQLAlchemy URL; `postgresql://...` selects PostgreSQL (psycopg 3). None = SQLite file."""

    max_photo_bytes: int = 25 * 2**20
    max_photo_pixels: int = 50_000_000
    max_json_bytes: int = 256 * 2**10
    """A layout is a few KB; anything near this limit is not a layout."""

    model_dir: Path | None = None
    """Detector model directory (`detector.json` + ONNX files); None = the bundled `models/`."""

    load_model: bool = True
    """Load the bundled detector at startup (tests inject a fake detector instead)."""

    scan_concurrency: int = 2
    """Photos decoded and scanned at once; more would only thrash memory on a small machine."""

    view_long_side: int = 1600
    """Long side of the JPEG the page shows (phones cannot show HEIC; 12 MP is too heavy)."""

    def sqlalchemy_url(self) -> str:
        """The database URL with the driver spelled out (psycopg 3 for PostgreSQL)."""
        url = self.database_url or f"sqlite:///{(self.data_dir / 'canasta.db').resolve()}"
        for prefix in ("postgresql://", "postgres://"):
            if url.startswith(prefix):
                url = "postgresql+psycopg://" + url[len(prefix):]
        return url

"""The service with the real scan pipeline (decode, detect, read the table) and a
ground-truth detector double instead of the ONNX model."""

from __future__ import annotations

import io

import numpy as np
import pytest
from api_helpers import GameClient
from fastapi.testclient import TestClient
from PIL import Image

from api.app import create_app
from api.settings import Settings
from datasets.groundtruth import GroundTruthDetector, small_two_team_table

W, H = 800, 600


@pytest.fixture
def real_client(tmp_path):
    app = create_app(Settings(data_dir=tmp_path, load_model=False),
                     detector=GroundTruthDetector(small_two_team_table(W, H)))
    with TestClient(app) as client:
        yield client
    app.state.engine.dispose()


def table_jpeg() -> bytes:
    out = io.BytesIO()
    Image.fromarray(np.full((H, W, 3), 90, np.uint8)).save(out, format="JPEG")
    return out.getvalue()


def test_api_scan_is_the_cli_scan_json(real_client) -> None:
    from scanner.scan import scan_photo

    r = real_client.post("/api/scan", files={"photo": ("t.jpg", table_jpeg(), "image/jpeg")})
    assert r.status_code == 200, r.text
    expected = scan_photo(table_jpeg(), detector=GroundTruthDetector(small_two_team_table(W, H))).to_json()
    assert r.json() == expected
    assert r.json()["layout"]["teams"] == [{"melds": [["K", "K", "K", "2"]], "red_threes": 1},
                                           {"melds": [["8", "8", "8"]], "red_threes": 0}]


def test_deal_from_a_real_scan_has_boxed_cards(real_client) -> None:
    r = real_client.post("/api/games", json={"teams": [{"name": "Us"}, {"name": "Them"}]})
    game = GameClient(real_client, r.json())
    deal = game.new_deal(table_jpeg())
    kings = deal["table"]["teams"][0]["melds"][0]["cards"]
    assert [c["card"] for c in kings] == ["K", "K", "K", "2"]
    assert all(c["box"] and c["scan"] == 1 for c in kings)
    # Boxes are in photo pixels: team 0 sits near the bottom edge.
    assert all(c["box"][1] > H / 2 for c in kings)
    assert len(deal["table"]["teams"][0]["red_threes"]) == 1
    assert deal["layout"]["teams"][1]["melds"] == [["8", "8", "8"]]

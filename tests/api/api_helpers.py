"""Helpers of the API tests: a fixed photo reading, a fake detector, a client per game.

The detector is a fake and the scan step returns a fixed reading of a small generated
photo, so these tests check what the service does with a reading, not the vision code
(`test_scan_pipeline.py` runs the real pipeline with a ground-truth detector).
"""

from __future__ import annotations

import copy
import io
from typing import Any

from fastapi.testclient import TestClient
from PIL import Image

# A reading of the photo: team 0 melded kings (one read with low confidence) and has a red
# three; team 1 melded nines with a joker; a queen lies outside any meld.
READING: dict[str, Any] = {
    "image": {"width": 640, "height": 480},
    "corners": [
        {"card": "K", "box": [100, 300, 120, 330], "confidence": 0.99},
        {"card": "K", "box": [130, 300, 150, 330], "confidence": 0.98},
        {"card": "K", "box": [160, 300, 180, 330], "confidence": 0.41},
        {"card": "3R", "box": [400, 300, 420, 330], "confidence": 0.97},
        {"card": "9", "box": [100, 100, 120, 130], "confidence": 0.99},
        {"card": "9", "box": [130, 100, 150, 130], "confidence": 0.98},
        {"card": "JK", "box": [160, 100, 180, 130], "confidence": 0.97},
        {"card": "Q", "box": [500, 200, 520, 230], "confidence": 0.8},
    ],
    "cards": [
        {"card": "K", "team": 0, "meld": 0, "corners": [0], "confidence": 0.99},
        {"card": "K", "team": 0, "meld": 0, "corners": [1], "confidence": 0.98},
        {"card": "K", "team": 0, "meld": 0, "corners": [2], "confidence": 0.41},
        {"card": "3R", "team": 0, "meld": None, "corners": [3], "confidence": 0.97},
        {"card": "9", "team": 1, "meld": 0, "corners": [4], "confidence": 0.99},
        {"card": "9", "team": 1, "meld": 0, "corners": [5], "confidence": 0.98},
        {"card": "JK", "team": 1, "meld": 0, "corners": [6], "confidence": 0.97},
        {"card": "Q", "team": None, "meld": None, "corners": [7], "confidence": 0.8},
    ],
    "layout": {"teams": [{"melds": [["K", "K", "K"]], "red_threes": 1},
                         {"melds": [["9", "9", "JK"]], "red_threes": 0}]},
}


def reading_with_unsure_kings() -> dict[str, Any]:
    """READING with its meld details: the kings 0.40 likely read exactly, the nines 0.97."""
    reading = copy.deepcopy(READING)
    reading["melds"] = [
        {"team": 0, "rank": "K", "naturals": 3, "wilds": [], "squared": False,
         "cards": [0, 1, 2], "confidence": 0.40, "problems": []},
        {"team": 1, "rank": "9", "naturals": 2, "wilds": ["JK"], "squared": False,
         "cards": [4, 5, 6], "confidence": 0.97, "problems": []},
    ]
    return reading


class FakeDetector:
    """Stands in for the ONNX model; the fixed scan below never calls it."""

    decode_long_side = 1600  # as the bundled model asks


class ScanRecorder:
    """The app's scan step, returning `reading` (READING unless a test sets another);
    records the photos it was given."""

    def __init__(self) -> None:
        self.photos: list[Any] = []
        self.reading: dict[str, Any] = READING

    def __call__(self, photo: Any, detector: Any) -> dict[str, Any]:
        self.photos.append(photo)
        reading = copy.deepcopy(self.reading)
        reading["image"] = {"width": photo.width, "height": photo.height}
        return reading


def photo_bytes(fmt: str = "JPEG", size: tuple[int, int] = (640, 480)) -> bytes:
    """A small generated photo (green felt with white rectangles) in `fmt`."""
    img = Image.new("RGB", size, (20, 110, 40))
    for x in range(100, 200, 30):
        img.paste((250, 250, 250), (x, 290, x + 25, 370))
    out = io.BytesIO()
    if fmt == "HEIF":
        import pillow_heif

        pillow_heif.register_heif_opener()
    img.save(out, format=fmt)
    return out.getvalue()


class GameClient:
    """Calls about one game with its token."""

    def __init__(self, client: TestClient, game: dict[str, Any]) -> None:
        self.client = client
        self.game = game
        self.id = game["id"]
        self.headers = {"Authorization": f"Bearer {game['token']}"}

    def url(self, path: str = "") -> str:
        return f"/api/games/{self.id}{path}"

    def get(self, path: str = "", **kw: Any) -> Any:
        return self.client.get(self.url(path), headers=self.headers | kw.pop("headers", {}),
                               **kw)

    def post(self, path: str = "", **kw: Any) -> Any:
        return self.client.post(self.url(path), headers=self.headers | kw.pop("headers", {}),
                               **kw)

    def put(self, path: str = "", **kw: Any) -> Any:
        return self.client.put(self.url(path), headers=self.headers | kw.pop("headers", {}),
                               **kw)

    def delete(self, path: str = "", **kw: Any) -> Any:
        return self.client.delete(self.url(path), headers=self.headers | kw.pop("headers", {}),
                               **kw)

    def new_deal(self, photo: bytes | None = None) -> dict[str, Any]:
        files = {"photo": ("table.jpg", photo, "image/jpeg")} if photo is not None else None
        r = self.post("/deals", files=files)
        assert r.status_code == 201, r.text
        return r.json()

    def correct(self, deal: dict[str, Any], **op: Any) -> Any:
        return self.post(f"/deals/{deal['id']}/corrections", json=op)

    def state(self) -> dict[str, Any]:
        r = self.get()
        assert r.status_code == 200, r.text
        return r.json()


def make_game(client: TestClient, **extra: Any) -> GameClient:
    body = {"players": 4, "target": 5000,
            "teams": [{"name": "Us", "players": ["Ann", "Bob"]},
                      {"name": "Them", "players": ["Cy", "Di"]}]} | extra
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return GameClient(client, r.json())



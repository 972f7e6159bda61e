"""Photos and request bodies: what is accepted, what is refused (and that nothing changes).

SQLite only: these check the HTTP edge, not the database.
"""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from api_helpers import make_game, photo_bytes, reading_with_unsure_kings
from PIL import Image

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def stored_files(settings) -> list[str]:
    root = settings.data_dir / "photos"
    return sorted(p.name for p in root.rglob("*") if p.is_file()) if root.exists() else []


def jpeg_claiming(width: int, height: int) -> bytes:
    """A valid small JPEG whose header (SOF0) is rewritten to claim width x height."""
    data = bytearray(photo_bytes("JPEG", (64, 48)))
    i = data.index(b"\xff\xc0")
    # SOF0: marker, length (2), precision (1), height (2), width (2)
    data[i + 5:i + 9] = struct.pack(">HH", height, width)
    return bytes(data)


@pytest.mark.parametrize("fmt, mime", [("JPEG", "image/jpeg"), ("PNG", "image/png"),
                                       ("HEIF", "image/heic")])
def test_scan_accepts_jpeg_png_heic(client, scan_recorder, fmt, mime) -> None:
    r = client.post("/api/scan", files={"photo": (f"t.{fmt.lower()}", photo_bytes(fmt), mime)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["image"] == {"width": 640, "height": 480}
    assert set(body) >= {"image", "corners", "cards", "layout"}
    assert scan_recorder.photos[-1].rgb.shape[2] == 3


@pytest.mark.parametrize("data, mime, status, words", [
    (b"%PDF-1.4 not a photo at all", "image/jpeg", 422, "not a readable photo"),
    (photo_bytes("JPEG")[:3000], "image/jpeg", 422, "truncated"),
    (photo_bytes("JPEG")[:300], "image/jpeg", 422, "Truncated"),
    (b"", "image/jpeg", 422, "empty"),
    (photo_bytes("JPEG"), "text/plain", 415, "text/plain"),
    (photo_bytes("JPEG"), "application/pdf", 415, "application/pdf"),
    (jpeg_claiming(10_000, 5_001), "image/jpeg", 413, "megapixels"),
])
def test_scan_refuses_bad_photos(client, scan_recorder, settings, data, mime, status,
                                 words) -> None:
    r = client.post("/api/scan", files={"photo": ("t.jpg", data, mime)})
    assert r.status_code == status, r.text
    assert words in r.json()["detail"]
    assert scan_recorder.photos == []  # refused before the detector saw anything
    assert stored_files(settings) == []


def test_pixel_limit_is_checked_before_decoding(client, scan_recorder) -> None:
    """The 50 MP header of a 2 KB file is refused at once: decoding it would fail otherwise."""
    bomb = jpeg_claiming(8_000, 7_000)
    assert len(bomb) < 10_000
    r = client.post("/api/scan", files={"photo": ("bomb.jpg", bomb, "image/jpeg")})
    assert r.status_code == 413 and "56.0 megapixels" in r.json()["detail"]
    assert scan_recorder.photos == []


def test_scan_refuses_over_25_mb_before_reading_it_all(client, scan_recorder, settings) -> None:
    big = photo_bytes("JPEG") + b"\0" * (25 * 2**20)
    r = client.post("/api/scan", files={"photo": ("big.jpg", big, "image/jpeg")})
    assert r.status_code == 413
    # Exactly at the limit the file is read (it is a JPEG with trailing bytes).
    ok = photo_bytes("JPEG")
    ok += b"\0" * (25 * 2**20 - len(ok))
    r = client.post("/api/scan", files={"photo": ("ok.jpg", ok, "image/jpeg")})
    assert r.status_code == 200, r.text
    assert stored_files(settings) == []  # the stateless scan keeps nothing


def test_scan_takes_an_untyped_heic_upload(client) -> None:
    r = client.post("/api/scan", files={"photo": ("IMG_0001.HEIC", photo_bytes("HEIF"), "")})
    assert r.status_code == 200, r.text
    r = client.post("/api/scan", files={"photo": ("notes.txt", b"shopping list", "")})
    assert r.status_code == 422


def test_scan_without_a_photo_field(client) -> None:
    r = client.post("/api/scan", files={"picture": ("t.jpg", photo_bytes(), "image/jpeg")})
    assert r.status_code == 422 and "photo" in r.json()["detail"]
    r = client.post("/api/scan", json={"photo": "x"})
    assert r.status_code == 415 and "multipart" in r.json()["detail"]
    r = client.post("/api/scan", content=photo_bytes(), headers={"content-type": "image/jpeg"})
    assert r.status_code == 415


def test_score_endpoint_speaks_the_contract(client) -> None:
    from scanner.scoring import score_layout_json

    layout = {"teams": [{"name": "Us", "melds": [["K"] * 7], "went_out": True},
                        {"name": "Them", "melds": [], "hand": ["Q"]}]}
    r = client.post("/api/score", json=layout)
    assert r.status_code == 200 and r.json() == score_layout_json(layout)
    assert [t["deal_score"] for t in r.json()["teams"]] == [670, -10]
    layout["teams"][1]["melds"] = [["9", "9"]]
    r = client.post("/api/score", json=layout)
    assert r.status_code == 422 and r.json()["rule"] == "meld-min-cards"
    assert "meld" in r.json()["detail"]


@pytest.mark.parametrize("body, headers, status", [
    (b'{"teams": [', {"content-type": "application/json"}, 422),
    (b"[1, 2]", {"content-type": "application/json"}, 422),
    (b'{"teams": "none"}', {"content-type": "application/json"}, 422),
    (b"teams=1", {"content-type": "application/x-www-form-urlencoded"}, 415),
    (b'{"teams": []}', {"content-type": "text/plain"}, 415),
    (b'{"teams": []}', {}, 415),
    (b'{"teams": []}' + b" " * (70 * 1024), {"content-type": "application/json"}, 413),
])
def test_score_refuses_malformed_or_oversized_json(client, body, headers, status) -> None:
    r = client.post("/api/score", content=body, headers=headers)
    assert r.status_code == status, r.text
    assert r.json()["detail"]


def test_json_routes_say_what_to_send(client) -> None:
    body = b'{"teams": [{"name": "A"}, {"name": "B"}]}'
    r = client.post("/api/games", content=body, headers={"content-type": "text/plain"})
    assert r.status_code == 415 and "application/json" in r.json()["detail"]
    assert client.post("/api/games", content=body,
                       headers={"content-type": "application/json"}).status_code == 201


def test_oversized_json_to_a_game_changes_nothing(client, settings) -> None:
    game = make_game(client)
    deal = game.new_deal(photo_bytes())
    huge = {"teams": [{"hand": ["K"] * 20_000}, {}]}
    r = game.put(f"/deals/{deal['id']}/outcome", json=huge)
    assert r.status_code == 413
    r = game.put(f"/deals/{deal['id']}/outcome", content=b"{not json",
                 headers={"content-type": "application/json"})
    assert r.status_code == 422
    after = game.get(f"/deals/{deal['id']}").json()
    assert after["outcome"] == deal["outcome"] and after["version"] == deal["version"]


def test_bad_photo_for_a_deal_stores_nothing(client, settings, scan_recorder) -> None:
    game = make_game(client)
    deal = game.new_deal(photo_bytes())
    files_before = stored_files(settings)
    assert len(files_before) == 2  # the photo and its view JPEG
    for data, mime in [(b"GIF89a....", "image/jpeg"), (photo_bytes(), "text/html"),
                       (jpeg_claiming(9_000, 9_000), "image/jpeg")]:
        r = game.post(f"/deals/{deal['id']}/photos", files={"photo": ("x.jpg", data, mime)})
        assert r.status_code in (413, 415, 422), r.text
        r = game.post("/deals", files={"photo": ("x.jpg", data, mime)})
        assert r.status_code in (413, 415, 422), r.text
    assert stored_files(settings) == files_before
    state = game.state()
    assert [d["id"] for d in state["deals"]] == [deal["id"]]
    assert game.get(f"/deals/{deal['id']}").json()["version"] == deal["version"]
    assert len(scan_recorder.photos) == 1


@pytest.mark.parametrize("fmt, ext", [("PNG", "png"), ("HEIF", "heic"), ("JPEG", "jpg")])
def test_photos_are_stored_once_by_content_hash(client, settings, fmt, ext) -> None:
    game = make_game(client)
    photo = photo_bytes(fmt)
    first = game.new_deal(photo)
    second = game.new_deal(photo)
    assert first["photos"][0]["sha256"] == second["photos"][0]["sha256"]
    import hashlib

    sha = hashlib.sha256(photo).hexdigest()
    assert stored_files(settings) == sorted([f"{sha}.{ext}", f"{sha}.view.jpg"])
    r = game.get(first["photos"][0]["original_url"].removeprefix(game.url()))
    assert r.status_code == 200 and r.content == photo
    view = game.get(first["photos"][0]["view_url"].removeprefix(game.url()))
    assert Image.open(io.BytesIO(view.content)).format == "JPEG"  # phones cannot show HEIC


def test_rescan_one_team_keeps_the_other_teams_corrections(client, scan_recorder) -> None:
    game = make_game(client)
    deal = game.new_deal(photo_bytes())
    nine = deal["table"]["teams"][1]["melds"][0]["cards"][0]["id"]
    deal = game.correct(deal, op="set_card", card_id=nine, card="8").json()
    king = deal["table"]["teams"][0]["melds"][0]["cards"][0]["id"]
    game.correct(deal, op="delete", card_id=king)
    # A second photo, of team 0's side: only team 0 is read again.
    r = game.post(f"/deals/{deal['id']}/photos", data={"team": "0"},
                  files={"photo": ("side.png", photo_bytes("PNG"), "image/png")})
    assert r.status_code == 200, r.text
    after = r.json()
    assert [[c["card"] for c in m["cards"]] for m in after["table"]["teams"][0]["melds"]] == [
        ["K", "K", "K"]]
    assert after["table"]["teams"][0]["melds"][0]["cards"][0]["scan"] == 2
    assert after["layout"]["teams"][1]["melds"] == [["8", "9", "JK"]]
    assert [p["seq"] for p in after["photos"]] == [1, 2] and after["corrections"] == []
    r = game.post(f"/deals/{deal['id']}/photos", data={"team": "7"},
                  files={"photo": ("side.png", photo_bytes("PNG"), "image/png")})
    assert r.status_code == 422
    assert len(game.get(f"/deals/{deal['id']}").json()["photos"]) == 2


def test_view_and_annotated_photo(client) -> None:
    game = make_game(client)
    deal = game.new_deal(photo_bytes("JPEG", (2400, 1800)))
    photo = deal["photos"][0]
    view = game.get(photo["view_url"].removeprefix(game.url()))
    assert view.status_code == 200 and view.headers["content-type"] == "image/jpeg"
    assert Image.open(io.BytesIO(view.content)).size == (1600, 1200)
    r = game.get(photo["annotated_url"].removeprefix(game.url()))
    assert r.status_code == 200 and r.headers["content-type"] == "image/jpeg"
    annotated = Image.open(io.BytesIO(r.content)).convert("RGB")
    plain = Image.open(io.BytesIO(view.content)).convert("RGB")
    assert annotated.size == plain.size
    # The low-confidence king's box (x 160..180 of 640 px wide) is drawn in red.
    k = 1600 / 2400
    x, y = round(160 * k), round(315 * k)
    r_, g_, b_ = annotated.getpixel((x, y))
    assert r_ > 180 and g_ < 100, (r_, g_, b_)
    assert game.get(f"/deals/{deal['id']}/photos/9").status_code == 404
    assert client.get(game.url(f"/deals/{deal['id']}/photos/1/annotated")).status_code == 401


def test_annotated_photo_boxes_a_meld_to_count_in_red(client, scan_recorder) -> None:
    scan_recorder.reading = reading_with_unsure_kings()
    game = make_game(client)
    deal = game.new_deal(photo_bytes("JPEG", (640, 480)))
    url = deal["photos"][0]["annotated_url"].removeprefix(game.url())
    annotated = np.asarray(Image.open(io.BytesIO(game.get(url).content)).convert("RGB"))
    red = (annotated[..., 0] > 180) & (annotated[..., 1] < 100) & (annotated[..., 2] < 100)
    # a red frame round the kings (x 100..180, y 300..330), clear of their own boxes
    assert red[330:350, 90:100].sum() > 20 and red[335:345, 100:180].sum() > 40
    # once counted, the frame is gone (the unsure king's own box stays red)
    kings = deal["table"]["teams"][0]["melds"][0]["id"]
    assert game.correct(deal, op="check", meld=kings).status_code == 200
    after = np.asarray(Image.open(io.BytesIO(game.get(url).content)).convert("RGB"))
    red_after = (after[..., 0] > 180) & (after[..., 1] < 100) & (after[..., 2] < 100)
    assert not red_after[330:350, 90:100].any()
    assert red_after[300:330, 158:182].any()


def test_healthz_follows_the_model(client, settings) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    from fastapi.testclient import TestClient

    from api.app import create_app

    app = create_app(settings)  # no detector, load_model=False: nothing will load
    with TestClient(app) as no_model:
        r = no_model.get("/healthz")
        assert r.status_code == 503 and r.json()["status"] == "loading"
        r = no_model.post("/api/scan", files={"photo": ("t.jpg", photo_bytes(), "image/jpeg")})
        assert r.status_code == 503
    app.state.engine.dispose()


def test_openapi_documents_every_route(client) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path in ["/api/scan", "/api/score", "/healthz", "/api/games", "/api/games/{game_id}",
                 "/api/games/{game_id}/deals/{deal_id}/confirm",
                 "/api/games/{game_id}/deals/{deal_id}/corrections",
                 "/api/games/{game_id}/deals/{deal_id}/photos/{seq}/annotated"]:
        assert path in paths, path
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    docs = client.get("/docs")
    assert docs.status_code == 200
    # The docs page works offline: its script and style come from this server, not a CDN.
    assert "cdn" not in docs.text
    assert client.get("/docs-static/swagger-ui-bundle.js").status_code == 200
    assert client.get("/docs-static/swagger-ui.css").status_code == 200


def test_page_is_served(client) -> None:
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert "canasta" in r.text.lower()


def test_healthz_turns_ready_when_the_model_has_loaded(settings, monkeypatch) -> None:
    import threading

    from api_helpers import FakeDetector
    from fastapi.testclient import TestClient

    import scanner.detector
    from api.app import create_app

    release = threading.Event()

    def slow_model():
        release.wait(10)
        return FakeDetector()

    monkeypatch.setattr(scanner.detector, "default_detector", slow_model)
    app = create_app(settings.model_copy(update={"load_model": True}))
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 503
        release.set()
        for _ in range(100):
            if client.get("/healthz").status_code == 200:
                break
            threading.Event().wait(0.05)
        assert client.get("/healthz").json() == {"status": "ok"}
    app.state.engine.dispose()

    def no_model():
        raise FileNotFoundError("models/detector.onnx")

    monkeypatch.setattr(scanner.detector, "default_detector", no_model)
    app = create_app(settings.model_copy(update={"load_model": True}))
    with TestClient(app) as client:
        for _ in range(100):
            if client.get("/healthz").json()["status"] == "error":
                break
            threading.Event().wait(0.05)
        r = client.get("/healthz")
        assert r.status_code == 503 and "detector.onnx" in r.json()["detail"]
    app.state.engine.dispose()


def test_model_dir_setting_loads_that_model(settings, tmp_path) -> None:
    from fastapi.testclient import TestClient

    from api.app import create_app

    app = create_app(settings.model_copy(update={"load_model": True,
                                                 "model_dir": tmp_path / "no-model"}))
    with TestClient(app) as client:
        for _ in range(100):
            if client.get("/healthz").json()["status"] == "error":
                break
            import time

            time.sleep(0.05)
        r = client.get("/healthz")
        assert r.status_code == 503 and "no-model" in r.json()["detail"]
    app.state.engine.dispose()

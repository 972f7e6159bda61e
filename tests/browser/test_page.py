"""The page end to end in headless Chromium (Debian's, driven by Playwright for Python):
start a game, photograph the table, fix one card by tapping it on the photo, confirm,
and read the totals on the scoreboard. The server is the real app on a loopback port,
with a ground-truth detector double instead of the ONNX model."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import uvicorn
from PIL import Image

from api.app import create_app
from api.settings import Settings
from datasets.groundtruth import GroundTruthDetector, small_two_team_table
from scanner.scoring import score_layout_json

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
W, H = 800, 600


@contextlib.contextmanager
def serving(app):
    """The app on a free loopback port, in a thread; yields its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not srv.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(10)
        app.state.engine.dispose()


@pytest.fixture
def server(tmp_path: Path):
    app = create_app(Settings(data_dir=tmp_path / "data", load_model=False),
                     detector=GroundTruthDetector(small_two_team_table(W, H)))
    with serving(app) as url:
        yield url


@pytest.fixture
def page():
    if os.environ.get("CI"):
        import playwright.sync_api as sync_api  # in CI a missing Playwright is a failure
    else:
        sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing (source scripts/ci-services.sh)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2)
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        yield pg
        context.close()
        browser.close()


def test_photo_correct_confirm_totals(server: str, page, tmp_path: Path) -> None:
    photo = tmp_path / "table.jpg"
    buf = io.BytesIO()
    Image.fromarray(np.full((H, W, 3), (30, 110, 50), np.uint8)).save(buf, format="JPEG")
    photo.write_bytes(buf.getvalue())
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(server + "/")
    page.fill("#team0", "Us")
    page.fill("#team1", "Them")
    page.click("#create-game")
    page.wait_for_selector("#view-game:not([hidden])")
    assert page.inner_text("[data-testid=total-0]") == "0"

    page.set_input_files("#photo-input", str(photo))
    page.wait_for_selector("#view-deal:not([hidden])")
    page.wait_for_selector("#boxes rect")
    # Every card read on the photo is boxed: 4 + 3 melded, 1 red three.
    assert page.locator("#boxes rect").count() == 8
    us = page.locator(".team-block[data-team='0'] .meld .chip")
    assert us.all_inner_texts()[:4] == ["K", "K", "K", "2"]

    # The two was really a king: tap it on the photo, pick K.
    two_id = us.nth(3).get_attribute("data-card-id")
    page.click(f"#boxes rect[data-card-id='{two_id}']")
    page.wait_for_selector("#editor:not([hidden])")
    page.click("#rank-grid button[data-rank='K']")
    page.wait_for_function(
        "() => [...document.querySelectorAll(\".team-block[data-team='0'] .meld .chip\")]"
        ".slice(0, 4).map(c => c.textContent).join(' ') === 'K K K K'")

    expected = score_layout_json({"teams": [
        {"name": "Us", "melds": [["K", "K", "K", "K"]], "red_threes": 1},
        {"name": "Them", "melds": [["8", "8", "8"]]}]})
    assert page.inner_text("[data-testid=deal_score-0]") == str(expected["teams"][0]["deal_score"])
    page.click("#confirm")
    page.wait_for_selector("#view-game:not([hidden])")
    page.wait_for_selector("#history tbody tr")
    totals = [page.inner_text(f"[data-testid=total-{i}]") for i in (0, 1)]
    assert totals == [str(t["total_after"]) for t in expected["teams"]] == ["140", "30"]
    assert "confirmed" in page.inner_text("#history tbody tr")

    # Another phone joins with the shared link (token in the fragment) and sees the same totals.
    saved = page.evaluate("JSON.parse(localStorage.getItem('canasta-games'))[0]")
    other = page.context.browser.new_context(viewport={"width": 390, "height": 844})
    try:
        phone = other.new_page()
        phone.goto(f"{server}/#join/{saved['id']}/{saved['token']}")
        phone.wait_for_selector("#view-game:not([hidden])")
        assert phone.inner_text("[data-testid=total-0]") == totals[0]
        phone.goto(f"{server}/#join/{saved['id']}/not-the-token")
        phone.wait_for_selector("#error:not([hidden])")
        assert "no game" in phone.inner_text("#error")
    finally:
        other.close()
    assert errors == []


class UnsureDetector(GroundTruthDetector):
    """The ground truth as a detector reads a design it knows less well: every corner 0.7,
    the second king's 0.3 (taken: it fills a place in the column)."""

    def detect(self, rgb, min_confidence=None, full=None):
        corners = super().detect(rgb, None, full)
        corners.confidence[:] = 0.7
        corners.confidence[1] = 0.3
        return corners


def test_a_meld_the_scanner_may_have_miscounted_is_marked_until_counted(tmp_path: Path,
                                                                       page) -> None:
    app = create_app(Settings(data_dir=tmp_path / "data", load_model=False),
                     detector=UnsureDetector(small_two_team_table(W, H)))
    photo = tmp_path / "table.jpg"
    Image.fromarray(np.full((H, W, 3), (30, 110, 50), np.uint8)).save(photo, format="JPEG")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with serving(app) as url:
        page.goto(url + "/")
        page.fill("#team0", "Us")
        page.fill("#team1", "Them")
        page.click("#create-game")
        page.wait_for_selector("#view-game:not([hidden])")
        page.set_input_files("#photo-input", str(photo))
        page.wait_for_selector("#view-deal:not([hidden])")
        # the kings (one read unsure) are marked to count; the eights are not
        marked = page.locator(".meld.to-count")
        marked.first.wait_for()
        assert marked.count() == 1
        assert marked.locator(".chip").all_inner_texts()[:4] == ["K", "K", "K", "2"]
        assert "count this meld" in page.inner_text(".review")
        page.click("[data-testid=counted]")
        page.wait_for_function("() => !document.querySelector('.meld.to-count')")
        assert "count this meld" not in page.inner_text("#problems")
    assert errors == []

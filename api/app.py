"""The FastAPI application: routes, the database, the detector and the web page.

`create_app(settings)` builds a self-contained service: it opens the database and brings
its schema up to date (Alembic), prepares the photo store, and loads the detector model
in the background at startup so `/healthz` turns 200 when it is ready. Tests pass a fake
detector (`create_app(settings, detector=...)`). Request bodies are capped before they
are read: photos at the photo limit, everything else at the JSON limit (413).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from api.db import make_engine, make_sessionmaker, run_migrations
from api.photos import PhotoStore, scan
from api.routes import deals, games, health, stateless
from api.service import ServiceError
from api.settings import Settings

log = logging.getLogger("canasta_scan.api")
STATIC_DIR = Path(__file__).with_name("static")

ASGIApp = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]],
                   Awaitable[None]]


class RequestGuard:
    """ASGI middleware: 413 for a body over its limit, 415 for a body of the wrong type.

    The declared Content-Length is checked first; a chunked body is counted as it
    arrives, so a client cannot make the service buffer more than the limit. Photo
    routes take multipart forms, every other route JSON; a body of another type gets a
    415 that says what to send instead of a confusing validation error.
    """

    def __init__(self, app: ASGIApp, limit_for: Callable[[str, str], int],
                 is_photo_route: Callable[[str, str], bool]) -> None:
        self.app = app
        self.limit_for = limit_for
        self.is_photo_route = is_photo_route

    async def __call__(self, scope: dict, receive: Callable[[], Awaitable[dict]],
                       send: Callable[[dict], Awaitable[None]]) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["method"], scope["path"])
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _refuse(send, 413, f"request body too large (limit {limit} bytes)")
            return
        kind = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        has_body = (declared is not None and declared not in (b"", b"0")) or \
            b"chunked" in headers.get(b"transfer-encoding", b"")
        if has_body and scope["path"].startswith("/api/"):
            if self.is_photo_route(scope["method"], scope["path"]):
                if kind != b"multipart/form-data":
                    await _refuse(send, 415, "send the photo as multipart/form-data in the "
                                  "field 'photo'")
                    return
            elif kind != b"application/json" and not kind.endswith(b"+json"):
                await _refuse(send, 415, "send JSON with Content-Type: application/json")
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _refuse(send, 413, f"request body too large (limit {limit} bytes)")
                return
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _refuse(send: Callable[[dict], Awaitable[None]], status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _load_detector(app: FastAPI, model_dir: Path | None) -> None:
    try:
        if model_dir is not None:
            from scanner.detector import OnnxDetector

            app.state.detector = OnnxDetector(model_dir)
        else:
            from scanner.detector import default_detector

            app.state.detector = default_detector()
        log.info("detector model loaded")
    except Exception as exc:  # noqa: BLE001 - any failure is reported by /healthz
        app.state.model_error = f"{type(exc).__name__}: {exc}"
        log.error("detector model not loaded: %s", app.state.model_error)


def create_app(settings: Settings | None = None, *, detector: Any = None) -> FastAPI:
    """The service: API under `/api`, `/healthz`, OpenAPI at `/docs`, the page at `/`."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if app.state.detector is None and settings.load_model:
            threading.Thread(target=_load_detector, args=(app, settings.model_dir), daemon=True,
                             name="load-detector").start()
        yield
        app.state.engine.dispose()

    app = FastAPI(
        title="canasta-scan",
        version="0.1.0",
        summary="Score a deal of Classic Canasta from one photo of the table.",
        description="Stateless `POST /api/scan` and `POST /api/score` speak the formats of "
        "`canasta-scan scan --json` and `canasta-scan score`. Games keep deals and totals; "
        "every request about a game needs the token returned when it was created, as "
        "`Authorization: Bearer <token>`.",
        lifespan=lifespan,
        docs_url=None,  # served below from local files: the page must work with no internet
    )
    _add_offline_docs(app)
    if settings.database_url is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.sqlalchemy_url())
    run_migrations(engine)
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    app.state.photo_store = PhotoStore(settings.data_dir / "photos")
    app.state.detector = detector
    app.state.scan = scan  # photo -> contract scan JSON; tests may swap in a fixed reading
    app.state.scan_slots = threading.BoundedSemaphore(max(1, settings.scan_concurrency))
    app.state.model_error = None

    @app.exception_handler(ServiceError)
    async def service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"detail": exc.detail, **exc.extra}, status_code=exc.status,
                            headers=headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # One readable sentence first (the page shows it), the details after.
        errors = exc.errors()
        parts = []
        for err in errors[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
        return JSONResponse({"detail": "; ".join(parts) or "invalid request",
                             "errors": [{k: v for k, v in e.items() if k in ("loc", "msg", "type")}
                                        for e in errors]}, status_code=422)

    for module in (health, stateless, games, deals):
        app.include_router(module.router)

    photo_limit = settings.max_photo_bytes + 64 * 2**10  # the multipart envelope

    def is_photo_route(method: str, path: str) -> bool:
        return method == "POST" and (path == "/api/scan" or path.endswith("/photos")
                                     or path.endswith("/deals"))

    def limit_for(method: str, path: str) -> int:
        return photo_limit if is_photo_route(method, path) else settings.max_json_bytes

    app.add_middleware(RequestGuard, limit_for=limit_for, is_photo_route=is_photo_route)
    if STATIC_DIR.is_dir():
        app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="page")
    return app


def _add_offline_docs(app: FastAPI) -> None:
    """Serve the OpenAPI page at `/docs` from the bundled Swagger UI, not a CDN."""
    import swagger_ui_bundle

    app.mount("/docs-static", StaticFiles(directory=swagger_ui_bundle.swagger_ui_path),
              name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url="/docs-static/swagger-ui-bundle.js",
            swagger_css_url="/docs-static/swagger-ui.css",
            swagger_favicon_url="/docs-static/favicon-32x32.png",
        )

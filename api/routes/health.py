"""`GET /healthz`: 200 once the detector model is loaded, 503 before (or if it is missing)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Ready when the detector model is loaded",
            responses={503: {"description": "model loading or missing"}})
def healthz(request: Request) -> JSONResponse:
    """200 `{"status": "ok"}` once the model is loaded; 503 with the reason before."""
    state = request.app.state
    if state.detector is None:
        return JSONResponse({"status": "loading" if state.model_error is None else "error",
                             "detail": state.model_error or "the detector model is loading"},
                            status_code=503)
    return JSONResponse({"status": "ok"})

"""The contract's stateless endpoints: `POST /api/scan` (a photo) and `POST /api/score`.

They answer exactly what `canasta-scan scan --json` and `canasta-scan score` print, so a
third party can use the service without keeping a game.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, File, Request, UploadFile
from fastapi.responses import JSONResponse

from api import photos
from api.deps import DetectorDep, SettingsDep
from api.schemas import DealScore, Layout, Problem, ScanResult
from api.service import score_or_problem

router = APIRouter(prefix="/api", tags=["stateless"])
EXAMPLE = Layout.model_config["json_schema_extra"]["example"]  # type: ignore[index]

ERRORS = {413: {"model": Problem, "description": "photo over 25 MB or 50 megapixels"},
          415: {"model": Problem, "description": "not an image upload"},
          422: {"model": Problem, "description": "unreadable photo"},
          503: {"model": Problem, "description": "model not loaded yet"}}


@router.post("/scan", response_model=ScanResult, responses=ERRORS,
             summary="Read the cards on a photo of the table")
def scan(request: Request, settings: SettingsDep, detector: DetectorDep,
         photo: Annotated[UploadFile, File(description="JPEG, PNG or HEIC photo of the table")]
         ) -> JSONResponse:
    """The same JSON as `canasta-scan scan --json`: image size, corners, cards, layout."""
    photos.check_content_type(photo.content_type)
    data = photos.read_limited(photo.file, settings.max_photo_bytes)
    with request.app.state.scan_slots:
        decoded = photos.decode(data, settings.max_photo_pixels, settings.max_photo_bytes,
                                photos.decode_long_side(detector))
        result = request.app.state.scan(decoded, detector)
    return JSONResponse(result)


@router.post("/score", response_model=DealScore,
             responses={422: {"model": Problem, "description": "the layout breaks a rule "
                              "(named in `rule`) or is malformed"}},
             summary="Score a deal layout")
def score(layout: Annotated[dict[str, Any], Body(openapi_examples={"deal": {"value": EXAMPLE}})]
          ) -> JSONResponse:
    """The same JSON as `canasta-scan score`; 422 naming the rule a layout breaks."""
    result, problem = score_or_problem(layout)
    if problem is not None:
        return JSONResponse(problem, status_code=422)
    return JSONResponse(result)

"""Deals of a game: a draft from a photo, corrected card by card, then confirmed.

Every change answers with the whole deal (its table, the layout it makes and the score
or the rule it breaks), so the page redraws from one response. Changes to a confirmed
deal must carry the deal's `version` and re-score every later deal in one transaction.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import FileResponse, Response

from api import photos, present, service
from api.deps import DealDep, GameDep, SessionDep, SettingsDep, commit, get_detector
from api.models import Deal, Scan
from api.schemas import Correction, DealOut, LayoutIn, OutcomeIn, Problem, Versioned
from api.settings import Settings

router = APIRouter(prefix="/api/games/{game_id}/deals", tags=["deals"])

ERRORS = {401: {"model": Problem, "description": "no token"},
          404: {"model": Problem, "description": "no such game, deal or photo for this token"},
          409: {"model": Problem, "description": "confirmed twice, game over, or the deal "
                "changed meanwhile (stale `version`)"},
          422: {"model": Problem, "description": "bad correction, or the layout breaks a rule"},
          428: {"model": Problem, "description": "a confirmed deal changes only with `version`"}}
PHOTO_ERRORS = {**ERRORS,
                413: {"model": Problem, "description": "photo over 25 MB or 50 megapixels"},
                415: {"model": Problem, "description": "not an image upload"},
                503: {"model": Problem, "description": "model not loaded yet"}}


def _scan_upload(request: Request, settings: Settings, upload: UploadFile, deal: Deal,
                 team: int | None) -> Scan:
    """Check, decode, scan and store an uploaded photo (nothing stored if any check fails)."""
    photos.check_content_type(upload.content_type)
    data = photos.read_limited(upload.file, settings.max_photo_bytes)
    detector = get_detector(request)
    with request.app.state.scan_slots:
        decoded = photos.decode(data, settings.max_photo_pixels, settings.max_photo_bytes,
                                photos.decode_long_side(detector))
        result = request.app.state.scan(decoded, detector)
        sha, ext = request.app.state.photo_store.put(data, decoded, settings.view_long_side)
    seq = max((s.seq for s in deal.scans), default=0) + 1
    return Scan(seq=seq, photo_sha256=sha, photo_ext=ext, width=decoded.width,
                height=decoded.height, team=team, result=result)


@router.post("", status_code=201, response_model=DealOut, responses=PHOTO_ERRORS)
def create_deal(request: Request, game: GameDep, session: SessionDep, settings: SettingsDep,
                photo: Annotated[UploadFile | None, File(description="photo of the table "
                                                         "(optional: enter the deal by hand)")] = None
                ) -> DealOut:
    """A new draft deal, read from a photo when one is sent."""
    from api import table as tables

    deal = service.new_deal(session, game, tables.empty_table(len(game.teams)))
    if photo is not None:
        scan = _scan_upload(request, settings, photo, deal, None)
        service.attach_scan(game, deal, scan, None, None)
    commit(session)
    return present.deal_out(game, deal)


@router.get("/{deal_id}", response_model=DealOut, responses=ERRORS)
def get_deal(game: GameDep, deal: DealDep) -> DealOut:
    """The deal: table, layout, score (or its problem) and the cards to check first."""
    return present.deal_out(game, deal)


@router.post("/{deal_id}/photos", response_model=DealOut, responses=PHOTO_ERRORS)
def rescan(request: Request, game: GameDep, deal: DealDep, session: SessionDep,
           settings: SettingsDep, photo: Annotated[UploadFile, File()],
           team: Annotated[int | None, Form(description="re-read only this team's side")] = None,
           from_team: Annotated[int | None, Form(description="which team of the new photo "
                                                 "that is (default: the same)")] = None
           ) -> DealOut:
    """Scan another photo of a draft: the whole table, or one team's side of it."""
    if deal.status != "draft":
        raise service.ServiceError(409, "the deal is confirmed; reopen it to scan again")
    scan = _scan_upload(request, settings, photo, deal, team)
    service.attach_scan(game, deal, scan, team, from_team)
    commit(session)
    return present.deal_out(game, deal)


def _scan_of(deal: Deal, seq: int) -> Scan:
    for scan in deal.scans:
        if scan.seq == seq:
            return scan
    raise service.ServiceError(404, f"no photo {seq} on deal {deal.id}")


@router.get("/{deal_id}/photos/{seq}", response_class=FileResponse, responses=ERRORS)
def photo_view(request: Request, deal: DealDep, seq: int) -> FileResponse:
    """The photo as a JPEG small enough for a phone."""
    scan = _scan_of(deal, seq)
    return FileResponse(request.app.state.photo_store.view(scan.photo_sha256),
                        media_type="image/jpeg")


@router.get("/{deal_id}/photos/{seq}/original", response_class=FileResponse, responses=ERRORS)
def photo_original(request: Request, deal: DealDep, seq: int) -> FileResponse:
    """The photo exactly as uploaded."""
    scan = _scan_of(deal, seq)
    media = {"jpg": "image/jpeg", "png": "image/png", "heic": "image/heic"}
    return FileResponse(request.app.state.photo_store.original(scan.photo_sha256, scan.photo_ext),
                        media_type=media.get(scan.photo_ext, "application/octet-stream"))


@router.get("/{deal_id}/photos/{seq}/annotated",
            responses={**ERRORS, 200: {"content": {"image/jpeg": {}},
                                       "description": "JPEG with each card boxed"}})
def photo_annotated(request: Request, deal: DealDep, seq: int) -> Response:
    """The photo with every card boxed and labelled as currently corrected."""
    scan = _scan_of(deal, seq)
    data = photos.annotated_jpeg(request.app.state.photo_store.view(scan.photo_sha256),
                                 (scan.width, scan.height), deal.table, scan.seq)
    return Response(data, media_type="image/jpeg")


@router.post("/{deal_id}/corrections", response_model=DealOut, responses=ERRORS)
def correct(game: GameDep, deal: DealDep, session: SessionDep, body: Correction) -> DealOut:
    """Apply one correction: set_card, delete, add, move, square, unsquare or check."""
    op = body.model_dump(exclude={"version"}, exclude_none=True)
    service.change_table(game, deal, [*deal.corrections, op], body.version)
    commit(session)
    return present.deal_out(game, deal)


@router.delete("/{deal_id}/corrections/last", response_model=DealOut, responses=ERRORS)
def undo_correction(game: GameDep, deal: DealDep, session: SessionDep,
                    version: Annotated[int | None, Query()] = None) -> DealOut:
    """Undo the last correction."""
    if not deal.corrections:
        raise service.ServiceError(409, "there is no correction to undo")
    service.change_table(game, deal, deal.corrections[:-1], version)
    commit(session)
    return present.deal_out(game, deal)


@router.put("/{deal_id}/outcome", response_model=DealOut, responses=ERRORS)
def set_outcome(game: GameDep, deal: DealDep, session: SessionDep, body: OutcomeIn) -> DealOut:
    """Who went out (concealed or not) and the cards (or points) left in each team's hands."""
    service.set_outcome(game, deal, [t.model_dump() for t in body.teams], body.version)
    commit(session)
    return present.deal_out(game, deal)


@router.put("/{deal_id}/layout", response_model=DealOut, responses=ERRORS)
def replace_layout(game: GameDep, deal: DealDep, session: SessionDep, body: LayoutIn) -> DealOut:
    """Replace the deal's cards and outcome with a whole layout (contract `teams`)."""
    service.replace_layout(game, deal, [t.model_dump(exclude_none=True) for t in body.teams],
                           body.version)
    commit(session)
    return present.deal_out(game, deal)


@router.post("/{deal_id}/confirm", response_model=DealOut, responses=ERRORS)
def confirm(game: GameDep, deal: DealDep, session: SessionDep,
            body: Versioned | None = None) -> DealOut:
    """Score the draft and count it in the totals (one transaction)."""
    service.confirm(game, deal, body.version if body else None)
    commit(session)
    return present.deal_out(game, deal)


@router.post("/{deal_id}/reopen", response_model=DealOut, responses=ERRORS)
def reopen(game: GameDep, deal: DealDep, session: SessionDep, body: Versioned) -> DealOut:
    """Undo a confirmation: the deal becomes a draft and the later totals follow."""
    service.reopen(game, deal, body.version)
    commit(session)
    return present.deal_out(game, deal)


@router.delete("/{deal_id}", status_code=204, responses=ERRORS)
def delete_deal(game: GameDep, deal: DealDep, session: SessionDep,
                version: Annotated[int | None, Query()] = None) -> Response:
    """Delete a deal (a confirmed one needs `?version=`); the later totals follow."""
    service.delete_deal(session, game, deal, version)
    commit(session)
    return Response(status_code=204)


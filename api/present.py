"""Games and deals as the API returns them (the response models of `api/schemas.py`)."""

from __future__ import annotations

from typing import Any

from api import service
from api import table as tables
from api.models import Deal, Game
from api.schemas import DealOut, DealSummary, GameOut, PhotoOut


def game_out(game: Game, token: str | None = None) -> GameOut:
    """A game with its totals and the summary of every deal."""
    state = service.game_state(game)
    deals = [DealSummary(
        id=d.id, number=d.number, status=d.status, version=d.version, created_at=d.created_at,
        confirmed_at=d.confirmed_at,
        deal_scores=[t["deal_score"] for t in d.score["teams"]] if d.score else None,
        totals_after=[t["total_after"] for t in d.score["teams"]] if d.score else None,
    ) for d in game.deals]
    return GameOut(id=game.id, token=token, rules=game.rules, target=game.rules["target"],
                   teams=state["teams"], game_over=state["game_over"],
                   winner=state["winner"], deals=deals)


def deal_out(game: Game, deal: Deal) -> DealOut:
    """A deal with the layout it makes and its score (preview for a draft) or problem."""
    layout = service.layout_for(game, deal)
    if deal.status == "confirmed" and deal.score:
        score: dict[str, Any] | None = deal.score
        problem = None
    else:
        score, problem = service.score_or_problem(layout)
    base = f"/api/games/{game.id}/deals/{deal.id}/photos"
    photos = [PhotoOut(seq=s.seq, sha256=s.photo_sha256, width=s.width, height=s.height,
                       team=s.team, view_url=f"{base}/{s.seq}",
                       annotated_url=f"{base}/{s.seq}/annotated",
                       original_url=f"{base}/{s.seq}/original") for s in deal.scans]
    return DealOut(
        id=deal.id, game_id=game.id, number=deal.number, status=deal.status,
        version=deal.version, created_at=deal.created_at, confirmed_at=deal.confirmed_at,
        photos=photos, table=deal.table, corrections=deal.corrections, outcome=deal.outcome,
        layout=layout, score=score, problem=problem, review=tables.review_cards(deal.table),
        scans=[{"seq": s.seq, "team": s.team, **s.result} for s in deal.scans],
    )

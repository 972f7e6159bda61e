"""The editable table of a deal: the cards the scanner read, as the players correct them.

A table is plain JSON so it can be stored, replayed and sent to the page as is:

    {"teams": [{"melds": [{"id": "m2", "cards": [CARD, ...], "squared": null,
                           "confidence": 0.62 | null, "checked": false}],
                "red_threes": [CARD, ...]}, ...],
     "unplaced": [CARD, ...],          # read on the photo but not counted (strays, piles)
     "next_id": 9}
    CARD = {"id": "c3", "card": "KH", "box": [x1, y1, x2, y2] | null,
            "confidence": 0.93 | null, "scan": 1 | null, "corrected": false}

A meld's `confidence` is the scanner's chance that it read the meld exactly (None for a
meld entered by hand or squared); one under `MELD_CHECK` is shown to the players to
count until a correction touches it or they mark it `checked` (the `check` correction).
A squared-up canasta is a meld whose `squared` is the contract's hand count
(`{"rank": "K", "naturals": 7, "wilds": ["2"]}`); its visible card(s) stay for the page.
Corrections are small operations (`set_card`, `delete`, `add`, `move`, `square`,
`unsquare`, `check`, `replace`) applied in order to the proposed table; ids of new cards come
from `next_id`, so replaying the same corrections gives the same table. Everything here
is pure: no database, no I/O.
"""

from __future__ import annotations

import copy
from typing import Any

from scanner.cards import CardError, parse_card
from scanner.reconstruct import CARD_CHECK, MELD_CHECK

Table = dict[str, Any]

LOW_CONFIDENCE = CARD_CHECK
"""Cards read with less confidence (the scanner's chance the card is there with that rank)
than this are shown to the players first."""


class CorrectionError(ValueError):
    """A correction that cannot apply (unknown card or meld, bad team, bad card token)."""


def normalize_card(token: object) -> str:
    """The contract's upper-case token of a card, or `CorrectionError` naming the token."""
    try:
        return parse_card(token).token
    except CardError as exc:
        raise CorrectionError(str(exc)) from exc


def card_rank(token: str) -> str:
    """Rank part of a token, with threes by colour: `KH` -> `K`, `3D` -> `3R`, `JK` -> `JK`."""
    t = token.upper()
    if t in ("JK", "JOKER"):
        return "JK"
    if t.startswith("3"):
        return "3R" if t[1:] in ("H", "D", "R") else "3B"
    return t[:-1] if len(t) > 1 and t[-1] in "SHDC" else t


def is_red_three(token: str) -> bool:
    """True for `3H`, `3D`, `3R`."""
    return card_rank(token) == "3R"


def empty_table(teams: int) -> Table:
    """A table with no cards (a deal entered by hand)."""
    return {"teams": [{"melds": [], "red_threes": []} for _ in range(teams)],
            "unplaced": [], "next_id": 1}


def _new_id(table: Table, prefix: str) -> str:
    n = table["next_id"]
    table["next_id"] = n + 1
    return f"{prefix}{n}"


def _new_card(table: Table, token: str, *, box: list[float] | None = None,
              confidence: float | None = None, scan: int | None = None,
              corrected: bool = False) -> dict[str, Any]:
    return {"id": _new_id(table, "c"), "card": token, "box": box, "confidence": confidence,
            "scan": scan, "corrected": corrected}


def _new_meld(table: Table, confidence: float | None = None) -> dict[str, Any]:
    return {"id": _new_id(table, "m"), "cards": [], "squared": None,
            "confidence": confidence, "checked": False}


def _union_box(boxes: list[list[float]]) -> list[float] | None:
    if not boxes:
        return None
    return [min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes)]


def _scan_cards(scan_json: dict[str, Any]) -> list[dict[str, Any]]:
    """The scan's physical cards with a box (union of their corners) and a rank."""
    corners = scan_json.get("corners") or []
    cards = []
    for item in scan_json.get("cards") or []:
        idx = [i for i in item.get("corners") or [] if isinstance(i, int) and 0 <= i < len(corners)]
        cards.append({
            "card": str(item.get("card", "")).upper(),
            "team": item.get("team"), "meld": item.get("meld"),
            "box": _union_box([corners[i]["box"] for i in idx]),
            "confidence": item.get("confidence"),
            "used": False,
        })
    return cards


def _take(pool: list[dict[str, Any]], team: int | None, meld: int | None,
          rank: str) -> dict[str, Any] | None:
    """First unused scanned card of that place and rank (to give a layout card its box)."""
    for c in pool:
        if not c["used"] and c["team"] == team and c["meld"] == meld and card_rank(c["card"]) == rank:
            c["used"] = True
            return c
    return None


def _team_from_scan(table: Table, scan_json: dict[str, Any], pool: list[dict[str, Any]],
                    scan_team: int, seq: int) -> dict[str, Any]:
    """One team's melds and red threes as read in a scan, boxes matched from its cards."""
    teams = (scan_json.get("layout") or {}).get("teams") or []
    layout = teams[scan_team] if scan_team < len(teams) else {}
    # the scan's meld details (optional), in the layout's order per team
    details = [d for d in scan_json.get("melds") or []
               if isinstance(d, dict) and d.get("team") == scan_team]
    out: dict[str, Any] = {"melds": [], "red_threes": []}
    for m, meld in enumerate(layout.get("melds") or []):
        confidence = details[m].get("confidence") if m < len(details) else None
        new = _new_meld(table, None if isinstance(meld, dict) or not isinstance(
            confidence, int | float) else float(confidence))
        if isinstance(meld, dict):  # a squared-up canasta: the scan counted it from its top card
            new["squared"] = copy.deepcopy(meld)
            for c in pool:
                if not c["used"] and c["team"] == scan_team and c["meld"] == m:
                    c["used"] = True
                    new["cards"].append(_new_card(table, c["card"], box=c["box"],
                                                  confidence=c["confidence"], scan=seq))
        else:
            for token in meld:
                token = str(token).upper()
                hit = _take(pool, scan_team, m, card_rank(token))
                new["cards"].append(_new_card(
                    table, hit["card"] if hit else token, box=hit["box"] if hit else None,
                    confidence=hit["confidence"] if hit else None, scan=seq))
        out["melds"].append(new)
    for _ in range(int(layout.get("red_threes") or 0)):
        hit = next((c for c in pool if not c["used"] and c["team"] == scan_team
                    and is_red_three(c["card"])), None)
        if hit:
            hit["used"] = True
        out["red_threes"].append(_new_card(
            table, hit["card"] if hit else "3R", box=hit["box"] if hit else None,
            confidence=hit["confidence"] if hit else None, scan=seq))
    return out


def table_from_scan(scan_json: dict[str, Any], seq: int, teams: int) -> Table:
    """The proposed table of a scan (`canasta-scan scan --json` output) for `teams` teams."""
    table = empty_table(teams)
    pool = _scan_cards(scan_json)
    for t in range(teams):
        table["teams"][t] = _team_from_scan(table, scan_json, pool, t, seq)
    for c in pool:
        if not c["used"]:
            table["unplaced"].append(_new_card(table, c["card"], box=c["box"],
                                               confidence=c["confidence"], scan=seq))
    return table


def merge_team_scan(table: Table, scan_json: dict[str, Any], seq: int, team: int,
                    from_team: int) -> Table:
    """`table` with team `team` replaced by what a second photo read as `from_team`."""
    table = copy.deepcopy(table)
    _check_team(table, team)
    pool = _scan_cards(scan_json)
    table["teams"][team] = _team_from_scan(table, scan_json, pool, from_team, seq)
    return table


def _check_team(table: Table, team: int) -> None:
    if not 0 <= team < len(table["teams"]):
        raise CorrectionError(f"no team {team} (teams are 0 to {len(table['teams']) - 1})")


def _find_card(table: Table, card_id: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The list holding the card and the card itself."""
    for team in table["teams"]:
        for meld in team["melds"]:
            for card in meld["cards"]:
                if card["id"] == card_id:
                    return meld["cards"], card
        for card in team["red_threes"]:
            if card["id"] == card_id:
                return team["red_threes"], card
    for card in table["unplaced"]:
        if card["id"] == card_id:
            return table["unplaced"], card
    raise CorrectionError(f"no card {card_id!r} on this deal")


def _meld_holding(table: Table, card_id: str) -> dict[str, Any] | None:
    """The meld a card is in (None: red threes or not placed)."""
    for team in table["teams"]:
        for meld in team["melds"]:
            if any(c["id"] == card_id for c in meld["cards"]):
                return meld
    return None


def _checked(*melds: dict[str, Any] | None) -> None:
    """The players have looked at these melds: they need no more counting."""
    for meld in melds:
        if meld is not None:
            meld["checked"] = True


def _find_meld(table: Table, meld_id: str) -> tuple[int, dict[str, Any]]:
    for t, team in enumerate(table["teams"]):
        for meld in team["melds"]:
            if meld["id"] == meld_id:
                return t, meld
    raise CorrectionError(f"no meld {meld_id!r} on this deal")


def _destination(table: Table, team: int | None, meld: str) -> list[dict[str, Any]]:
    """The card list a card goes to: a meld id, "new" (a new meld), "red_threes", "unplaced"."""
    if meld == "unplaced":
        return table["unplaced"]
    if meld in ("new", "red_threes"):
        if team is None:
            raise CorrectionError(f"say which team the card goes to (meld {meld!r})")
        _check_team(table, team)
        if meld == "red_threes":
            return table["teams"][team]["red_threes"]
        new = _new_meld(table)
        table["teams"][team]["melds"].append(new)
        return new["cards"]
    owner, found = _find_meld(table, meld)
    if team is not None and team != owner:
        raise CorrectionError(f"meld {meld!r} belongs to team {owner}, not team {team}")
    return found["cards"]


def _drop_empty_melds(table: Table) -> None:
    for team in table["teams"]:
        team["melds"] = [m for m in team["melds"] if m["cards"] or m["squared"]]


def _squared(rank: object, naturals: object, wilds: object) -> dict[str, Any]:
    """The contract's hand-counted canasta, with its tokens checked."""
    rank_token = normalize_card(rank)
    wild_tokens = [normalize_card(w) for w in (wilds or [])]
    if not isinstance(naturals, int) or isinstance(naturals, bool) or not 0 <= naturals <= 24:
        raise CorrectionError(f"naturals must be a count of cards, not {naturals!r}")
    return {"rank": card_rank(rank_token), "naturals": naturals, "wilds": wild_tokens}


def apply_correction(table: Table, op: dict[str, Any]) -> Table:
    """A new table with one correction applied (the input is not changed)."""
    table = copy.deepcopy(table)
    kind = op.get("op")
    if kind == "set_card":
        _, card = _find_card(table, op["card_id"])
        card["card"] = normalize_card(op["card"])
        card["corrected"] = True
        _checked(_meld_holding(table, card["id"]))
    elif kind == "delete":
        holder, card = _find_card(table, op["card_id"])
        _checked(_meld_holding(table, card["id"]))
        holder.remove(card)
    elif kind == "add":
        token = normalize_card(op["card"])
        meld = op.get("meld") or ("red_threes" if is_red_three(token) else "new")
        new = _new_card(table, token, corrected=True)
        _destination(table, op.get("team"), meld).append(new)
        _checked(_meld_holding(table, new["id"]))
    elif kind == "move":
        holder, card = _find_card(table, op["card_id"])
        source = _meld_holding(table, card["id"])
        target = _destination(table, op.get("team"), op.get("meld") or "new")
        holder.remove(card)
        card["corrected"] = True
        target.append(card)
        _checked(source, _meld_holding(table, card["id"]))
    elif kind == "square":
        meld_id = op.get("meld") or "new"
        if meld_id == "new":
            team = op.get("team")
            if team is None:
                raise CorrectionError("say which team the squared canasta belongs to")
            _check_team(table, team)
            meld = _new_meld(table)
            table["teams"][team]["melds"].append(meld)
        else:
            _, meld = _find_meld(table, meld_id)
        meld["squared"] = _squared(op.get("rank"), op.get("naturals"), op.get("wilds"))
        _checked(meld)
    elif kind == "unsquare":
        _, meld = _find_meld(table, op["meld"])
        meld["squared"] = None
        _checked(meld)
    elif kind == "check":
        _, meld = _find_meld(table, op["meld"])
        _checked(meld)
    elif kind == "replace":
        table = table_from_layout(op["teams"], len(table["teams"]), table["next_id"])
    else:
        raise CorrectionError(f"unknown correction {kind!r}")
    _drop_empty_melds(table)
    return table


def replay(proposed: Table, corrections: list[dict[str, Any]]) -> Table:
    """The proposed table with every correction applied in order."""
    table = proposed
    for op in corrections:
        table = apply_correction(table, op)
    return table


def table_from_layout(teams: list[dict[str, Any]], team_count: int, next_id: int = 1) -> Table:
    """A table (cards without boxes) from the contract's `teams` (melds and red threes)."""
    if len(teams) != team_count:
        raise CorrectionError(f"this game has {team_count} teams; the layout gives {len(teams)}")
    table = empty_table(team_count)
    table["next_id"] = next_id
    for t, team in enumerate(teams):
        for meld in team.get("melds") or []:
            new = _new_meld(table)
            if isinstance(meld, dict):
                new["squared"] = _squared(meld.get("rank"), meld.get("naturals"), meld.get("wilds"))
            elif isinstance(meld, list):
                new["cards"] = [_new_card(table, normalize_card(tok), corrected=True)
                                for tok in meld]
            else:
                raise CorrectionError(f"team {t}: a meld is a list of cards or a squared "
                                      f"canasta, not {meld!r}")
            table["teams"][t]["melds"].append(new)
        red = team.get("red_threes") or 0
        if not isinstance(red, int) or isinstance(red, bool) or not 0 <= red <= 8:
            raise CorrectionError(f"team {t}: red_threes must be a count, not {red!r}")
        table["teams"][t]["red_threes"] = [_new_card(table, "3R", corrected=True)
                                           for _ in range(red)]
    _drop_empty_melds(table)
    return table


def layout_teams(table: Table) -> list[dict[str, Any]]:
    """Each team's `melds` and `red_threes` in the contract's layout format."""
    out = []
    for team in table["teams"]:
        melds: list[Any] = []
        for meld in team["melds"]:
            if meld["squared"]:
                melds.append(copy.deepcopy(meld["squared"]))
            elif meld["cards"]:
                melds.append([c["card"] for c in meld["cards"]])
        out.append({"melds": melds, "red_threes": len(team["red_threes"])})
    return out


def review_cards(table: Table) -> list[dict[str, Any]]:
    """What the players should look at first: the melds the scanner may have miscounted
    (least likely first), the least confident reads, then the cards placed in no meld.
    Each item names a card to select (a meld's first card for a meld) and its `kind`:
    `count_meld`, `low_confidence` or `unplaced`."""
    to_count = []
    for t, team in enumerate(table["teams"]):
        for meld in team["melds"]:
            conf = meld.get("confidence")
            if (conf is not None and conf < MELD_CHECK and not meld.get("checked")
                    and not meld["squared"] and meld["cards"]):
                first = meld["cards"][0]
                to_count.append({"card_id": first["id"], "card": card_rank(first["card"]),
                                 "team": t, "meld": meld["id"], "confidence": conf,
                                 "kind": "count_meld",
                                 "reason": f"count this meld ({len(meld['cards'])} cards read)"})
    to_count.sort(key=lambda r: r["confidence"])
    items = []
    for t, team in enumerate(table["teams"]):
        for meld in team["melds"]:
            for card in meld["cards"]:
                items.append((card, t, meld["id"]))
        for card in team["red_threes"]:
            items.append((card, t, "red_threes"))
    low = [{"card_id": c["id"], "card": c["card"], "team": t, "meld": m,
            "confidence": c["confidence"], "kind": "low_confidence", "reason": "low confidence"}
           for c, t, m in items
           if not c["corrected"] and c["confidence"] is not None and c["confidence"] < LOW_CONFIDENCE]
    low.sort(key=lambda r: r["confidence"])
    unplaced = [{"card_id": c["id"], "card": c["card"], "team": None, "meld": "unplaced",
                 "confidence": c["confidence"], "kind": "unplaced", "reason": "not in a meld"}
                for c in table["unplaced"]]
    return to_count + low + unplaced

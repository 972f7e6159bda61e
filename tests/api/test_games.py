"""Games and deals through the API: access, corrections, confirming, totals, edits, undo.

Every test runs on SQLite and (marked `postgres`) on the PostgreSQL of DATABASE_URL_TEST.
"""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import GameClient, make_game, photo_bytes, reading_with_unsure_kings
from sqlalchemy import select

from api.models import Deal, Game
from scanner.scoring import score_layout_json


def cards_of(deal: dict[str, Any], team: int) -> list[list[str]]:
    return [[c["card"] for c in m["cards"]] for m in deal["table"]["teams"][team]["melds"]]


def seven_kings(game: GameClient) -> dict[str, Any]:
    """A draft from the photo, corrected to: Us 7 kings + red three, went out; Them 9 9 JK, Q."""
    deal = game.new_deal(photo_bytes())
    meld = deal["table"]["teams"][0]["melds"][0]["id"]
    for _ in range(4):
        r = game.correct(deal, op="add", card="K", team=0, meld=meld)
        assert r.status_code == 200, r.text
    queen = deal["table"]["unplaced"][0]["id"]
    assert game.correct(deal, op="delete", card_id=queen).status_code == 200
    r = game.put(f"/deals/{deal['id']}/outcome",
                 json={"teams": [{"went_out": True}, {"hand": ["Q"]}]})
    assert r.status_code == 200, r.text
    return r.json()


def confirm(game: GameClient, deal: dict[str, Any], **body: Any) -> Any:
    return game.post(f"/deals/{deal['id']}/confirm", json=body or None)


# ---- games and access ---------------------------------------------------------------


def test_create_game_returns_token_once_and_stores_only_its_hash(client, settings) -> None:
    game = make_game(client, teams=[{"name": "Us", "starting_total": 1500},
                                    {"name": "Them", "starting_total": -20}])
    token = game.game["token"]
    assert len(token) >= 40
    state = game.state()
    assert state["token"] is None
    assert [t["total"] for t in state["teams"]] == [1500, -20]
    # The minimum first meld follows the resumed totals (90 from 1,500; 15 below zero).
    assert [t["next_minimum_meld"] for t in state["teams"]] == [90, 15]
    with client.app.state.sessionmaker() as session:
        stored = session.scalars(select(Game)).one()
        assert token not in stored.token_hash and len(stored.token_hash) == 64


@pytest.mark.parametrize("body, words", [
    ({"teams": [{"name": "Us"}]}, "teams"),
    ({"teams": [{"name": "Us"}, {"name": "Us"}]}, "same name"),
    ({"players": 5, "teams": [{"name": "A"}, {"name": "B"}]}, "players"),
    ({"players": 4, "teams": [{"name": "A"}, {"name": "B"}, {"name": "C"}]}, "2 teams"),
    ({"target": 0, "teams": [{"name": "A"}, {"name": "B"}]}, "target"),
    ({"rules": {"taget": 6000}, "teams": [{"name": "A"}, {"name": "B"}]}, "did you mean 'target'"),
    ({"teams": [{"name": ""}, {"name": "B"}]}, "name"),
])
def test_bad_game_is_refused(client, body, words) -> None:
    r = client.post("/api/games", json=body)
    assert r.status_code == 422
    assert words in r.json()["detail"]
    assert client.get("/api/games/1", headers={"Authorization": "Bearer x"}).status_code == 404


def test_token_rules(client, game) -> None:
    other = make_game(client)
    deal = game.new_deal()
    # No token: 401. Another game's token: 404, like an unknown game.
    assert client.get(game.url()).status_code == 401
    assert client.get(game.url(), headers={"Authorization": "Bearer "}).status_code == 401
    assert client.get(game.url(), headers=other.headers).status_code == 404
    assert client.get(game.url(f"/deals/{deal['id']}"), headers=other.headers).status_code == 404
    assert client.get(game.url(), headers={"Authorization": "Bearer wrong"}).status_code == 404
    assert client.get("/api/games/999", headers=game.headers).status_code == 404
    # A deal of another game, asked with that game's own token, is not found either.
    assert other.get(f"/deals/{deal['id']}").status_code == 404
    assert game.get("/deals/999").status_code == 404
    r = client.post(game.url(f"/deals/{deal['id']}/confirm"), headers=other.headers)
    assert r.status_code == 404
    assert game.get(f"/deals/{deal['id']}").json()["status"] == "draft"


# ---- a deal from photo to totals -----------------------------------------------------


def test_photo_reading_becomes_an_editable_table(game, scan_recorder) -> None:
    deal = game.new_deal(photo_bytes())
    assert len(scan_recorder.photos) == 1
    assert cards_of(deal, 0) == [["K", "K", "K"]] and cards_of(deal, 1) == [["9", "9", "JK"]]
    kings = deal["table"]["teams"][0]["melds"][0]["cards"]
    assert kings[0]["box"] == [100, 300, 120, 330] and kings[0]["scan"] == 1
    assert [c["card"] for c in deal["table"]["teams"][0]["red_threes"]] == ["3R"]
    assert [c["card"] for c in deal["table"]["unplaced"]] == ["Q"]
    assert deal["layout"]["teams"][0]["melds"] == [["K", "K", "K"]]
    assert deal["layout"]["teams"][0]["red_threes"] == 1
    # The least confident reading comes first, then what is not in a meld.
    assert [(r["card"], r["reason"]) for r in deal["review"]] == [
        ("K", "low confidence"), ("Q", "not in a meld")]
    assert deal["photos"][0]["width"] == 640


def test_correct_card_by_card(game) -> None:
    deal = game.new_deal(photo_bytes())
    kings = deal["table"]["teams"][0]["melds"][0]
    nines = deal["table"]["teams"][1]["melds"][0]
    low_king = kings["cards"][2]["id"]

    r = game.correct(deal, op="set_card", card_id=low_king, card="ah")
    assert r.status_code == 200 and cards_of(r.json(), 0) == [["K", "K", "AH"]]
    assert r.json()["review"][0]["card"] == "Q"  # a corrected card needs no more review
    r = game.correct(deal, op="move", card_id=low_king, team=1, meld="new")
    assert cards_of(r.json(), 0) == [["K", "K"]]
    assert cards_of(r.json(), 1) == [["9", "9", "JK"], ["AH"]]
    r = game.correct(deal, op="move", card_id=low_king, team=1, meld=nines["id"])
    assert cards_of(r.json(), 1) == [["9", "9", "JK", "AH"]]  # the empty meld is gone
    r = game.correct(deal, op="add", card="3d", team=1)
    assert [c["card"] for c in r.json()["table"]["teams"][1]["red_threes"]] == ["3D"]
    assert r.json()["layout"]["teams"][1]["red_threes"] == 1
    r = game.correct(deal, op="delete", card_id=kings["cards"][0]["id"])
    assert cards_of(r.json(), 0) == [["K"]]
    r = game.correct(deal, op="square", team=0, rank="Q", naturals=6, wilds=["2"])
    assert r.json()["layout"]["teams"][0]["melds"] == [["K"], {"rank": "Q", "naturals": 6,
                                                               "wilds": ["2"]}]
    squared = r.json()["table"]["teams"][0]["melds"][1]["id"]
    r = game.correct(deal, op="unsquare", meld=squared)
    assert r.json()["layout"]["teams"][0]["melds"] == [["K"]]
    assert len(r.json()["corrections"]) == 7
    # Undo the last correction: the squared canasta is back.
    r = game.delete(f"/deals/{deal['id']}/corrections/last")
    assert r.status_code == 200 and len(r.json()["corrections"]) == 6
    assert r.json()["layout"]["teams"][0]["melds"][1] == {"rank": "Q", "naturals": 6,
                                                          "wilds": ["2"]}
    # The draft shows why it does not score yet: the rule, named.
    assert r.json()["score"] is None and r.json()["problem"]["rule"]


@pytest.mark.parametrize("op, words", [
    ({"op": "set_card", "card_id": "c999", "card": "K"}, "c999"),
    ({"op": "set_card", "card_id": "c2", "card": "3"}, "'3'"),
    ({"op": "set_card", "card_id": "c2", "card": "ZZ"}, "'ZZ'"),
    ({"op": "add", "card": "K", "team": 5}, "team 5"),
    ({"op": "add", "card": "K", "team": 0, "meld": "m999"}, "m999"),
    ({"op": "move", "card_id": "c2", "team": 1, "meld": "m1"}, "team"),
    ({"op": "flip", "card_id": "c2"}, "op"),
    ({"op": "square", "team": 0, "rank": "K", "naturals": -1}, "naturals"),
])
def test_bad_correction_changes_nothing(game, op, words) -> None:
    deal = game.new_deal(photo_bytes())
    r = game.correct(deal, **op)
    assert r.status_code == 422, r.text
    assert words in r.json()["detail"]
    after = game.get(f"/deals/{deal['id']}").json()
    assert after["table"] == deal["table"] and after["version"] == deal["version"]


def test_confirm_scores_and_updates_totals(game) -> None:
    deal = seven_kings(game)
    expected = score_layout_json({"teams": [
        {"name": "Us", "melds": [["K"] * 7], "red_threes": 1, "went_out": True},
        {"name": "Them", "melds": [["9", "9", "JK"]], "hand": ["Q"]}]})
    assert deal["score"] == expected  # the draft's preview
    r = confirm(game, deal)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "confirmed" and r.json()["score"] == expected
    state = game.state()
    # 7 kings 70 + natural canasta 500 + red three 100 + going out 100; 9 9 JK 70 - Q 10.
    assert [t["total"] for t in state["teams"]] == [770, 60]
    assert state["deals"][0]["deal_scores"] == [770, 60]
    # Times read back from either database are UTC with the zone said.
    assert state["deals"][0]["confirmed_at"].endswith("Z")
    assert state["deals"][0]["created_at"] < state["deals"][0]["confirmed_at"]
    assert state["game_over"] is False and state["winner"] is None

    # Confirming twice is refused and changes nothing.
    r = confirm(game, deal)
    assert r.status_code == 409 and "already confirmed" in r.json()["detail"]
    assert [t["total"] for t in game.state()["teams"]] == [770, 60]


def test_confirm_refuses_a_deal_that_breaks_a_rule(game) -> None:
    deal = game.new_deal(photo_bytes())
    game.put(f"/deals/{deal['id']}/outcome", json={"teams": [{"went_out": True}, {}]})
    r = confirm(game, deal)
    assert r.status_code == 422
    assert r.json()["rule"] == "going-out-needs-canasta"
    assert "canasta" in r.json()["detail"]
    assert game.get(f"/deals/{deal['id']}").json()["status"] == "draft"
    assert [t["total"] for t in game.state()["teams"]] == [0, 0]


def test_outcome_hand_as_cards_or_points(game) -> None:
    deal = game.new_deal(photo_bytes())
    url = f"/deals/{deal['id']}/outcome"
    r = game.put(url, json={"teams": [{}, {"hand_points": 35}]})
    assert r.status_code == 200 and r.json()["layout"]["teams"][1]["hand_points"] == 35
    assert r.json()["score"]["teams"][1]["hand_penalty"] == -35
    r = game.put(url, json={"teams": [{}, {"hand": ["Q", "4"], "hand_points": 35}]})
    assert r.status_code == 422 and "not both" in r.json()["detail"]
    r = game.put(url, json={"teams": [{}, {"hand": ["Q", "1"]}]})
    assert r.status_code == 422 and "'1'" in r.json()["detail"]
    r = game.put(url, json={"teams": [{}]})
    assert r.status_code == 422
    assert game.get(f"/deals/{deal['id']}").json()["layout"]["teams"][1]["hand_points"] == 35


def test_confirm_is_one_transaction(game, monkeypatch) -> None:
    """A crash after the deal and totals were written but before commit changes nothing."""
    first = seven_kings(game)
    assert confirm(game, first).status_code == 200
    second = seven_kings(game)
    from sqlalchemy.orm import object_session

    import api.service as service

    real_rescore = service.rescore_game
    written = []

    def rescore_then_crash(game_obj):
        real_rescore(game_obj)
        object_session(game_obj).flush()  # the UPDATEs reach the database...
        written.append([d.status for d in game_obj.deals])
        raise RuntimeError("power cut")  # ...and the process dies before the commit

    monkeypatch.setattr(service, "rescore_game", rescore_then_crash)
    r = confirm(game, second)
    assert r.status_code == 500 and written == [["confirmed", "confirmed"]]
    monkeypatch.undo()
    after = game.get(f"/deals/{second['id']}").json()
    assert after["status"] == "draft" and after["version"] == second["version"]
    assert after["score"] is not None and after["confirmed_at"] is None
    state = game.state()
    assert [t["total"] for t in state["teams"]] == [770, 60]
    assert [d["status"] for d in state["deals"]] == ["confirmed", "draft"]
    # Once the power is back, the same draft confirms.
    assert confirm(game, second).status_code == 200
    assert [t["total"] for t in game.state()["teams"]] == [1540, 120]


def test_edit_and_undo_confirmed_deal_and_later_totals_follow(game) -> None:
    d1 = seven_kings(game)
    d1 = confirm(game, d1).json()
    d2 = seven_kings(game)
    d2 = confirm(game, d2).json()
    assert [t["total"] for t in game.state()["teams"]] == [1540, 120]
    assert d2["score"]["teams"][0]["total_after"] == 1540
    assert d2["score"]["teams"][0]["next_minimum_meld"] == 90

    # Deal 1 had a fourth red three on Them's side: change it, with its version.
    r = game.correct(d1, op="add", card="3H", team=1, version=d1["version"])
    assert r.status_code == 200, r.text
    d1 = r.json()
    assert d1["score"]["teams"][1]["red_three_bonus"] == 100
    state = game.state()
    assert [t["total"] for t in state["teams"]] == [1540, 220]
    assert state["deals"][1]["totals_after"] == [1540, 220]  # the later deal followed
    later = game.get(f"/deals/{d2['id']}").json()
    assert later["score"]["teams"][1]["total_after"] == 220
    assert later["layout"]["teams"][1]["total_before"] == 160

    # Undo deal 1 (back to a draft): deal 2 is counted from the start.
    r = game.post(f"/deals/{d1['id']}/reopen", json={"version": d1["version"]})
    assert r.status_code == 200 and r.json()["status"] == "draft"
    assert [t["total"] for t in game.state()["teams"]] == [770, 60]
    # Confirm it again, then delete deal 2.
    d1 = confirm(game, r.json()).json()
    assert [t["total"] for t in game.state()["teams"]] == [1540, 220]
    d2 = game.get(f"/deals/{d2['id']}").json()
    assert game.delete(f"/deals/{d2['id']}").status_code == 428  # no version given
    r = game.delete(f"/deals/{d2['id']}", params={"version": d2["version"]})
    assert r.status_code == 204
    assert [t["total"] for t in game.state()["teams"]] == [770, 160]
    assert game.get(f"/deals/{d2['id']}").status_code == 404


def test_stale_edit_of_a_confirmed_deal_is_a_conflict(game) -> None:
    deal = confirm(game, seven_kings(game)).json()
    version = deal["version"]
    meld = deal["table"]["teams"][0]["melds"][0]["id"]
    # Two players edit the same confirmed deal from the same version: the first wins.
    r1 = game.correct(deal, op="add", card="K", team=0, meld=meld, version=version)
    assert r1.status_code == 200, r1.text
    assert r1.json()["version"] > version and r1.json()["score"]["teams"][0]["card_points"] == 80
    before = game.state()
    r2 = game.correct(deal, op="add", card="K", team=0, meld=meld, version=version)
    assert r2.status_code == 409 and r2.json()["version"] == r1.json()["version"]
    # A confirmed deal changes only with a version.
    r3 = game.correct(deal, op="add", card="K", team=0, meld=meld)
    assert r3.status_code == 428
    r4 = game.put(f"/deals/{deal['id']}/outcome", json={"teams": [{}, {}], "version": version})
    assert r4.status_code == 409
    assert game.state() == before
    # An edit that breaks a rule is refused as a whole (an ace among the kings).
    fresh = game.get(f"/deals/{deal['id']}").json()
    king = fresh["table"]["teams"][0]["melds"][0]["cards"][0]["id"]
    r5 = game.correct(fresh, op="set_card", card_id=king, card="A", version=fresh["version"])
    assert r5.status_code == 422 and r5.json()["rule"]
    assert game.get(f"/deals/{deal['id']}").json() == fresh
    assert game.state() == before


def test_lost_race_between_sessions_is_a_conflict(client, game) -> None:
    """Two writers load the same version; the second commit fails (optimistic lock)."""
    from api.deps import commit
    from api.service import ServiceError

    deal = game.new_deal(photo_bytes())
    maker = client.app.state.sessionmaker
    with maker() as first, maker() as second:
        a = first.get(Deal, deal["id"])
        b = second.get(Deal, deal["id"])
        a.outcome = {"teams": [{"went_out": True}, {}]}
        commit(first)
        b.outcome = {"teams": [{}, {"hand_points": 50}]}
        with pytest.raises(ServiceError) as err:
            commit(second)
        assert err.value.status == 409
    stored = game.get(f"/deals/{deal['id']}").json()
    assert stored["outcome"]["teams"][0]["went_out"] is True
    assert stored["version"] == deal["version"] + 1


def test_game_ends_at_target_with_winner(client) -> None:
    game = make_game(client, teams=[{"name": "Us", "starting_total": 4300},
                                    {"name": "Them", "starting_total": 4900}])
    deal = confirm(game, seven_kings(game)).json()
    state = game.state()
    assert [t["total"] for t in state["teams"]] == [5070, 4960]
    assert state["game_over"] is True and state["winner"] == "Us"
    assert deal["score"]["winner"] == "Us"
    r = game.post("/deals")
    assert r.status_code == 409 and "over" in r.json()["detail"]
    # Undoing the last deal reopens the game.
    game.post(f"/deals/{deal['id']}/reopen", json={"version": deal["version"]})
    assert game.state()["game_over"] is False


def test_replace_whole_layout_and_list_deals(game) -> None:
    deal = game.new_deal()
    layout = {"teams": [
        {"melds": [{"rank": "A", "naturals": 5, "wilds": ["JK", "2"]}, ["5", "5", "5"]],
         "red_threes": 2, "went_out": True, "concealed": True},
        {"melds": [], "hand": ["A", "JK"]}]}
    r = game.put(f"/deals/{deal['id']}/layout", json=layout)
    assert r.status_code == 200, r.text
    expected = score_layout_json({"teams": [
        {"name": "Us", **layout["teams"][0]}, {"name": "Them", **layout["teams"][1]}]})
    assert r.json()["score"] == expected
    assert confirm(game, r.json()).status_code == 200
    deals = game.get("/deals").json()
    assert [(d["number"], d["status"]) for d in deals] == [(1, "confirmed")]
    assert deals[0]["deal_scores"] == [t["deal_score"] for t in expected["teams"]]


def test_two_phones_confirm_the_same_draft_at_once(client, game) -> None:
    """Two simultaneous confirms: one counts the deal, the other gets 409; counted once."""
    import threading

    from fastapi.testclient import TestClient

    deal = seven_kings(game)
    barrier = threading.Barrier(2)
    answers: list[int] = []

    def phone() -> None:
        own = TestClient(client.app)  # each phone its own connection (no second lifespan)
        barrier.wait()
        r = own.post(game.url(f"/deals/{deal['id']}/confirm"), headers=game.headers,
                     json={"version": deal["version"]})
        answers.append(r.status_code)

    threads = [threading.Thread(target=phone) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(answers) == [200, 409]
    state = game.state()
    assert [t["total"] for t in state["teams"]] == [770, 60]
    assert [d["status"] for d in state["deals"]] == ["confirmed"]


def test_replace_the_layout_of_a_confirmed_deal(game) -> None:
    first = confirm(game, seven_kings(game)).json()
    second = confirm(game, seven_kings(game)).json()
    layout = {"version": first["version"], "teams": [
        {"melds": [["A"] * 7], "red_threes": ["3H", "3D"], "went_out": True},
        {"melds": [["9", "9", "JK"]], "hand_points": 40}]}
    r = game.put(f"/deals/{first['id']}/layout", json=layout)
    assert r.status_code == 200, r.text
    # 7 aces 140 + 500 + red threes 200 + going out 100; 9 9 JK 70 - 40.
    assert [t["deal_score"] for t in r.json()["score"]["teams"]] == [940, 30]
    assert [t["total"] for t in game.state()["teams"]] == [940 + 770, 30 + 60]
    later = game.get(f"/deals/{second['id']}").json()
    assert [t["total_before"] for t in later["layout"]["teams"]] == [940, 30]
    # The same change again, from the old version, is a conflict.
    r = game.put(f"/deals/{first['id']}/layout", json=layout)
    assert r.status_code == 409


def test_six_players_in_three_partnerships(client) -> None:
    game = make_game(client, players=6, teams=[{"name": "A"}, {"name": "B"}, {"name": "C"}])
    deal = game.new_deal()
    assert len(deal["table"]["teams"]) == 3
    layout = {"teams": [{"melds": [["Q"] * 7, ["5"] * 7], "went_out": True},
                        {"melds": [["J", "J", "J"]], "hand": ["K"]},
                        {"melds": [], "hand_points": 60}]}
    r = game.put(f"/deals/{deal['id']}/layout", json=layout)
    assert r.status_code == 200, r.text
    assert confirm(game, r.json()).status_code == 200
    expected = score_layout_json({"rules": {"players": 6}, "teams": [
        {"name": n, **t} for n, t in zip("ABC", layout["teams"], strict=True)]})
    assert [t["total"] for t in game.state()["teams"]] == [
        t["total_after"] for t in expected["teams"]]


def test_a_meld_the_scanner_may_have_miscounted_is_shown_first_until_counted(
        game, scan_recorder) -> None:
    scan_recorder.reading = reading_with_unsure_kings()
    deal = game.new_deal(photo_bytes())
    kings, nines = deal["table"]["teams"][0]["melds"][0], deal["table"]["teams"][1]["melds"][0]
    assert kings["confidence"] == 0.40 and nines["confidence"] == 0.97
    assert [(r["kind"], r["meld"]) for r in deal["review"]] == [
        ("count_meld", kings["id"]), ("low_confidence", kings["id"]), ("unplaced", "unplaced")]
    assert deal["review"][0]["card_id"] == kings["cards"][0]["id"]
    # Counted and right as read: it leaves the list, and the layout is unchanged.
    r = game.correct(deal, op="check", meld=kings["id"])
    assert r.status_code == 200, r.text
    assert [x["kind"] for x in r.json()["review"]] == ["low_confidence", "unplaced"]
    assert r.json()["layout"] == deal["layout"]
    # Undone, it is back.
    r = game.delete(f"/deals/{deal['id']}/corrections/last")
    assert r.json()["review"][0]["kind"] == "count_meld"


@pytest.mark.parametrize("op", ["add", "delete", "move_out"])
def test_a_correction_to_an_unsure_meld_counts_as_counting_it(game, scan_recorder, op) -> None:
    scan_recorder.reading = reading_with_unsure_kings()
    deal = game.new_deal(photo_bytes())
    kings = deal["table"]["teams"][0]["melds"][0]
    first = kings["cards"][0]["id"]
    change = {"add": {"op": "add", "card": "K", "team": 0, "meld": kings["id"]},
              "delete": {"op": "delete", "card_id": first},
              "move_out": {"op": "move", "card_id": first, "meld": "unplaced"}}[op]
    r = game.correct(deal, **change)
    assert r.status_code == 200, r.text
    assert "count_meld" not in [x["kind"] for x in r.json()["review"]]


def test_checking_a_meld_that_is_not_there_changes_nothing(game, scan_recorder) -> None:
    scan_recorder.reading = reading_with_unsure_kings()
    deal = game.new_deal(photo_bytes())
    r = game.correct(deal, op="check", meld="m999")
    assert r.status_code == 422 and "m999" in r.json()["detail"]
    after = game.get(f"/deals/{deal['id']}").json()
    assert after["table"] == deal["table"] and after["review"] == deal["review"]

"""Deal scoring: the seed texts' worked examples, game arithmetic, and rule invariants.

The property tests build legal layouts by dealing from a counted pack, so every layout
they score is one a real table could show.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scanner.cards import NATURAL_RANKS, parse_card
from scanner.deal import DealLayout, RuleViolation
from scanner.scoring import score_deal, score_layout_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
K7 = ["K"] * 7


def team_score(us: dict, them: dict | None = None, rules: dict | None = None, index: int = 0) -> dict:
    data: dict = {"teams": [{"name": "Us", **us}, {"name": "Them", **(them or {})}]}
    if rules is not None:
        data["rules"] = rules
    return score_layout_json(data)["teams"][index]


# --- worked examples from the seed texts and the contract -----------------------------------


def test_contract_example_scores_exactly_as_the_contract_prints():
    layout = json.loads((FIXTURES / "contract_example.json").read_text())
    expected = json.loads((FIXTURES / "contract_example.score.json").read_text())
    assert score_layout_json(layout) == expected


def test_seven_kings_in_a_natural_canasta_are_570():
    # canasta-rules-classic: "500 for the bonus and 70 for the kings, 570 in all".
    score = team_score({"melds": [K7]})
    assert (score["card_points"], score["canasta_bonus"], score["deal_score"]) == (70, 500, 570)
    assert (score["natural_canastas"], score["mixed_canastas"]) == (1, 0)


def test_kitchen_table_example():
    # canasta-kitchen-table: a mixed canasta of kings, three aces and two red threes, going
    # out: 300 for the canasta, aces 60, red threes 200, going out 100, plus the other cards
    # on the table (six kings and a two: 80), minus nothing in hand.
    score = team_score({"melds": [["K"] * 6 + ["2"], ["A", "A", "A"]], "red_threes": 2, "went_out": True})
    assert score["canasta_bonus"] == 300
    assert score["red_three_bonus"] == 200
    assert score["going_out_bonus"] == 100
    assert score["hand_penalty"] == 0
    assert score["card_points"] == 60 + 80
    assert score["deal_score"] == 300 + 60 + 200 + 100 + 80
    assert (score["natural_canastas"], score["mixed_canastas"]) == (0, 1)


def test_wild_added_to_a_natural_canasta_drops_its_bonus_to_300():
    # canasta-rules-classic: "its bonus drops from 500 to 300".
    natural = team_score({"melds": [K7]})
    mixed = team_score({"melds": [K7 + ["2"]]})
    assert (natural["canasta_bonus"], mixed["canasta_bonus"]) == (500, 300)
    assert mixed["deal_score"] - natural["deal_score"] == -200 + 20


def test_mixed_canasta_with_three_wilds():
    score = team_score({"melds": [["Q"] * 4 + ["JK", "2", "2"]]})
    assert (score["card_points"], score["canasta_bonus"]) == (40 + 90, 300)


def test_a_canasta_has_at_least_four_natural_cards():
    # canasta-score-app: "A seven-card canasta needs at least four natural cards."
    score = team_score({"melds": [["9"] * 4 + ["2", "2", "JK"]], "went_out": True})
    assert (score["mixed_canastas"], score["canasta_bonus"], score["card_points"]) == (1, 300, 130)
    with pytest.raises(RuleViolation) as err:
        team_score({"melds": [["9"] * 3 + ["2", "2", "2", "JK"]]})
    assert err.value.rule == "meld-max-wilds"


def test_natural_cards_added_to_a_canasta_only_add_their_points():
    assert team_score({"melds": [["K"] * 8]})["deal_score"] == 580


def test_red_threes_score_100_each_and_800_for_all_four():
    melded = {"melds": [["4", "4", "4"]]}
    assert [team_score({**melded, "red_threes": n})["red_three_bonus"] for n in range(5)] == [
        0, 100, 200, 300, 800,
    ]


def test_red_threes_count_against_a_team_that_melded_nothing():
    assert [team_score({"red_threes": n})["red_three_bonus"] for n in range(5)] == [
        0, -100, -200, -300, -800,
    ]
    score = team_score({"red_threes": 2, "hand": ["K", "7"]})
    assert score["deal_score"] == -200 - 15


def test_red_threes_may_be_listed_as_cards():
    assert team_score({"melds": [["4", "4", "4"]], "red_threes": ["3H", "3d"]})["red_three_bonus"] == 200


def test_six_player_red_threes():
    # Three decks: up to four red threes are 100 each; five are 1,000 and six 1,200.
    rules = {"players": 6}
    melded = {"melds": [["4", "4", "4"]]}
    got = [team_score({**melded, "red_threes": n}, rules=rules)["red_three_bonus"] for n in (4, 5, 6)]
    assert got == [400, 1000, 1200]


def test_going_out_earns_100_and_200_concealed():
    # canasta-score-app: "add 100 for going out (another 100 if you had never previously
    # melded and go out in one turn)"; the contract reports both in going_out_bonus.
    assert team_score({"melds": [K7], "went_out": True})["going_out_bonus"] == 100
    concealed = team_score({"melds": [K7], "went_out": True, "concealed": True})
    assert concealed["going_out_bonus"] == 200
    assert concealed["deal_score"] == 570 + 200


def test_the_partner_of_the_player_who_went_out_still_pays_for_the_hand():
    score = team_score({"melds": [K7], "went_out": True, "hand": ["A", "JK", "5"]})
    assert score["hand_penalty"] == -75
    assert score["deal_score"] == 570 + 100 - 75


def test_hand_penalty_covers_every_card_value():
    hand = ["JK", "A", "2", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3B"]
    assert team_score({}, {"hand": hand}, index=1)["hand_penalty"] == -(50 + 20 + 20 + 60 + 20 + 5)


def test_squared_up_canasta_scores_like_its_cards():
    listed = team_score({"melds": [K7 + ["2"]], "went_out": True})
    squared = team_score({"melds": [{"rank": "K", "naturals": 7, "wilds": ["2"]}], "went_out": True})
    assert listed == squared
    natural = team_score({"melds": [{"rank": "K", "naturals": 7}]})
    assert natural["deal_score"] == 570


def test_hand_points_score_like_the_hand():
    cards = team_score({"melds": [K7]}, {"hand": ["Q", "4", "2"]}, index=1)
    points = team_score({"melds": [K7]}, {"hand_points": 35}, index=1)
    assert cards == points
    assert points["hand_penalty"] == -35


def test_scoring_is_case_insensitive_and_suits_do_not_matter():
    lower = team_score({"melds": [["kh", "ks", "kd", "kc", "k", "k", "joker"]], "hand": ["qs", "3c"]})
    upper = team_score({"melds": [["K", "K", "K", "K", "K", "K", "JK"]], "hand": ["Q", "3B"]})
    assert lower == upper


# --- game arithmetic ------------------------------------------------------------------------


def test_minimum_first_meld_follows_the_total_after_the_deal():
    # The deal scores 130 (three kings, one red three); total_before picks the band edge.
    cases = {-135: 15, -130: 50, 1365: 50, 1370: 90, 2865: 90, 2870: 120, 9000: 120}
    for before, minimum in cases.items():
        score = team_score({"melds": [["K", "K", "K"]], "red_threes": 1, "total_before": before})
        assert score["total_after"] == before + 130
        assert score["next_minimum_meld"] == minimum, before


def test_totals_may_go_negative():
    score = team_score({"red_threes": 4, "hand": ["JK", "JK"], "total_before": 50})
    assert score["deal_score"] == -900
    assert score["total_after"] == -850
    assert score["next_minimum_meld"] == 15


def test_game_ends_when_a_total_reaches_the_target():
    result = score_layout_json({"teams": [
        {"name": "Us", "total_before": 4430, "melds": [K7], "went_out": True},
        {"name": "Them", "total_before": 4900},
    ]})
    assert [t["total_after"] for t in result["teams"]] == [5100, 4900]
    assert (result["game_over"], result["winner"]) == (True, "Us")


def test_reaching_the_target_exactly_ends_the_game():
    result = score_layout_json({"teams": [{"name": "Us", "total_before": 4430, "melds": [K7]},
                                          {"name": "Them"}]})
    assert result["teams"][0]["total_after"] == 5000
    assert (result["game_over"], result["winner"]) == (True, "Us")


def test_game_goes_on_below_the_target():
    result = score_layout_json({"teams": [{"name": "Us", "total_before": 4425, "melds": [K7]},
                                          {"name": "Them", "total_before": 4995}]})
    assert (result["game_over"], result["winner"]) == (False, None)


def test_when_both_pass_the_target_the_higher_total_wins_even_if_it_was_behind():
    result = score_layout_json({"teams": [
        {"name": "Us", "total_before": 4900, "melds": [["4", "4", "4"]]},
        {"name": "Them", "total_before": 4800, "melds": [K7], "went_out": True},
    ]})
    assert [t["total_after"] for t in result["teams"]] == [4915, 5470]
    assert (result["game_over"], result["winner"]) == (True, "Them")


def test_exact_tie_over_the_target_plays_another_deal():
    result = score_layout_json({"teams": [
        {"name": "Us", "total_before": 4500, "melds": [K7]},
        {"name": "Them", "total_before": 4500, "melds": [["Q"] * 7]},
    ]})
    assert [t["total_after"] for t in result["teams"]] == [5070, 5070]
    assert (result["game_over"], result["winner"]) == (False, None)


def test_custom_target():
    result = score_layout_json({"rules": {"target": 500}, "teams": [{"name": "Us", "melds": [K7]}, {}]})
    assert (result["game_over"], result["winner"]) == (True, "Us")


def test_three_teams_of_six_players():
    result = score_layout_json({"rules": {"players": 6}, "teams": [
        {"name": "A", "total_before": 4000, "melds": [K7, ["Q"] * 7], "went_out": True},
        {"name": "B", "total_before": 4900, "melds": [["J"] * 3]},
        {"name": "C", "total_before": 5200, "hand": ["JK"]},
    ]})
    totals = {t["name"]: t["total_after"] for t in result["teams"]}
    assert totals == {"A": 4000 + 1140 + 100, "B": 4930, "C": 5150}
    assert (result["game_over"], result["winner"]) == (True, "A")


# --- properties -------------------------------------------------------------------------------

NATURAL_TOKENS = [r.value for r in NATURAL_RANKS]
POINTS = {t: parse_card(t).points for t in NATURAL_TOKENS + ["2", "JK", "3B"]}


def full_pack() -> Counter:
    pack = Counter({t: 8 for t in NATURAL_TOKENS})
    pack.update({"2": 8, "JK": 4, "3B": 4, "3R": 4})
    return pack


@st.composite
def meld_of(draw, pack: Counter, rank: str, min_cards: int = 3) -> list[str] | None:
    """A legal meld of `rank` dealt from `pack` (None if the pack cannot make one)."""
    high = min(3, pack["2"] + pack["JK"])
    fewest_naturals = max(2, min_cards - high)
    if pack[rank] < fewest_naturals:
        return None
    naturals = draw(st.integers(fewest_naturals, pack[rank]))
    low = max(0, min_cards - naturals)
    wild_count = draw(st.integers(low, high))
    wilds = []
    for _ in range(wild_count):
        wild = draw(st.sampled_from([w for w in ("2", "JK") if pack[w] > 0]))
        pack[wild] -= 1
        wilds.append(wild)
    pack[rank] -= naturals
    return [rank] * naturals + wilds


@st.composite
def legal_layouts(draw) -> dict:
    """A legal four-player layout, dealt from one counted pack."""
    pack = full_pack()
    goes_out = draw(st.booleans())
    teams = []
    for index in range(2):
        went_out = goes_out and index == 0
        ranks = draw(st.lists(st.sampled_from(NATURAL_TOKENS), unique=True, max_size=5))
        melds = []
        if went_out:
            canasta_rank = draw(st.sampled_from([r for r in NATURAL_TOKENS if pack[r] >= 7]))
            ranks = [canasta_rank] + [r for r in ranks if r != canasta_rank]
        for i, rank in enumerate(ranks):
            meld = draw(meld_of(pack, rank, min_cards=7 if went_out and i == 0 else 3))
            if meld is not None:
                melds.append(meld)
        if went_out and draw(st.booleans()):
            threes = draw(st.integers(3, 4))
            melds.append(["3B"] * threes)
            pack["3B"] -= threes
        red_threes = draw(st.integers(0, pack["3R"]))
        pack["3R"] -= red_threes
        hand = []
        for token in draw(st.lists(st.sampled_from(NATURAL_TOKENS + ["2", "JK", "3B"]), max_size=12)):
            if pack[token] > 0:
                pack[token] -= 1
                hand.append(token)
        teams.append({
            "name": f"T{index}",
            "total_before": 5 * draw(st.integers(-400, 1200)),
            "melds": melds,
            "red_threes": red_threes,
            "went_out": went_out,
            "concealed": went_out and draw(st.booleans()),
            "hand": hand,
        })
    if draw(st.booleans()):
        teams.reverse()
    return {"teams": teams}


def expected_team_score(team: dict) -> int:
    """The rules written out once more, independently of the package, for a cross-check."""
    card_points = sum(POINTS[t] for meld in team["melds"] for t in meld)
    bonus = 0
    for meld in team["melds"]:
        if len(meld) >= 7:
            bonus += 500 if not any(t in ("2", "JK") for t in meld) else 300
    reds = team["red_threes"] * (200 if team["red_threes"] == 4 else 100)
    if not team["melds"]:
        reds = -reds
    going_out = (100 + (100 if team["concealed"] else 0)) if team["went_out"] else 0
    return card_points + bonus + reds + going_out - sum(POINTS[t] for t in team["hand"])


def scores(data: dict) -> list[dict]:
    return score_layout_json(data)["teams"]


@settings(max_examples=150, deadline=None)
@given(legal_layouts())
def test_deal_score_is_the_sum_of_its_parts(data):
    for team, score in zip(data["teams"], scores(data), strict=True):
        parts = ("card_points", "canasta_bonus", "red_three_bonus", "going_out_bonus", "hand_penalty")
        assert score["deal_score"] == sum(score[p] for p in parts)
        assert score["deal_score"] == expected_team_score(team)
        assert score["total_after"] == team["total_before"] + score["deal_score"]
        assert score["hand_penalty"] <= 0
        assert score["canasta_bonus"] == 500 * score["natural_canastas"] + 300 * score["mixed_canastas"]


@settings(max_examples=100, deadline=None)
@given(legal_layouts(), st.randoms(use_true_random=False))
def test_order_of_melds_cards_and_teams_does_not_matter(data, rng: random.Random):
    before = {s["name"]: s for s in scores(data)}
    shuffled = json.loads(json.dumps(data))
    for team in shuffled["teams"]:
        rng.shuffle(team["melds"])
        for meld in team["melds"]:
            rng.shuffle(meld)
        rng.shuffle(team["hand"])
    rng.shuffle(shuffled["teams"])
    after = {s["name"]: s for s in scores(shuffled)}
    assert after == before


@settings(max_examples=100, deadline=None)
@given(legal_layouts(), st.data())
def test_adding_a_natural_card_to_a_meld_adds_its_value(data, draw):
    melds = [(ti, mi) for ti, team in enumerate(data["teams"]) for mi, meld in enumerate(team["melds"])
             if meld[0] != "3B"]
    assume(melds)
    ti, mi = draw.draw(st.sampled_from(melds))
    meld = data["teams"][ti]["melds"][mi]
    rank = next(t for t in meld if t not in ("2", "JK"))
    used = sum(t == rank for team in data["teams"] for m in team["melds"] for t in m)
    used += sum(t == rank for team in data["teams"] for t in team["hand"])
    assume(used < 8)
    before = scores(data)[ti]
    grown = json.loads(json.dumps(data))
    grown["teams"][ti]["melds"][mi].append(rank)
    after = scores(grown)[ti]
    becomes_canasta = len(meld) == 6
    expected_bonus = (500 if not any(t in ("2", "JK") for t in meld) else 300) if becomes_canasta else 0
    assert after["card_points"] - before["card_points"] == POINTS[rank]
    assert after["deal_score"] - before["deal_score"] == POINTS[rank] + expected_bonus


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(NATURAL_TOKENS), st.integers(7, 8), st.sampled_from(["2", "JK"]),
       legal_layouts())
def test_a_wild_added_to_a_natural_canasta_costs_200_and_adds_its_value(rank, size, wild, other):
    # Put a natural canasta in front of a team that otherwise has nothing of that rank.
    data = json.loads(json.dumps(other))
    team = data["teams"][0]
    team["melds"] = [m for m in team["melds"] if rank not in m]
    data["teams"][1]["melds"] = [m for m in data["teams"][1]["melds"] if rank not in m]
    for t in data["teams"]:
        t["hand"] = [c for c in t["hand"] if c != rank]
    team["melds"].append([rank] * size)
    wilds_used = sum(c == wild for t in data["teams"] for m in t["melds"] for c in m)
    wilds_used += sum(c == wild for t in data["teams"] for c in t["hand"])
    assume(wilds_used < (8 if wild == "2" else 4))
    assume(not DealLayout.from_json(data).violations())
    before = score_deal(DealLayout.from_json(data)).teams[0]
    team["melds"][-1].append(wild)
    after = score_deal(DealLayout.from_json(data)).teams[0]
    assert after.canasta_bonus - before.canasta_bonus == -200
    assert after.card_points - before.card_points == POINTS[wild]
    assert after.deal_score - before.deal_score == POINTS[wild] - 200
    assert (after.natural_canastas, after.mixed_canastas) == (before.natural_canastas - 1,
                                                              before.mixed_canastas + 1)

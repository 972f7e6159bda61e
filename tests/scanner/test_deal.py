"""Reading layouts and refusing the ones that break a rule (issue 2's list, one test each)."""

from __future__ import annotations

import pytest

from scanner.deal import DealLayout, LayoutError, Meld, RuleViolation
from scanner.rules import Ruleset, RulesetError
from scanner.scoring import score_layout_json

K7 = ["K"] * 7


def layout(us: dict | None = None, them: dict | None = None, rules: dict | None = None,
           extra_teams: list[dict] | None = None) -> dict:
    """A two-team layout; each team is named and otherwise empty unless given."""
    data: dict = {"teams": [{"name": "Us", **(us or {})}, {"name": "Them", **(them or {})}]}
    data["teams"] += extra_teams or []
    if rules is not None:
        data["rules"] = rules
    return data


def refusal(data: dict) -> RuleViolation:
    """The violation `score_layout_json` raises for `data` (fails the test if it scores)."""
    with pytest.raises(RuleViolation) as err:
        score_layout_json(data)
    return err.value


def rules_broken(data: dict) -> set[str]:
    return {v.rule for v in DealLayout.from_json(data).violations()}


# --- melds -------------------------------------------------------------------------------


@pytest.mark.parametrize("meld", [["K", "K"], ["K"], [], ["K", "2"]])
def test_meld_of_fewer_than_three_cards(meld):
    err = refusal(layout({"melds": [["Q", "Q", "Q"], meld]}))
    assert "meld-min-cards" in {v.rule for v in err.violations}
    assert 'team "Us" meld 2' in str(err)


@pytest.mark.parametrize("meld", [["K", "2", "2"], ["K", "JK", "2"], ["9", "2", "JK", "2"]])
def test_meld_with_fewer_than_two_naturals(meld):
    err = refusal(layout({"melds": [meld]}))
    assert err.rule == "meld-min-naturals"
    assert "at least 2 natural" in str(err)
    assert meld[0] in err.where


def test_meld_of_only_wild_cards():
    err = refusal(layout({"melds": [["2", "2", "JK"]]}))
    assert err.rule == "wild-meld"
    assert '["2", "2", "JK"]' in str(err)


@pytest.mark.parametrize("wilds", [["2", "2", "2", "2"], ["JK", "JK", "2", "2"]])
def test_meld_with_more_than_three_wilds(wilds):
    err = refusal(layout({"melds": [["K"] * 4 + wilds]}))
    assert err.rule == "meld-max-wilds"
    assert "at most 3 wild" in str(err)


def test_three_wilds_are_allowed():
    assert score_layout_json(layout({"melds": [["K", "K", "2", "2", "JK"]]}))["teams"][0][
        "card_points"
    ] == 20 + 40 + 50


def test_meld_mixing_ranks():
    err = refusal(layout({"melds": [["K", "Q", "K"]]}))
    assert err.rule == "meld-one-rank"
    assert "K, Q" in str(err)


def test_two_melds_of_one_rank_for_a_team():
    err = refusal(layout({"melds": [["K", "K", "K"], ["Q", "Q", "Q"], ["KH", "KS", "2"]]}))
    assert err.rule == "one-meld-per-rank"
    assert "meld 3" in err.where and "rank K" in str(err)


def test_both_teams_may_meld_the_same_rank():
    result = score_layout_json(layout({"melds": [["K"] * 4]}, {"melds": [["K"] * 4]}))
    assert [t["card_points"] for t in result["teams"]] == [40, 40]


def test_red_three_in_a_meld():
    err = refusal(layout({"melds": [["K", "K", "3H"]]}))
    assert err.rule == "red-three-in-meld"
    assert "3H" in str(err)
    assert refusal(layout({"melds": [["3R", "3R", "3D"]]})).rule == "red-three-in-meld"
    assert refusal(layout({"melds": [{"rank": "3R", "naturals": 3}]})).rule == "red-three-in-meld"


def test_red_three_held_in_hand():
    err = refusal(layout(them={"hand": ["K", "3D"]}))
    assert err.rule == "red-three-in-hand"
    assert "3D" in err.where


# --- black threes --------------------------------------------------------------------------


def test_black_threes_melded_by_a_team_that_went_out_score_five_each():
    result = score_layout_json(layout({"melds": [K7, ["3S", "3C", "3B"]], "went_out": True}))
    assert result["teams"][0]["card_points"] == 70 + 15


def test_black_threes_melded_by_a_team_that_did_not_go_out():
    err = refusal(layout({"melds": [K7, ["3S", "3C", "3B"]]}, {"melds": [["Q"] * 7], "went_out": True}))
    assert err.rule == "black-threes-only-going-out"
    assert 'team "Us" meld 2' in str(err)


def test_black_threes_with_a_wild():
    err = refusal(layout({"melds": [K7, ["3S", "3C", "2"]], "went_out": True}))
    assert err.rule == "black-threes-no-wilds"
    assert "2" in str(err)


def test_more_than_four_black_threes():
    err = refusal(layout({"melds": [K7, ["3B"] * 5], "went_out": True}))
    assert "black-threes-max-4" in {v.rule for v in err.violations}


def test_four_black_threes_are_allowed_when_going_out():
    result = score_layout_json(layout({"melds": [K7, ["3B"] * 4], "went_out": True}))
    assert result["teams"][0]["card_points"] == 90


def test_two_black_threes_are_no_meld():
    err = refusal(layout({"melds": [K7, ["3B", "3B"]], "went_out": True}))
    assert err.rule == "meld-min-cards"


def test_black_threes_in_a_meld_of_another_rank():
    err = refusal(layout({"melds": [K7 + ["3S"]], "went_out": True}))
    assert err.rule == "black-threes-with-naturals"


def test_black_threes_left_in_hand_cost_five():
    result = score_layout_json(layout(them={"hand": ["3S", "3B"]}))
    assert result["teams"][1]["hand_penalty"] == -10


# --- going out ----------------------------------------------------------------------------


def test_going_out_without_a_canasta():
    err = refusal(layout({"melds": [["K"] * 6], "went_out": True}))
    assert err.rule == "going-out-needs-canasta"
    assert 'team "Us"' in str(err)


def test_six_cards_are_no_canasta_seven_are():
    assert refusal(layout({"melds": [["K"] * 5 + ["2"]], "went_out": True})).rule == (
        "going-out-needs-canasta"
    )
    assert score_layout_json(layout({"melds": [["K"] * 6 + ["2"]], "went_out": True}))


def test_concealed_without_going_out():
    err = refusal(layout({"melds": [K7], "concealed": True}))
    assert err.rule == "concealed-needs-going-out"


def test_two_teams_going_out():
    err = refusal(layout({"melds": [K7], "went_out": True}, {"melds": [["Q"] * 7], "went_out": True}))
    assert err.rule == "one-team-goes-out"
    assert '"Us"' in str(err) and '"Them"' in str(err)


def test_two_players_need_two_canastas_to_go_out():
    rules = {"players": 2}
    one = layout({"melds": [K7], "went_out": True}, rules=rules)
    assert refusal(one).rule == "going-out-needs-canasta"
    two = layout({"melds": [K7, ["Q"] * 7], "went_out": True}, rules=rules)
    assert score_layout_json(two)["teams"][0]["canasta_bonus"] == 1000


def test_six_players_need_two_canastas_to_go_out():
    one = layout({"melds": [K7], "went_out": True}, rules={"players": 6})
    assert refusal(one).rule == "going-out-needs-canasta"


def test_in_the_two_player_game_the_player_who_went_out_holds_nothing():
    data = layout({"melds": [K7, ["Q"] * 7], "went_out": True, "hand": ["4"]}, rules={"players": 2})
    assert refusal(data).rule == "went-out-with-cards"


def test_in_the_four_player_game_the_partner_may_hold_cards():
    result = score_layout_json(layout({"melds": [K7], "went_out": True, "hand": ["4", "JK"]}))
    assert result["teams"][0]["hand_penalty"] == -55


# --- the pack -----------------------------------------------------------------------------


def test_more_kings_than_two_decks_hold():
    err = refusal(layout({"melds": [["K"] * 6]}, {"melds": [["K"] * 3]}))
    assert err.rule == "pack-copies"
    assert "card K" in err.where and "9" in str(err)


def test_cards_in_hand_count_towards_the_pack():
    assert refusal(layout({"melds": [["K"] * 7]}, {"hand": ["K", "K"]})).rule == "pack-copies"


@pytest.mark.parametrize(
    ("us", "them", "card"),
    [
        ({"melds": [["9", "9", "JK", "JK", "JK"]]}, {"melds": [["8", "8", "JK", "JK"]]}, "JK"),
        ({"melds": [["9", "9", "2", "2", "2"], ["8", "8", "2", "2", "2"]]},
         {"melds": [["7", "7", "2", "2", "2"]]}, "2"),
        ({"red_threes": 3}, {"red_threes": 2}, "3R"),
        ({"red_threes": 5}, {}, "3R"),
        ({"hand": ["3S", "3S", "3C", "3B", "3B"]}, {}, "3B"),
        ({"melds": [["KH", "KH", "KH"]]}, {}, "KH"),
        ({"red_threes": ["3H", "3H", "3H"]}, {}, "3H"),
    ],
)
def test_more_copies_than_the_pack_holds(us, them, card):
    err = refusal(layout(us, them))
    assert err.rule == "pack-copies"
    assert f"card {card}" in err.where


@pytest.mark.parametrize(
    "us", [{"melds": [{"rank": "K", "naturals": 10**12}]}, {"red_threes": 10**12}]
)
def test_huge_counts_are_refused_before_cards_are_built(us):
    assert refusal(layout(us)).rule == "pack-copies"


def test_a_full_pack_of_kings_is_fine():
    result = score_layout_json(layout({"melds": [["KH", "KH", "KS", "KS", "K", "K"]]}, {"hand": ["K", "K"]}))
    assert result["teams"][0]["card_points"] == 60


def test_six_players_use_three_decks():
    rules = {"players": 6}
    twelve = layout({"melds": [["K"] * 9]}, {"melds": [["K"] * 3]}, rules=rules)
    assert score_layout_json(twelve)["teams"][0]["card_points"] == 90
    thirteen = layout({"melds": [["K"] * 10]}, {"melds": [["K"] * 3]}, rules=rules)
    assert refusal(thirteen).rule == "pack-copies"
    jokers = layout({"melds": [["9", "9", "JK", "JK", "JK"]]}, {"melds": [["8", "8", "JK", "JK", "JK"]]},
                    rules=rules)
    assert score_layout_json(jokers)
    assert refusal(layout({"red_threes": 7}, rules=rules)).rule == "pack-copies"


# --- unknown cards and malformed layouts ---------------------------------------------------


@pytest.mark.parametrize(
    "us",
    [
        {"melds": [["K", "K", "X"]]},
        {"melds": [["K", "K", "3"]]},
        {"hand": ["11"]},
        {"melds": [{"rank": "Z", "naturals": 3}]},
        {"melds": [{"rank": "K", "naturals": 5, "wilds": ["2", "JOKR"]}]},
        {"red_threes": ["3H", "3Z"]},
    ],
)
def test_unknown_card_token_is_named(us):
    err = refusal(layout(us))
    assert err.rule == "unknown-card"
    assert "unknown card token" in str(err)


@pytest.mark.parametrize(
    "data",
    [
        [],
        "teams",
        {},
        {"teams": []},
        {"teams": "Us"},
        {"teams": [{"melds": "KKK"}, {}]},
        {"teams": [{"melds": [7]}, {}]},
        {"teams": [{"red_threes": -1}, {}]},
        {"teams": [{"red_threes": "two"}, {}]},
        {"teams": [{"red_threes": 1.5}, {}]},
        {"teams": [{"went_out": "yes"}, {}]},
        {"teams": [{"hand": "K"}, {}]},
        {"teams": [{"hand_points": -5}, {}]},
        {"teams": [{"hand": ["K"], "hand_points": 10}, {}]},
        {"teams": [{"total_before": "100"}, {}]},
        {"teams": [{"name": 3}, {}]},
        {"teams": [{"name": "A"}, {"name": "A"}]},
        {"teams": [{"melds": [{"naturals": 7}]}, {}]},
        {"teams": [{"melds": [{"rank": "K", "naturals": 7, "wilds": 1}]}, {}]},
        {"teams": [{"melds": [{"rank": "K", "naturals": 7, "wilds": ["K"]}]}, {}]},
        {"teams": [{}, {}], "rules": {"players": 5}},
        {"teams": [{}, {}], "rules": {"players": 4, "target": 0}},
        {"teams": [{}, {}], "rules": {"players": 4, "taget": 3000}},
        {"teams": [{}, {}], "rules": "classic"},
    ],
)
def test_malformed_layouts_raise_layout_error(data):
    with pytest.raises(LayoutError):
        score_layout_json(data)


def test_wrong_number_of_teams():
    assert refusal({"teams": [{}]}).rule == "team-count"
    assert refusal({"teams": [{}, {}, {}]}).rule == "team-count"
    three = {"teams": [{"name": "A"}, {"name": "B"}, {"name": "C"}], "rules": {"players": 6}}
    assert len(score_layout_json(three)["teams"]) == 3


def test_hand_points_must_be_possible():
    assert refusal(layout(them={"hand_points": 37})).rule == "hand-points"


def test_defaults_fill_a_scan_output_layout():
    """The `layout` of `canasta-scan scan` (melds and red threes only) can be scored as is."""
    data = {"teams": [{"melds": [["K", "K", "K"]], "red_threes": 1}, {"melds": [], "red_threes": 0}]}
    result = score_layout_json(data)
    assert [t["name"] for t in result["teams"]] == ["Team 1", "Team 2"]
    assert result["teams"][0]["deal_score"] == 130


# --- house rules ---------------------------------------------------------------------------


def test_house_rule_never_more_wilds_than_naturals():
    meld = ["K", "K", "2", "2", "JK"]
    assert score_layout_json(layout({"melds": [meld]}))
    err = refusal(layout({"melds": [meld]}, rules={"wilds_at_most_naturals": True}))
    assert err.rule == "meld-wilds-over-naturals"
    assert score_layout_json(layout({"melds": [["K", "K", "2", "2"]]}, rules={"wilds_at_most_naturals": True}))


def test_ruleset_defaults_are_classic_four_player():
    rules = Ruleset()
    assert (rules.players, rules.target, rules.decks, rules.pack_size) == (4, 5000, 2, 108)
    assert rules.canastas_to_go_out == 1
    assert Ruleset(players=6).pack_size == 162
    assert Ruleset(players=3).canastas_to_go_out == 1


def test_ruleset_from_json_refuses_misspelt_options_and_bad_values():
    with pytest.raises(RulesetError, match="taget.*did you mean 'target'"):
        Ruleset.from_json({"taget": 3000})
    with pytest.raises(RulesetError, match="player"):
        Ruleset.from_json({"player": 2})
    # An option another program adds, unlike any of ours, does not stop scoring.
    assert Ruleset.from_json({"variant": "classic", "target": 3000}) == Ruleset(target=3000)
    with pytest.raises(RulesetError):
        Ruleset.from_json({"players": True})
    with pytest.raises(RulesetError):
        Ruleset.from_json({"natural_canasta_bonus": -1})
    with pytest.raises(RulesetError):
        Ruleset.from_json({"minimum_meld_steps": [[100, 50]]})
    assert Ruleset.from_json({"target": 5000.0}).target == 5000
    assert Ruleset.from_json(Ruleset(players=6, target=10000).to_json()) == Ruleset(players=6, target=10000)


def test_squared_up_meld_is_the_same_cards():
    squared = Meld.from_json({"rank": "k", "naturals": 7, "wilds": ["2", "joker"]})
    listed = Meld.from_json(["K"] * 7 + ["2", "JK"])
    assert sorted(squared.cards) == sorted(listed.cards)
    assert squared.points == listed.points == 140
    assert squared.is_canasta and not squared.is_natural

"""The layout benchmark scores a squared-up canasta's natural-or-mixed reading on its own, and
names why a deal fails."""

from __future__ import annotations

from types import SimpleNamespace

from bench.bench_layout import compare_melds


def _reading(naturals: int, wilds: list[str], squared: bool = True):
    meld = SimpleNamespace(team=0, rank="Q", naturals=naturals, wilds=wilds, squared=squared)
    return SimpleNamespace(melds=[meld])


def test_squared_kind_counts_natural_or_mixed_whatever_the_count():
    scene = {"melds": [{"team": 0, "rank": "Q", "naturals": 5, "wilds": ["2", "JK"],
                        "squared": True}], "cards": []}
    mixed = compare_melds(scene, _reading(6, ["2"]))   # mixed, count wrong
    assert mixed["squared_kind_right"] == 1 and mixed["squared_exact"] == 0
    natural = compare_melds(scene, _reading(7, []))    # natural: the wrong bonus
    assert natural["squared_kind_right"] == 0
    unsquared = compare_melds(scene, _reading(5, ["2", "JK"], squared=False))
    assert unsquared["squared_kind_right"] == 0 and unsquared["squared_exact"] == 1
    assert compare_melds(scene, SimpleNamespace(melds=[]))["squared_kind_right"] == 0


def test_a_squared_canasta_counts_as_exact_with_the_players_count_only_where_read_squared():
    scene = {"melds": [{"team": 0, "rank": "Q", "naturals": 5, "wilds": ["2", "JK"],
                        "squared": True}], "cards": []}
    assert compare_melds(scene, _reading(9, []))["squared_flagged"] == 1     # count asked
    assert compare_melds(scene, _reading(5, ["2", "JK"], squared=False))["squared_flagged"] == 0
    assert compare_melds(scene, SimpleNamespace(melds=[]))["squared_flagged"] == 0
    other_team = SimpleNamespace(melds=[SimpleNamespace(team=1, rank="Q", naturals=5,
                                                        wilds=["2", "JK"], squared=True)])
    assert compare_melds(scene, other_team)["squared_flagged"] == 0


def test_a_failing_deal_names_an_extra_meld_and_miscounted_red_threes():
    from bench.bench_layout import red_three_misses

    scene = {"melds": [{"team": 0, "rank": "Q", "naturals": 5, "wilds": [], "squared": False,
                        "card_ids": []}],
             "cards": [], "layout": {"teams": [{"red_threes": 1}, {"red_threes": 2}]}}
    pile = SimpleNamespace(team=1, rank="9", naturals=2, wilds=["JK"], squared=False)
    reading = SimpleNamespace(melds=[_reading(5, [], squared=False).melds[0], pile],
                              red_threes=[1, 1])
    counts = compare_melds(scene, reading)
    assert counts["why:extra_meld"] == 1 and counts["plain_exact"] == 1
    assert compare_melds(scene, _reading(5, [], squared=False))["why:extra_meld"] == 0
    assert red_three_misses(scene, reading) == {"why:red_threes": 1}
    assert red_three_misses(scene, SimpleNamespace(red_threes=[1, 2])) == {}
    assert red_three_misses(scene, SimpleNamespace(red_threes=[0, 3])) == {"why:red_threes": 2}

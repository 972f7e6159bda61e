"""Card tokens (contract table), point values, and the doctests of the scoring modules."""

from __future__ import annotations

import doctest

import pytest

import scanner.cards
import scanner.deal
import scanner.rules
import scanner.scoring
from scanner.cards import Card, CardError, Rank, parse_card


@pytest.mark.parametrize(
    ("token", "rank", "suit", "out"),
    [
        ("A", Rank.ACE, None, "A"),
        ("k", Rank.KING, None, "K"),
        ("KH", Rank.KING, "H", "KH"),
        ("10s", Rank.TEN, "S", "10S"),
        ("10", Rank.TEN, None, "10"),
        ("4", Rank.FOUR, None, "4"),
        ("2c", Rank.TWO, "C", "2C"),
        ("2", Rank.TWO, None, "2"),
        ("3H", Rank.RED_THREE, "H", "3H"),
        ("3d", Rank.RED_THREE, "D", "3D"),
        ("3r", Rank.RED_THREE, None, "3R"),
        ("3S", Rank.BLACK_THREE, "S", "3S"),
        ("3c", Rank.BLACK_THREE, "C", "3C"),
        ("3B", Rank.BLACK_THREE, None, "3B"),
        ("JK", Rank.JOKER, None, "JK"),
        ("joker", Rank.JOKER, None, "JK"),
        ("Joker", Rank.JOKER, None, "JK"),
        ("J", Rank.JACK, None, "J"),
        ("jd", Rank.JACK, "D", "JD"),
        ("Q", Rank.QUEEN, None, "Q"),
    ],
)
def test_contract_tokens_parse_case_insensitively_and_print_upper_case(token, rank, suit, out):
    card = parse_card(token)
    assert (card.rank, card.suit, card.token) == (rank, suit, out)


@pytest.mark.parametrize(
    "token", ["3", "1", "11", "T", "X", "KX", "JKH", "KK", "", "3X", "B", "R", "JOKERS", "0", "AH2"]
)
def test_unknown_tokens_are_refused_naming_the_token(token):
    with pytest.raises(CardError) as err:
        parse_card(token)
    assert repr(token) in str(err.value)


@pytest.mark.parametrize("token", [10, None, 3.0, ["K"]])
def test_non_string_tokens_are_refused(token):
    with pytest.raises(CardError, match="unknown card token"):
        parse_card(token)


def test_bare_three_must_say_its_colour():
    with pytest.raises(CardError, match="colour"):
        parse_card("3")


@pytest.mark.parametrize(
    ("token", "points"),
    [("JK", 50), ("A", 20), ("2", 20), ("K", 10), ("Q", 10), ("J", 10), ("10", 10), ("9", 10),
     ("8", 10), ("7", 5), ("6", 5), ("5", 5), ("4", 5), ("3B", 5), ("3S", 5)],
)
def test_point_values_follow_the_seed_table(token, points):
    assert parse_card(token).points == points


def test_kinds_of_card():
    assert parse_card("K").is_natural and not parse_card("K").is_wild
    assert parse_card("2").is_wild and parse_card("JK").is_wild
    assert not parse_card("2").is_natural
    assert parse_card("3H").is_red_three and not parse_card("3H").is_natural
    assert parse_card("3C").is_black_three and not parse_card("3C").is_natural


def test_impossible_suits_are_refused():
    with pytest.raises(CardError):
        Card(Rank.RED_THREE, "S")
    with pytest.raises(CardError):
        Card(Rank.JOKER, "H")


@pytest.mark.parametrize("module", [scanner.cards, scanner.rules, scanner.deal, scanner.scoring])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0
    assert result.failed == 0

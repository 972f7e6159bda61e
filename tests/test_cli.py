"""The `canasta-scan` command line: `score` exactly as the contract prints it, and refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scanner import cli

LAYOUTS = Path(__file__).resolve().parent / "fixtures" / "layouts"


def run_cli(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run the real command in a fresh interpreter, as an outside test would."""
    return subprocess.run(
        [sys.executable, "-m", "scanner.cli", *args],
        input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )


def test_score_prints_the_contract_json():
    done = run_cli(["score", str(LAYOUTS / "contract_example.json")])
    assert done.returncode == 0, done.stderr
    expected = json.loads((LAYOUTS / "contract_example.score.json").read_text())
    assert json.loads(done.stdout) == expected
    assert done.stderr == ""


def test_score_output_keys_in_contract_order(capsys):
    assert cli.main(["score", str(LAYOUTS / "contract_example.json")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result) == ["teams", "game_over", "winner"]
    assert list(result["teams"][0]) == [
        "name", "card_points", "canasta_bonus", "red_three_bonus", "going_out_bonus",
        "hand_penalty", "deal_score", "natural_canastas", "mixed_canastas", "total_after",
        "next_minimum_meld",
    ]


def test_score_reads_squared_melds_suits_aliases_and_hand_points(capsys):
    assert cli.main(["score", str(LAYOUTS / "squared_hand_points.json")]) == 0
    result = json.loads(capsys.readouterr().out)
    ns, ew = result["teams"]
    assert (ns["card_points"], ns["canasta_bonus"], ns["red_three_bonus"]) == (215, 800, 200)
    assert (ns["hand_penalty"], ns["deal_score"], ns["total_after"]) == (-25, 1290, 5990)
    assert (ew["card_points"], ew["hand_penalty"], ew["deal_score"]) == (50, -65, -15)
    assert (result["game_over"], result["winner"]) == (True, "North-South")


def test_rule_violation_exits_1_naming_rule_and_meld():
    done = run_cli(["score", str(LAYOUTS / "black_threes_not_out.json")])
    assert done.returncode == 1
    assert done.stdout == ""
    assert "black-threes-only-going-out" in done.stderr
    assert 'team "Us" meld 2 ["3S", "3S", "3C"]' in done.stderr


def test_score_reads_standard_input():
    layout = {"teams": [{"name": "Us", "melds": [["K"] * 7]}, {"name": "Them"}]}
    done = run_cli(["score", "-"], stdin=json.dumps(layout))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["teams"][0]["deal_score"] == 570


@pytest.mark.parametrize(
    ("layout", "words"),
    [
        ({"teams": [{"melds": [["K", "K", "ZZ"]]}, {}]}, "'ZZ'"),
        ({"teams": [{"melds": [["K", "K"]]}, {}]}, "at least 3 cards"),
        ({"teams": [{"melds": [["K", "K", "2", "2", "2", "2"]]}, {}]}, "at most 3 wild"),
        ({"teams": [{"melds": [["K"] * 6], "went_out": True}, {}]}, "canasta"),
        ({"teams": [{"melds": [["K"] * 9]}, {}]}, "card K"),
        ({"teams": [{"melds": "K"}, {}]}, "melds must be a list"),
        ([1, 2], "a layout is an object"),
    ],
)
def test_refusals_exit_1_with_the_reason_on_stderr(tmp_path, capsys, layout, words):
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(layout))
    assert cli.main(["score", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert words in err


def test_not_json_exits_1(tmp_path, capsys):
    path = tmp_path / "layout.json"
    path.write_text("{teams: [")
    assert cli.main(["score", str(path)]) == 1
    assert "not valid JSON" in capsys.readouterr().err


def test_missing_file_exits_1(tmp_path, capsys):
    assert cli.main(["score", str(tmp_path / "nope.json")]) == 1
    assert "cannot read layout" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    assert cli.main([]) == 2
    with pytest.raises(SystemExit) as err:
        cli.main(["score"])
    assert err.value.code == 2


@pytest.mark.parametrize(
    ("argv", "module"),
    [(["detect", "x.jpg"], "scanner.detector"), (["scan", "x.jpg"], "scanner.scan"),
     (["serve"], "api.app")],
)
def test_a_missing_part_exits_2_with_a_clear_message(monkeypatch, capsys, argv, module):
    real_import = cli.importlib.import_module

    def import_module(name: str):
        if name == module:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name)

    monkeypatch.setattr(cli.importlib, "import_module", import_module)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "not available" in err and module in err


def test_scan_prints_what_to_check_as_sentences(monkeypatch, capsys):
    class Result:
        def to_json(self):
            return {"image": {"width": 8, "height": 6}, "corners": [], "cards": [],
                    "layout": {"teams": [{"melds": [["K", "K", "K"]], "red_threes": 1},
                                         {"melds": [], "red_threes": 0}]},
                    "review": [{"kind": "meld_check", "priority": 0.4, "team": 0, "meld": 0,
                                "message": "team 0 meld 0 (K): count its cards (read 3, 40% sure)"}]}

    scan_module = cli.importlib.import_module("scanner.scan")
    monkeypatch.setattr(scan_module, "scan_photo", lambda photo: Result())
    assert cli.main(["scan", "table.jpg"]) == 0
    out = capsys.readouterr().out
    assert "team 0: red threes 1; melds [K K K]" in out
    assert "  check: team 0 meld 0 (K): count its cards (read 3, 40% sure)" in out
    assert "{" not in out  # sentences, not raw dicts


def test_a_setting_the_detector_cannot_take_exits_2_without_a_traceback():
    import os

    photo = Path(__file__).resolve().parents[1] / "datasets" / "samples" / "scene_000000.jpg"
    for command in ("detect", "scan"):
        done = subprocess.run([sys.executable, "-m", "scanner.cli", command, str(photo), "--json"],
                              capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, "CANASTA_INT8": "yes"})
        assert done.returncode == 2, done.stderr
        assert "cannot run the detector: CANASTA_INT8 is 0, 1 or unset, not 'yes'" in done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""

"""Time the scoring engine: layouts scored per second, parse + rule checks + score.

Run: `.venv/bin/python bench/bench_scoring.py [--repeat N]`. Prints the median time per
layout for the contract's example and for a crowded table (every rank melded by both
teams, full hands), so a change that makes scoring slow shows up here, not in tests.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

from scanner.scoring import score_layout_json

ROOT = Path(__file__).resolve().parents[1]


def crowded_layout() -> dict:
    """Both teams meld every natural rank (four each) and hold wilds and black threes."""
    ranks = ["A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4"]
    us = {"name": "Us", "melds": [[r] * 4 for r in ranks], "red_threes": 2,
          "hand": ["2", "2", "JK", "3B"]}
    them = {"name": "Them", "melds": [[r] * 4 for r in ranks], "red_threes": 2,
            "hand": ["2", "2", "JK", "3S"]}
    return {"teams": [us, them]}


def time_per_call(layout: dict, repeat: int) -> float:
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            score_layout_json(layout)
        samples.append((time.perf_counter() - start) / repeat)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    example = json.loads((ROOT / "tests/fixtures/layouts/contract_example.json").read_text())
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.processor() or '?'}")
    for name, layout in (("contract example", example), ("crowded table", crowded_layout())):
        seconds = time_per_call(layout, args.repeat)
        print(f"{name:18s} {seconds * 1e6:8.1f} us per layout ({1 / seconds:,.0f} layouts/s)")


if __name__ == "__main__":
    main()

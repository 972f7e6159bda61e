"""The `canasta-scan` command: a thin layer over the package's functions.

`score LAYOUT.json` scores a deal layout (the contract's JSON) and prints the score as
JSON; a layout that is malformed or breaks a rule exits 1 with the reason on stderr.
`detect`, `scan` and `serve` hand a photo to the vision pipeline or start the web
service; they import their modules only when called, so scoring works (and stays fast)
without the vision and web stacks. Exit codes: 0 done, 1 bad input (layout or photo),
2 usage error or a part of the program that is not installed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from scanner.deal import LayoutError
from scanner.scoring import score_layout_json

PROG = "canasta-scan"


class _Unavailable(Exception):
    """A subcommand's module (or one of its dependencies) is not installed yet."""


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.run(args)
    except _Unavailable as err:
        _error(str(err))
        return 2
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; that is not our error to report.
        sys.stdout = open(os.devnull, "w")  # stays open until the process exits
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Score a deal of Classic Canasta, from a layout or a photo."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    score = commands.add_parser("score", help="score a deal layout (JSON) and print the score as JSON")
    score.add_argument("layout", help="layout JSON file, or - for standard input")
    score.add_argument("--json", action="store_true", help="accepted for symmetry; output is always JSON")
    score.set_defaults(run=_score)

    detect = commands.add_parser("detect", help="find the rank corners in a photo")
    detect.add_argument("photo", help="photo file (JPEG, PNG, HEIC)")
    detect.add_argument("--json", action="store_true", help="print the contract's JSON")
    detect.set_defaults(run=_detect)

    scan = commands.add_parser("scan", help="read a photo into corners, cards and a layout")
    scan.add_argument("photo", help="photo file (JPEG, PNG, HEIC)")
    scan.add_argument("--json", action="store_true", help="print the contract's JSON")
    scan.add_argument("--overlay", metavar="OUT.jpg", help="also write an annotated image")
    scan.set_defaults(run=_scan)

    serve = commands.add_parser("serve", help="start the web service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(run=_serve)
    return parser


def _score(args: argparse.Namespace) -> int:
    source = "standard input" if args.layout == "-" else args.layout
    try:
        text = sys.stdin.read() if args.layout == "-" else Path(args.layout).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        _error(f"cannot read layout {source}: {err}")
        return 1
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        _error(f"layout {source} is not valid JSON: {err}")
        return 1
    try:
        result = score_layout_json(data)
    except LayoutError as err:
        _error(f"layout {source} is not scored: {err}")
        return 1
    print(json.dumps(result, indent=2))
    return 0


def _detect(args: argparse.Namespace) -> int:
    detector = _load("scanner.detector", "detect")
    result, status = _on_photo(args.photo, lambda: detector.detect_photo(args.photo))
    if status is not None:
        return status
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    image = result["image"]
    corners = result["corners"]
    ranks: dict[str, int] = {}
    for corner in corners:
        ranks[corner["card"]] = ranks.get(corner["card"], 0) + 1
    summary = ", ".join(f"{count}x {rank}" for rank, count in sorted(ranks.items()))
    print(f"{args.photo}: {image['width']}x{image['height']} px, {len(corners)} corners"
          + (f" ({summary})" if summary else ""))
    return 0


def _scan(args: argparse.Namespace) -> int:
    scan_module = _load("scanner.scan", "scan")

    def scan() -> object:
        result = scan_module.scan_photo(args.photo)
        if args.overlay:
            _write_overlay(args.photo, result, args.overlay)
        return result

    result, status = _on_photo(args.photo, scan)
    if status is not None:
        return status
    data = result.to_json()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"{args.photo}: {len(data.get('corners', []))} corners, {len(data.get('cards', []))} cards")
    for i, team in enumerate(data.get("layout", {}).get("teams", [])):
        melds = " ".join("[" + " ".join(_meld_tokens(m)) + "]" for m in team.get("melds", []))
        print(f"  team {i}: red threes {team.get('red_threes', 0)}; melds {melds or 'none'}")
    for item in data.get("review", []) or []:
        print(f"  check: {item.get('message') or item.get('kind')}")
    return 0


def _meld_tokens(meld: object) -> list[str]:
    if isinstance(meld, dict):
        return [f"{meld.get('naturals', 0)}x{meld.get('rank', '?')}", *meld.get("wilds", [])]
    return [str(token) for token in meld] if isinstance(meld, list) else [str(meld)]


def _write_overlay(photo_path: str, result: object, out_path: str) -> None:
    imageio = _load("scanner.imageio", "scan --overlay")
    overlay = _load("scanner.overlay", "scan --overlay")
    from PIL import Image

    photo = imageio.load_photo(photo_path)
    annotated = overlay.draw_overlay(photo.rgb, result)
    Image.fromarray(annotated).save(out_path)


def _serve(args: argparse.Namespace) -> int:
    app_module = _load("api.app", "serve")
    uvicorn = _load("uvicorn", "serve")
    uvicorn.run(app_module.create_app(), host=args.host, port=args.port)
    return 0


def _load(module: str, command: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        raise _Unavailable(
            f"'{command}' is not available: module {err.name} is missing (needed by {module});"
            " install the package with its dependencies (`bash scripts/serve.sh` does)"
        ) from None


def _on_photo(photo: str, work: Callable[[], Any]) -> tuple[Any, int | None]:
    """Run `work` on a photo: (its result, None), or (None, exit status) with the reason said.

    A photo that cannot be read exits 1; a missing detector model, or a setting it cannot
    take, exits 2.
    """
    try:
        return work(), None
    except _scanner_error("scanner.imageio", "ImageError") as err:
        _error(f"cannot read photo {photo}: {err}")
        return None, 1
    except _scanner_error("scanner.detector", "ModelNotFound") as err:
        _error(f"no detector model: {err}")
        return None, 2
    except _scanner_error("scanner.detector", "SettingError") as err:
        _error(f"cannot run the detector: {err}")
        return None, 2


def _scanner_error(module: str, name: str) -> type[Exception]:
    """The exception class `name` of the scanner's `module`; where that part cannot be
    imported (not installed yet), no such error can be raised either."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return _NeverRaised


class _NeverRaised(Exception):
    pass


def _error(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

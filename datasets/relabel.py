"""Re-measure the index labels of built scenes after a design's index boxes changed.

A scene's pixels do not depend on the measured index boxes (only on the card art), so a
fix to `art.measure_index` needs no new photos: the cards of the ranks whose box changed
(between the folder's `build.json` manifest and the current art manifest) have their printed
indices projected again through their outlines, with the same occlusion test the builder
uses (`scene._fill_indices`). Every other card keeps its stored labels.

    python -m datasets.relabel --scenes build/scenes --designs kde-nicu-white kde-nicu-ornamental svg-cards

rewrites the scene JSONs in place (train, val, test) and the manifest in `build.json`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from datasets import art
from datasets.scene import Clutter, SceneCard, _fill_indices, rank_class


def relabel_scene(scene: dict[str, Any], geometries: dict[str, Any], ranks: dict[str, set[str]]) -> int:
    """Re-measure the indices of the cards of `ranks` (design -> rank classes) in `scene`, in
    place; returns the number of cards changed. Other cards keep their stored labels."""
    if not any(c["rank"] in ranks.get(c["design"], ()) for c in scene["cards"]):
        return 0  # nothing to measure again (most scenes)
    w, h = scene["image"]["width"], scene["image"]["height"]
    cards = [SceneCard(c["id"], c["card"], c["rank"], c["design"], c["deck"], c.get("team"), c.get("meld"),
                       c["role"], c["face_up"], np.asarray(c["outline"], float), c["z"], c.get("joker", ""))
             for c in scene["cards"]]
    clutter = [Clutter(k["kind"], np.asarray(k["polygon"], float), k["z"]) for k in scene.get("clutter", [])]
    _fill_indices(cards, clutter, geometries, w, h)
    changed = 0
    for old, new in zip(scene["cards"], cards, strict=True):
        if old["rank"] in ranks.get(old["design"], ()) and old["indices"] != new.indices:
            old["indices"] = new.indices
            changed += 1
    return changed


def changed_ranks(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """Rank classes whose index box, or one of whose cards' own box (`card_boxes`), differs
    between two manifest entries of one design."""
    if before.get("index_corners") != after.get("index_corners"):
        return set(after["index_boxes"]) | set(before["index_boxes"])
    a, b = before["index_boxes"], after["index_boxes"]
    ca, cb = before.get("card_boxes", {}), after.get("card_boxes", {})
    return ({r for r in set(a) | set(b) if a.get(r) != b.get(r)}
            | {rank_class(t) for t in set(ca) | set(cb) if ca.get(t) != cb.get(t)})


def relabel_folder(root: Path, designs: list[str], manifest: dict[str, Any] | None = None) -> dict[str, int]:
    """Relabel every scene under `root` (with its build.json); returns counts."""
    build_json = root / "build.json"
    info = json.loads(build_json.read_text())
    current = manifest if manifest is not None else art.prepare_all(designs)
    merged = dict(info["manifest"])
    for d in designs:
        if d not in current:
            raise KeyError(f"design {d} not in the art manifest")
        merged[d] = current[d]
    ranks = {d: changed_ranks(info["manifest"][d], merged[d]) for d in designs if d in info["manifest"]}
    geometries = art.geometries(merged)
    counts = {"scenes": 0, "scenes_changed": 0, "cards_changed": 0}
    for f in sorted(root.rglob("scene_*.json")):
        scene = json.loads(f.read_text())
        n = relabel_scene(scene, geometries, ranks)
        counts["scenes"] += 1
        if n:
            f.write_text(json.dumps(scene, separators=(",", ":")))
            counts["scenes_changed"] += 1
            counts["cards_changed"] += n
    info["manifest"] = merged
    info.setdefault("relabelled", []).append({"ranks": {d: sorted(r) for d, r in ranks.items()}, **counts})
    build_json.write_text(json.dumps(info, indent=1))
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m datasets.relabel", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=Path, required=True, help="a built folder (with build.json)")
    ap.add_argument("--designs", nargs="+", required=True, help="designs whose index boxes changed")
    args = ap.parse_args(argv)
    if not (args.scenes / "build.json").exists():
        print(f"{args.scenes}/build.json not found: not a built scene folder", file=sys.stderr)
        return 2
    try:
        counts = relabel_folder(args.scenes, args.designs)
    except KeyError as e:
        print(f"relabel: {e}", file=sys.stderr)
        return 1
    print(f"{args.scenes}: {counts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The rank classes a printed card corner (index) is read as.

Shared by the data engine (labels), the detector runtime (class ids) and layout
reconstruction. Scoring only needs rank and three-colour, so these are the 15 classes.
"""

from __future__ import annotations

INDEX_CLASSES: tuple[str, ...] = (
    "A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "2", "JK", "3R", "3B",
)
"""Class id -> card token of the rank (contract tokens; `3R`/`3B` are the threes by colour)."""

CLASS_ID: dict[str, int] = {name: i for i, name in enumerate(INDEX_CLASSES)}
"""Card rank token -> class id."""

WILD_CLASSES = frozenset({"2", "JK"})
THREE_CLASSES = frozenset({"3R", "3B"})

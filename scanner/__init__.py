"""canasta-scan: the card model, Canasta rules and scoring, the detector runtime and layout reconstruction."""

"""HTTP routes, one module per resource: health, stateless scan/score, games, deals."""

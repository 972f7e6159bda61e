"""The meld-confidence bench: its logistic fit and its review figures."""

from __future__ import annotations

import numpy as np

from bench.meld_confidence import fit, report


def test_fit_recovers_a_known_logistic_model():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4000, 2))
    true_w = np.array([1.5, -2.0, 0.5])  # weights, then bias
    p = 1.0 / (1.0 + np.exp(-(x @ true_w[:2] + true_w[2])))
    y = (rng.random(4000) < p).astype(float)
    w = fit(x, y, l2=1e-6)
    assert np.allclose(w, true_w, atol=0.2)


def test_report_counts_wrong_melds_sent_to_review_and_silent_deals():
    melds = [
        {"confidence": 0.97, "right": True, "reviewed": False, "low_card": False},
        {"confidence": 0.96, "right": True, "reviewed": False, "low_card": True},
        {"confidence": 0.30, "right": False, "reviewed": True, "low_card": False},
        {"confidence": 0.92, "right": False, "reviewed": False, "low_card": False},
    ]
    scenes = [{"right": True, "silent": False}, {"right": False, "silent": True}]
    r = report(melds, scenes)
    assert r["wrong"] == 2
    assert r["wrong_reviewed"] == 0.5 and r["right_reviewed"] == 0.0
    assert r["wrong_shown"] == 0.5 and r["right_shown"] == 0.5
    assert r["deals_right"] == 0.5 and r["deals_silent_wrong"] == 0.5
    bands = {b["band"]: b for b in r["reliability"]}
    assert bands["0.20-0.40"]["melds"] == 1 and bands["0.20-0.40"]["right"] == 0.0
    assert bands["0.95-1.00"]["melds"] == 2 and bands["0.95-1.00"]["right"] == 1.0

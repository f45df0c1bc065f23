"""Chapter "How the cost grows with the size of the problem": its module (onelayer.chapters.scaling)."""

from __future__ import annotations

import math

import pytest

from onelayer.chapters import scaling as chapter
from onelayer.trees import scaling as tree_scaling

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "chapter"}


def test_critical_m_table_and_slopes_follow_the_rows():
    _, numbers = chapter.walks_critical_m(quick=True)
    Ns = chapter.SETTINGS.critical_quick_Ns
    assert set(numbers["slopes"]) == set(chapter.SETTINGS.critical_labels)
    assert sorted(r["N"] for r in numbers["table"]) == sorted(Ns * 2)
    raw = chapter.critical_sets(quick=True)
    for label, rows in raw.items():
        # the threshold M grows with N under either reading, so a fitted exponent is positive
        assert numbers["slopes"][label]["slope"] > 0
        assert [r["M_for_N"] for r in rows] == [math.ceil(N**1.5) for N in Ns]
        for r in rows:
            assert r["ratio"] == pytest.approx(r["M_crit"] / r["N"] ** 1.5, rel=1e-12)  # tol: the same quotient


def test_walks_glue_reads_the_curve_rows():
    rows = chapter.walks_table()  # the chapter's grid (the quick one stops before the small-M sizes converge)
    glue = chapter.walks_glue()
    curve = [r for r in rows if r["sweep"] == "curve"]
    assert glue["w_curve_Nmax"] == max(r["N"] for r in curve)
    assert glue["w_curve_Tpar"] == sorted({int(r["T_parent"]) for r in curve})
    assert glue["w_smallM"] == min(r["M"] for r in rows if r["sweep"] == "M")


def test_eta_exercise_matches_the_population_recursion():
    rows = chapter.eta_table()
    s = chapter.SETTINGS
    assert [r["lr"] for r in rows] == list(s.eta_lrs)
    assert rows[1]["T"] == tree_scaling.population_steps(s.eta_m, s.eta_S, lr=rows[1]["lr"])
    products = [r["lr x T"] for r in rows]
    # the heuristic: only eta t matters, so eta T is nearly constant (within 10% here)
    assert max(products) / min(products) < 1.1


def test_half_p_sizes_lie_on_the_curve():
    rows = chapter.half_p_table()
    assert [(r["N"], r["M"]) for r in rows] == [(N, math.ceil(N**1.5)) for N in chapter.SETTINGS.half_Ns]
    assert all(r["p"] == 0.5 for r in rows)  # exact: the setting itself


def test_verdict_rows_have_the_contract_keys_and_follow_their_measurement():
    rows = chapter.verdict_rows()
    assert rows and all(set(r) == KEYS for r in rows)
    assert all(r["chapter"] == "scaling" and r["verdict"] in ("holds", "fails") for r in rows)
    constant = rows[0]
    assert "/" in constant["measurement"] and "[" in constant["measurement"]  # a rate k/n with its interval

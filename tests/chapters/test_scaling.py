"""Chapter "How the cost grows with the size of the problem": its module (onelayer.chapters.scaling)."""

from __future__ import annotations

import math

import pytest

from onelayer.chapters import scaling as chapter
from onelayer.verdicts import scaling as verdicts
from onelayer.studies.trees.scaling import runs as ts_runs
from onelayer.studies.walks.scaling import summary as ws_summary

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


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
    assert rows[1]["T"] == ts_runs.population_steps(s.eta_m, s.eta_S, lr=rows[1]["lr"])
    products = [r["lr x T"] for r in rows]
    # the heuristic: only eta t matters, so eta T is nearly constant (within 10% here)
    assert max(products) / min(products) < 1.1


def test_half_p_sizes_lie_on_the_curve():
    rows = chapter.half_p_table()
    assert [(r["N"], r["M"]) for r in rows] == [(N, math.ceil(N**1.5)) for N in chapter.SETTINGS.half_Ns]
    assert all(r["p"] == 0.5 for r in rows)  # exact: the setting itself


def test_verdict_rows_have_the_contract_keys_and_follow_their_measurement():
    rows = chapter.verdict_rows()
    assert rows and all(KEYS <= set(r) <= KEYS | {"rates"} for r in rows)
    assert all(r["chapter"] == "scaling" and r["verdict"] in ("holds", "holds in most runs", "fails") for r in rows)
    constant = rows[0]
    assert "/" in constant["measurement"] and "[" in constant["measurement"]  # a rate k/n with its interval
    assert rows[1]["measurement"].count("95% t interval") == 2 and rows[2]["measurement"].count("95% t interval") == 2
    assert "deterministic" in rows[3]["measurement"]
    assert "/" in rows[4]["measurement"] and "[" in rows[4]["measurement"]  # runs within 0.1: a rate


def test_seed_exponents_fit_each_seed_of_the_quick_grids():
    exps = chapter.seed_exponents(quick=True)
    assert list(exps)[:2] == ["log_odds2 vs M", "log_odds2 vs N"]
    assert set(list(exps)[2:]) == set(chapter.SETTINGS.critical_labels)
    for e in exps.values():
        assert e["n"] == len(e["slopes"]) >= 2 and e["low"] <= e["mean"] <= e["high"]
    # the step-2 logits are exactly (M/2) a + (M/2)^2 b: every seed's log-odds exponent in M is near 2 (the quick grid
    # has 300 walks and three sizes, so a seed strays further than on the chapter's grid)
    assert all(1.5 < v < 3.5 for v in exps["log_odds2 vs M"]["slopes"])


def test_seed_slopes_skip_a_seed_that_never_selects():
    slopes = ws_summary.seed_slopes([10, 20, 40], [[1.0, float("nan")], [2.0, float("nan")], [4.0, 5.0]])
    assert slopes == [pytest.approx(1.0, rel=1e-12)]  # tol: a least-squares fit of exact powers


def test_reader_tables_fit_the_column():
    tables = chapter.walks_reader_tables(quick=True)
    assert all(len(chapter.WALKS_COLUMNS) <= 6 and set(chapter.WALKS_COLUMNS) <= set(r) for rows in tables.values() for r in rows)
    assert len(chapter.STORED_COLUMNS) <= 6 and len(chapter.TREES_COLUMNS) <= 6 and len(chapter.CRITICAL_COLUMNS) <= 6
    trees = chapter.trees_table(quick=True)
    assert set(trees) == {"depth", "labels"} and all(set(chapter.TREES_COLUMNS) <= set(r) for r in trees["depth"])


def test_sgd_follows_counts_every_stored_run():
    follows = chapter.sgd_follows()
    gaps = chapter.trees_gaps()
    assert follows["rate"].n == sum(len(g["seed_max_gaps"]) for g in gaps)
    assert follows["largest"] == pytest.approx(max(g["max_weight_gap"] for g in gaps), rel=1e-12)  # tol: the same maximum


def test_constant_verdict_follows_the_interval():
    from onelayer.rates import rate

    assert verdicts.constant_verdict({"rate": rate(60, 60), "run_steps": [3]}) == "holds"
    assert verdicts.constant_verdict({"rate": rate(59, 60), "run_steps": [3]}) == "holds in most runs"
    assert verdicts.constant_verdict({"rate": rate(59, 60), "run_steps": [3, 4]}) == "fails"  # not one constant step
    assert verdicts.constant_verdict({"rate": rate(8, 20), "run_steps": [3]}) == "fails"  # interval reaches below 1/2


def test_constant_steps_counts_the_runs_of_the_curve():
    const = chapter.constant_steps()
    rows = [r for r in chapter.walks_study()["curve"] if r["N"] >= 49]
    n = len(chapter.SETTINGS.walks_seeds)
    assert const["rate"].n == n * len(rows) and n >= 20
    assert const["rate"].n - const["rate"].k == len(const["failed"])
    for f in const["failed"]:
        assert f["lag"] != 1 and f["seed"] in chapter.SETTINGS.walks_seeds
    assert chapter.failed_text([{"N": 193, "seed": 11, "lag": 2}]) == "N=193, seed 11: attention settles on x_(N-2)"


def test_full_grids_are_the_stored_seed_study(monkeypatch):
    """Full mode reads the stored study walks-scaling-seeds (the verdicts' evidence), and refuses one whose seeds are
    not the chapter's."""
    from onelayer.studies.walks.scaling import seeds as ws_seeds

    stored = ws_seeds.load()
    loaded = chapter._stored_seeds()
    assert chapter.walks_study() is loaded["grids"] and loaded["seeds"] == stored["seeds"] == chapter.SETTINGS.walks_seeds
    assert {axis: [(r["N"], r["M"]) for r in rows] for axis, rows in loaded["grids"].items()} == \
        {axis: [(r["N"], r["M"]) for r in rows] for axis, rows in stored["grids"].items()}
    sets = chapter.critical_sets()
    assert list(sets) == list(chapter.SETTINGS.critical_labels)
    assert sets[chapter.SETTINGS.critical_labels[0]] is loaded["critical"]["attention"]
    assert sets[chapter.SETTINGS.critical_labels[1]] is loaded["critical"]["log_odds"]
    monkeypatch.setattr(ws_seeds, "load", lambda: {**stored, "seeds": (0, 1)})
    chapter._stored_seeds.cache_clear()
    try:
        with pytest.raises(ValueError, match="walks_seeds"):
            chapter._stored_seeds()
    finally:
        chapter._stored_seeds.cache_clear()

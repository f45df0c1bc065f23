"""Chapter "Variations the reviewers asked about": its module (onelayer.chapters.walks.variations)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from onelayer.chapters.walks import variations as chapter
from onelayer.studies.walks import rebuttal
from onelayer.studies.walks.variations import readings

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


@pytest.fixture(scope="module")
def rows():
    return chapter.verdict_rows()


def _row(rows, start):
    (found,) = [r for r in rows if r["claim"].startswith(start)]
    return found


def test_transition_matrices_are_stochastic_and_the_doubly_stochastic_one_has_uniform_columns():
    for kind in ("random", "doubly stochastic"):
        Pi = chapter.transition_matrix(kind)
        assert Pi.shape == (6, 6) and np.allclose(Pi.sum(axis=1), 1.0, atol=1e-12)  # tol: Dirichlet rows renormalised
    assert np.allclose(chapter.transition_matrix("doubly stochastic").sum(axis=0), 1.0, atol=1e-12)  # tol: sum of 0.7, 0.3
    with pytest.raises(ValueError, match="kind"):
        chapter.transition_matrix("ring")


def test_chain_first_step_formula_is_exact_and_near_mu_mu_T_at_full_length():
    first = chapter.chain_first_step()
    assert first["B"] == 5 ** 7 and first["small_error"] < 1e-12  # tol: one float64 GD step against the closed form
    assert np.isclose(first["mu"].sum(), 1.0, atol=1e-12)  # tol: a normalised law
    assert first["mu_mu_error"] < 0.02 * first["closed_max"]  # the informative terms are worth about 1/N of the sum


def test_quick_logit_scale_numbers_reparametrise_exactly():
    _, numbers = chapter.logit_scale(quick=True)
    assert numbers["equivalence"]["c2"] == pytest.approx(1 / 1006, rel=1e-12)  # tol: c^2 = 1/(K+M)
    assert numbers["equivalence"]["max_V_diff"] < 1e-12  # tol: round-off of 3 steps
    assert {(r["p"], r["logit_scale"]) for r in numbers["table"]} == {(p, s) for p in (0.5, 0.7) for s in ("one", "inv_sqrt_d")}


def test_residual_table_has_exactly_zero_differences():
    table = {r["quantity"]: r["value"] for r in chapter.residual()[1]["table"]}
    assert all(table[k] == 0 for k in ("output_diff", "grad_V_diff", "grad_W_diff", "V_diff", "W_diff"))  # exact: adds zeros


def test_verdict_rows_have_the_keys_and_follow_from_the_measurements(rows):
    assert all(KEYS <= set(r) <= KEYS | {"rates", "checks"} and r["chapter"] == "variations" for r in rows)
    assert _row(rows, "a residual")["verdict"] == "holds exactly"
    scale = _row(rows, "1/sqrt(d)")
    scale_rates = chapter.logit_scale_seed_rates()
    assert "20 seeds per p" in scale["settings"] and all(r["seeds"] >= 20 for r in scale_rates)
    for r in scale_rates:
        assert f"slower than scale 1 in {r['slower'].text()}" in scale["measurement"]
        assert r["same_end"].text() in scale["measurement"]
    assert scale["verdict"] == readings.logit_scale_verdict(scale_rates)
    lag = _row(rows, "with a parent at lag 2")
    lag_rates = chapter.lag_seed_rates()
    assert "20 seeds per p" in lag["settings"] and all(r["selected_2"].text() in lag["measurement"] for r in lag_rates)
    assert lag["verdict"] == readings.lag_verdict(lag_rates, True) and lag["verdict"].startswith("holds: formula exact")
    assert "one run" in _row(rows, "a residual")["settings"] and "one run" in _row(rows, "separate W_Q")["settings"]
    nopos = _row(rows, "without positions")
    found = re.findall(r"p=([\d.]+): fitted V \d+/\d+ = ([\d.]+) \[([\d.]+), ([\d.]+)\], bound ([\d.]+)", nopos["measurement"])
    assert [float(p) for p, *_ in found] == [0.5, 0.7, 1.0]
    for p, value, low, high, bound in ((float(x) for x in g) for g in found):
        assert low <= value <= high and value <= bound + 0.01  # the bound is exact; the fitted V's rate is sampled
        if p < 1:
            assert 1 / 6 < low and bound < 1 / 6 + 0.05  # beats chance, by a small margin
    assert nopos["verdict"].startswith("false as stated for p = 0.5, 0.7") and nopos["verdict"].endswith("holds at p = 1")
    chain = _row(rows, "the mechanism needs")
    assert chain["measurement"] == ("learned (95% Wilson intervals): doubly stochastic 20/20 = 1.000 [0.839, 1.000], "
                                    "non-uniform 1/20 = 0.050 [0.009, 0.236]")
    assert chain["verdict"] == ("mostly supported: every doubly stochastic chain is learned, and a minority of the "
                                "non-uniform ones (1/20)")
    assert _row(rows, "separate W_Q")["measurement"] == "max |grad W_Q| = 0, max |grad W_K| = 0"
    base = chapter.baseline_rates()
    small, big = chapter.SETTINGS.verdict_baseline_ns
    baseline = _row(rows, "a linear autoregressive")
    assert f"linear {base[big]['linear'].text()}, transformer {base[big]['transformer'].text()}" in baseline["measurement"]
    assert base[small]["linear_ahead"].n == len(chapter.SETTINGS.verdict_baseline_seeds) >= 20
    assert baseline["verdict"].startswith("confirmed: linear model optimal in every seed")


def test_the_baseline_row_is_the_short_run_of_the_verdict_settings(rows):
    direct = rebuttal.linear_baseline_table(ns=(30,), seeds=(0, 1, 2), steps=50)[0]
    shown = next(r for r in chapter.linear_baseline() if r["n"] == 30)
    assert shown["linear_optimal"] == pytest.approx(direct["linear_optimal"], abs=1e-12)
    assert shown["transformer_optimal"] == pytest.approx(direct["transformer_optimal"], abs=1e-12)
    assert direct["linear_optimal"] == pytest.approx(sum(direct["linear_optimal_seeds"]) / 3, abs=1e-12)  # tol: a mean


def test_the_chain_summary_counts_the_chain_table():
    summary = {r["kind"]: r for r in chapter.chain_summary()}
    table = chapter.chain_table()
    for kind, r in summary.items():
        k = sum(x["learned"] for x in table if x["kind"] == kind)
        assert r["learned"].startswith(f"{k}/{chapter.SETTINGS.n_chains} ")


def test_a_chain_table_with_a_learned_non_uniform_chain_is_not_supported(rows, monkeypatch):
    real = chapter.chain_table()
    monkeypatch.setattr(chapter, "chain_table", lambda: [{**r, "learned": True} for r in real])
    assert _row(chapter.verdict_rows(), "the mechanism needs")["verdict"] == "not supported on every chain tried"


def test_the_no_position_verdict_holds_when_no_fitted_v_beats_chance(monkeypatch):
    from onelayer.rates import rate

    monkeypatch.setattr(chapter, "linear_rates", lambda: {p: rate(3333, 20000) for p in chapter.SETTINGS.bound_ps})
    assert _row(chapter.verdict_rows(), "without positions")["verdict"] == "holds (no fitted V beats chance)"


def test_the_linear_rates_count_the_fresh_walks():
    rates = chapter.linear_rates()
    capacity = {r["p"]: r for r in chapter.no_position_capacity()}
    for p, r in rates.items():
        assert r.n == chapter.SETTINGS.capacity_walks
        assert r.value == pytest.approx(capacity[p]["linear_N97"], abs=1e-12)  # tol: k / n against a float mean


def test_the_bound_table_is_the_dynamic_programme_and_matches_the_enumeration_at_n13():
    _, numbers = chapter.no_position_bound(quick=True)
    table = {(r["p"], r["N"]): r["bound"] for r in numbers["table"]}
    assert sorted({N for _, N in table}) == list(chapter.SETTINGS.bound_Ns[:2])
    enumerated = {r["p"]: r["histogram_bayes_N13"] for r in chapter.no_position_capacity()}
    for p in chapter.SETTINGS.bound_ps:
        assert table[p, 13] == pytest.approx(enumerated[p], abs=1e-12)  # tol: two summation orders of 6 * 2^11 terms


def test_the_seed_rates_give_t0_as_text():
    rows = [{"p": 0.5, "seed": 0, "T0_one": 3.0, "T0_inv_sqrt_d": 20.0, "optimal_inv_sqrt_d": 1.0, "parent_inv_sqrt_d": 0.995},
            {"p": 0.5, "seed": 1, "T0_one": 3.0, "T0_inv_sqrt_d": float("nan"), "optimal_inv_sqrt_d": 0.6,
             "parent_inv_sqrt_d": 0.001},
            {"p": 0.5, "seed": 2, "T0_one": 5.0, "T0_inv_sqrt_d": 4.0, "optimal_inv_sqrt_d": 1.0, "parent_inv_sqrt_d": 0.999}]
    (r,) = chapter.logit_scale_seed_rates(rows)
    assert r["T0_scaled"] == "12 (4-20), 1 never" and r["T0_one"] == "3 (3-5)" and r["slower"].k == 2
    lag_rows = [{"p": 0.5, "seed": s, "lag": 2, "lag_attention": [0.01, a, 0.9], "top_lag_end": top, "optimal_end": 1.0,
                 "T0": t} for s, (a, top, t) in enumerate(((0.995, 2, 3.0), (0.95, 4, float("nan"))))]
    (lr,) = chapter.lag_seed_rates(lag_rows)
    assert lr["T0"] == "3 (3-3), 1 never" and lr["selected_2"].k == 1  # above lag_selected = 0.99


def test_the_stored_study_has_the_chapter_settings():
    stored = chapter.seed_study()
    settings, s = stored["settings"], chapter.SETTINGS
    assert stored["quick"] is False and settings["seeds"] >= 20
    assert tuple(settings["scale_ps"]) == s.logit_scale_ps and settings["scale_steps"] == s.logit_scale_steps
    assert tuple(settings["lag_ps"]) == s.lag_ps and settings["lag_steps"] == s.lag_steps
    _, numbers = chapter.seed_rate_table(quick=True)
    assert [r["p"] for r in numbers["logit_scale"]] == sorted(s.logit_scale_ps)
    assert [r["p"] for r in numbers["lag"]] == sorted(s.lag_ps, reverse=True)


def test_the_seed_rate_glue_quotes_the_rates():
    glue = chapter.seed_rate_glue()
    scale = {r["p"]: r for r in chapter.logit_scale_seed_rates()}
    assert glue["var_ls_same_05"] == scale[0.5]["same_end"].text() and glue["var_ls_T0_07"] == scale[0.7]["T0_scaled"]
    assert glue["var_ls_other_05"] == scale[0.5]["same_end"].n - scale[0.5]["same_end"].k
    assert glue["var_ls_steps"] == chapter.SETTINGS.logit_scale_steps
    assert {f"var_lag_{k}_{t}" for k in ("sel", "opt") for t in ("05", "07")} | {"var_lag_end_05"} <= set(glue)
    assert "var_lag_end_07" not in glue  # the prose quotes the lag-2 end state at p = 0.5 only


def test_the_chain_table_is_the_stored_study_and_refuses_another_size(monkeypatch):
    from dataclasses import replace

    from onelayer.studies.walks import chain_seeds

    stored = chain_seeds.load()
    assert chapter.chain_table() == stored["rows"]
    monkeypatch.setattr(chain_seeds, "load", lambda: {**stored, "settings": replace(stored["settings"], n_chains=3)})
    chapter.chain_table.cache_clear()
    try:
        with pytest.raises(ValueError, match="n_chains"):
            chapter.chain_table()
    finally:
        chapter.chain_table.cache_clear()


def test_the_baseline_rates_refuse_a_stored_study_with_other_seeds(monkeypatch):
    from dataclasses import replace

    from onelayer.studies.walks import baseline_seeds

    stored = baseline_seeds.load()
    monkeypatch.setattr(baseline_seeds, "load", lambda: {**stored, "settings": replace(stored["settings"], seeds=(0, 1))})
    chapter.baseline_rates.cache_clear()
    try:
        with pytest.raises(ValueError, match="verdict_baseline_seeds"):
            chapter.baseline_rates()
    finally:
        chapter.baseline_rates.cache_clear()

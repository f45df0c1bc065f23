"""Readings of the variations' stored runs and studies (onelayer.studies.walks.variations.readings)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.rates import rate
from onelayer.studies.walks import baseline_seeds
from onelayer.studies.walks.variations import readings


def test_the_seed_rates_count_the_stored_rows():
    rows = [{"p": 0.5, "seed": 0, "T0_one": 3.0, "T0_inv_sqrt_d": 20.0, "optimal_inv_sqrt_d": 1.0, "parent_inv_sqrt_d": 0.995},
            {"p": 0.5, "seed": 1, "T0_one": 3.0, "T0_inv_sqrt_d": float("nan"), "optimal_inv_sqrt_d": 0.6,
             "parent_inv_sqrt_d": 0.001},
            {"p": 0.5, "seed": 2, "T0_one": 5.0, "T0_inv_sqrt_d": 4.0, "optimal_inv_sqrt_d": 1.0, "parent_inv_sqrt_d": 0.999}]
    (r,) = readings.logit_scale_rates(rows)
    # a run never optimal counts as slower; seed 2 is faster with the scale
    assert (r["slower"].k, r["slower"].n, r["same_end"].k) == (2, 3, 2) and r["other_seeds"] == [1]
    assert r["other_parent_max"] == 0.001 and list(r["T0_one"]) == [3.0, 3.0, 5.0]
    lag_rows = [{"p": 0.5, "seed": s, "lag": 2, "lag_attention": [0.01, a, 0.9], "top_lag_end": top, "optimal_end": 1.0,
                 "T0": 3.0} for s, (a, top) in enumerate(((0.995, 2), (0.95, 4)))]
    (lr,) = readings.lag_rates(lag_rows, 0.99)
    assert (lr["selected_2"].k, lr["on_lag_end"].k, lr["optimal_end"].k, lr["other_lags"]) == (1, 1, 2, [4])
    assert lr["lowest_2"] == 0.95 and readings.lag_rates(lag_rows, 0.9)[0]["selected_2"].k == 2


def test_the_verdict_words_follow_the_rates():
    every = {"slower": rate(20, 20), "same_end": rate(20, 20)}
    most = {"slower": rate(20, 20), "same_end": rate(18, 20)}
    assert readings.logit_scale_verdict([every, every]) == "holds in every seed"
    assert readings.logit_scale_verdict([every, most]) == "holds in most seeds"
    assert readings.logit_scale_verdict([every, {"slower": rate(20, 20), "same_end": rate(9, 20)}]).startswith("fails")
    sel = [{"p": 0.7, "selected_2": rate(20, 20)}, {"p": 0.5, "selected_2": rate(19, 20)}]
    assert readings.lag_verdict(sel, True) == ("holds: formula exact; attention on x_(N-2) after step 2 in every seed at "
                                               "p=0.7, most seeds at p=0.5")
    half = [{"p": 0.7, "selected_2": rate(20, 20)}, {"p": 0.5, "selected_2": rate(10, 20)}]
    assert readings.lag_verdict(half, True).startswith("partly: formula exact") and "about half of the seeds" in \
        readings.lag_verdict(half, True)
    assert readings.lag_verdict(sel, False).startswith("fails")
    assert readings.share_text(rate(20, 20), "x").startswith("confirmed") and "3/20" in readings.share_text(rate(3, 20), "x")
    assert readings.share_text(rate(0, 20), "x").startswith("not confirmed")


def test_a_lag_row_reads_the_run():
    run = {"V1_error": 0.0, "V1_scale": 1.0, "population_V1_column_max_offsets": [1], "sample_V1_column_max_offsets": [1],
           "closed_form_circulant": True, "closed_form_offsets": [1], "steps": np.array([0, 1, 2, 3, 5]),
           "optimal_fraction": np.array([0.1, 0.5, 1.0, 0.9, 1.0]), "lag_attention": np.array([0.1, 0.2, 0.9, 0.95, 1.0]),
           "parent_attention": np.array([0.1, 0.3, 0.05, 0.0, 0.0]), "test_accuracy": np.array([0.2, 0.4, 0.6, 0.6, 0.7])}
    row = readings.lag_row(0.7, run)
    assert row["T0"] == 5  # optimal from step 2, then not at step 3: the last time it becomes optimal
    assert row["lag_attention_1_3"] == [0.2, 0.9, 0.95] and row["parent_attention_2"] == 0.05
    assert row["test_accuracy_end"] == 0.7


def test_the_chain_rows_and_numbers_read_the_last_step():
    run = {"token_spread_step2": 0.0, "position_gap_step2": 2.0, "parent_step2": 0.5, "V1_rel_error": 0.0, "Pi": 1, "mu": 2,
           "T0": 4, "bayes_test": 0.8, "parent_attention": np.array([0.2, 0.9]), "optimal_fraction": np.array([0.5, 1.0]),
           "test_accuracy": np.array([0.3, 0.75]), "d": {"Pi^T": np.array([1.0, 0.25])}}
    rows = {r["quantity"]: r["value"] for r in readings.chain_rows(run)}
    assert rows["attention on the parent, last step"] == 0.9 and rows["distance of V's direction to Pi^T"] == 0.25
    assert len(rows) == 8
    final = readings.chain_numbers(run)["final"]
    assert final == {"parent_attention": 0.9, "optimal_fraction": 1.0, "test_accuracy": 0.75, "d Pi^T": 0.25}


def test_the_chain_kinds_baseline_and_linear_rates_count():
    chains = [{"kind": "doubly stochastic", "learned": True, "mu_spread": 0.0, "parent_attention": 0.99},
              {"kind": "non-uniform", "learned": False, "mu_spread": 0.3, "parent_attention": 0.2},
              {"kind": "non-uniform", "learned": True, "mu_spread": 0.1, "parent_attention": 0.9}]
    ds, nu = readings.chain_kinds(chains)
    assert (ds["learned"].k, ds["learned"].n, nu["learned"].k, nu["learned"].n) == (1, 1, 1, 2)
    assert nu["mu_spread"] == (0.1, 0.3) and nu["parent_attention"] == (0.2, 0.9)
    base = readings.baseline_rates([{"n": 30, "linear_optimal_seeds": [1.0, 0.5, 0.995],
                                     "transformer_optimal_seeds": [0.9, 0.6, 0.995]}], 0.99)
    assert (base[30]["linear"].k, base[30]["transformer"].k, base[30]["linear_ahead"].k) == (2, 1, 1)
    lin = readings.linear_rates([{"p": 0.5, "linear_N97": 0.25}], 20000)
    assert (lin[0.5].k, lin[0.5].n) == (5000, 20000)


def test_a_stored_study_with_other_settings_is_refused():
    stored = baseline_seeds.Settings()
    readings.check_stored(baseline_seeds.STUDY, stored, {"p": stored.p, "seeds": stored.seeds}, "p")
    with pytest.raises(ValueError, match="walks-baseline-seeds has p=0.7, seeds=.*the chapter's baseline_p differ"):
        readings.check_stored(baseline_seeds.STUDY, stored, {"p": 0.5, "seeds": stored.seeds}, "baseline_p")

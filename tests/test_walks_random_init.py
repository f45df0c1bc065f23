"""Section 5.2 of the walks paper (book/walks/random_init.ipynb): random initialisation and the stored study."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from onelayer.rates import rate
from onelayer.walks.model import WalkTransformer
from onelayer.walks.data import walk_population
from onelayer.studies import registry, runner
from onelayer.studies.walks.random_init import readings as ri_readings, runs as ri_runs, stored as ri_stored
from onelayer.figures import walks_random_init as random_init_figures


@pytest.fixture(scope="module")
def study():
    return ri_stored.payload(registry.load(ri_stored.STUDY.name))


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    report = runner.run(ri_stored.STUDY, quick=True, out=tmp_path_factory.mktemp("ri") / "quick.json")
    return ri_stored.payload(registry.load(ri_stored.STUDY.name, path=report.path))


# -- the stored study ---------------------------------------------------------------------------------------------------

def test_stored_study_is_complete(study):
    meta = study["meta"]
    for key in ("K", "N", "M", "sigma", "epsilon", "n_train", "n_test", "steps"):
        assert meta[key] == ri_runs.PAPER[key], key
    assert [tuple(r) for r in meta["readings"]] == list(ri_runs.READINGS)
    assert meta["seeds"] == list(range(20)) and meta["detail_seeds"] == [0, 1, 2]
    expected = len(meta["normalizations"]) * len(meta["readings"]) * len(meta["ps"]) * len(meta["seeds"])
    assert len(study["runs"]) == expected == 720
    for r in study["runs"]:
        assert r["steps"][0] == 0 and r["steps"][-1] == 1000
        detail = r["config"]["seed"] in meta["detail_seeds"]
        assert set(r["curves"]) == (set(ri_runs.RECORD_KEYS) if detail else {"optimal_fraction"})
        assert ("V" in r) == ("profile" in r) == detail
        assert set(r["final"]) == set(ri_runs.RECORD_KEYS)
        assert r["final"]["optimal_fraction"] == r["curves"]["optimal_fraction"][-1]  # exact: the same stored number
        assert 0 <= r["peak"][0] < meta["N"] and 0 < r["peak"][1] <= 1
        assert sorted(r["table"], key=int) == [str(s) for s in ri_runs.TABLE_STEPS]


def test_a_summary_run_is_reproducible(study):
    """Recompute one whole summary run (seed 7, 1000 steps) and compare every stored number."""
    settings = dict(p=0.5, normalize="keys", reduction="mean", lr=1.0, seed=7)
    live = ri_runs.run_config(ri_runs.RunConfig(**settings), detail=False)
    stored = ri_readings.find_run(study, **settings)
    assert live.pop("seconds") > 0  # the wall time, which the study does not store (a measure of the machine)
    assert set(live) == set(stored) and live["steps"] == stored["steps"]
    np.testing.assert_allclose(live["curves"]["optimal_fraction"], stored["curves"]["optimal_fraction"], rtol=1e-7,
                               atol=1e-9)  # tol: 10 stored digits
    for k in ri_runs.RECORD_KEYS:
        np.testing.assert_allclose(live["final"][k], stored["final"][k], rtol=1e-7, atol=1e-9, err_msg=k)
    assert live["peak"][0] == stored["peak"][0]
    np.testing.assert_allclose(live["peak"][1], stored["peak"][1], rtol=1e-7)  # tol: 10 stored digits
    for s in ri_runs.TABLE_STEPS:
        for part in ("example", "variance"):
            np.testing.assert_allclose(live["table"][str(s)][part], stored["table"][str(s)][part], rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("settings", [
    dict(p=1.0, normalize="keys_and_query", reduction="mean", lr=0.01, seed=0),
    dict(p=1.0, normalize="keys", reduction="mean", lr=0.01, seed=1),
    dict(p=0.5, normalize="keys_and_query", reduction="sum", lr=0.1, seed=2),
    dict(p=1.0, normalize="none", reduction="mean", lr=3.0, seed=19),
])
@pytest.mark.recompute
def test_stored_runs_are_reproducible(study, settings):
    """Recompute the first 100 steps of a stored run and compare every recorded number."""
    live = ri_runs.run_config(ri_runs.RunConfig(**settings), steps=100, table_steps=(100,), snapshot_steps=(100,))
    stored = ri_readings.find_run(study, **settings)
    n = len(live["steps"])
    assert live["steps"] == stored["steps"][:n]
    for k in stored["curves"]:  # every curve of a detailed run, the optimal fraction of a summary
        np.testing.assert_allclose(live["curves"][k], stored["curves"][k][:n], rtol=1e-7, atol=1e-9, err_msg=k)
    if "V" in stored:
        np.testing.assert_allclose(live["V"]["100"], stored["V"]["100"], rtol=1e-7, atol=1e-9)
    for part in ("example", "variance"):
        np.testing.assert_allclose(live["table"]["100"][part], stored["table"]["100"][part], rtol=1e-6, atol=1e-12)


def test_no_reading_reproduces_the_papers_ordering(study):
    rows = ri_readings.ordering_table(study)
    assert len(rows) == 360
    assert sum(r["paper_pattern"] for r in rows) == 0
    per = ri_readings.setting_rates(rows)
    assert len(per) == 18 and all(r["n"] == 20 and r["p=0.5 only"].k == 0 for r in per)
    assert all(r["p=0.5 only"].high < 0.17 for r in per)  # 0/20: Wilson upper bound 0.161
    first = [r["first"] for r in rows]
    assert first.count("p=1") > 5 * first.count("p=0.5")
    literal = [r for r in rows if (r["normalize"], r["reduction"], r["lr"]) == ("keys_and_query", "mean", 0.01)]
    assert [r["first"] for r in literal] == ["neither"] * 20
    assert all(abs(r["final_one"] - 1 / 6) < 0.05 for r in literal)


def test_closest_reading_to_the_authors_table(study):
    dist = {}
    for r in study["runs"]:
        c = r["config"]
        if c["p"] == 1.0:  # exact: a config value read back
            dist.setdefault((c["normalize"], c["reduction"], c["lr"]), []).append(ri_readings.table_distance(r))
    best = min(dist, key=lambda k: np.mean(dist[k]))
    assert best == ("keys_and_query", "mean", 1.0)
    assert np.mean(dist[best]) < 1.0 < np.mean(dist[("keys_and_query", "mean", 0.01)])
    tv = ri_readings.table_variances(study, normalize=best[0], reduction=best[1], lr=best[2])
    assert tv["seeds"] == 20 and tv["pattern"].low > 0.5  # the authors' picture in most seeds
    assert all(s["log10_ratio"][2] < 0 for s in tv["steps"])  # ours smaller than theirs at every step
    run = ri_readings.find_run(study, p=1.0, normalize=best[0], reduction=best[1], lr=best[2], seed=0)
    var = [np.mean(run["table"][str(s)]["variance"]) for s in ri_runs.TABLE_STEPS]
    assert all(b > a for a, b in zip(var, var[1:]))  # the perturbation grows, as in the authors' table
    assert run["curves"]["optimal_fraction"][-1] < 0.5  # p = 1 not learned within 1000 steps


# -- the pieces ----------------------------------------------------------------------------------------------------------

def test_sum_is_mean_with_a_larger_step():
    a = ri_runs.run_config(ri_runs.RunConfig(p=0.5, reduction="sum", lr=0.01), steps=20, record_every=10, table_steps=(),
                      snapshot_steps=(20,), N=25, M=200, n_train=1000, n_test=100)
    b = ri_runs.run_config(ri_runs.RunConfig(p=0.5, reduction="mean", lr=10.0), steps=20, record_every=10, table_steps=(),
                      snapshot_steps=(20,), N=25, M=200, n_train=1000, n_test=100)
    assert ri_runs.RunConfig(p=0.5, reduction="sum", lr=0.01).effective_lr == pytest.approx(10.0)
    assert np.abs(np.array(a["V"]["20"]) - np.array(b["V"]["20"])).max() < 1e-10


def test_weighted_token_is_constant_in_the_symmetric_state():
    """Theorem 4.1's picture: from zero, p = 1, N = rK + 1, exact positions: X S is the same for every walk."""
    model = WalkTransformer(K=6, N=25, M=100, positions="exact")
    data = walk_population(6, 1.0, 25)
    hist = model.train(model.init(), data, steps=5, lr=1.0)
    example, var = ri_runs.weighted_token_stats(model, hist.params, data)
    assert np.allclose(example, example[0]) and var.max() < 1e-30


def test_optimal_fraction_and_learned_step():
    from onelayer.walks import ring

    Pi = ring.transition_matrix(6, 0.5)
    last = torch.tensor([0, 0, 3, 3])
    pred = torch.tensor([1, 5, 3, 2])  # optimal, optimal, not, optimal
    assert ri_runs.optimal_fraction(pred, last, Pi) == pytest.approx(0.75)
    assert ri_readings.learned_step([0, 10, 20, 30], [0.1, 0.96, 0.5, 0.97]) == 30.0  # exact: a recorded step
    assert ri_readings.learned_step([0, 10, 20], [0.99, 0.99, 0.99]) == 0.0  # exact: a recorded step
    assert np.isnan(ri_readings.learned_step([0, 10], [0.99, 0.5]))


def test_table_distance_of_the_authors_table_is_zero():
    fake = {"table": {str(s): {"example": list(ex), "variance": list(v)} for s, (ex, v) in ri_runs.AUTHORS_TABLE.items()}}
    assert ri_readings.table_distance(fake) == 0.0  # exact: the same mean twice, log10(x / x) = 0
    fake10 = {"table": {k: {"variance": [10 * x for x in v["variance"]]} for k, v in fake["table"].items()}}
    assert ri_readings.table_distance(fake10) == pytest.approx(1.0)
    assert np.isnan(ri_readings.table_distance({"table": {}}))


def test_quick_study_and_figures(quick):
    assert len(quick["runs"]) == 4 and quick["meta"]["N"] == 13
    rows = ri_readings.ordering_table(quick)
    assert len(rows) == 2
    run = quick["runs"][1]
    for fig in (random_init_figures.figure_curves({"a": quick["runs"][0], "b": run}), random_init_figures.figure_ordering(rows),
                random_init_figures.figure_weighted_token(run), random_init_figures.figure_value_snapshots(run),
                random_init_figures.study_explorer(quick, "keys_and_query", "mean, lr=0.01", 0)):
        assert len(fig.axes) >= 1
        plt.close(fig)
    pytest.importorskip("ipywidgets")
    box = random_init_figures.study_widget(quick)
    assert len(box.cache) == 1
    plt.close("all")


@pytest.mark.recompute
def test_a_stored_member_is_recomputed_by_the_runner():
    """The cheapest member (one run of 1000 steps, about 2 s), recomputed by the runner, equals its record."""
    assert runner.verify(ri_stored.STUDY, sample=1, echo=None)


def test_random_init_validation_errors():
    with pytest.raises(ValueError, match="normalize"):
        ri_runs.RunConfig(p=0.5, normalize="query")
    with pytest.raises(ValueError, match="reduction"):
        ri_runs.RunConfig(p=0.5, reduction="median")
    with pytest.raises(ValueError, match="lr"):
        ri_runs.RunConfig(p=0.5, lr=0.0)
    with pytest.raises(ValueError, match="p must"):
        ri_runs.RunConfig(p=1.5)
    with pytest.raises(TypeError, match="cfg"):
        ri_runs.run_config({"p": 0.5})
    with pytest.raises(ValueError, match="threshold"):
        ri_readings.learned_step([0], [1.0], threshold=2.0)
    with pytest.raises(KeyError):
        ri_readings.find_run({"runs": []}, p=0.5, normalize="keys", reduction="mean", lr=1.0)


# -- the rates over seeds -------------------------------------------------------------------------------------------------

def _fake_run(p, seed, fractions, parent=0.0, lag2=0.0, normalize="keys", lr=1.0, variances=None, example=None):
    table = {str(s): {"example": list(example or [1 / 6] * 6), "variance": [v] * 6}
             for s, v in zip(ri_runs.TABLE_STEPS, variances or [1e-6] * len(ri_runs.TABLE_STEPS))}
    return {"config": {"p": p, "normalize": normalize, "reduction": "mean", "lr": lr, "seed": seed},
            "steps": [0, 10, 20], "curves": {"optimal_fraction": list(fractions)},
            "final": {"optimal_fraction": fractions[-1], "parent_attention": parent, "lag2_attention": lag2},
            "table": table}


def _fake_study():
    """Two settings x 4 seeds with known outcomes: setting A (lr=1) has the paper's pattern in seeds 0 and 1, both
    learned in seed 2 (p=1 first), neither in seed 3; setting B (lr=3) has p=1 only in every seed."""
    yes, no, late = [0.2, 0.96, 0.99], [0.2, 0.3, 0.4], [0.2, 0.5, 0.97]
    runs = []
    for seed, (half, one) in enumerate([(yes, no), (yes, no), (late, yes), (no, no)]):
        runs += [_fake_run(0.5, seed, half, parent=0.95 if seed else 0.02, lag2=0.01 if seed else 0.93),
                 _fake_run(1.0, seed, one, variances=[1e-6 * 10 ** k for k in range(5)])]
    for seed in range(4):
        runs += [_fake_run(0.5, seed, no, lr=3.0), _fake_run(1.0, seed, yes, lr=3.0, variances=[1e-3] * 5)]
    return {"meta": {"n_train": 1000}, "runs": runs}


def test_setting_rates_count_every_outcome_per_setting():
    rows = ri_readings.ordering_table(_fake_study())
    assert [r["outcome"] for r in rows[:4]] == ["p=0.5 only", "p=0.5 only", "both", "neither"]
    a, b = ri_readings.setting_rates(rows)
    assert (a["lr"], a["n"], b["lr"], b["n"]) == (1.0, 4, 3.0, 4)  # exact: config values read back
    assert [a[o].k for o in ri_readings.OUTCOMES] == [2, 0, 1, 1] and (a["both_n"], a["p=1 first"]) == (1, 1)
    assert [b[o].k for o in ri_readings.OUTCOMES] == [0, 4, 0, 0]
    assert a["p=0.5 only"].text() == rate(2, 4).text()
    with pytest.raises(TypeError, match="rows"):
        ri_readings.setting_rates("rows")


def test_learned_attention_over_all_learned_runs_and_per_setting():
    out = ri_readings.learned_attention(_fake_study())
    assert (out["all"]["n"], out["all"]["runs"]) == (3, 8)
    assert (out["all"]["parent"].k, out["all"]["lag2"].k) == (2, 1)
    a, b = out["settings"]
    assert (a["n"], a["parent"].k, a["lag2"].k) == (3, 2, 1) and (b["n"], b["parent"]) == (0, None)
    assert ri_readings.learned_attention(_fake_study(), attention=0.99)["all"]["parent"].k == 0
    with pytest.raises(ValueError, match="attention"):
        ri_readings.learned_attention(_fake_study(), attention=1.5)


def test_table_variances_over_the_seeds():
    out = ri_readings.table_variances(_fake_study(), normalize="keys", reduction="mean", lr=1.0)
    assert out["seeds"] == 4 and out["pattern"].k == 4  # every fake run grows by a decade a step, at 1/6
    for k, step in enumerate(out["steps"]):
        mean, lo, hi = step["variance"]
        assert mean == pytest.approx(1e-6 * 10 ** k, rel=1e-9) and lo == pytest.approx(mean, rel=1e-9)  # tol: equal seeds
        assert step["authors"] == pytest.approx(np.mean(ri_runs.AUTHORS_TABLE[step["step"]][1]), rel=1e-12)
        assert step["log10_ratio"][0] == pytest.approx(np.log10(mean / step["authors"]), abs=1e-9)
    flat = ri_readings.table_variances(_fake_study(), normalize="keys", reduction="mean", lr=3.0)
    assert flat["pattern"].k == 0  # constant variances do not grow
    with pytest.raises(ValueError, match="two seeds"):
        ri_readings.table_variances(_fake_study(), normalize="none", reduction="mean", lr=1.0)
    with pytest.raises(ValueError, match="drift"):
        ri_readings.table_variances(_fake_study(), normalize="keys", reduction="mean", lr=1.0, drift=0.0)


def test_summary_runs_keep_only_what_the_rates_need():
    kw = dict(steps=10, record_every=5, N=13, M=50, n_train=20, n_test=20, table_steps=(5,), snapshot_steps=(10,))
    full = ri_runs.run_config(ri_runs.RunConfig(p=0.5, seed=3), **kw)
    summary = ri_runs.run_config(ri_runs.RunConfig(p=0.5, seed=3), detail=False, **kw)
    assert set(full) - set(summary) == {"V", "profile"} and set(summary["curves"]) == {"optimal_fraction"}
    assert summary["curves"]["optimal_fraction"] == full["curves"]["optimal_fraction"]  # exact: the same run
    assert summary["final"] == full["final"] == {k: v[-1] for k, v in full["curves"].items()}  # exact: the same run
    prof = np.array(full["profile"])
    assert summary["peak"][0] == int(prof.argmax()) and summary["peak"][1] == pytest.approx(prof.max(), rel=1e-9)
    with pytest.raises(TypeError, match="detail"):
        ri_runs.run_config(ri_runs.RunConfig(p=0.5), detail="no", **kw)


@pytest.mark.recompute
def test_the_initial_attention_study_is_recomputed():
    """The cheapest stored member of walks-initial-attention (one initialisation scored on 1000 test walks)."""
    from onelayer.studies.walks.random_init import initial_attention

    assert runner.verify(initial_attention.STUDY, sample=1, echo=None)


def test_table_variances_factor_and_learned_attention_differences():
    out = ri_readings.table_variances(_fake_study(), normalize="keys", reduction="mean", lr=1.0)
    assert out["factor"] == pytest.approx(10 ** np.mean([s["log10_ratio"][0] for s in out["steps"]]), rel=1e-12)
    assert out["smaller"] == all(s["log10_ratio"][2] < 0 for s in out["steps"])
    assert ri_readings.learned_attention(_fake_study())["parent_differs"] is False  # one setting has learned runs


def test_pattern_by_normalization_pools_the_settings_of_each_normalisation():
    per = ri_readings.setting_rates(ri_readings.ordering_table(_fake_study()))
    (g,) = ri_readings.pattern_by_normalization(per)
    assert g["normalize"] == "keys" and g["settings"] == per and g["seeds"] == [4]
    assert (g["pooled"].k, g["pooled"].n) == (2, 8)  # seeds 0 and 1 of setting A


def test_distance_intervals_and_token_table():
    ranking = ri_readings.reading_distances(_fake_study())
    rows = ri_readings.distance_intervals(ranking)
    assert [r["reading"] for r in rows] == [k for k, _ in ranking] and all(r["seeds"] == 4 for r in rows)
    assert all(r["low"] <= r["mean"] <= r["high"] for r in rows)
    run = _fake_study()["runs"][1]
    table = ri_readings.token_table(run)
    assert [r["step"] for r in table] == list(ri_runs.TABLE_STEPS) and table[0]["ours"] == [1 / 6] * 6
    assert table[0]["authors"] == list(ri_runs.AUTHORS_TABLE[ri_runs.TABLE_STEPS[0]][0])
    assert table[2]["variance, ours"] == pytest.approx(1e-4, rel=1e-12)


def test_endpoint_rows_read_the_ends_of_the_curves():
    curves = {"optimal_fraction": [0.1, 0.9], "kl": [2.0, 0.5], "parent_attention": [0.01, 0.8], "top_attention": [0.02, 0.85]}
    (row,) = ri_readings.endpoint_rows({"a": {"curves": curves}}, N=97)
    assert row == {"run": "a", "optimal_start": 0.1, "optimal_end": 0.9, "kl_start": 2.0, "kl_end": 0.5,
                   "parent_end": 0.8, "top_end": 0.85, "uniform": 1 / 97}


def test_reading_run_is_run_config_of_the_reading():
    sizes = {**ri_stored.run_sizes(ri_stored.QUICK), "steps": 5}
    a = ri_runs.reading_run(0.5, ("keys", "mean", 0.1), **sizes)
    b = ri_runs.run_config(ri_runs.RunConfig(p=0.5, normalize="keys", reduction="mean", lr=0.1), **sizes)
    assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}

"""Scaling of the walks model (onelayer.studies.walks.scaling): steps to converge against N and M, the step-2 threshold,
the stored study, the reductions, the figures and validation."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from onelayer import store  # noqa: E402
from onelayer.paths import data_path  # noqa: E402
from onelayer.studies import runner  # noqa: E402
from onelayer.studies.walks.scaling import critical as ws_critical, runs as ws_runs, seeds as ws_seeds, stored as ws_stored, summary as ws_summary  # noqa: E402
from onelayer.studies.walks import batched as sw  # noqa: E402
from onelayer.figures import walks_scaling as scaling_figures  # noqa: E402
from onelayer.walks.model import WalkTransformer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STORED = data_path(ws_stored.STORED)


@pytest.fixture(scope="module")
def quick_study():
    torch.set_default_dtype(torch.float64)
    return ws_runs.scaling_study(quick=True)


@pytest.fixture(scope="module")
def stored():
    return ws_stored.load(STORED)


# -- the measurement ----------------------------------------------------------------------------------------
def test_quick_study_rows(quick_study):
    assert set(quick_study) == set(ws_runs.AXES)
    for axis, rows in quick_study.items():
        assert [(r["N"], r["M"]) for r in rows] == ws_runs.default_sizes(axis, quick=True)
        for r in rows:
            assert r["axis"] == axis and r["seeds"] == 3
            for q in ("T_parent", "T_optimal"):
                assert 0 <= r[f"{q}_converged"] <= 3
                for key in (q, f"{q}_min", f"{q}_max"):
                    assert math.isnan(r[key]) or (r[key] == int(r[key]) and 2 <= r[key] <= 8), (key, r[key])
            assert r["seconds_per_step"] > 0
            assert r["log_odds_needed"] == pytest.approx(math.log(0.99 * (r["N"] - 1) / 0.01))


def test_per_seed_steps_and_lags_agree_with_the_summary(quick_study):
    for rows in quick_study.values():
        for r in rows:
            for q in ("T_parent", "T_optimal"):
                per_seed = np.asarray(r[f"{q}_seeds"], dtype=float)
                done = per_seed[np.isfinite(per_seed)]
                assert per_seed.size == r["seeds"] and done.size == r[f"{q}_converged"]
                if done.size:
                    assert (done.min(), done.max()) == (r[f"{q}_min"], r[f"{q}_max"])  # exact: integer steps
            assert len(r["top_lag_seeds"]) == r["seeds"] and all(1 <= lag <= r["N"] - 1 for lag in r["top_lag_seeds"])
            # a run whose attention passed 0.99 on the parent and stayed there attends to lag 1 at the end
            assert all(lag == 1 for T, lag in zip(r["T_parent_seeds"], r["top_lag_seeds"]) if np.isfinite(T))


def test_a_seed_that_locks_onto_lag_two_is_reported():
    """Along the curve at N = 193 (M = 2682), seed 11 of the scaling chapter settles on x_(N-2) (measured)."""
    row = ws_runs.measure([(193, 2682)], seeds=(11, 0), timing_steps=0)[0]
    assert row["top_lag_seeds"] == [2, 1] and math.isnan(row["T_optimal_seeds"][0]) and row["T_optimal_seeds"][1] == 3


def test_paper_size_converges_in_two_and_three_steps_and_small_M_is_slower():
    """Theorem 3.1 at the paper's size (N = 97, M = 1000), and the slowdown at M = 100 (measured: 5-8 steps)."""
    rows = ws_runs.measure([(97, 1000), (97, 100)], seeds=(0, 1, 2), n_test=300, timing_steps=0)
    paper, small = rows
    assert (paper["T_parent_min"], paper["T_parent_max"], paper["T_parent_converged"]) == (2, 2, 3)
    assert (paper["T_optimal_min"], paper["T_optimal_max"], paper["T_optimal_converged"]) == (3, 3, 3)
    assert paper["log_odds2"] > paper["log_odds_needed"]
    assert small["T_parent_converged"] == 3 and 5 <= small["T_parent_min"] <= small["T_parent_max"] <= 9
    assert small["log_odds2"] < small["log_odds_needed"]
    assert math.isnan(paper["seconds_per_step"])


def test_step2_log_odds_scale_like_M_squared_over_N_squared():
    rows = ws_runs.measure([(25, 400), (25, 800), (49, 800)], seeds=(0, 1), n_train=400, n_test=200, steps=2,
                      timing_steps=0)
    lo = [r["log_odds2"] for r in rows]
    assert lo[1] / lo[0] == pytest.approx(4.0, rel=0.05)  # M doubled
    assert 3.0 < lo[1] / lo[2] < 6.5  # N about doubled: the local exponent is near -2 (measured -2.4 here)


def test_step2_logits_are_quadratic_in_M():
    """The closed form behind critical_M: z = (M/2) A + (M/2)^2 B, checked against direct training at M = 300."""
    N, seeds = 25, (0, 1)
    A, B = ws_critical.step2_logit_parts(N, seeds=seeds, n_train=300, n_test=100)
    model = WalkTransformer(K=6, N=N, M=300)
    train = sw.walk_batched_data(6, N, 300, ps=0.7, seeds=seeds)
    test = sw.walk_batched_data(6, N, 100, ps=0.7, seeds=[s + 1000 for s in seeds])
    z = sw.forward_pass(model, sw.train_batched(model, train, steps=2).params, test)["z"]
    a = 150.0
    assert float((a * A + a * a * B - z).abs().max()) < 1e-8 * float(z.abs().max())


def test_critical_M_is_the_step2_threshold():
    rows = ws_critical.critical_M((13, 25, 49), seeds=(0,), n_train=400, n_test=200)
    M = [r["M_crit"] for r in rows]
    assert M[0] < M[1] < M[2]
    # at N = 25, one seed: just above M_crit the parent is selected at step 2, just below it is not
    N, Mc = 25, M[1]
    model_args = dict(K=6, N=N)
    train = sw.walk_batched_data(6, N, 400, ps=0.7, seeds=(0,))
    test = sw.walk_batched_data(6, N, 200, ps=0.7, seeds=(1000,))
    for factor, selected in ((1.02, True), (0.98, False)):
        model = WalkTransformer(M=int(round(factor * Mc)), **model_args)
        params = sw.train_batched(model, train, steps=2).params
        parent = float(sw.forward_pass(model, params, test)["S"][0, :, -2].mean())
        assert (parent >= 0.99) is selected, (factor, parent)
    leak = ws_critical.critical_M((13, 25, 49), seeds=(0,), n_train=400, n_test=200, criterion="log_odds", c=0.25)
    assert all(r["criterion"] == "log_odds" and r["selected"] == 1 for r in leak)


# -- the stored study ------------------------------------------------------------------------------------------
def test_stored_study_is_complete(stored):
    assert stored["meta"]["quick"] is False
    assert set(stored["studies"]) == {"p=0.7", "p=0.5"}
    for study in stored["studies"].values():
        assert set(study) == {"N", "M", "curve", "N_more_walks"}
        assert [r["M"] for r in study["M"]] == list(ws_runs.M_GRID)
        assert all(r["seeds"] == 16 for rows in study.values() for r in rows)
    assert set(stored["critical"]) == {"attention", "log_odds", "attention, more walks", "log_odds, more walks"}


def test_stored_point_is_reproducible(stored):
    """Recompute the stored curve point N = 13 (M = 47), p = 0.7, with all 16 seeds, and compare."""
    meta = stored["meta"]["defaults"]
    row = stored["studies"]["p=0.7"]["curve"][0]
    assert (row["N"], row["M"]) == (13, 47)
    live = ws_runs.measure([(13, 47)], p=0.7, seeds=meta["seeds"], n_train=meta["n_train"], n_test=meta["n_test"],
                      steps=meta["steps"], timing_steps=0, axis="curve")[0]
    for key in ("T_parent", "T_parent_min", "T_parent_max", "T_parent_converged", "T_optimal", "T_optimal_min",
                "T_optimal_max", "T_optimal_converged"):
        assert live[key] == row[key] or (math.isnan(live[key]) and math.isnan(row[key])), key
    assert live["log_odds2"] == pytest.approx(row["log_odds2"], rel=1e-9)


def test_stored_study_shows_the_measured_scaling(stored):
    """The claims of the module docstring, checked on the stored numbers."""
    study = stored["studies"]["p=0.7"]
    fits = ws_summary.slopes(study)
    assert fits["log_odds2 vs M"]["slope"] == pytest.approx(2.0, abs=0.05)
    assert -2.3 < fits["log_odds2 vs N"]["slope"] < -1.8
    assert all(r["T_parent"] == 2 and r["T_optimal"] == 3 for r in study["curve"] if r["N"] >= 49)
    lost_1000 = sum(r["seeds"] - r["T_parent_converged"] for r in study["N"])
    lost_more = sum(r["seeds"] - r["T_parent_converged"] for r in study["N_more_walks"])
    assert lost_more < lost_1000
    crit = {k: ws_summary.slopes({}, rows)[f"M_crit vs N ({rows[0]['criterion']})"]["slope"]
            for k, rows in stored["critical"].items()}
    assert 0.95 < crit["attention, more walks"] < 1.25 and 1.35 < crit["log_odds, more walks"] < 1.75


def test_the_study_keeps_the_first_scripts_rows_and_its_timings_as_measured(tmp_path):
    """The stored study is read in the first script's layout; a quick run through the runner stores the rows' wall
    seconds as measured fields (beside the result, not in it)."""
    from onelayer.studies import runner

    assert ws_stored.STUDY.measured == ("seconds_per_step", "member_seconds_per_step")
    out = tmp_path / "scaling.json"
    report = runner.run(ws_stored.STUDY, quick=True, out=out, only=["p0.5-curve-", "critical-log-odds-walks00200"])
    assert report.path is None and report.computed == 6
    member = store.read_json(runner.members_dir(out) / "p0.5-curve-N0013-M00047.json")
    assert set(member["measured"]) == set(ws_stored.STUDY.measured) and not set(member["result"]) & set(ws_stored.STUDY.measured)
    with pytest.raises(FileNotFoundError):
        ws_stored.load(tmp_path / "missing.json")


# -- the scaling chapter's 20-seed grids (walks-scaling-seeds) -------------------------------------------------------
def test_seed_study_holds_the_chapters_grids_with_every_seed():
    """The stored grids are the chapter's: every size of the three default grids and of the critical sets, 20 seeds
    each, with every seed's numbers (what the verdicts fit seed by seed) and the wall seconds as measured fields."""
    data = ws_seeds.load()
    assert data["seeds"] == tuple(range(20))
    for axis in ws_runs.AXES:
        rows = data["grids"][axis]
        assert [(r["N"], r["M"]) for r in rows] == ws_runs.default_sizes(axis)
        for r in rows:
            assert r["axis"] == axis and r["seeds"] == 20 and r["n_train"] == ws_runs.DEFAULTS["n_train"]
            assert all(len(r[k]) == 20 for k in ("log_odds2_seeds", "T_parent_seeds", "T_optimal_seeds", "top_lag_seeds"))
            assert r["T_optimal_converged"] == sum(math.isfinite(t) for t in r["T_optimal_seeds"])
            assert r["seconds_per_step"] > 0
    for criterion in ws_runs.CRITICAL_CRITERIA:
        rows = data["critical"][criterion]
        assert [r["N"] for r in rows] == list(ws_runs.CRITICAL_N)
        assert all(r["criterion"] == criterion and len(r["M_crit_seeds"]) == 20 for r in rows)


def test_seed_study_quick_settings_are_the_quick_live_grids():
    """Its quick settings are those of ``scaling_study(quick=True)``, which the chapter's quick mode runs live."""
    q = ws_seeds.QUICK
    assert (q.seeds, q.n_train, q.n_test, q.steps) == ((0, 1, 2), 300, 300, 8)
    for axis in ws_runs.AXES:
        assert ws_seeds._sizes(q, axis) == ws_runs.default_sizes(axis, quick=True)


@pytest.mark.recompute
def test_seed_study_members_recompute_equal():
    """The cheapest member and two others recomputed here agree with their stored records."""
    assert ws_seeds.STUDY.measured == ("seconds_per_step", "member_seconds_per_step")
    assert runner.verify(ws_seeds.STUDY, sample=3, echo=None)


# -- reductions and figures ------------------------------------------------------------------------------------
def test_slopes_cost_model_and_tables(quick_study):
    fits = ws_summary.slopes(quick_study)
    assert 1.8 < fits["log_odds2 vs M"]["slope"] < 3.0  # 300 walks, three sizes: near the stored 2.0
    assert "seconds_per_step vs curve" in fits
    cost = ws_summary.cost_model(quick_study)
    assert set(cost) == {"c_us", "a_ns", "b_ns", "max_rel_err"}
    rows = ws_summary.table(quick_study)
    assert len(rows) == sum(len(r) for r in quick_study.values()) and "ms/step" not in rows[0]
    assert "ms/step" in ws_summary.table(quick_study, wall=True)[0]
    assert isinstance(rows[0]["T_parent"], int) and rows[0]["T_parent ok"] == "3/3"
    empty = ws_summary.cost_model({"N": [dict(quick_study["N"][0], member_seconds_per_step=float("nan"))]})
    assert math.isnan(empty["a_ns"])


def test_figures(quick_study):
    fig = scaling_figures.figure(quick_study)
    assert len(fig.axes) == 3 and fig.axes[1].get_xscale() == "log"
    plt.close(fig)
    fig = scaling_figures.figure(quick_study, wall=False)
    assert len(fig.axes) == 2
    plt.close(fig)
    crit = ws_critical.critical_M((13, 25), seeds=(0,), n_train=200, n_test=100)
    assert ws_summary.critical_table(crit)[0]["ok"] == "1/1"
    fig = scaling_figures.critical_figure({"attention >= 0.99": crit})
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)


# -- validation ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, match", [
    (dict(sizes=[(97, 97)]), ValueError, "M > N"),
    (dict(sizes=[97]), TypeError, "pair"),
    (dict(sizes=[]), ValueError, "at least one"),
    (dict(sizes="97"), TypeError, "sizes"),
    (dict(p=1.0), ValueError, "p must be"),
    (dict(seeds=()), ValueError, "seeds"),
    (dict(steps=1), ValueError, "steps"),
    (dict(parent_threshold=1.0), ValueError, "parent_threshold"),
    (dict(optimal_tol=0.0), ValueError, "optimal_tol"),
    (dict(timing_steps=-1), ValueError, "timing_steps"),
    (dict(axis=3), TypeError, "axis"),
    (dict(lr=0.0), ValueError, "lr"),
])
def test_measure_validation(kwargs, error, match):
    args = {"sizes": [(13, 47)], **kwargs}
    with pytest.raises(error, match=match):
        ws_runs.measure(args.pop("sizes"), **args)


def test_other_validation():
    with pytest.raises(ValueError, match="axis"):
        ws_runs.default_sizes("K")
    with pytest.raises(ValueError, match="axes"):
        ws_runs.scaling_study(axes=("N", "depth"))
    with pytest.raises(ValueError, match="criterion"):
        ws_critical.critical_M((13,), criterion="loss")
    with pytest.raises(ValueError, match="threshold"):
        ws_critical.critical_M((13,), threshold=1.5)
    with pytest.raises(ValueError, match="c must be"):
        ws_critical.critical_M((13,), c=0.0)
    with pytest.raises(ValueError, match="Ns"):
        ws_critical.critical_M(())
    with pytest.raises(ValueError, match="Ns\\[0\\]"):
        ws_critical.critical_M((2,))

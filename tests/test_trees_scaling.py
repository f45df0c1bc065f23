"""Trees scaling: the batched backward trainer, the closed-form population recursion, the scaling grids and stored runs."""

from __future__ import annotations

import json
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from onelayer.paths import data_path
from onelayer.seeding import generator
from onelayer.trees.backward import layout
from onelayer.trees.backward import model
from onelayer.studies.trees import backward_batched as bs
from onelayer.figures.trees_scaling import scaling_figure
from onelayer.studies import runner
from onelayer.studies.trees.scaling import criteria as ts_criteria, fits as ts_fits, rows as ts_rows, runs as ts_runs, stored as ts_stored
from onelayer.trees.backward import dynamics
from onelayer.studies.trees.inputs import gaussian_embeddings
from onelayer.trees.shared import embeddings

STORED = data_path(ts_stored.STUDY.stored)


# --- the batched trainer ------------------------------------------------------------------------------------------


def test_sgd_members_reproduce_separate_runs():
    A = embeddings.one_hot_embeddings(9)
    seeds, lrs = [0, 3, 3, 7], [1.0, 1.0, 4.0, 16.0]
    hist = bs.train_backward_members(A, m=2, steps=25, lr=lrs, seeds=seeds, batch_size=16, record_every=5)
    assert hist.params["B"].shape == (4, 9, 9) and hist["loss"].shape == (6, 4)
    for b, (seed, lr) in enumerate(zip(seeds, lrs)):
        single = model.train_backward(A, m=2, steps=25, lr=lr, seed=seed, batch_size=16, record_every=5)
        assert float((single.params["B"] - hist.params["B"][b]).abs().max()) < 1e-10
        np.testing.assert_allclose(hist["loss"][:, b], single["loss"], rtol=0, atol=1e-10)
    assert float((hist.params["B"][1] - hist.params["B"][2]).abs().max()) > 1e-3  # the step size matters
    assert float((hist.params["B"][0] - hist.params["B"][1]).abs().max()) > 1e-6  # and so does the seed


def test_fixed_members_reproduce_full_batch_runs_with_eos_and_general_embeddings():
    A = gaussian_embeddings(11, 14, generator(2))  # non-diagonal Gram: the general error path
    seeds = [1, 2]
    hist = bs.train_backward_members(A, m=2, steps=15, lr=3.0, seeds=seeds, batch_size=8, protocol="fixed", eos=True)
    for b, seed in enumerate(seeds):
        fixed = layout.perfect_tree_batch(2, 11, 8, np.random.default_rng(seed), eos=True)
        single = model.train_backward(A, m=2, steps=15, lr=3.0, fixed_batch=fixed)
        assert float((single.params["B"] - hist.params["B"][b]).abs().max()) < 1e-10


def test_member_functions_match_single_run_functions_on_padded_random_trees():
    S = 12
    A = embeddings.one_hot_embeddings(S)
    rng = np.random.default_rng(4)
    batches = [layout.random_tree_batch(S, 6, rng, max_depth=d)[0] for d in (2, 4, 3)]
    assert len({b.length for b in batches}) > 1  # padding is exercised
    mb = bs.stack_members(batches)
    B = 0.7 * torch.randn(3, S, S, generator=generator(0), dtype=torch.float64)
    for options in (model.LossOptions(), model.LossOptions("sum", False)):
        losses = bs.member_losses(B, A, mb, options)
        for b, batch in enumerate(batches):
            assert abs(float(losses[b]) - float(model.loss(B[b], A, batch, options))) < 1e-12
    cw = bs.member_correct_weight(B, A, mb)
    acc = bs.member_accuracy(B, A, mb)
    for b, batch in enumerate(batches):
        single_cw = model.correct_key_weight(B[b], A, batch)[batch.target_mask].mean()
        assert abs(float(cw[b]) - float(single_cw)) < 1e-12
        assert abs(float(acc[b]) - model.teacher_forced_accuracy(B[b], A, batch)) < 1e-12
    h1, h2 = dynamics.symmetric_part(A.T @ B[1] @ A)
    assert abs(float(bs.member_margin(B, A)[1]) - (h1 - h2)) < 1e-12


def test_trainer_validation():
    A = embeddings.one_hot_embeddings(7)
    with pytest.raises(ValueError, match="seeds must contain"):
        bs.train_backward_members(A, m=2, steps=1, lr=1.0, seeds=[])
    with pytest.raises(ValueError, match=r"seeds\[1\] must be an integer in"):
        bs.train_backward_members(A, m=2, steps=1, lr=1.0, seeds=[0, -1])
    with pytest.raises(ValueError, match="protocol must be one of"):
        bs.train_backward_members(A, m=2, steps=1, lr=1.0, seeds=[0], protocol="adam")
    with pytest.raises(ValueError, match="needs S >= 15"):
        bs.train_backward_members(A, m=3, steps=1, lr=1.0, seeds=[0])
    with pytest.raises(ValueError, match="init must be a tensor of shape"):
        bs.train_backward_members(A, m=2, steps=1, lr=1.0, seeds=[0, 1], init=torch.zeros(7, 7))
    with pytest.raises(ValueError, match="lr must have shape"):
        bs.train_backward_members(A, m=2, steps=1, lr=[1.0, 2.0, 3.0], seeds=[0, 1], batch_size=2)
    with pytest.raises(TypeError, match="options must be a LossOptions"):
        bs.train_backward_members(A, m=2, steps=1, lr=1.0, seeds=[0], options="mean")
    b1 = layout.perfect_tree_batch(2, 7, 2, np.random.default_rng(0))
    b2 = layout.perfect_tree_batch(2, 7, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="same number of trees"):
        bs.stack_members([b1, b2])
    with pytest.raises(TypeError, match=r"batches\[0\] must be a BackwardBatch"):
        bs.stack_members(["tree"])
    with pytest.raises(ValueError, match="B must be a tensor of shape"):
        bs.member_losses(torch.zeros(7, 7), A, bs.stack_members([b1]))


# --- the closed-form population recursion -------------------------------------------------------------------------


@pytest.mark.parametrize("m,S,lr,options", [(2, 7, 1.0, model.LossOptions()), (3, 20, 4.0, model.LossOptions("sum", False))])
def test_population_run_equals_symmetry_population_gd(m, S, lr, options):
    fast = ts_runs.population_run(m, S, lr=lr, max_steps=150, options=options)
    ref = dynamics.population_gd(m, S, steps=150, lr=lr, options=options)
    for key in ("h1", "h2", "loss", "correct_weight"):
        np.testing.assert_allclose(fast[key], ref[key], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fast["accuracy"], ref["accuracy"])  # exact: 0/1 accuracies from integer counts


def test_population_stop_and_criteria():
    full = ts_runs.population_run(3, 15, max_steps=900)
    for crit in (ts_criteria.Criterion(), ts_criteria.Criterion("accuracy"), ts_criteria.Criterion("loss", 0.05),
                 ts_criteria.Criterion("attention", 0.5)):
        t = ts_runs.population_steps(3, 15, criterion=crit)
        assert t == float(crit.crossing(full["steps"], full))  # exact: recorded steps
        assert crit.met(full)[int(t)] and not crit.met(full)[int(t) - 1]
    assert math.isnan(ts_runs.population_steps(3, 15, max_steps=100))
    # teacher-forced accuracy is perfect long before the attention concentrates
    assert ts_runs.population_steps(3, 15, criterion="accuracy") < ts_runs.population_steps(3, 15) / 5


def test_criterion_and_size_validation():
    assert ts_criteria.Criterion().threshold == 0.9 and ts_criteria.Criterion("loss").threshold == 0.01
    assert ts_criteria.Criterion("accuracy").describe() == "teacher-forced accuracy >= 1"
    with pytest.raises(ValueError, match="criterion must be one of"):
        ts_criteria.Criterion("speed")
    with pytest.raises(ValueError, match="threshold must be in"):
        ts_criteria.Criterion("loss", 1.0)
    with pytest.raises(ValueError, match="threshold must be in"):
        ts_criteria.Criterion("attention", 0.0)
    with pytest.raises(TypeError, match="criterion must be a Criterion"):
        ts_runs.population_steps(2, 7, criterion=0.9)
    with pytest.raises(ValueError, match="S must be an integer in"):
        ts_runs.population_run(3, 14)
    with pytest.raises(ValueError, match="lr must be in"):
        ts_runs.population_run(2, 7, lr=0.0)
    with pytest.raises(TypeError, match=r"sizes\[0\] must be a pair"):
        ts_rows.population_rows([3])
    with pytest.raises(ValueError, match="grid must be one of"):
        ts_criteria.size_grid("width")
    with pytest.raises(ValueError, match="arch must be one of"):
        ts_rows.forward_steps_vs_depth(arch="three_head")
    with pytest.raises(ValueError, match="local_slopes needs at least two rows"):
        ts_fits.local_slopes([{"n_nodes": 7, "population_steps": 5.0}])
    with pytest.raises(ValueError, match="linear_model needs rows"):
        ts_fits.linear_model([{"tokens": 9, "S": 7, "population_steps": 5.0}])
    with pytest.raises(ValueError, match="it has no 'runs'"):
        ts_rows.sampled_rows({}, "depth")
    assert ts_criteria.nodes(4) == 31 and ts_criteria.tokens(4) == 35


# --- the measured scaling -----------------------------------------------------------------------------------------


def test_measured_scaling_of_the_population_recursion():
    """The slopes the chapter reports: ~1 in S at fixed depth; ~2 in N for the end of the symmetric start."""
    labels = ts_rows.population_rows([(3, S) for S in (15, 31, 63, 127)])
    slope_S = ts_fits.fit_table([], label_rows=labels)[0]
    assert slope_S["series"] == "labels: population" and 0.95 < slope_S["slope"] < 1.08
    depth = ts_rows.population_rows([(m, ts_criteria.nodes(m)) for m in (2, 3, 4, 5)], criterion="accuracy")
    by_x = {r["x"]: r["slope"] for r in ts_fits.fit_table(depth)}
    assert 1.9 < by_x["tokens"] < 2.1
    depth_default = ts_rows.population_rows("depth")
    local = ts_fits.local_slopes(depth_default)
    assert all(b > a for a, b in zip(local, local[1:])) and 1.1 < local[0] and local[-1] < 2  # rising towards 2
    model_fit = ts_fits.linear_model(depth_default)  # T ~ S (c1 N + c0), default criterion
    assert 0.45 < model_fit["c1"] < 0.65 and 25 < model_fit["c0"] < 45 and model_fit["max_rel_error"] < 0.06
    paper = ts_rows.population_rows([(4, 31)])[0]
    assert paper["population_steps"] == 1736  # m=4, S=31, lr 1: attention on the correct edge reaches 0.9


def test_tiny_grid_rows_figure_and_table(tmp_path):
    stored = ts_stored.compute()  # the study's quick members, run here
    assert [r["S"] for r in stored["runs"]["labels"]] == [9]
    rows = ts_rows.population_rows([(2, 7)])
    extra = {(r["m"], r["S"]): r for r in ts_rows.sampled_rows(stored, "depth")}
    row = {**rows[0], **extra[(2, 7)]}
    assert row["sampled_converged"] == 2 and abs(row["sampled_median"] / row["population_steps"] - 1) < 0.1
    table = ts_rows.scaling_table([row])
    assert set(table[0]) >= {"m", "S", "n", "N", "population", "SGD median", "converged"}
    times = ts_runs.step_times([(2, 7), (3, 15)], members=2, batch_size=4, steps=1)
    assert all(t["sampled_s_per_step"] > 0 for t in times)
    fwd = ts_rows.forward_steps_vs_depth({"heads_depth": [
        {"arch": "two_head", "m": 2, "S": 17, "steps_to_converge": 100, "budget": 500, "steps": [0, 25], "lr": 2.0},
        {"arch": "two_head", "m": 3, "S": 25, "steps_to_converge": 400, "budget": 500, "steps": [0, 25], "lr": 2.0},
        {"arch": "two_head", "m": 4, "S": 41, "steps_to_converge": None, "budget": 500, "steps": [0, 50], "lr": 2.0}]})
    assert math.isnan(fwd[2]["steps_to_converge"]) and fwd[2]["lower_bound"] == 500
    fig = scaling_figure([row, {**rows[0], "m": 3, "S": 15, "n_nodes": 15, "population_steps": 680.0}],
                                 forward_rows=fwd, time_rows=times)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 3
    plt.close(fig)
    out = tmp_path / "scaling.json"
    runner.run(ts_stored.STUDY, quick=True, out=out)
    assert [m["key"] for m in json.loads(out.read_text())["members"]] == ["depth-m2-S007", "labels-m2-S009"]
    assert ts_stored.load_stored(out)["runs"] == stored["runs"]  # exact: the same seeded runs, through the runner


def test_forward_rows_from_the_stored_study():
    if not data_path(ts_stored.FORWARD_LIMITS).exists():
        pytest.skip("book/trees/data/forward_sweep.json not generated")
    rows = ts_rows.forward_steps_vs_depth()
    assert [r["m"] for r in rows] == [2, 3, 4, 5]
    assert all(r["steps_to_converge"] > 0 for r in rows[:3])
    assert math.isnan(rows[3]["steps_to_converge"]) and rows[3]["lower_bound"] >= 3000
    # the numbers, not only the structure (the m = 2 cell is retrained in test_trees_stored_recompute.py)
    assert [r["steps_to_converge"] for r in rows[:3]] == [200, 625, 2300]


# --- the stored sampled runs --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored():
    if not STORED.exists():
        pytest.skip("book/trees/data/scaling.json not generated yet (python -m onelayer study trees-scaling)")
    return ts_stored.load_stored()


@pytest.mark.recompute
def test_the_smallest_stored_member_recomputes_equal():
    """The cheapest member (depth m = 2, eight seeds), recomputed by the runner's verify, equals its stored record."""
    if not STORED.exists():
        pytest.skip("book/trees/data/scaling.json not generated yet")
    assert runner.verify(ts_stored.STUDY, sample=1, echo=None)


@pytest.mark.recompute
def test_stored_runs_recompute(stored):
    """Seed 0 of the smallest stored run, retrained now, gives the stored crossings and curves."""
    run = stored["runs"]["depth"][0]
    again = ts_runs.sampled_run(run["m"], run["S"], steps=run["budget"], seeds=[0], lr=stored["lr"],
                                batch_size=stored["batch_size"], protocol=stored["protocol"],
                                focus=list(run["population_crossings"].values()))
    assert again["steps"] == run["steps"]
    for name, values in run["crossings"].items():
        assert again["crossings"][name] == values[:1]
    np.testing.assert_allclose(again["correct_weight"][0], run["correct_weight"][0], rtol=1e-5)


def test_stored_sampled_runs_track_the_population(stored):
    for grid in ("depth", "labels"):
        rows = ts_rows.scaling_rows(grid, stored=stored)
        sampled = [r for r in rows if "sampled_median" in r]
        assert len(sampled) == len(stored["runs"][grid])
        for r in sampled:
            assert r["sampled_converged"] == r["seeds"]
            assert 0.995 < r["ratio"] < 1.01, r  # SGD crosses at most 1% after the population


def test_stored_sgd_attention_follows_the_population_curve(stored):
    gaps = ts_rows.trajectory_gaps(stored, "depth")
    assert [g["m"] for g in gaps] == list(ts_criteria.SAMPLED_DEPTHS)
    assert all(g["max_weight_gap"] < 2e-3 and g["final_weight"] > 0.9 for g in gaps)

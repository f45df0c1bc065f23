"""The trees parts' figures and tables for ``python -m onelayer make NAME``.

Each recipe below is registered with :func:`onelayer.registry.register` and
makes one figure (or table) of a trees chapter with the same calls, seeds and
settings as the chapter: ``quick=True`` shrinks steps and batch sizes so the
whole set runs in seconds (for tests); ``quick=False`` reproduces the chapter.
The recipes hold no experiment logic of their own: they call the part's
modules (:mod:`~onelayer.trees.backward.construction`, :mod:`~onelayer.trees.backward.dynamics`,
:mod:`~onelayer.trees.backward.dynamics`, :mod:`~onelayer.trees.backward.generalization`,
the forward modules, ...) and their figure functions, and turn the results
into the JSON/CSV numbers of the figure.

Trees I (backward reasoning; ``backward_data`` has moved to
:mod:`onelayer.chapters.trees.backward_data`): chapters ``backward_construction`` (Lemma 1, Theorem 1), ``backward_training``
(Theorem 3) and ``backward_generalization`` (Theorem 4). The Trees II (forward reasoning) chapters have moved to
:mod:`onelayer.chapters.trees.forward_construction`, :mod:`~onelayer.chapters.trees.forward_training` and
:mod:`~onelayer.chapters.trees.forward_limits`.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import torch

from ..registry import register
from ..plots import mark_steps, new_figure, plot_curves
from ..seeding import generator, numpy_rng
from .backward import construction, dynamics
from .backward import generalization as gen
from .backward import layout
from .backward import model
from .backward import settings as backward_settings
from .backward.figures import decoded_attention_figure
from .shared import embeddings

__all__ = ["theorem1_setting", "theorem4_setting"]


# --- chapter "backward_construction" ----------------------------------------------------------------------------

@register("trees-lemma1", "Trees I, Lemma 1 (table): B with A^T B A = I for 31 Gaussian embeddings in dimension 40")
def _lemma1(quick: bool):
    s = backward_settings.CONSTRUCTION
    S, d = s.S, s.d
    A = embeddings.independent_embeddings(S, d, generator(s.embedding_seed))
    B = embeddings.lemma1_matrix(A)
    gram = A.T @ A
    return None, {"table": [{"S": S, "d": d, "max_offdiag_gram": float((gram - gram.diag().diag()).abs().max()),
                             "max_error_ATBA_minus_I": float((A.T @ B @ A - torch.eye(S, dtype=A.dtype)).abs().max())}]}


def theorem1_setting(quick: bool = False) -> dict:
    """Embeddings and test batches of the Theorem 1 chapter (``quick``: fewer trees)."""
    s = backward_settings.CONSTRUCTION
    if quick:
        s = replace(s, train_batch=32, test_trees=64)
    A = embeddings.independent_embeddings(s.S, s.d, generator(s.embedding_seed))
    rng = numpy_rng(s.batch_seed)
    perfect = layout.perfect_tree_batch(s.m, s.S, s.train_batch, rng)
    random_batch, random_trees = layout.random_tree_batch(s.S, s.test_trees, rng, max_depth=s.test_max_depth)
    return {"A": A, "perfect": perfect, "random": random_batch, "random_trees": random_trees}


@register("trees-loss-vs-lambda", "Trees I, Theorem 1: loss and whole-path accuracy of the construction lambda B against lambda")
def _loss_vs_lambda(quick: bool):
    s = theorem1_setting(quick)
    lambdas = backward_settings.CONSTRUCTION.lambdas
    lams = np.array(lambdas[::2] if quick else lambdas)
    sweeps = {"perfect, depth 4": construction.lambda_sweep(s["A"], s["perfect"], lams),
              "random, 0-3 children": construction.lambda_sweep(s["A"], s["random"], lams)}
    tail = lams >= backward_settings.CONSTRUCTION.slope_from
    slopes = {name: construction.log_slope(lams[tail], sw["loss"][tail]) for name, sw in sweeps.items()}
    fig, axes = new_figure(2, width=9.0, height=3.2)
    plot_curves(axes[0], lams, {n: sw["loss"] for n, sw in sweeps.items()}, xlabel="scale lambda", ylabel="loss (mean, 1/2)",
                logy=True, title="loss of lambda B")
    plot_curves(axes[1], lams, {n: sw["path_accuracy"] for n, sw in sweeps.items()}, xlabel="scale lambda",
                ylabel="whole-path accuracy", title="greedy decoding")
    axes[1].set_xscale("log")
    rows = [{"trees": name, "lambda": float(lam), "loss": float(sw["loss"][i]), "path_accuracy": float(sw["path_accuracy"][i]),
             "max_weight_error": float(sw["max_weight_error"][i])}
            for name, sw in sweeps.items() for i, lam in enumerate(lams)]
    return fig, {"log_loss_slope_lambda_ge_5": slopes, "table": rows}


@register("trees-construction-attention", "Trees I, Theorem 1: attention of the construction (lambda = 10) at every step of the deepest random tree")
def _construction_attention(quick: bool):
    s = theorem1_setting(quick)
    index = int(np.argmax([t.depth for t in s["random_trees"]]))
    lam = backward_settings.CONSTRUCTION.attention_lambda
    B = construction.constructed_B(s["A"], lam)
    fig = decoded_attention_figure(B, s["A"], s["random"], index=index, title=f"lambda = {lam:g}, the deepest random tree")
    return fig, {"lambda": lam, "tree_index": index, "depth": int(s["random_trees"][index].depth)}


@register("trees-construction-attention-default", "Trees I: the widget's default state: lambda I decoding a random depth-5 tree at lambda = 3")
def _construction_attention_default(quick: bool):
    from .backward.figures import construction_attention_figure

    return construction_attention_figure(3.0, 0, 5), {"lambda": 3.0, "seed": 0, "max_depth": 5}


# --- chapter "backward_training" --------------------------------------------------------------------------------

@register("trees-h-entries", "Trees I, Theorem 3: diagonal and off-diagonal of H = A^T B A under SGD and population GD, distance from the symmetric span")
def _h_entries(quick: bool):
    s = backward_settings.TRAINING
    if quick:
        s = replace(s, steps=100)
    S, m = s.S, s.m
    A = embeddings.one_hot_embeddings(S)
    eval_batch = layout.perfect_tree_batch(m, S, s.batch_size, numpy_rng(s.eval_seed))
    sgd = model.train_backward(A, m=m, steps=s.steps, lr=s.lr, batch_size=s.batch_size, seed=s.seed,
                               record_every=s.record_every, record=dynamics.h_records(A, eval_batch))
    pop = dynamics.population_gd(m, S, steps=s.steps, lr=s.lr, record_every=s.record_every)
    fig, axes = new_figure(2, width=9.0, height=3.2)
    plot_curves(axes[0], sgd.steps, {"h1 (diagonal), SGD": sgd["h1"], "h1, population GD": pop["h1"],
                                     "h2 (off-diagonal) x (S-1), SGD": sgd["h2"] * (S - 1)},
                xlabel="step t", ylabel="entries of H", title="H = A^T B A",
                styles={"h1, population GD": {"linestyle": "--", "color": "k"}})
    plot_curves(axes[1], sgd.steps[1:], {"residual / ||H||": sgd["residual"][1:], "diagonal std": sgd["diag_std"][1:],
                                         "off-diagonal std": sgd["off_std"][1:]},
                xlabel="step t", ylabel="size", logy=True, title="distance from the symmetric span (SGD)")
    rows = [{"step": int(t), "sgd_loss": float(sgd["loss"][i]), "sgd_h1": float(sgd["h1"][i]), "sgd_h2": float(sgd["h2"][i]),
             "sgd_residual": float(sgd["residual"][i]), "pop_loss": float(pop["loss"][i]), "pop_h1": float(pop["h1"][i]),
             "pop_h2": float(pop["h2"][i])} for i, t in enumerate(sgd.steps)]
    return fig, {"S": S, "m": m, "lr": s.lr, "batch_size": s.batch_size, "table": rows}


@register("trees-phases", "Trees I, Theorem 3: population loss, h1, h2 and attention on the correct edge with the detected phase marks")
def _phases(quick: bool):
    s = backward_settings.TRAINING
    if quick:
        s = replace(s, phase_steps=300)
    pop = dynamics.population_gd(s.m, s.S, steps=s.phase_steps, lr=s.lr, record_every=s.record_every)
    found = dynamics.detect_phases(pop.steps, pop["h1"], pop["h2"], pop["loss"], pop["correct_weight"])
    marks = {"T_att": found["T_attention"], "T_loss": found["T_loss"]}
    fig, axes = new_figure(2, width=9.0, height=3.2)
    plot_curves(axes[0], pop.steps, {"loss": pop["loss"]}, xlabel="step t", ylabel="population loss", logy=True)
    mark_steps(axes[0], marks)
    plot_curves(axes[1], pop.steps, {"h1": pop["h1"], "h2": pop["h2"], "attention on correct edge": pop["correct_weight"]},
                xlabel="step t", ylabel="value")
    mark_steps(axes[1], marks)
    rows = [{"step": int(t), "loss": float(pop["loss"][i]), "h1": float(pop["h1"][i]), "h2": float(pop["h2"][i]),
             "correct_weight": float(pop["correct_weight"][i])} for i, t in enumerate(pop.steps)]
    return fig, {"phases": found, "table": rows}


@register("trees-loss-rate", "Trees I, Theorem 3: population loss and margin h1 - h2 against eta t for step sizes 1, 8 and 128")
def _loss_rate(quick: bool):
    s = backward_settings.TRAINING
    if quick:
        s = replace(s, rate_runs=tuple((lr, steps // 10) for lr, steps in s.rate_runs))
    runs = {lr: dynamics.population_gd(s.m, s.S, steps=steps, lr=lr, record_every=s.record_every) for lr, steps in s.rate_runs}
    fig, axes = new_figure(2, width=9.0, height=3.3)
    for lr, run in runs.items():
        axes[0].loglog(lr * run.steps[1:], run["loss"][1:], label=f"lr {lr:g}")
        axes[1].semilogx(lr * run.steps[1:], run["margin"][1:], label=f"lr {lr:g}")
    axes[0].set(xlabel="eta * t", ylabel="population loss", title="loss against eta t")
    axes[1].set(xlabel="eta * t", ylabel="h1 - h2", title="margin against eta t")
    axes[0].legend()
    big = runs[128.0]
    et = 128.0 * big.steps
    tail = et >= et[-1] / 16
    rows = [{"lr": lr, "step": int(t), "eta_t": lr * int(t), "loss": float(run["loss"][i]), "margin": float(run["margin"][i])}
            for lr, run in runs.items() for i, t in enumerate(run.steps)]
    return fig, {"loglog_slope_last_decade": dynamics.loglog_slope(et, big["loss"], t_min=et[-1] / 10),
                 "margin_gain_per_doubling": float(np.polyfit(np.log2(et[tail]), big["margin"][tail], 1)[0]),
                 "final_loss_lr128": float(big.final("loss")), "table": rows}


# --- chapter "backward_generalization" --------------------------------------------------------------------------

def theorem4_setting(quick: bool = False) -> dict:
    """The settings, one-hot embeddings, random test trees and checkpoints of the Theorem 4 chapter."""
    s = backward_settings.GENERALIZATION
    if quick:
        s = replace(s, test_trees=256, steps=200, checkpoint_every=50)
    test, _ = layout.random_tree_batch(s.S, s.test_trees, numpy_rng(s.test_seed), max_depth=s.test_max_depth)
    return {"settings": s, "A": embeddings.one_hot_embeddings(s.S), "test": test, "steps": s.steps, "checkpoints": s.checkpoints}


@functools.lru_cache(maxsize=2)
def _theorem4_runs(quick: bool, gaussian: bool = False):
    """The Theorem 4 chapter's training run with one-hot embeddings (``gaussian``: with Gaussian embeddings
    ``d = S``, seed 1, recording ``H`` as well): ``(setting, embeddings, run, test fields)``; cached, since two
    figures share the one-hot run."""
    s = theorem4_setting(quick)
    A = embeddings.independent_embeddings(s["settings"].S, s["settings"].S, generator(1)) if gaussian else s["A"]
    record = {"test": gen.test_record(A, s["test"]), **(dynamics.h_records(A) if gaussian else {})}
    run = model.train_backward(A, m=s["settings"].m, steps=s["steps"], lr=s["settings"].lr, seed=s["settings"].seed,
                               record_at=s["checkpoints"], record=record)
    return s, A, run, {name: run["test"][:, i] for i, name in enumerate(gen.TEST_FIELDS)}


@register("trees-generalization", "Trees I, Theorem 4: test loss, margin bound and test accuracy (per step, whole path) during training, with the margin")
def _generalization(quick: bool):
    s, _, run, T = _theorem4_runs(quick)
    fig, axes = new_figure(2, width=9.0, height=3.3)
    plot_curves(axes[0], run.steps, {"train loss (batch)": run["loss"], "test loss": T["loss"], "margin bound (test)": T["margin_bound"]},
                xlabel="step t", ylabel="loss", logy=True, styles={"margin bound (test)": {"linestyle": "--"}})
    plot_curves(axes[1], run.steps, {"per-step accuracy": T["step_accuracy"], "whole-path accuracy": T["path_accuracy"]},
                xlabel="step t", ylabel="test accuracy (greedy)")
    ax2 = axes[1].twinx()
    ax2.plot(run.steps, T["margin"], color="0.5", linestyle=":", label="margin")
    ax2.set_ylabel("margin delta (dotted)")
    ax2.grid(False)
    rows = [{"step": int(t), "train_loss": float(run["loss"][i]), **{f"test_{k}" if k != "margin_bound" else k: float(T[k][i])
                                                                      for k in gen.TEST_FIELDS}}
            for i, t in enumerate(run.steps)]
    positive = T["margin"] > 0
    by_len = gen.accuracy_by_length(run.params["B"], s["A"], s["test"])
    return fig, {"bound_holds_where_margin_positive": bool(np.all(T["loss"][positive] <= T["margin_bound"][positive])),
                 "accuracy_by_path_length": {str(k): {"trees": c, "path_accuracy": a} for k, (c, a) in by_len.items()},
                 "table": rows}


@register("trees-generalization-embeddings", "Trees I, Theorem 4: whole-path test accuracy during training with one-hot and with Gaussian (non-orthogonal) embeddings")
def _generalization_embeddings(quick: bool):
    s, _, run, T = _theorem4_runs(quick)
    _, G, run_g, Tg = _theorem4_runs(quick, gaussian=True)
    fig, ax = new_figure(1, width=5.5, height=3.2)
    plot_curves(ax, run.steps, {"one-hot: test path accuracy": T["path_accuracy"], "Gaussian: test path accuracy": Tg["path_accuracy"]},
                xlabel="step t", ylabel="whole-path accuracy")
    rows = [{"step": int(t), "one_hot_path_accuracy": float(T["path_accuracy"][i]), "gaussian_path_accuracy": float(Tg["path_accuracy"][i]),
             "gaussian_margin": float(Tg["margin"][i]), "gaussian_H_residual": float(run_g["residual"][i])}
            for i, t in enumerate(run.steps)]
    by_len = gen.accuracy_by_length(run_g.params["B"], G, s["test"])
    return fig, {"gaussian_accuracy_by_path_length": {str(k): {"trees": c, "path_accuracy": a} for k, (c, a) in by_len.items()},
                 "table": rows}


def _silent(message: str) -> None:
    """Progress callback that prints nothing."""


# --- scaling (book/scaling.ipynb) -------------------------------------------------------------------------------

@register("trees-scaling", "Trees: backward steps to converge against depth and labels (population and stored SGD runs), forward two-head steps, seconds per step")
def _trees_scaling(quick: bool):
    from . import scaling

    if quick:
        stored = scaling.compute_stored(quick=True, progress=_silent)
        depth = scaling.scaling_rows("depth", sizes=[(2, 7), (3, 15)], stored=stored)
        labels = scaling.scaling_rows("labels", sizes=[(2, 7), (2, 9)], stored=stored)
        times = scaling.step_times([(2, 7), (3, 15)], members=2, batch_size=8, steps=1)
    else:
        depth, labels = scaling.scaling_rows("depth"), scaling.scaling_rows("labels")
        times = scaling.step_times("depth")
    forward = scaling.forward_steps_vs_depth()
    fig = scaling.scaling_figure(depth, labels, forward, times)
    return fig, {"criterion": scaling.Criterion().describe(), "table": scaling.scaling_table(depth + labels),
                 "fits": scaling.fit_table(depth, labels, times, forward), "forward": forward}


# ---------------------------------------------------------------------------
# The chapters' scrubbers (onelayer.scrubber): the numbers behind every frame of each player, registered as
# NAME-frames for the scrubber NAME, with the draw function and settings of the chapter's cell (figure: None).
# ---------------------------------------------------------------------------


@register("trees-backward-lambda-frames", "Trees I, Theorem 1 player (frames): attention of lambda I on a random "
                                          "depth-5 tree at every chain-of-thought step, over lambda")
def _backward_lambda_frames(quick: bool):
    from ..scrubber import frame_numbers
    from .backward.figures import construction_attention_figure

    lams = backward_settings.CONSTRUCTION.scrub_lambdas
    return None, frame_numbers(lambda lam: construction_attention_figure(lam, 0, 5), lams[::4] if quick else lams,
                               labels="lambda", fmt="{:g}")

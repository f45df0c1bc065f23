"""The trees parts' figures and tables for ``python -m onelayer make NAME``.

Each recipe below is registered with :func:`onelayer.registry.register` and
makes one figure (or table) of a trees chapter with the same calls, seeds and
settings as the chapter: ``quick=True`` shrinks steps and batch sizes so the
whole set runs in seconds (for tests); ``quick=False`` reproduces the chapter.
The recipes hold no experiment logic of their own: they call the part's
modules (the forward modules, :mod:`~onelayer.trees.scaling`, ...) and their figure functions, and turn the results
into the JSON/CSV numbers of the figure.

Trees I (backward reasoning) has moved to the chapter modules :mod:`onelayer.chapters.trees` (``backward_data``,
``backward_construction``, ``backward_training``, ``backward_generalization``). Trees II (forward
reasoning): ``forward_construction`` (Theorem 2), ``forward_training``
(Theorem 5) and ``forward_limits`` (single against two heads, heads x depth).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..registry import register
from ..seeding import generator, numpy_rng
from .forward import settings as forward_settings
from .shared import embeddings

__all__ = ["forward_setting", "forward_training"]


# --- chapter "forward_construction" (Trees II) ------------------------------------------------------------------

def forward_setting(quick: bool = False) -> dict:
    """Gaussian embeddings (S=25, d=32) and the random test trees of the Theorem 2 chapter (``quick``: fewer trees)."""
    from .forward import layout as forward_layout

    s = forward_settings.CONSTRUCTION
    if quick:
        s = replace(s, test_trees=128)
    A = embeddings.independent_embeddings(s.S, s.d, generator(s.embedding_seed))
    test, _ = forward_layout.random_forward_batch(s.S, s.test_trees, numpy_rng(s.test_seed), max_depth=s.test_max_depth)
    return {"A": A, "test": test}


@register("trees-forward-margins", "Trees II, Theorem 2 (table): measured attention margins of the two-head construction against the predicted ones")
def _forward_margins(quick: bool):
    from .forward.construction import constructed_params, margin_table, predicted_margins

    s = forward_setting(quick)
    lam, mu, kappa = forward_settings.CONSTRUCTION.margins_at
    rows = margin_table(constructed_params(s["A"], lam, mu, kappa), s["A"], s["test"])
    pred = predicted_margins(lam, mu, kappa)
    table = [{**r, "predicted": pred[(r["head"], r["situation"])]} for r in rows]
    return None, {"lambda": lam, "mu": mu, "kappa": kappa, "table": table}


@register("trees-forward-attention", "Trees II, Theorem 2: attention of both heads of the construction at every step of a depth-3 tree")
def _forward_attention(quick: bool):
    from .forward.construction import constructed_params
    from .forward.figures import attention_by_step_figure
    from .forward.layout import perfect_forward_batch

    s = forward_settings.CONSTRUCTION
    (lam, mu, kappa), m = s.attention_at, s.attention_m
    A1 = embeddings.one_hot_embeddings(s.S)
    tree_batch = perfect_forward_batch(m, s.S, 1, numpy_rng(s.attention_seed))
    fig = attention_by_step_figure(constructed_params(A1, lam, mu, kappa), A1, tree_batch,
                                   title=f"construction at (lambda, mu, kappa) = ({lam:g}, {mu:g}, {kappa:g}), depth-{m} tree")
    return fig, {"lambda": lam, "mu": mu, "kappa": kappa, "S": s.S, "depth": m}


@register("trees-forward-scale-sweep", "Trees II, Theorem 2: loss and accuracy of the construction c x (2, 1, 1) against the scale c")
def _forward_scale_sweep(quick: bool):
    from .forward.construction import scale_sweep
    from .forward.figures import scale_sweep_figure

    s = forward_setting(quick)
    scales = [float(c) for c in forward_settings.CONSTRUCTION.scales]
    lam, mu, kappa = forward_settings.CONSTRUCTION.scale_base
    rows = scale_sweep(s["A"], s["test"], scales[::2] if quick else scales, lam=lam, mu=mu, kappa=kappa)
    big = [r for r in rows if r["scale"] >= 5]
    slope = float(np.polyfit([r["scale"] for r in big], np.log([r["loss"] for r in big]), 1)[0]) if len(big) > 1 else None
    return scale_sweep_figure(rows), {"log_loss_slope_scale_ge_5": slope, "table": [dict(r) for r in rows]}


@register("trees-forward-attention-default", "Trees II: the widget's default state: the construction at scale 2 x (2, 1, 1) decoding a random depth-3 tree")
def _forward_attention_default(quick: bool):
    from .forward.figures import construction_attention_figure

    return construction_attention_figure(2.0, 0, 3), {"scale": 2.0, "lambda_mu_kappa": [4.0, 2.0, 2.0], "seed": 0, "max_depth": 3}


# --- chapter "forward_training" (Trees II) ----------------------------------------------------------------------

@functools.lru_cache(maxsize=2)
def forward_training(quick: bool = False):
    """The tracked two-head training run of the Theorem 5 chapter (one-hot, S=25, m=3, lr 2, batch 256) and its
    phase marks; cached, since three figures share it."""
    from .forward.dynamics import phase_times, tracked_training

    s = forward_settings.TRAINING
    if quick:
        s = replace(s, steps=60)
    A = embeddings.one_hot_embeddings(s.S)
    hist = tracked_training(A, m=s.m, steps=s.steps, lr=s.lr, batch_size=s.batch_size, record_every=s.record_every)
    found = phase_times(hist.steps, hist["accuracy"])
    marks = {f"{name} >= 1/2": found[name] for name in ("forward", "backward", "turning")}
    return A, hist, found, marks


def _forward_curve_rows(hist) -> list[dict]:
    from .forward.dynamics import SCALAR_NAMES

    return [{"step": int(t), "loss": float(hist["loss"][i]),
             **{f"accuracy_{name}": float(hist["accuracy"][i, j]) for j, name in enumerate(("backward", "turning", "forward"))},
             **{name: float(hist["scalars"][i, j]) for j, name in enumerate(SCALAR_NAMES)},
             "residual": float(hist["residual"][i])}
            for i, t in enumerate(hist.steps)]


@register("trees-forward-scalars", "Trees II, Theorem 5: loss and the symmetry-reduced scalars of both heads over training (Figure 9 analogue)")
def _forward_scalars(quick: bool):
    from .forward.figures import scalars_figure

    A, hist, found, marks = forward_training(quick)
    fig = scalars_figure(hist.steps, hist["loss"], hist["scalars"], marks)
    return fig, {"phases": found, "max_residual": float(hist["residual"].max()), "table": _forward_curve_rows(hist)}


@register("trees-forward-accuracy-by-type", "Trees II, Theorem 5: teacher-forced accuracy of backward, turning and forward steps over training")
def _forward_accuracy_by_type(quick: bool):
    from .forward.figures import accuracy_by_type_figure

    A, hist, found, marks = forward_training(quick)
    fig = accuracy_by_type_figure(hist.steps, hist["accuracy"], marks, title="teacher-forced accuracy by step type")
    return fig, {"phases": found, "final_accuracy": {name: float(hist["accuracy"][-1, j])
                                                     for j, name in enumerate(("backward", "turning", "forward"))}}


@register("trees-forward-roles", "Trees II, Theorem 5: where each head attends over training (traversal target, next-stage tokens) and the sign table")
def _forward_roles(quick: bool):
    from .forward.figures import roles_figure
    from .forward.dynamics import role_events, sign_table

    A, hist, found, marks = forward_training(quick)
    fig = roles_figure(hist.steps, hist["roles"], marks)
    return fig, {"role_events": role_events(hist.steps, hist["roles"]), "table": sign_table(hist.params, A)}


@register("trees-forward-rescaling", "Trees II, Theorem 5: per-position loss of the main run (lr 2) and of lr 0.2 (mean, sum over positions) against eta_eff t")
def _forward_rescaling(quick: bool):
    from .forward import losses
    from .forward import model as forward_model
    from .forward.figures import rescaling_figure

    s = forward_settings.TRAINING
    A, hist, found, marks = forward_training(quick)
    short_steps = 20 if quick else s.paper_lr_steps
    short = {norm: forward_model.train_forward(forward_model.two_head(), A, m=s.m, steps=short_steps, lr=s.paper_lr,
                                               options=losses.LossOptions(norm, True), record_every=s.record_every)
             for norm in ("mean", "sum")}
    # label -> (steps, loss, effective step size, loss factor), as the chapter draws them
    runs = {"lr 2, mean (main run)": (hist.steps, hist["loss"], 2.0, 1.0),
            "lr 0.2, mean": (short["mean"].steps, short["mean"]["loss"], 0.2, 1.0),
            "lr 0.2, sum over positions": (short["sum"].steps, short["sum"]["loss"], 1.4, 7.0)}
    fig = rescaling_figure(runs)
    pairs = None
    if not quick:  # the chapter's two comparisons at equal eta_eff * t
        pairs = [{"a": "lr 0.2, mean, t=200", "loss_a": float(short["mean"].at("loss", 200)),
                  "b": "lr 2, mean, t=20", "loss_b": float(hist.at("loss", 20))},
                 {"a": "lr 0.2, sum/7, t=200", "loss_a": float(short["sum"].at("loss", 200) / 7),
                  "b": "lr 2, mean, t=140", "loss_b": float(hist.at("loss", 140))}]
    rows = [{"run": label, "step": int(t), "eta_eff_t": float(eta * t), "loss_mean_half": float(loss[i] / factor)}
            for label, (steps, loss, eta, factor) in runs.items() for i, t in enumerate(steps)]
    return fig, {"pairs": pairs, "table": rows}


# --- chapter "forward_limits" (Trees II) ------------------------------------------------------------------------


def _silent(message: str) -> None:
    """Progress callback that prints nothing."""


@register("trees-forward-loss-table", "Trees II: training loss of two structured heads, one structured head and one full head against the authors' table")
def _forward_loss_table(quick: bool):
    from .forward import limits as sf
    from .forward.figures import loss_table_figure

    runs = sf.loss_table_runs(quick=True, progress=_silent) if quick else sf.load_stored()["loss_table"]
    fig = loss_table_figure(runs, sf.AUTHORS_TABLE, sf.TABLE_STEPS)
    rows = sf.table_rows(runs)
    columns = list(dict.fromkeys(k for r in rows for k in r))  # the authors' rows have no test accuracy
    return fig, {"source": "quick live runs" if quick else Path(sf.STORED).name, "table": [{c: r.get(c) for c in columns} for r in rows]}


@register("trees-heads-depth", "Trees II: steps to converge and test whole-path accuracy of 1-4 full heads and two structured heads against training depth")
def _heads_depth(quick: bool):
    from .forward import limits as sf
    from .forward.figures import heads_depth_figure

    runs = sf.heads_depth_runs(quick=True, progress=_silent) if quick else sf.load_stored()["heads_depth"]
    keys = ("label", "m", "S", "budget", "steps_to_converge", "final_step", "train_path_accuracy", "test_path_accuracy")
    return heads_depth_figure(runs), {"source": "quick live runs" if quick else Path(sf.STORED).name,
                                      "table": [{k: r[k] for k in keys} for r in runs]}


@register("trees-forward-seeds", "Trees II: test whole-path accuracy of every seed of the heads x depth sweep, and accuracy against goal depth minus training depth")
def _forward_seeds(quick: bool):
    from .forward import limits as sf
    from .forward import seeds
    from .forward.figures import seeds_figure

    if quick:
        sweep = {"heads_depth": sf.heads_depth_runs(quick=True, progress=_silent)}
        seeded = {"runs": [seeds.stored_run(n, m, 1, quick=True) for n, m in sf.heads_depth_cells(quick=True)]}
    else:
        sweep, seeded = sf.load_stored(), seeds.load_stored()
    runs = seeds.all_seeds(sweep, seeded)
    cells = seeds.stored_cells(runs)
    offsets = {c["arch"]: seeds.depth_offset_profile(runs, c["arch"]) for c in cells}
    keys = ("arch", "m", "seeds", "converged", "steps_median", "acc_median")
    table = [{**{k: c[k] for k in keys}, "acc_min": c["acc_range"][0], "acc_max": c["acc_range"][1]} for c in cells]
    return seeds_figure(cells, offsets), {
        "source": "quick live runs" if quick else f"{Path(sf.STORED).name} (seed 0) + {Path(seeds.STORED).name}",
        "table": table, "by_depth_offset": {a: {str(k): v for k, v in o.items()} for a, o in offsets.items()}}


@register("trees-forward-layouts", "Trees II (table): every forward model with and without the turning token (alternative layout), and the child-first check")
def _forward_layouts(quick: bool):
    from .forward import layouts

    data = layouts.turning_runs(quick=True, progress=_silent) if quick else layouts.load_stored()
    table = layouts.comparison_rows(data["table"] + data["cells"])
    return None, {"source": "quick live runs" if quick else Path(layouts.STORED).name, "table": table,
                  "child_first": data.get("child_first")}


# ---------------------------------------------------------------------------
# The chapters' scrubbers (onelayer.scrubber): the numbers behind every frame of each player, registered as
# NAME-frames for the scrubber NAME, with the draw function and settings of the chapter's cell (figure: None).
# ---------------------------------------------------------------------------


@register("trees-forward-scale-frames", "Trees II, Theorem 2 player (frames): attention of both constructed heads "
                                        "decoding a random depth-3 tree, over the scale c")
def _forward_scale_frames(quick: bool):
    from ..scrubber import frame_numbers
    from .forward.figures import construction_attention_figure

    scales = forward_settings.CONSTRUCTION.scrub_scales
    return None, frame_numbers(lambda c: construction_attention_figure(c, 0, 3), scales[::4] if quick else scales,
                               labels="scale c", fmt="{:g}")


@register("trees-forward-attention-steps-frames", "Trees II, Theorem 5 player (frames): attention of both heads at "
                                                  "every step of one depth-3 training tree, over training")
def _forward_attention_steps_frames(quick: bool):
    from ..scrubber import frame_numbers
    from .forward.dynamics import tracked_training
    from .forward.figures import attention_by_step_figure
    from .forward.layout import perfect_forward_batch

    s = forward_settings.TRAINING
    if quick:
        s = replace(s, steps=60, scrub_steps=tuple(t for t in s.scrub_steps if t <= 60))
    A = embeddings.one_hot_embeddings(s.S)
    hist = tracked_training(A, m=s.m, steps=s.steps, lr=s.lr, batch_size=s.batch_size, record_every=s.record_every,
                            snapshot_at=s.scrub_steps)
    tree = perfect_forward_batch(s.m, s.S, 1, numpy_rng(s.scrub_seed))
    return None, frame_numbers(lambda t: attention_by_step_figure(hist.snapshots[t], A, tree, title=f"after {t} training steps"),
                               s.scrub_steps, labels="training step", fmt="{:d}")

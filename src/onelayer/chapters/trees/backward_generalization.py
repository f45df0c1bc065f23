"""Chapter "Theorem 4: it generalizes to unseen trees" (``book/trees/backward_generalization.ipynb``): the model
trained on perfect trees, tested on random trees during training (one-hot and Gaussian embeddings), the margin bound,
and the runs past the theorems' assumptions (:mod:`onelayer.trees.beyond`).

Every figure of the chapter is a registered function here (the notebook and ``python -m onelayer make`` call the
same one). The two training runs are trained once each (the notebook's call shows the progress bar) and shared by
the tables, both figures and the verdicts; so are the runs past the assumptions.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from ...plots import new_figure, plot_curves
from ...registry import register
from ...seeding import generator, numpy_rng
from ...trees import beyond
from ...trees.backward import dynamics, layout, model
from ...trees.backward import generalization as gen
from ...trees.shared import embeddings
from ...validation import check_bool

__all__ = ["Settings", "SETTINGS", "test_set", "embedding_matrix", "run", "test_fields", "training_rows",
           "training_summary", "accuracy_by_length", "generalization", "gaussian_rows", "gaussian_summary",
           "generalization_embeddings", "beyond_runs", "beyond_rows", "depth_rows", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """Theorem 4 and the runs past its assumptions.

    ``S = 31``, ``m = 4``, ``lr = 1``, 1,024 random test trees with 0-3 children [summary]; the 1,500 steps, the
    checkpoints every 100 steps, the test depth cap 7, the Gaussian embeddings ``d = S``, the steps the tables show
    and the seeds [guess]. Past the assumptions (:mod:`onelayer.trees.beyond`): ``S = 80``, ``m = 3``, 400 steps at
    lr 8, three seeds trained together, 20 test trees of each shape [guess].
    """

    S: int = 31
    m: int = 4
    steps: int = 1500
    lr: float = 1.0
    seed: int = 0
    test_trees: int = 1024
    test_seed: int = 7
    test_max_depth: int = 7
    checkpoint_every: int = 100
    gaussian_seed: int = 1  #: the Gaussian (non-orthogonal) embeddings, d = S
    #: the checkpoints the one-hot and the Gaussian tables show
    table_steps: tuple[int, ...] = (0, 100, 200, 300, 400, 500, 600, 900, 1200, 1500)
    gaussian_table_steps: tuple[int, ...] = (0, 300, 600, 900, 1200, 1500)
    beyond_S: int = 80
    beyond_m: int = 3
    beyond_steps: int = 400
    beyond_lr: float = 8.0
    beyond_seeds: tuple[int, ...] = (0, 1, 2)
    beyond_count: int = 20

    @property
    def checkpoints(self) -> list[int]:
        """Recorded steps ``0, checkpoint_every, ..., steps``."""
        return list(range(0, self.steps + 1, self.checkpoint_every))


SETTINGS = Settings()

_RUNS: dict[tuple, object] = {}


def _settings(quick: bool) -> Settings:
    """The chapter's settings; ``quick``: 256 test trees, 200 steps, checkpoints every 50 steps."""
    return replace(SETTINGS, test_trees=256, steps=200, checkpoint_every=50) if check_bool("quick", quick) else SETTINGS


@functools.lru_cache(maxsize=2)
def test_set(quick: bool = False):
    """The random test trees (0-3 children, depth cap ``test_max_depth``, any non-root goal): ``(batch, trees)``."""
    s = _settings(quick)
    return layout.random_tree_batch(s.S, s.test_trees, numpy_rng(s.test_seed), max_depth=s.test_max_depth)


def embedding_matrix(gaussian: bool = False):
    """One-hot embeddings, or (``gaussian``) Gaussian ones in ``d = S`` dimensions (seed ``gaussian_seed``)."""
    S = SETTINGS.S
    return embeddings.independent_embeddings(S, S, generator(SETTINGS.gaussian_seed)) if gaussian else embeddings.one_hot_embeddings(S)


def run(quick: bool = False, *, gaussian: bool = False, progress: bool = False):
    """The chapter's training run (SGD from ``B = 0``, one seed), evaluated on :func:`test_set` at every checkpoint
    (``gaussian``: with Gaussian embeddings, also recording the :func:`~onelayer.trees.backward.dynamics.h_stats` of
    ``H``). Trained once per ``(quick, gaussian)``; ``progress`` shows a progress bar while it trains."""
    key = (check_bool("quick", quick), check_bool("gaussian", gaussian))
    if key not in _RUNS:
        s, (test, _) = _settings(quick), test_set(quick)
        A = embedding_matrix(gaussian)
        record = {"test": gen.test_record(A, test), **(dynamics.h_records(A) if gaussian else {})}
        _RUNS[key] = model.train_backward(A, m=s.m, steps=s.steps, lr=s.lr, seed=s.seed, record_at=s.checkpoints,
                                          record=record, progress=progress)
    return _RUNS[key]


def test_fields(quick: bool = False, *, gaussian: bool = False) -> dict[str, np.ndarray]:
    """The run's test record split into :data:`~onelayer.trees.backward.generalization.TEST_FIELDS` (one value per
    checkpoint)."""
    hist = run(quick, gaussian=gaussian)
    return {name: hist["test"][:, i] for i, name in enumerate(gen.TEST_FIELDS)}


def training_rows(quick: bool = False) -> list[dict]:
    """The one-hot run at the checkpoints of ``table_steps``: train and test loss, the margin bound, the test
    accuracies and the margin (the accuracies and the margin as fixed-point text)."""
    hist, T = run(quick), test_fields(quick)
    return [{"step": int(t), "train loss": hist["loss"][i], "test loss": T["loss"][i], "bound": T["margin_bound"][i],
             "step acc": f"{T['step_accuracy'][i]:.4f}", "path acc": f"{T['path_accuracy'][i]:.4f}", "margin": f"{T['margin'][i]:.3f}"}
            for i, t in enumerate(hist.steps) if t in SETTINGS.table_steps]


def training_summary(quick: bool = False) -> dict:
    """The one-hot run: the first checkpoint with every test path right (``None`` if none), the final train loss,
    test loss and bound, and whether the bound holds at every checkpoint with a positive margin."""
    hist, T = run(quick), test_fields(quick)
    exact = T["path_accuracy"] == 1.0
    positive = T["margin"] > 0
    return {"full_step": int(hist.steps[np.argmax(exact)]) if exact.any() else None,
            "train_loss": float(hist["loss"][-1]), "test_loss": float(T["loss"][-1]), "bound": float(T["margin_bound"][-1]),
            "bound_holds_where_margin_positive": bool(np.all(T["loss"][positive] <= T["margin_bound"][positive]))}


def accuracy_by_length(quick: bool = False, *, gaussian: bool = False) -> dict[int, tuple[int, float]]:
    """Whole-path test accuracy of the final model by path length: ``length -> (trees, accuracy)``."""
    return gen.accuracy_by_length(run(quick, gaussian=gaussian).params["B"], embedding_matrix(gaussian), test_set(quick)[0])


@register("trees-generalization", "Trees I, Theorem 4: test loss, margin bound and test accuracy (per step, whole path) during training, with the margin")
def generalization(quick: bool = False):
    """Train and test loss with the margin bound; per-step and whole-path test accuracy with the margin (one-hot)."""
    hist, T = run(quick), test_fields(quick)
    fig, axes = new_figure(2, width=9.0, height=3.3)
    plot_curves(axes[0], hist.steps, {"train loss (batch)": hist["loss"], "test loss": T["loss"], "margin bound (test)": T["margin_bound"]},
                xlabel="step t", ylabel="loss", logy=True, styles={"margin bound (test)": {"linestyle": "--"}})
    plot_curves(axes[1], hist.steps, {"per-step accuracy": T["step_accuracy"], "whole-path accuracy": T["path_accuracy"]},
                xlabel="step t", ylabel="test accuracy (greedy)")
    ax2 = axes[1].twinx()
    ax2.plot(hist.steps, T["margin"], color="0.5", linestyle=":", label="margin")
    ax2.set_ylabel("margin delta (dotted)")
    ax2.grid(False)
    rows = [{"step": int(t), "train_loss": float(hist["loss"][i]),
             **{f"test_{k}" if k != "margin_bound" else k: float(T[k][i]) for k in gen.TEST_FIELDS}}
            for i, t in enumerate(hist.steps)]
    by_len = accuracy_by_length(quick)
    return fig, {"bound_holds_where_margin_positive": training_summary(quick)["bound_holds_where_margin_positive"],
                 "accuracy_by_path_length": {str(k): {"trees": c, "path_accuracy": a} for k, (c, a) in by_len.items()},
                 "table": rows}


def gaussian_rows(quick: bool = False) -> list[dict]:
    """The Gaussian run at the checkpoints of ``gaussian_table_steps``: losses, whole-path test accuracy, margin and
    the residual of ``H`` from the symmetric span (the last three as fixed-point text)."""
    hist, T = run(quick, gaussian=True), test_fields(quick, gaussian=True)
    return [{"step": int(t), "train loss": hist["loss"][i], "test loss": T["loss"][i], "path acc": f"{T['path_accuracy'][i]:.4f}",
             "margin": f"{T['margin'][i]:.3f}", "H residual": f"{hist['residual'][i]:.3f}"}
            for i, t in enumerate(hist.steps) if t in SETTINGS.gaussian_table_steps]


def gaussian_summary(quick: bool = False) -> dict:
    """The Gaussian run at its last checkpoint: residual of ``H``, whole-path test accuracy and margin."""
    hist, T = run(quick, gaussian=True), test_fields(quick, gaussian=True)
    return {"residual": float(hist["residual"][-1]), "path_accuracy": float(T["path_accuracy"][-1]),
            "margin": float(T["margin"][-1])}


@register("trees-generalization-embeddings", "Trees I, Theorem 4: whole-path test accuracy during training with one-hot and with Gaussian (non-orthogonal) embeddings")
def generalization_embeddings(quick: bool = False):
    """Whole-path test accuracy of the one-hot and the Gaussian run."""
    hist, T = run(quick), test_fields(quick)
    hist_g, Tg = run(quick, gaussian=True), test_fields(quick, gaussian=True)
    fig, ax = new_figure(1, width=5.5, height=3.2)
    plot_curves(ax, hist.steps, {"one-hot: test path accuracy": T["path_accuracy"], "Gaussian: test path accuracy": Tg["path_accuracy"]},
                xlabel="step t", ylabel="whole-path accuracy")
    rows = [{"step": int(t), "one_hot_path_accuracy": float(T["path_accuracy"][i]), "gaussian_path_accuracy": float(Tg["path_accuracy"][i]),
             "gaussian_margin": float(Tg["margin"][i]), "gaussian_H_residual": float(hist_g["residual"][i])}
            for i, t in enumerate(hist.steps)]
    by_len = accuracy_by_length(quick, gaussian=True)
    return fig, {"gaussian_accuracy_by_path_length": {str(k): {"trees": c, "path_accuracy": a} for k, (c, a) in by_len.items()},
                 "table": rows}


@functools.lru_cache(maxsize=1)
def beyond_runs() -> tuple[dict, ...]:
    """:func:`onelayer.trees.beyond.backward_beyond` with one-hot, then Gaussian embeddings: one result per seed."""
    s = SETTINGS
    return tuple(r for kind in ("one_hot", "gaussian")
                 for r in beyond.backward_beyond(kind, S=s.beyond_S, m=s.beyond_m, steps=s.beyond_steps, lr=s.beyond_lr,
                                                 seeds=s.beyond_seeds, count=s.beyond_count))


def beyond_rows() -> list[dict]:
    """One row per run of :func:`beyond_runs`: whole-path accuracy per test shape, the rate of stopping by itself,
    the largest tree and the deepest goal."""
    return [{"embeddings": r["kind"], "seed": r["seed"], "path": r["path_by_shape"]["path"][1],
             "star": r["path_by_shape"]["star"][1], "random": r["path_by_shape"]["random"][1],
             "stops by itself": r["stop_rate"], "largest tree": r["largest_tree"], "deepest goal": r["deepest_goal"]}
            for r in beyond_runs()]


def depth_rows() -> list[dict]:
    """:func:`onelayer.trees.beyond.depth_rows` of :func:`beyond_runs` (``goals``: the goals per depth bin)."""
    return beyond.depth_rows(list(beyond_runs()))


def verdict_rows() -> list[dict]:
    """The chapter's verdicts: generalisation to random trees and longer paths, the margin bound, the Gaussian
    embeddings and the runs past the assumptions (each training run: one seed; past the assumptions: three seeds,
    20 trees of each shape)."""
    from ...formatting import number_text

    s = SETTINGS
    summary, gauss = training_summary(), gaussian_summary()
    by_len, by_len_g = accuracy_by_length(), accuracy_by_length(gaussian=True)
    longer = {k: v for k, v in by_len.items() if k > s.m}
    runs = beyond_runs()
    base = {"source": "[paper]", "reading": "R-B layout, one-hot embeddings, mean loss with 1/2 (ours)",
            "chapter": "backward_generalization"}
    trained = (f"S = {s.S}, trained on perfect trees of depth {s.m} ({s.steps} SGD steps at lr {s.lr:g}, one seed); "
               f"{s.test_trees} random test trees (0-3 children, depth at most {s.test_max_depth})")
    return [
        {**base, "claim": "Theorem 4: trained on perfect binary trees, the model solves random trees of any shape, "
                          "including paths longer than in training",
         "settings": trained,
         "measurement": f"one seed: every test path right from step {summary['full_step']}; whole-path accuracy on paths "
                        f"longer than {s.m}: " + ", ".join(f"{number_text(a)} ({c} trees of length {k})" for k, (c, a) in longer.items()),
         "verdict": "holds" if summary["full_step"] is not None and all(a == 1.0 for _, a in by_len.values()) else "fails"},
        {**base, "claim": "the test loss is at most 2 (eps / (1 + eps))^2 per position, eps = (N - 1) e^-delta(H), and "
                          "tends to zero with training",
         "source": "[ours]", "settings": trained,
         "measurement": f"one seed: bound holds at every checkpoint with a positive margin: "
                        f"{summary['bound_holds_where_margin_positive']}; final test loss {number_text(summary['test_loss'])}, "
                        f"bound {number_text(summary['bound'])}",
         "verdict": "holds" if summary["bound_holds_where_margin_positive"] else "fails"},
        {**base, "claim": "with linearly independent, non-orthogonal embeddings the symmetric picture and exact "
                          "generalisation at the same training time are lost",
         "source": "[ours]", "reading": "R-B layout, Gaussian embeddings d = S (ours)", "settings": trained,
         "measurement": f"one seed: residual of H from the symmetric span {number_text(gauss['residual'])}, margin "
                        f"{number_text(gauss['margin'])}, whole-path test accuracy {number_text(gauss['path_accuracy'])} "
                        f"(lowest by length {number_text(min(a for _, a in by_len_g.values()))})",
         "verdict": "as described: learning works, exactness is lost" if gauss["path_accuracy"] < 1.0 else "exact anyway"},
        {**base, "claim": "the backward model reaches past the assumptions: non-orthogonal embeddings, deep paths, "
                          "wide stars, large random trees, and it stops at the root by itself",
         "source": "[ours]", "reading": "R-B layout, one-hot and Gaussian embeddings (ours)",
         "settings": f"S = {s.beyond_S}, m = {s.beyond_m}, {s.beyond_steps} steps at lr {s.beyond_lr:g}, "
                     f"{len(s.beyond_seeds)} seeds, {s.beyond_count} trees of each shape",
         "measurement": f"{len(s.beyond_seeds)} seeds per embedding, {s.beyond_count} trees of each shape: lowest "
                        f"whole-path accuracy {number_text(min(r['path_accuracy'] for r in runs))}, lowest stop rate "
                        f"{number_text(min(r['stop_rate'] for r in runs))}, trees up to {max(r['largest_tree'] for r in runs)} "
                        f"nodes, goals up to depth {max(r['deepest_goal'] for r in runs)}",
         "verdict": "holds on every run" if all(r["path_accuracy"] == 1.0 == r["stop_rate"] for r in runs) else "fails on some run"},
    ]

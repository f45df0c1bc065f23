"""Chapter "Theorem 4: it generalizes to unseen trees" (``book/trees/backward_generalization.ipynb``): the model
trained on perfect trees, tested on random trees during training (one-hot and Gaussian embeddings), the margin bound,
and the runs past the theorems' assumptions (:mod:`onelayer.studies.trees.beyond`).

Every figure of the chapter is a registered function here (the notebook and ``python -m onelayer make`` call the
same one). The two training runs are the stored study ``trees-backward-generalization-runs``
(:mod:`onelayer.studies.trees.backward_generalization_runs`), read once each and shared by the tables, both figures and
the verdicts; so are the runs past the assumptions.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from ... import store
from ...formatting import mean_text  # the chapter prints intervals with it
from ...figures.trees_backward import accuracy_curves_figure, generalization_figure
from ...rates import mean_interval, rate
from ...registry import register
from ...studies import registry as studies
from ...studies.trees import backward_beyond, backward_own_tests, beyond, stored_study
from ...studies.trees import backward_generalization_runs as runs_study
from ...studies.trees import backward_generalization as gen
from ...studies.trees import backward_seeds as seed_study
from ...validation import check_bool
from ...verdicts import trees_backward_generalization as verdicts

__all__ = ["Settings", "SETTINGS", "test_set", "embedding_matrix", "run", "test_fields", "training_rows",
           "training_summary", "accuracy_by_length", "generalization", "gaussian_rows", "gaussian_summary",
           "generalization_embeddings", "seed_rates", "seed_rows", "own_test_rates", "own_test_rows", "bound_rates",
           "beyond_rates", "beyond_rows", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """Theorem 4 and the runs past its assumptions.

    ``S = 31``, ``m = 4``, ``lr = 1``, 1,024 random test trees with 0-3 children [summary]; the 1,500 steps, the
    checkpoints every 100 steps, the test depth cap 7, the Gaussian embeddings ``d = S``, the steps the tables show
    and the seeds [guess]. Over many runs (the stored study :mod:`onelayer.studies.trees.backward_seeds`): 20 training seeds
    (one-hot) and 20 embedding draws (Gaussian), path lengths merged into bins of at least ``min_bin_goals`` test
    goals; the same 20 draws each on its own test trees at 1,500 and 3,000 steps (the stored study
    :mod:`onelayer.studies.trees.backward_own_tests`). Past the assumptions (:mod:`onelayer.studies.trees.backward_beyond`,
    stored study ``trees-backward-beyond``): ``S = 80``,
    ``m = 3``, 400 steps at lr 8, 20 runs per embedding family, 400 test goals of each shape [guess].
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
    min_bin_goals: int = 50  #: a path-length bin holds at least this many test goals (per run)

    @property
    def checkpoints(self) -> list[int]:
        """Recorded steps ``0, checkpoint_every, ..., steps``."""
        return list(range(0, self.steps + 1, self.checkpoint_every))


SETTINGS = Settings()

_RUNS: dict[tuple, object] = {}


def _settings(quick: bool) -> Settings:
    """The chapter's settings; ``quick``: 256 test trees, 200 steps, checkpoints every 50 steps."""
    return replace(SETTINGS, test_trees=256, steps=200, checkpoint_every=50) if check_bool("quick", quick) else SETTINGS


def _run_settings(quick: bool) -> runs_study.Settings:
    """The settings of the chapter's two runs (:mod:`onelayer.studies.trees.backward_generalization_runs`)."""
    s = _settings(quick)
    return runs_study.Settings(**{f.name: getattr(s, f.name) for f in fields(runs_study.Settings)})


def test_set(quick: bool = False):
    """The random test trees (0-3 children, depth cap ``test_max_depth``, any non-root goal): ``(batch, trees)``
    (drawn once per mode)."""
    return _test_set(check_bool("quick", quick))  # one cache entry per mode, however it is called


@functools.lru_cache(maxsize=2)
def _test_set(quick: bool):
    return runs_study.test_set(_run_settings(quick))


def embedding_matrix(gaussian: bool = False):
    """One-hot embeddings, or (``gaussian``) Gaussian ones in ``d = S`` dimensions (seed ``gaussian_seed``)."""
    return runs_study.embedding_matrix(_run_settings(False), gaussian)


def run(quick: bool = False, *, gaussian: bool = False, progress: bool = False):
    """The chapter's training run (SGD from ``B = 0``, one seed), evaluated on :func:`test_set` at every checkpoint
    (``gaussian``: with Gaussian embeddings, also recording the :func:`~onelayer.studies.trees.analysis.h_stats` of
    ``H``): the member of the stored study ``trees-backward-generalization-runs`` (refused if made with other
    settings), or (``quick``) trained here, once per ``(quick, gaussian)``; ``progress`` shows a progress bar while it
    trains."""
    key = (check_bool("quick", quick), check_bool("gaussian", gaussian))
    if key not in _RUNS:
        if quick:
            _RUNS[key] = runs_study.train_run(_run_settings(True), gaussian, test=test_set(True)[0], progress=progress)
        else:
            data = studies.load(runs_study.STUDY.name)
            if data["settings"] != store.to_jsonable(asdict(_run_settings(False))):
                raise ValueError(f"the stored study {runs_study.STUDY.name} has other settings than the chapter's; "
                                 f"run python -m onelayer study {runs_study.STUDY.name}")
            found = {m["key"]: m["result"] for m in data["members"]}
            _RUNS[key] = stored_study.history(found["gaussian" if gaussian else "one-hot"])
    return _RUNS[key]


def test_fields(quick: bool = False, *, gaussian: bool = False) -> dict[str, np.ndarray]:
    """The run's test record split into :data:`~onelayer.studies.trees.backward_generalization.TEST_FIELDS` (one value per
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


@register("trees-generalization", "Trees I, Theorem 4 (one seed): test loss, margin bound and test accuracy (per step, whole path) during training, with the margin")
def generalization(quick: bool = False):
    """Train and test loss with the margin bound; per-step and whole-path test accuracy with the margin (one-hot)."""
    hist, T = run(quick), test_fields(quick)
    fig = generalization_figure(hist.steps, {"train loss (batch)": hist["loss"], "test loss": T["loss"], "margin bound": T["margin_bound"]},
                                {"per-step accuracy": T["step_accuracy"], "whole-path accuracy": T["path_accuracy"]}, T["margin"])
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


@register("trees-generalization-embeddings", "Trees I, Theorem 4 (one seed each): whole-path test accuracy during training with one-hot and with Gaussian (non-orthogonal) embeddings")
def generalization_embeddings(quick: bool = False):
    """Whole-path test accuracy of the one-hot and the Gaussian run."""
    hist, T = run(quick), test_fields(quick)
    hist_g, Tg = run(quick, gaussian=True), test_fields(quick, gaussian=True)
    fig = accuracy_curves_figure(hist.steps, {"one-hot embeddings": T["path_accuracy"], "Gaussian embeddings": Tg["path_accuracy"]},
                                 ylabel="whole-path test accuracy")
    rows = [{"step": int(t), "one_hot_path_accuracy": float(T["path_accuracy"][i]), "gaussian_path_accuracy": float(Tg["path_accuracy"][i]),
             "gaussian_margin": float(Tg["margin"][i]), "gaussian_H_residual": float(hist_g["residual"][i])}
            for i, t in enumerate(hist.steps)]
    by_len = accuracy_by_length(quick, gaussian=True)
    return fig, {"gaussian_accuracy_by_path_length": {str(k): {"trees": c, "path_accuracy": a} for k, (c, a) in by_len.items()},
                 "table": rows}


def seed_rates(data: dict | None = None) -> dict[str, dict]:
    """Theorem 4 over the stored runs (:func:`onelayer.studies.trees.backward_seeds.stored`), per embedding family.

    ``exact``: test paths right at the last step, pooled over runs and goals (:class:`~onelayer.rates.Rate`);
    ``runs_all_right``: runs with every test path right; ``first_all_right``: per run, the first checkpoint with every
    test path right (``None``: never); ``longer``: pooled rate on paths longer than ``m``; ``bins``: ``(low, high,
    goals per run, Rate)`` with path lengths merged until each bin holds ``min_bin_goals`` goals; ``residual``: the
    final residual of ``H`` from the symmetric span (mean with its interval).
    """
    data = seed_study.stored() if data is None else data
    out = {}
    for kind, run in data["runs"].items():
        exact = np.asarray(run["exact_paths"])  # (checkpoints, runs)
        n_runs, goals = exact.shape[1], run["test_trees"]
        by_len = {int(k): np.asarray(v) for k, v in run["exact_by_length"].items()}
        counts = {int(k): v for k, v in run["goals_by_length"].items()}
        bins = []
        for lo, hi in seed_study.merge_bins(counts, SETTINGS.min_bin_goals):
            g = sum(counts[k] for k in counts if lo <= k <= hi)
            bins.append((lo, hi, g, rate(int(sum(by_len[k].sum() for k in by_len if lo <= k <= hi)), g * n_runs)))
        longer = [k for k in counts if k > run["m"]]
        first = [next((int(t) for t, e in zip(run["checkpoints"], exact[:, r]) if e == goals), None) for r in range(n_runs)]
        out[kind] = {"runs": n_runs, "goals": goals, "steps": run["steps"], "m": run["m"],
                     "exact": rate(int(exact[-1].sum()), goals * n_runs),
                     "runs_all_right": rate(int((exact[-1] == goals).sum()), n_runs), "first_all_right": first,
                     "lowest_run": int(exact[-1].min()),
                     "longer": rate(int(sum(by_len[k].sum() for k in longer)), sum(counts[k] for k in longer) * n_runs),
                     "bins": bins, "residual": mean_interval(np.asarray(run["residual"])[-1])}
    return out


def seed_rows(data: dict | None = None) -> list[dict]:
    """One row per embedding family and path-length bin of :func:`seed_rates`: goals per run and the pooled rate."""
    rows = []
    for kind, r in seed_rates(data).items():
        for lo, hi, g, rt in r["bins"]:
            rows.append({"embeddings": kind, "path length": f"{lo}" if lo == hi else f"{lo}-{hi}", "goals per run": g,
                         "exact paths (all runs)": rt.text(4)})
        rows.append({"embeddings": kind, "path length": "all", "goals per run": r["goals"],
                     "exact paths (all runs)": r["exact"].text(4)})
    return rows


def own_test_rates(data: dict | None = None) -> dict:
    """The Gaussian draws each tested on its own random test trees (the stored study
    :mod:`onelayer.studies.trees.backward_own_tests`), and on the shared set, at each reading.

    Returns ``draws``, ``goals`` (test trees per draw), ``readings`` and, for ``"own"`` and ``"shared"``, per reading:
    ``exact`` (test paths right, pooled over draws and goals) and ``runs_all_right`` (draws with every path of that
    test set right), both :class:`~onelayer.rates.Rate`, and ``lowest`` (the fewest paths right on one draw).
    """
    data = studies.load(backward_own_tests.STUDY.name) if data is None else data
    summary = data["summary"]
    n = summary["draws"]
    out = {"draws": n, "goals": data["settings"]["test_trees"], "readings": list(summary["readings"])}
    for name in ("own", "shared"):
        out[name] = {int(t): {"exact": rate(r["exact"], r["goals"]), "runs_all_right": rate(r["draws_all_right"], n),
                              "lowest": min(r["per_draw"])}
                     for t, r in summary[name].items()}
    return out


def own_test_rows(data: dict | None = None) -> list[dict]:
    """One row per test set and reading of :func:`own_test_rates`: exact paths pooled over the draws and the draws
    with every path right."""
    r = own_test_rates(data)
    label = {"shared": "one shared set (as in the table above)", "own": "its own set, per draw"}
    return [{"test trees": label[name], "step": t, "exact paths (all draws)": r[name][t]["exact"].text(4),
             "draws with every path right": r[name][t]["runs_all_right"].text(),
             "lowest draw": f"{r[name][t]['lowest']}/{r['goals']}"}
            for name in ("shared", "own") for t in r["readings"]]


def bound_rates(data: dict | None = None) -> dict:
    """The margin bound over the stored one-hot runs (:func:`onelayer.studies.trees.backward_seeds.stored`, or
    ``data``): :func:`onelayer.studies.trees.backward_seeds.bound_rates` of them."""
    return seed_study.bound_rates((seed_study.stored() if data is None else data)["runs"]["one_hot"])


def beyond_rates(data: dict | None = None) -> dict[str, dict]:
    """The stored runs past the assumptions (the study :mod:`onelayer.studies.trees.backward_beyond`), per embedding family:
    per shape the pooled rates of exact paths and of stopping by itself, and the runs that get every path of every
    shape right and stop every time (:class:`~onelayer.rates.Rate`)."""
    data = backward_beyond.stored() if data is None else data
    out = {}
    for kind, f in data["families"].items():
        n = f["runs"]
        perfect = [all(f["exact"][sh][r] == f["goals"][sh] == f["stops"][sh][r] for sh in beyond.SHAPES) for r in range(n)]
        out[kind] = {"runs": n, "goals": f["goals"], "largest_tree": f["largest_tree"], "deepest_goal": f["deepest_goal"],
                     "path": {sh: rate(sum(f["exact"][sh]), f["goals"][sh] * n) for sh in beyond.SHAPES},
                     "stop": {sh: rate(sum(f["stops"][sh]), f["goals"][sh] * n) for sh in beyond.SHAPES},
                     "runs_perfect": rate(sum(perfect), n),
                     "runs_all_paths": rate(sum(all(f["exact"][sh][r] == f["goals"][sh] for sh in beyond.SHAPES)
                                                for r in range(n)), n)}
    return out


def beyond_rows(data: dict | None = None) -> list[dict]:
    """One row per embedding family and test shape of :func:`beyond_rates`."""
    return [{"embeddings": kind, "shape": sh, "goals per run": r["goals"][sh], "exact paths": r["path"][sh].text(4),
             "stops by itself": r["stop"][sh].text(4)}
            for kind, r in beyond_rates(data).items() for sh in beyond.SHAPES]


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.trees_backward_generalization.rows` of the stored seed,
    own-test and beyond studies, read with the chapter's settings."""
    return verdicts.rows(SETTINGS, seeds=seed_rates(), bounds=bound_rates(), past=beyond_rates(), own=own_test_rates())

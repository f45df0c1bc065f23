"""The walks experiment set-up every walks chapter shares, and the Theorem 3.1 experiments built on it.

:class:`Experiment`, :func:`setup_experiment` and :func:`run` (the paper's model, data and full-batch GD) are what
the walks chapters vary (Theorem 3.1 and 4.1, random initialisation, variations, the lab).

Each function is one experiment of the chapter ``book/walks/theorem31.ipynb`` (whose module,
:mod:`onelayer.chapters.walks.theorem31`, holds its settings and calls them) and of
``tests/test_walks_theorem31.py`` / ``tests/test_walks_lemma_c1.py``:

* :func:`setup_experiment`: model, training and test sets with the paper's
  Section 5.1 defaults (``K=6``, ``N=97``, ``M=1000``, 1000 + 1000 walks).
* :func:`standard_records` / :func:`run`: full-batch GD with the quantities of
  Figure 4 recorded at every step; :func:`training_numbers`: the numbers of such a run.
* :func:`lemma_c1_check`: the first step against its closed form.
* :func:`log_odds_vs_N`: the step-2 parent log-odds for growing ``N``.
* :func:`steps_to_optimal_table`: how many steps until every prediction is
  Bayes-optimal, for several ``(K, N)``.
* :func:`direction_run`: the direction and the norm of ``V`` over a long run,
  against ``Pi^T`` and against ``sqrt(Pi^T)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ...training import History
from ...validation import check_choice, check_float, check_int, check_int_sequence, check_probability
from ...walks import prediction, ring, theory
from . import analysis
from ...walks.data import TokenData, walk_data, walk_population
from .first_steps import circulant_deviation, column_max_offsets, maximal_offsets
from ...walks.model import WalkTransformer
from .inputs import walk_model

__all__ = [
    "Experiment",
    "setup_experiment",
    "standard_records",
    "run",
    "training_numbers",
    "lemma_c1_check",
    "C1_KEYS",
    "lemma_c1_cases",
    "lemma_c5_cases",
    "log_odds_vs_N",
    "steps_to_optimal_table",
    "direction_run",
    "OPTIMAL_TOL",
]

#: Tolerance for "the conditional accuracy equals max(p, 1-p)" (it is a mean of exact entries of Pi).
OPTIMAL_TOL = 1e-9


@dataclass
class Experiment:
    """A model with its training set, test set and walk parameter ``p``."""

    model: WalkTransformer
    train: TokenData
    test: TokenData
    p: float

    @property
    def bayes_accuracy(self) -> float:
        """``max(p, 1 - p)``."""
        return ring.bayes_accuracy(self.p)

    @property
    def bayes_test_accuracy(self) -> float:
        """Accuracy of the Bayes rule on this test set (the attainable value for this draw)."""
        pred = prediction.predict(ring.bayes_scores(self.test.last, self.model.config.K, self.p))
        return prediction.accuracy(pred, self.test.labels, self.test.weights)


def setup_experiment(p: float = 0.5, *, K: int = 6, N: int = 97, M: int = 1000, n_train: int = 1000, n_test: int = 1000,
                     seed: int = 0, **options) -> Experiment:
    """The Section 5.1 setting: sampled training and test walks and a zero-ready model.

    ``options`` are passed to :class:`onelayer.walks.model.ModelConfig`
    (``positions``, ``loss``, ...). The training set uses ``seed``, the test set
    ``seed + 1000``.
    """
    p = check_probability("p", p)
    seed = check_int("seed", seed, low=0)
    model = walk_model(K=K, N=N, M=M, **options)
    train = walk_data(K, p, N, n_train, seed=seed)
    test = walk_data(K, p, N, n_test, seed=seed + 1000)
    return Experiment(model, train, test, p)


def standard_records(exp: Experiment, *, keep_V: bool = True, keep_profile: bool = True) -> dict:
    """Record functions for Figure 4: test accuracy, conditional accuracy, attention on the parent, profile, ``V``."""
    m, test, p = exp.model, exp.test, exp.p
    records = {
        "test_accuracy": lambda prm: m.accuracy(prm, test),
        "conditional_accuracy": lambda prm: m.conditional_accuracy(prm, test, p),
        "parent_attention": lambda prm: float(m.attention(prm, test)[:, -2].mean()),
        "train_accuracy": lambda prm: m.accuracy(prm, exp.train),
    }
    if keep_profile:
        records["attention_profile"] = lambda prm: (m.attention(prm, test) * test.weights[:, None]).sum(0)
    if keep_V:
        records["V"] = lambda prm: prm["V"].clone()
    return records


def run(exp: Experiment, *, steps: int = 50, lr=1.0, init: str = "zero", sigma: float = 0.01, seed: int = 0,
        record_at=None, keep_V: bool = True, keep_profile: bool = True) -> History:
    """Full-batch GD on ``exp.train`` from ``init``, recording :func:`standard_records` (every step by default)."""
    params = exp.model.init(init, sigma=sigma, seed=seed)
    return exp.model.train(params, exp.train, steps=steps, lr=lr, record_at=record_at,
                           record=standard_records(exp, keep_V=keep_V, keep_profile=keep_profile))


def training_numbers(hist: History, exp: Experiment) -> dict:
    """Numbers behind a :func:`onelayer.figures.walks.training_figure` of a :func:`run`: sizes, the Bayes accuracy,
    the first step from which every test prediction is Bayes-optimal (``steps_to_optimal``), final values and a
    per-step ``table`` (test, conditional and training accuracy, attention on the parent)."""
    optimal = np.abs(hist["conditional_accuracy"] - exp.bayes_accuracy) < OPTIMAL_TOL
    c = exp.model.config
    return {
        "K": c.K, "N": c.N, "M": c.M, "p": exp.p, "positions": c.positions,
        "bayes_accuracy": exp.bayes_accuracy,
        "bayes_test_accuracy": exp.bayes_test_accuracy,
        "steps_to_optimal": analysis.steps_to_optimal(optimal),
        "final_test_accuracy": float(hist.final("test_accuracy")),
        "final_parent_attention": float(hist.final("parent_attention")),
        "final_V_spread": float(hist.final("V").max() - hist.final("V").min()),
        "table": [
            {"step": int(t), "test_accuracy": float(a), "conditional_accuracy": float(ca), "parent_attention": float(pa),
             "train_accuracy": float(ta)}
            for t, a, ca, pa, ta in zip(hist.steps, hist["test_accuracy"], hist["conditional_accuracy"],
                                        hist["parent_attention"], hist["train_accuracy"])
        ],
    }


def lemma_c1_check(model: WalkTransformer, data: TokenData, p: float, *, lr: float = 1.0) -> dict:
    """One GD step from zero on ``data``, compared with Lemma C.1 (a statement about the population).

    Properties of two different objects are returned under distinct names:

    * ``V1`` and every ``V1_*`` key: the matrix measured after one step on ``data``
      (a sample or an exact population, whatever ``data`` is): ``V1_circulant``
      (``V1_circulant_deviation <= 1e-12`` times its largest entry),
      ``V1_circulant_deviation`` (:func:`onelayer.studies.walks.first_steps.circulant_deviation`) and
      ``V1_column_max_offsets`` (for each column ``s``, the offset ``(y - s) mod K`` of its
      largest entry; Lemma C.3 says ``+1`` for ``p > 1/2``).
    * ``closed_form`` and every ``closed_form_*`` key: the population formula of
      :func:`onelayer.walks.theory.lemma_c1_value`: ``closed_form_circulant`` and
      ``closed_form_max_offsets`` (all offsets where its first column is maximal, ties as in
      :func:`onelayer.studies.walks.first_steps.column_max_offsets`: :func:`~onelayer.studies.walks.first_steps.maximal_offsets`).

    Also ``max_error`` (``max |V1 - closed_form|``), ``max_entry`` (of the closed
    form) and ``max_abs_q1`` (``W^(1) = 0`` means ``q^(1) = 0``).
    """
    lr = check_float("lr", lr, low=0.0, low_open=True)
    c = model.config
    hist = model.train(model.init(), data, steps=1, lr=lr)
    V1 = hist.params["V"].numpy()
    closed = theory.lemma_c1_value(c.K, p, c.N, lr, c.epsilon)
    deviation = circulant_deviation(V1)
    return {
        "V1": V1,
        "V1_circulant": bool(deviation <= 1e-12 * max(float(np.abs(V1).max()), 1e-300)),
        "V1_circulant_deviation": deviation,
        "V1_column_max_offsets": column_max_offsets(V1),
        "closed_form": closed,
        "closed_form_circulant": ring.is_circulant(closed, tol=1e-14),
        "closed_form_max_offsets": maximal_offsets(closed),
        "max_error": float(np.abs(V1 - closed).max()),
        "max_entry": float(closed.max()),
        "max_abs_q1": float(hist.params["q"].abs().max()),
    }


#: The keys of a :func:`lemma_c1_check` a table shows (the matrices left out).
C1_KEYS = ("max_error", "max_entry", "max_abs_q1", "V1_circulant", "V1_circulant_deviation", "V1_column_max_offsets",
           "closed_form_circulant", "closed_form_max_offsets")


def lemma_c1_cases(ps, sample, *, population_N: int, population_M: int) -> tuple:
    """:func:`lemma_c1_check` for each ``p`` of ``ps`` on the exact population at ``population_N``,
    ``population_M`` and on the sampled walks of ``sample(p)`` (an :class:`Experiment`): tuples
    ``(p, "population" or "1000 walks", N, check)``."""
    out = []
    for p in ps:
        small = setup_experiment(p, N=population_N, M=population_M).model
        population = lemma_c1_check(small, walk_population(small.config.K, p, population_N), p)
        e = sample(p)
        out += [(p, "population", population_N, population),
                (p, "1000 walks", e.model.config.N, lemma_c1_check(e.model, e.train, p))]
    return tuple(out)


def lemma_c5_cases(p: float, sample: Experiment, *, population_N: int, population_M: int) -> list[dict]:
    """:func:`onelayer.walks.theory.lemma_c5_check` at ``p`` on the exact population (``population_N``,
    ``population_M``) and on the sampled walks of ``sample``, one row each with its ``data`` name."""
    small = setup_experiment(p, N=population_N, M=population_M).model
    cases = ((f"population, N={population_N}, M={population_M}", small,
              walk_population(small.config.K, p, population_N)),
             (f"sample,     N={sample.model.config.N}, M={sample.model.config.M}", sample.model, sample.train))
    return [{"data": name, **theory.lemma_c5_check(model, data)} for name, model, data in cases]


def _M_for(N: int, rule: str, M: int) -> int:
    if rule == "fixed":
        return M
    return max(math.ceil(N**1.5), N + 1)


def log_odds_vs_N(p: float, Ns, *, K: int = 6, M_rule: str = "power", M: int = 1000, n: int = 8000, seed: int = 0,
                  lr: float = 1.0) -> dict[str, np.ndarray]:
    """Step-2 log-odds of the parent against the best other position, for each ``N`` in ``Ns``.

    ``M_rule="power"`` uses ``M = ceil(N^{3/2})`` (the theorem's growth of M),
    ``"fixed"`` keeps ``M``. Trains two steps on ``n`` sampled walks and
    evaluates on the same walks. Returns arrays ``N``, ``M``, ``median_min_log_odds``
    (median over sequences of ``min_j log(S_{N-1}/S_j)``), ``parent_attention``.
    """
    Ns = check_int_sequence("Ns", Ns, low=3)
    check_choice("M_rule", M_rule, ("power", "fixed"))
    rows = []
    for N in Ns:
        Mn = _M_for(N, M_rule, M)
        model = walk_model(K=K, N=N, M=Mn)
        data = walk_data(K, p, N, n, seed=seed + N)
        hist = model.train(model.init(), data, steps=2, lr=lr)
        S = model.attention(hist.params, data)
        lo = theory.parent_log_odds(model.logits(hist.params, data)).min(axis=1)
        rows.append((N, Mn, float(np.median(lo)), float(S[:, -2].mean())))
    arr = np.array(rows)
    return {"N": arr[:, 0].astype(int), "M": arr[:, 1].astype(int), "median_min_log_odds": arr[:, 2], "parent_attention": arr[:, 3]}


def steps_to_optimal_table(p: float, sizes, *, steps: int = 20, n_train: int = 1000, n_test: int = 1000, seed: int = 0,
                           lr: float = 1.0) -> list[dict]:
    """For each ``(K, N)`` in ``sizes`` (``M = max(1000, ceil(N^1.5))``): the first step after which
    every test prediction is Bayes-optimal (conditional accuracy = ``max(p, 1-p)``), the final
    test accuracy and the final attention on the parent."""
    steps = check_int("steps", steps, low=1)
    rows = []
    for K, N in sizes:
        exp = setup_experiment(p, K=K, N=N, M=max(1000, math.ceil(N**1.5)), n_train=n_train, n_test=n_test, seed=seed)
        hist = run(exp, steps=steps, lr=lr, keep_V=False, keep_profile=False)
        optimal = np.abs(hist["conditional_accuracy"] - exp.bayes_accuracy) < OPTIMAL_TOL
        rows.append({
            "K": K, "N": N, "M": exp.model.config.M,
            "T0": analysis.steps_to_optimal(optimal),
            "test_accuracy": float(hist.final("test_accuracy")),
            "bayes_test_accuracy": exp.bayes_test_accuracy,
            "parent_attention": float(hist.final("parent_attention")),
        })
    return rows


def direction_run(p: float, *, steps: int = 1000, K: int = 6, N: int = 97, M: int = 1000, n_train: int = 1000,
                  n_test: int = 1000, seed: int = 0, lr: float = 1.0, n_records: int = 40) -> dict[str, np.ndarray]:
    """Long GD run; at log-spaced steps, distances of ``V``'s direction to ``Pi^T``, ``sqrt(Pi^T)`` and the
    training set's own square-root target, the ratio of the clockwise to the counter-clockwise entries,
    ``||V||_F`` and the output-direction distances (Theorem 3.1 item 2) on the test set.
    """
    steps = check_int("steps", steps, low=1)
    exp = setup_experiment(p, K=K, N=N, M=M, n_train=n_train, n_test=n_test, seed=seed)
    record_at = np.unique(np.round(np.logspace(0, math.log10(steps), n_records)).astype(int)).tolist()
    m, test = exp.model, exp.test
    targets = theory.value_targets(K, p)
    emp = analysis.empirical_target(exp.train)
    records = {
        "V": lambda prm: prm["V"].clone(),
        "out_Pi": lambda prm: theory.output_direction_distance(m.forward(prm, test), test, targets["Pi^T"]),
        "out_sqrt": lambda prm: theory.output_direction_distance(m.forward(prm, test), test, targets["sqrt(Pi^T)"]),
        "conditional_accuracy": lambda prm: m.conditional_accuracy(prm, test, p),
    }
    hist = m.train(m.init(), exp.train, steps=steps, lr=lr, record_at=record_at, record=records)
    keep = hist.steps >= 1
    Vs = hist["V"][keep]
    means = [analysis.offset_means(V, p) for V in Vs]
    return {
        "p": p,
        "steps": hist.steps[keep],
        "d_Pi": np.array([theory.direction_distance(V, targets["Pi^T"]) for V in Vs]),
        "d_sqrt": np.array([theory.direction_distance(V, targets["sqrt(Pi^T)"]) for V in Vs]),
        "d_empirical": np.array([theory.direction_distance(V, emp) for V in Vs]),
        "sampling_floor": theory.direction_distance(emp, targets["sqrt(Pi^T)"]),
        "ratio": np.array([mm["clockwise"] / mm["counter"] for mm in means]),
        "norm": np.array([np.linalg.norm(V) for V in Vs]),
        "out_Pi": hist["out_Pi"][keep],
        "out_sqrt": hist["out_sqrt"][keep],
        "conditional_accuracy": hist["conditional_accuracy"][keep],
        "V_final": Vs[-1],
    }

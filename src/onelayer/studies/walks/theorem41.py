"""Theorem 4.1 experiments: a deterministic walk (``p in {0, 1}``) is not learned, and how round-off escapes.

With ``N = rK + 1`` every node appears exactly ``r`` times among the ``N - 1``
observed tokens, so uniform attention sees the same token average ``(1/K) 1``
for every sequence. From zero, GD then keeps the real-token logits equal and
``V`` proportional to the all-ones matrix: every score ties and the model
predicts node 0 always (accuracy ``1/K`` on the population).

The symmetric state is unstable. These functions measure both sides:

* :func:`deterministic_setup`: the ``p = 1`` (or 0) experiment with the exact
  population of the ``K`` walks or a sampled training set.
* :func:`symmetry_records` / :func:`symmetry_table`: distance from the
  symmetric state along GD for several losses and step-size schedules.
* :func:`residue_class_mass`: attention mass on each class of positions
  ``j mod K`` (positions in one class carry the same token in a deterministic walk).
* :func:`escape_run` / :func:`escape_step` / :func:`escape_summary`: round-off in
  non-exact positional vectors (or float32) breaking the symmetry.
* :func:`gram_error_escape`: the same escape driven by a seeded error of the
  positions' Gram matrix of a stated size (:data:`GRAM_ERROR`), in place of
  round-off.
* :func:`perturbation_escape`: the escape time against the size of a deliberate
  perturbation of the initial ``q``.

Round-off and reproducibility
-----------------------------
With GD from zero the symmetric state is left only through something that
breaks the symmetry. With ``positions="sin"`` that is the round-off of the
computed sinusoidal vectors and of the arithmetic, which differs between CPUs,
vectorised kernels and thread counts: the escape step and the state reached
are then properties of the machine. The reproducible runs instead add a
seeded Gaussian error of the Gram matrix (model option ``gram_error``, see
:mod:`onelayer.walks.positions`) large enough that the machine's own rounding,
about ``1e-13`` on Gram entries of size ``M/2 = 500``, is negligible against
it: :data:`GRAM_ERROR` ``= 1e-9`` on the sinusoidal positions (whose own
round-off is at most ``1.5e-12``), and the sizes of :func:`gram_error_escape`
on exactly orthogonal positions, whose arithmetic is otherwise exact.
"""

from __future__ import annotations

import numpy as np
import torch

from ...jitter import jitter
from ...seeding import generator
from ...training import History
from ...validation import check_choice, check_float, check_int, check_probability
from ...walks import theory
from ...walks.data import TokenData, walk_data, walk_population
from ...walks.model import WalkTransformer
from .experiment import Experiment
from .inputs import walk_model

__all__ = [
    "deterministic_setup",
    "symmetry_records",
    "unpack_symmetry",
    "symmetry_table",
    "SYMMETRY_KEYS",
    "residue_class_mass",
    "escape_records",
    "escape_run",
    "escape_step",
    "escape_summary",
    "escape_rows",
    "token_averages",
    "gram_error_escape",
    "perturbation_escape",
    "SCHEDULES",
    "GRAM_ERROR",
    "GRAM_ERROR_SIZES",
]

#: Step-size schedules used in the chapter: name -> ``t -> eta_t``.
SCHEDULES = {
    "constant 1": 1.0,
    "constant 10": 10.0,
    "decaying 1/sqrt(t+1)": lambda t: 1.0 / (t + 1) ** 0.5,
    "cyclic 0.1..5": lambda t: (0.1, 1.0, 5.0)[t % 3],
}


#: Seeded Gram error added to the sinusoidal positions in the reproducible runs of the paper's recipe
#: (``gram_error`` of :class:`onelayer.walks.model.ModelConfig`): about 600 times the largest off-diagonal
#: round-off of their computed Gram matrix (``1.5e-12`` at ``N = 97``, ``M = 1000``), so that round-off,
#: wherever it differs between machines, does not change the escape.
GRAM_ERROR = 1e-9

#: Gram errors of :func:`gram_error_escape` in the chapter: a float64 stand-in (:data:`GRAM_ERROR`) and
#: the size of float32's round-off of the sinusoidal Gram matrix (standard deviation ``1.4e-5``).
GRAM_ERROR_SIZES = (GRAM_ERROR, 1e-5)


def deterministic_setup(K: int = 6, r: int = 16, *, p: float = 1.0, M: int = 1000, positions: str = "exact",
                        train: str = "population", n_train: int = 1000, n_test: int = 1000, seed: int = 0,
                        **options) -> Experiment:
    """``N = rK + 1``; training data is the exact population of the ``K`` walks or ``n_train`` sampled walks.

    The test set is always ``n_test`` sampled walks (seed ``seed + 1000``).
    ``options`` go to :class:`onelayer.walks.model.ModelConfig` (``dtype``, ``loss``,
    ``gram_error``, ``gram_seed``, ...).
    """
    K = check_int("K", K, low=3)
    r = check_int("r", r, low=1)
    p = check_probability("p", p)
    if p not in (0.0, 1.0):
        raise ValueError(f"p must be 0 or 1 for a deterministic walk, got {p}")
    check_choice("train", train, ("population", "sample"))
    N = r * K + 1
    model = walk_model(K=K, N=N, M=M, positions=positions, **options)
    data = walk_population(K, p, N) if train == "population" else walk_data(K, p, N, n_train, seed=seed)
    test = walk_data(K, p, N, n_test, seed=seed + 1000)
    return Experiment(model, data, test, p)


#: Quantities recorded by :func:`symmetry_records` (in this order), see :func:`onelayer.walks.theory.symmetry_report`.
SYMMETRY_KEYS = ("logit_spread", "V_dev", "V_mean", "query_attention", "accuracy")


def symmetry_records(model: WalkTransformer, data: TokenData) -> dict:
    """One record ``"symmetry"``: an array of the :data:`SYMMETRY_KEYS` quantities at each step
    (use :func:`unpack_symmetry` on the history)."""

    def report(prm):
        rep = theory.symmetry_report(model, prm, data)
        return np.array([rep[k] for k in SYMMETRY_KEYS])

    return {"symmetry": report}


def unpack_symmetry(hist: History) -> dict[str, np.ndarray]:
    """``{key: values over the recorded steps}`` from a history recorded with :func:`symmetry_records`."""
    arr = hist["symmetry"]
    return {k: arr[:, i] for i, k in enumerate(SYMMETRY_KEYS)}


def symmetry_table(*, K: int = 6, r: int = 16, M: int = 1000, loss_names=("log", "squared", "cross_entropy"),
                   schedules=None, steps: int = 100, positions: str = "exact") -> list[dict]:
    """GD on the exact population for every loss and schedule; the worst deviation from symmetry over all steps.

    Row keys: ``loss``, ``schedule``, ``max_logit_spread`` (real tokens, over steps and sequences),
    ``max_V_dev`` (largest ``max(V) - min(V)`` over steps), ``max_abs_V_mean``, ``min_accuracy``,
    ``max_accuracy``, ``final_V_mean``, ``final_query_attention``.
    """
    steps = check_int("steps", steps, low=1)
    schedules = SCHEDULES if schedules is None else schedules
    rows = []
    for loss in loss_names:
        for name, lr in schedules.items():
            exp = deterministic_setup(K, r, M=M, positions=positions, loss=loss)
            m = exp.model
            hist = m.train(m.init(), exp.train, steps=steps, lr=lr, record=symmetry_records(m, exp.train))
            rec = unpack_symmetry(hist)
            rows.append({
                "loss": loss,
                "schedule": name,
                "max_logit_spread": float(rec["logit_spread"].max()),
                "max_V_dev": float(rec["V_dev"].max()),
                "max_abs_V_mean": float(np.abs(rec["V_mean"]).max()),
                "min_accuracy": float(rec["accuracy"].min()),
                "max_accuracy": float(rec["accuracy"].max()),
                "final_V_mean": float(rec["V_mean"][-1]),
                "final_query_attention": float(rec["query_attention"][-1]),
            })
    return rows


def residue_class_mass(S: torch.Tensor, K: int) -> torch.Tensor:
    """Attention mass of each class ``{j < N : j = c mod K}`` of real positions, ``(B, K)`` (0-based ``j``)."""
    real = S[:, :-1]
    classes = torch.arange(real.shape[1]) % K
    out = torch.zeros((S.shape[0], K), dtype=S.dtype)
    return out.index_add_(1, classes, real)


def escape_records(exp: Experiment) -> dict:
    """Logit spread on the training data; test accuracy; mean top residue-class mass and top attention weight on the test set."""
    m, train, test = exp.model, exp.train, exp.test
    K = m.config.K

    def spread(prm):
        z = m.logits(prm, train)[:, :-1]
        return float((z.max(dim=1).values - z.min(dim=1).values).max())

    return {
        "logit_spread": spread,
        "test_accuracy": lambda prm: m.accuracy(prm, test),
        "class_mass": lambda prm: float(residue_class_mass(m.attention(prm, test), K).max(dim=1).values.mean()),
        "top_attention": lambda prm: float(m.attention(prm, test)[:, :-1].max(dim=1).values.mean()),
    }


def escape_run(exp: Experiment, *, steps: int = 60, lr=1.0, init_q: torch.Tensor | None = None) -> History:
    """GD from zero (or from ``q = init_q``) with :func:`escape_records` recorded at every step."""
    params = exp.model.init()
    if init_q is not None:
        params["q"] = init_q.to(exp.model.dtype)
    return exp.model.train(params, exp.train, steps=steps, lr=lr, record=escape_records(exp))


def escape_step(spread, threshold: float = 1.0) -> float:
    """First recorded step at which the real-token logit spread exceeds ``threshold`` (``nan`` if never)."""
    threshold = check_float("threshold", threshold, low=0.0, low_open=True)
    idx = np.flatnonzero(np.asarray(spread) > threshold)
    return float(idx[0]) if idx.size else float("nan")


def escape_summary(hist: History, threshold: float = 1.0) -> dict:
    """The printed summary of an :func:`escape_run`: ``escape_step`` (:func:`escape_step`, ``nan`` if never),
    ``steps`` run, and the final ``test_accuracy``, ``class_mass`` and ``top_attention``."""
    return {
        "escape_step": escape_step(hist["logit_spread"], threshold),
        "steps": int(hist.steps[-1]),
        "test_accuracy": float(hist.final("test_accuracy")),
        "class_mass": float(hist.final("class_mass")),
        "top_attention": float(hist.final("top_attention")),
    }


def escape_rows(escape: dict, *, spread: bool = False) -> list[dict]:
    """One row per run of ``escape`` (name -> :func:`escape_run` history): its :func:`escape_summary` (escape step,
    final test accuracy, class mass and top attention) and, with ``spread``, the largest real-token logit spread."""
    rows = []
    for name, h in escape.items():
        summary = escape_summary(h)
        rows.append({"run": name, "escape_step": summary["escape_step"], "final_test_accuracy": summary["test_accuracy"],
                     "final_class_mass": summary["class_mass"], "final_top_attention": summary["top_attention"],
                     **({"max_logit_spread": float(np.max(h["logit_spread"]))} if spread else {})})
    return rows


def token_averages(K: int, r: int, other_Ns) -> list[dict]:
    """The token average of every walk of the exact ``p = 1`` population: for ``N = rK + 1`` its largest distance to
    ``1/K`` (``max_dev``), for each of ``other_Ns`` the largest spread between walks (``spread``)."""
    N = r * K + 1
    pop = walk_population(K, 1.0, N)
    rows = [{"N": N, "walks": pop.B, "max_dev": float((pop.token_average() - 1 / K).abs().max())}]
    for n in other_Ns:
        avg = walk_population(K, 1.0, n).token_average()
        rows.append({"N": n, "walks": avg.shape[0], "spread": float((avg.max(0).values - avg.min(0).values).max())})
    return rows


def gram_error_escape(sizes=GRAM_ERROR_SIZES, *, K: int = 6, r: int = 16, M: int = 1000, positions: str = "exact",
                      train: str = "sample", steps: int = 40, seed: int = 0, gram_seed: int = 0,
                      lr=1.0) -> dict[str, History]:
    """:func:`escape_run` with a seeded Gram error of each size in ``sizes`` instead of round-off.

    The positions (exactly orthogonal by default) get the model option
    ``gram_error=size`` (seed ``gram_seed``): their Gram matrix moves by about
    ``size`` off the diagonal, the same perturbation on every machine. Each size
    must exceed ``1e-11``, a hundred times the round-off of Gram entries of size
    ``M / 2``, or the machine's rounding would again decide the escape. Float64
    throughout. Returns ``{"Gram error <size>": history}``.
    """
    sizes = [check_float("size", g, low=1e-11) for g in sizes]
    if not sizes:
        raise ValueError("sizes must name at least one Gram error")
    steps = check_int("steps", steps, low=1)
    out = {}
    for g in sizes:
        exp = deterministic_setup(K, r, M=M, positions=positions, train=train, seed=seed, gram_error=g,
                                  gram_seed=gram_seed)
        out[f"Gram error {g:.0e}".replace("e-0", "e-")] = escape_run(exp, steps=steps, lr=lr)
    return out


def perturbation_escape(deltas, *, K: int = 6, r: int = 16, M: int = 1000, steps: int = 60, seed: int = 0,
                        lr=1.0, threshold: float = 1.0) -> dict[str, np.ndarray]:
    """Exact positions and exact population, with ``q^(0) = delta * g / ||g||`` for a fixed Gaussian ``g``.

    Returns ``delta``, the initial real-token logit spread, the escape step
    (:func:`escape_step`) and the final test accuracy for every ``delta``.
    """
    deltas = [check_float("delta", d, low=0.0) for d in deltas]
    exp = deterministic_setup(K, r, M=M, positions="exact", train="population", seed=seed)
    g = jitter(torch.randn(exp.model.D, generator=generator(seed), dtype=torch.float64), "theorem41.perturbation")
    g = g / g.norm()
    rows = []
    for delta in deltas:
        hist = escape_run(exp, steps=steps, lr=lr, init_q=delta * g)
        rows.append((delta, hist["logit_spread"][0], escape_step(hist["logit_spread"], threshold), hist.final("test_accuracy")))
    arr = np.array(rows, dtype=float)
    return {"delta": arr[:, 0], "initial_spread": arr[:, 1], "escape_step": arr[:, 2], "final_accuracy": arr[:, 3]}

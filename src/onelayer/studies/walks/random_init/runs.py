"""The runs of Section 5.2: the paper's setting and one setting (:class:`RunConfig`, :func:`run_config`); the study
``walks-random-init`` (:mod:`onelayer.studies.walks.random_init.stored`) runs the grid."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import torch

from ....validation import check_choice, check_float, check_int, check_int_sequence, check_probability
from .. import kl
from ....walks import prediction, ring
from ....walks.model import NORMALIZE, REDUCTIONS
from ..experiment import Experiment, setup_experiment


#: The paper's stated setting of Section 5.2.
PAPER = {"K": 6, "N": 97, "M": 1000, "sigma": 0.01, "lr": 0.01, "epsilon": 0.1, "n_train": 1000, "n_test": 1000,
         "steps": 1000}
#: ``(reduction, lr)`` pairs of the study; effective step on the mean loss: 0.01, 0.1, 1, 3, 10, 100.
READINGS = (("mean", 0.01), ("mean", 0.1), ("mean", 1.0), ("mean", 3.0), ("sum", 0.01), ("sum", 0.1))
#: Steps of the authors' weighted-average-token table.
TABLE_STEPS = (100, 300, 500, 700, 900)
#: Steps of the ``V`` snapshots (the paper's Figures 12 and 13).
SNAPSHOT_STEPS = (100, 400, 700, 1000)
#: Order of the quantities in a run's ``"curves"`` entry.
RECORD_KEYS = ("test_accuracy", "optimal_fraction", "kl", "parent_attention", "lag2_attention", "top_attention")

#: The weighted average token reported by the authors in their OpenReview answer (``p = 1``, the run of their
#: Figure 6(c)/(d)): ``step -> (one example sequence, variance of each coordinate over 1000 sequences)``.
AUTHORS_TABLE = {
    100: ((0.1648, 0.1650, 0.1653, 0.1752, 0.1646, 0.1652), (1.50e-5, 1.52e-5, 1.40e-5, 1.53e-5, 1.52e-5, 1.28e-5)),
    300: ((0.1633, 0.1649, 0.1676, 0.1753, 0.1617, 0.1672), (1.91e-5, 2.01e-5, 1.86e-5, 1.97e-5, 2.01e-5, 1.74e-5)),
    500: ((0.1564, 0.1638, 0.1775, 0.1769, 0.1499, 0.1756), (1.12e-4, 1.16e-4, 1.17e-4, 1.17e-4, 1.17e-4, 1.16e-4)),
    700: ((0.1328, 0.1538, 0.2147, 0.1766, 0.1183, 0.2037), (1.22e-3, 1.21e-3, 1.26e-3, 1.25e-3, 1.20e-3, 1.27e-3)),
    900: ((0.0766, 0.1001, 0.3765, 0.1300, 0.0642, 0.2526), (1.28e-2, 1.22e-2, 1.30e-2, 1.29e-2, 1.16e-2, 1.30e-2)),
}


@dataclass(frozen=True)
class RunConfig:
    """One setting of the study (the rest is :data:`PAPER`)."""

    p: float
    normalize: str = "keys_and_query"
    reduction: str = "mean"
    lr: float = 0.01
    seed: int = 0

    def __post_init__(self):
        check_probability("p", self.p)
        check_choice("normalize", self.normalize, NORMALIZE)
        check_choice("reduction", self.reduction, REDUCTIONS)
        check_float("lr", self.lr, low=0.0, low_open=True)
        check_int("seed", self.seed, low=0)

    @property
    def effective_lr(self) -> float:
        """The step size on the *mean* loss that gives the same GD trajectory."""
        return self.lr * (PAPER["n_train"] if self.reduction == "sum" else 1)

    def label(self) -> str:
        """Short text label, e.g. ``keys_and_query, mean, lr=0.01``."""
        return f"{self.normalize}, {self.reduction}, lr={self.lr:g}"


def optimal_fraction(pred: torch.Tensor, last: torch.Tensor, Pi, weights=None) -> float:
    """Weighted fraction of predictions that are Bayes-optimal choices, ``Pi[s_{N-1}, y_hat] = max_y Pi[s_{N-1}, y]``.

    For ``p = 1`` this is the accuracy; for ``p = 1/2`` both neighbours of
    ``s_{N-1}`` count. Unlike the test accuracy it has no label noise.
    """
    Pi = torch.as_tensor(np.asarray(Pi, dtype=np.float64))
    rows = Pi[last.long()]
    best = rows.max(dim=1).values
    ok = (rows.gather(1, pred.long()[:, None])[:, 0] >= best - 1e-12).to(torch.float64)
    w = torch.full_like(ok, 1.0 / ok.shape[0]) if weights is None else torch.as_tensor(weights, dtype=torch.float64)
    return float((w * ok).sum())


def walk_records(exp: Experiment, *, kl_method: str = "clip") -> dict:
    """One record ``"stats"``: the :data:`RECORD_KEYS` quantities on the test walks, in that order."""
    m, test = exp.model, exp.test
    Pi = ring.transition_matrix(m.config.K, exp.p)
    truth = kl.walk_truth(test, Pi)
    w = test.weights

    def stats(prm):
        f = m.forward(prm, test)
        S = m.attention(prm, test)
        pred = prediction.predict(f)
        return np.array([
            prediction.accuracy(pred, test.labels, w),
            optimal_fraction(pred, test.last, Pi, w),
            kl.mean_kl(truth, f, w, method=kl_method),
            float((w * S[:, -2]).sum()),
            float((w * S[:, -3]).sum()),
            float((w * S[:, :-1].max(dim=1).values).sum()),
        ])

    return {"stats": stats}


def weighted_token_stats(model, params, data, *, example: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``X S`` of sequence ``example`` and the variance (``ddof = 0``) of each coordinate over all sequences of ``data``."""
    u = model.weighted_token(params, data).numpy()
    example = check_int("example", example, low=0, high=u.shape[0] - 1)
    return u[example].copy(), u.var(axis=0)


def _round(x, digits: int = 10):
    arr = np.asarray(x, dtype=np.float64)
    out = np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[float])(arr) if arr.size else arr
    return out.tolist()


def run_config(cfg: RunConfig, *, steps: int = 1000, record_every: int = 10, table_steps=TABLE_STEPS,
               snapshot_steps=SNAPSHOT_STEPS, K: int = PAPER["K"], N: int = PAPER["N"], M: int = PAPER["M"],
               n_train: int = PAPER["n_train"], n_test: int = PAPER["n_test"], sigma: float = PAPER["sigma"],
               detail: bool = True) -> dict:
    """Train one setting from the Gaussian initialisation and return its JSON-able summary.

    Keys: ``config`` (the :class:`RunConfig` fields), ``steps`` (recorded steps),
    ``curves`` (``name -> list``, see :data:`RECORD_KEYS`), ``final`` (``name ->`` the
    last value of every curve), ``peak`` (``[j, weight]``: the 0-based position of
    the largest final test-mean attention weight and that weight), ``V``
    (``step -> K x K`` at ``snapshot_steps``), ``profile`` (final test-mean
    attention over the ``N`` positions), ``table`` (``step -> {"example",
    "variance"}`` of :func:`weighted_token_stats` on the training walks at
    ``table_steps``), ``seconds``.

    With ``detail=False`` (the summary stored for most seeds of the study) the run
    is the same; only ``curves`` is reduced to ``"optimal_fraction"`` (what
    :func:`~onelayer.studies.walks.random_init.readings.learned_step` needs) and ``V`` and
    ``profile`` are left out.
    """
    if not isinstance(detail, bool):
        raise TypeError("detail must be True or False")
    if not isinstance(cfg, RunConfig):
        raise TypeError("cfg must be a RunConfig")
    steps = check_int("steps", steps, low=1)
    record_every = check_int("record_every", record_every, low=1)
    table_steps = [s for s in check_int_sequence("table_steps", table_steps, low=0) if s <= steps]
    snapshot_steps = [s for s in check_int_sequence("snapshot_steps", snapshot_steps, low=0) if s <= steps]
    start = time.perf_counter()
    exp = setup_experiment(cfg.p, K=K, N=N, M=M, n_train=n_train, n_test=n_test, seed=cfg.seed,
                           normalize=cfg.normalize, reduction=cfg.reduction, epsilon=PAPER["epsilon"])
    m = exp.model
    records = walk_records(exp)
    records["token"] = lambda prm: np.concatenate(weighted_token_stats(m, prm, exp.train))
    wanted = sorted(set(range(0, steps + 1, record_every)) | set(table_steps) | set(snapshot_steps) | {steps})
    hist = m.train(m.init("gaussian", sigma=sigma, seed=cfg.seed), exp.train, steps=steps, lr=cfg.lr,
                   record=records, record_at=wanted, snapshot_at=snapshot_steps)
    on_grid = np.isin(hist.steps, list(range(0, steps + 1, record_every)) + [steps])
    stats = hist["stats"][on_grid]
    profile = (m.attention(hist.params, exp.test) * exp.test.weights[:, None]).sum(0)
    table = {}
    for s in table_steps:
        tok = hist.at("token", s)
        table[str(s)] = {"example": _round(tok[:K]), "variance": _round(tok[K:])}
    curves = {k: _round(stats[:, i]) for i, k in enumerate(RECORD_KEYS)}
    j = int(profile.argmax())
    out = {
        "config": asdict(cfg),
        "steps": hist.steps[on_grid].tolist(),
        "curves": curves if detail else {"optimal_fraction": curves["optimal_fraction"]},
        "final": {k: v[-1] for k, v in curves.items()},
        "peak": [j, _round(profile[j].item())],
        "table": table,
    }
    if detail:
        out["V"] = {str(s): _round(hist.snapshots[s]["V"].numpy()) for s in snapshot_steps}
        out["profile"] = _round(profile.numpy())
    out["seconds"] = round(time.perf_counter() - start, 2)
    return out


def reading_difference(readings, *, p: float = 0.5, steps: int, record_every: int) -> float:
    """The largest ``|V|`` difference after ``steps`` between the runs of two readings ``((reduction, lr), (reduction,
    lr))`` of one setting (the summed loss with ``eta`` against the mean loss with ``n_train eta``: 0 up to round-off)."""
    a, b = (run_config(RunConfig(p=p, reduction=red, lr=lr), steps=steps, record_every=record_every, table_steps=(),
                       snapshot_steps=(steps,)) for red, lr in readings)
    return float(np.abs(np.array(a["V"][str(steps)]) - np.array(b["V"][str(steps)])).max())


def reading_run(p: float, reading: tuple, **sizes) -> dict:
    """:func:`run_config` of ``p`` under the reading ``(normalize, reduction, lr)``, with ``sizes`` (steps, ...)."""
    normalize, reduction, lr = reading
    return run_config(RunConfig(p=p, normalize=normalize, reduction=reduction, lr=lr), **sizes)

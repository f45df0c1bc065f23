"""``1/sqrt(d)`` logit scale (:func:`logit_scale_equivalence`, :func:`logit_scale_table`; drawn by :func:`onelayer.figures.walks_variations.figure_logit_scale`): the step size ``eta c^2`` on ``W``."""

from __future__ import annotations

import numpy as np

from ....validation import check_float, check_int
from ....walks import ring
from .. import analysis

from ..random_init.runs import optimal_fraction
from ..experiment import setup_experiment
from ..inputs import walk_model


def logit_scale_equivalence(p: float = 0.7, *, steps: int = 30, lr: float = 1.0, n_train: int = 1000, seed: int = 0,
                            **sizes) -> dict[str, float]:
    """GD on the ``1/sqrt(d)``-scaled model vs GD on the unscaled model with step ``eta c^2`` on ``W`` (``c^2 = 1/d``).

    Both start from zero. Returns the largest differences of ``V`` and of the
    attention logits (on the training walks) over the run, and ``c2``.
    """
    steps = check_int("steps", steps, low=1)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    exp = setup_experiment(p, n_train=n_train, seed=seed, logit_scale="inv_sqrt_d", **sizes)
    scaled = exp.model
    plain = walk_model(scaled.config.replace(logit_scale="one"))
    c2 = 1.0 / scaled.D
    rec_s = {"V": lambda prm: prm["V"].clone(), "z": lambda prm: scaled.logits(prm, exp.train)}
    rec_p = {"V": lambda prm: prm["V"].clone(), "z": lambda prm: plain.logits(prm, exp.train)}
    hs = scaled.train(scaled.init(), exp.train, steps=steps, lr=lr, record=rec_s)
    hp = plain.train(plain.init(), exp.train, steps=steps, lr={"V": lr, "q": lr * c2}, record=rec_p)
    return {
        "c2": c2,
        "max_V_diff": float(np.abs(hs["V"] - hp["V"]).max()),
        "max_logit_diff": float(np.abs(hs["z"] - hp["z"]).max()),
        "max_logit": float(np.abs(hs["z"]).max()),
    }


def _optimal_flags(model, data, Pi):
    return lambda prm: optimal_fraction(model.predict(prm, data), data.last, Pi, data.weights)


def logit_scale_table(ps=(0.5, 0.7), *, steps: int = 150, lr: float = 1.0, seed: int = 0) -> list[dict]:
    """Steps until every test prediction is Bayes-optimal, with logit scale 1 and ``1/sqrt(K+M)``.

    Rows: ``p``, ``logit_scale``, ``T0`` (:func:`onelayer.studies.walks.analysis.steps_to_optimal`
    of "all test predictions optimal"), ``final_accuracy`` (test),
    ``parent_attention`` (final, test mean), and the curves ``steps``,
    ``optimal_fraction``, ``parent_curve`` for the figure.
    """
    steps = check_int("steps", steps, low=1)
    rows = []
    for p in ps:
        for scale in ("one", "inv_sqrt_d"):
            exp = setup_experiment(p, seed=seed, logit_scale=scale)
            m, test = exp.model, exp.test
            Pi = ring.transition_matrix(m.config.K, p)
            hist = m.train(m.init(), exp.train, steps=steps, lr=lr, record={
                "optimal": _optimal_flags(m, test, Pi),
                "parent": lambda prm, m=m, test=test: float(m.attention(prm, test)[:, -2].mean()),
                "acc": lambda prm, m=m, test=test: m.accuracy(prm, test),
            })
            rows.append({
                "p": p, "logit_scale": scale,
                "T0": analysis.steps_to_optimal(hist["optimal"] >= 1.0 - 1e-12),
                "final_accuracy": float(hist.final("acc")),
                "parent_attention": float(hist.final("parent")),
                "steps": hist.steps, "optimal_fraction": hist["optimal"], "parent_curve": hist["parent"],
            })
    return rows



def logit_scale_speed(p: float = 0.7, *, steps: int = 20) -> float:
    """The largest ``|V|`` difference after ``steps`` between the paper's model and the ``1/sqrt(d)``-scaled one
    trained with step ``d = K + M`` on ``W`` (0 up to round-off)."""
    e = setup_experiment(p)
    scaled = walk_model(e.model.config.replace(logit_scale="inv_sqrt_d"))
    h_paper = e.model.train(e.model.init(), e.train, steps=steps, lr=1.0)
    h_scaled = scaled.train(scaled.init(), e.train, steps=steps, lr={"V": 1.0, "q": float(scaled.D)})
    return float((h_paper.params["V"] - h_scaled.params["V"]).abs().max())

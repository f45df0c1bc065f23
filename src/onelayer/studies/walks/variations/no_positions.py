"""No positional embedding (:func:`no_position_table`): every logit stays 0 and the model sees the token average."""

from __future__ import annotations

from ....validation import check_int
from ....walks import ring
from ..experiment import setup_experiment
from .logit_scale import _optimal_flags


def no_position_table(ps=(0.5, 0.7, 1.0), *, steps: int = 500, lr: float = 1.0, seed: int = 0) -> list[dict]:
    """``positions="none"``: test accuracy and optimal fraction after ``steps`` GD steps, and how far the
    attention ever is from uniform (largest ``|S_j - 1/N|`` over the run, test walks)."""
    steps = check_int("steps", steps, low=1)
    rows = []
    for p in ps:
        exp = setup_experiment(p, seed=seed, positions="none")
        m, test = exp.model, exp.test
        N = m.config.N
        Pi = ring.transition_matrix(m.config.K, p)
        hist = m.train(m.init(), exp.train, steps=steps, lr=lr, record_every=max(1, steps // 10), record={
            "acc": lambda prm, m=m, test=test: m.accuracy(prm, test),
            "optimal": _optimal_flags(m, test, Pi),
            "dev": lambda prm, m=m, test=test, N=N: float((m.attention(prm, test) - 1.0 / N).abs().max()),
        })
        rows.append({"p": p, "accuracy": float(hist.final("acc")), "optimal_fraction": float(hist.final("optimal")),
                     "max_uniform_dev": float(hist["dev"].max()), "chance": 1.0 / m.config.K,
                     "bayes": ring.bayes_accuracy(p), "bayes_test": exp.bayes_test_accuracy})
    return rows

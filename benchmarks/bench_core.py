"""Core trainer: :func:`onelayer.training.train` with a closed-form ``grad_fn`` vs autograd.

Problem: the softmax-attention regression of :mod:`benchmarks.problems` from
zero initialisation, float64, plain GD. "Ours" passes the closed-form gradient
as ``grad_fn``; the reference differentiates the same loss with autograd. One
step is one GD update (loss, gradient, update). ``max_abs_diff`` is the largest
difference between the two final ``W``: both sides do the same computation.
"""

from __future__ import annotations

from benchmarks import problems
from benchmarks.harness import compare
from onelayer.training import train

__all__ = ["run"]

FULL = [dict(N=64, n=8, d=8, steps=200), dict(N=512, n=16, d=16, steps=100)]
QUICK = [dict(N=32, n=8, d=4, steps=20)]
LR = 1.0


def _runners(N: int, n: int, d: int, steps: int):
    X, v, t = problems.make_data(0, N=N, n=n, d=d)

    def loss(p):
        return problems.loss(p, X, v, t)

    def closed_form():
        return train(problems.zero_params(d), loss, steps=steps, lr=LR, progress=False,
                     grad_fn=lambda p: problems.loss_and_grad(p, X, v, t))

    def autograd():
        return train(problems.zero_params(d), loss, steps=steps, lr=LR, progress=False)

    return closed_form, autograd


def run(quick: bool = False) -> list[dict]:
    """Rows for each problem size (see :mod:`benchmarks.harness` for the row format)."""
    rows = []
    for cfg in QUICK if quick else FULL:
        ours, reference = _runners(**cfg)
        diff = float((ours().params["W"] - reference().params["W"]).abs().max())
        rows.append(
            compare(
                "train: closed-form grad vs autograd",
                f"attention regression N={cfg['N']} n={cfg['n']} d={cfg['d']}, {cfg['steps']} GD steps, float64",
                ours,
                reference,
                steps=cfg["steps"],
                repeat=1 if quick else 5,
                warmup=0 if quick else 1,
                max_abs_diff=diff,
            )
        )
    return rows

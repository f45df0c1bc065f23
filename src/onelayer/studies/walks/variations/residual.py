"""Residual connection (:func:`residual_check`): the output is read at the query slot, whose token part is zero."""

from __future__ import annotations

import torch

from ....walks.model import literal_forward, literal_loss, literal_train, materialize
from ....walks.data import walk_data
from ....walks.model import WalkTransformer
from ..inputs import walk_model


def residual_check(*, K: int = 6, N: int = 13, M: int = 100, p: float = 0.7, n: int = 300, steps: int = 5,
                   lr: float = 1.0, sigma: float = 0.1, seed: int = 0) -> dict[str, float]:
    """The literal autograd model with and without the residual: outputs, gradients, GD trajectories.

    Returns the largest absolute differences between the two models of the
    output and of the gradients at a Gaussian point (``sigma``), and of ``V`` and
    the full ``W`` after ``steps`` GD steps from zero; plus, as a scale, the
    largest entries of those quantities.
    """
    data = walk_data(K, p, N, n, seed=seed)
    plain = walk_model(K=K, N=N, M=M)
    resid = walk_model(K=K, N=N, M=M, residual=True)
    Xt = materialize(plain, data)
    point = plain.init_full("gaussian", sigma=sigma, seed=seed)
    out = {}
    grads = []
    for model in (plain, resid):
        prm = {k: v.clone().requires_grad_(True) for k, v in point.items()}
        loss = literal_loss(model, prm, data, Xt)
        gV, gW = torch.autograd.grad(loss, [prm["V"], prm["W"]])
        f = literal_forward(model, prm, data, Xt)["f"].detach()
        grads.append((f, gV, gW))
    out["output_diff"] = float((grads[0][0] - grads[1][0]).abs().max())
    out["grad_V_diff"] = float((grads[0][1] - grads[1][1]).abs().max())
    out["grad_W_diff"] = float((grads[0][2] - grads[1][2]).abs().max())
    out["output_scale"] = float(grads[0][0].abs().max())
    zero = plain.init_full()
    runs = [literal_train(model, zero, data, steps=steps, lr=lr, Xt=Xt) for model in (plain, resid)]
    out["V_diff"] = float((runs[0].params["V"] - runs[1].params["V"]).abs().max())
    out["W_diff"] = float((runs[0].params["W"] - runs[1].params["W"]).abs().max())
    out["V_scale"] = float(runs[0].params["V"].abs().max())
    out["W_scale"] = float(runs[0].params["W"].abs().max())
    return out

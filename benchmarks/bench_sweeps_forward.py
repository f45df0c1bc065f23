"""Trees forward seed sweeps: the members of a stored sweep trained in one batched call vs one call per seed.

The stored sweep ``trees-forward-edge-flag`` (:mod:`onelayer.trees.forward.edge_flag`) trains 20 seeds per cell
with :func:`onelayer.trees.forward.edge_flag.train_members`: every member its own initialisation and its own
mini-batches, one :func:`onelayer.batched.batched_gd` over :func:`torch.func.vmap` of the model's forward pass.

Rows, at the sweep's size (depth ``m = 3`` perfect trees, ``S = 25`` one-hot labels, batch 32, lr 0.2, the sum loss,
prompt edges with an empty stage block, float64), for the two model families the sweep trains:

* ``ours``: one :func:`~onelayer.trees.forward.edge_flag.train_members` call with 20 seeds;
* ``reference``: 20 calls of the same function with one seed each (the separate runs the batched call replaces);
* one *step* is one GD update of every member; ``max_abs_diff`` is the largest difference of the final parameters
  between the batched members and the separate runs (the same arithmetic per member, so round-off only).

The step count here (``steps``) is a timing sample, not the sweep's 500 steps: each step costs the same.
Quick mode: 3 seeds, ``m = 2``, ``S = 15``, batch 8, 3 steps, the two-head model only.
"""

from __future__ import annotations

import torch

from benchmarks.harness import compare

__all__ = ["run", "FULL", "QUICK"]

FULL = dict(seeds=20, m=3, S=25, batch_size=32, steps=20, lr=0.2, models=("two_head", "full1"))
QUICK = dict(seeds=3, m=2, S=15, batch_size=8, steps=3, lr=0.2, models=("two_head",))


def _row(model: str, cfg: dict, quick: bool) -> dict:
    from onelayer.trees.forward.edge_flag import train_members

    kwargs = dict(m=cfg["m"], S=cfg["S"], steps=cfg["steps"], lr=cfg["lr"], reduction="sum, 1",
                  edge_stage="empty", batch_size=cfg["batch_size"], record_every=cfg["steps"])
    seeds = list(range(cfg["seeds"]))

    def batched():
        return train_members(model, seeds=seeds, **kwargs)[0]

    def separate():
        return [train_members(model, seeds=[s], **kwargs)[0] for s in seeds]

    ours, ref = batched(), separate()
    diff = max(float((ours[k] - torch.cat([r[k] for r in ref])).abs().max()) for k in ours)
    repeat = 1 if quick else 2
    config = (f"{cfg['seeds']} seeds, {model}, m={cfg['m']} S={cfg['S']}, batch {cfg['batch_size']}, lr {cfg['lr']}, "
              f"sum loss, {cfg['steps']} GD steps, float64")
    return compare(f"trees forward sweep: {cfg['seeds']} seeds batched vs separate, {model}", config, batched, separate,
                   steps=cfg["steps"], repeat=repeat, warmup=0, max_abs_diff=diff)


def run(quick: bool = False) -> list[dict]:
    """The rows of the module docstring."""
    torch.set_default_dtype(torch.float64)
    cfg = QUICK if quick else FULL
    return [_row(model, cfg, quick) for model in cfg["models"]]

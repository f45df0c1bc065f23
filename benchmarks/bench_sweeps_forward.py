"""Trees forward seed sweeps: the members of a stored sweep trained in one batched call vs one call per seed.

The stored studies ``trees-forward-edge-flag`` (:mod:`onelayer.studies.trees.forward_edge_flag`) and the ``heads`` part of
``trees-forward-limit-rates`` (:mod:`onelayer.studies.trees.forward_limit_rates`) train 20 seeds per cell with
:func:`onelayer.studies.trees.forward_edge_flag.train_members`: every member its own initialisation and its own mini-batches,
one :func:`onelayer.training.train` with ``members=True`` over :func:`torch.func.vmap` of the model's forward pass.

Rows, at the sweeps' sizes (float64, one-hot labels, prompt edges with an empty stage block), one per entry of
:data:`FULL`:

* the edge-flag sweep: depth ``m = 3`` perfect trees, ``S = 25``, batch 32, lr 0.2, the sum loss, for two heads and
  one full head;
* the heads sweep: ``m = 2``, ``S = 17``, lr 2, the mean loss, for two full heads at batch 32 and four full heads at
  batch 256 (its smallest and its largest members);
* ``ours``: one :func:`~onelayer.studies.trees.forward_edge_flag.train_members` call with 20 seeds, with the
  ``member_chunk`` the study uses at that batch size (:func:`onelayer.studies.trees.forward_limit_rates.member_chunk`: 5
  members per batched call at batch 256, where all 20 at once are compute-bound);
* ``reference``: 20 calls of the same function with one seed each (the separate runs the batched call replaces);
* one *step* is one GD update of every member; ``max_abs_diff`` is the largest difference of the final parameters
  between the batched members and the separate runs (the same arithmetic per member, so round-off only).

The step count here (``steps``) is a timing sample, not the sweeps' hundreds of steps: each step costs the same.
Quick mode: 3 seeds, ``m = 2``, ``S = 15``, batch 8, 3 steps, the two-head model only.
"""

from __future__ import annotations

import torch

from benchmarks.harness import compare

__all__ = ["run", "FULL", "QUICK"]

_EDGE = dict(seeds=20, m=3, S=25, batch_size=32, steps=20, lr=0.2, reduction="sum, 1")
_HEADS = dict(seeds=20, m=2, S=17, steps=20, lr=2.0, reduction="mean, 1/2")
FULL = (dict(_EDGE, model="two_head"), dict(_EDGE, model="full1"),
        dict(_HEADS, model="full2", batch_size=32), dict(_HEADS, model="full4", batch_size=256))
QUICK = (dict(seeds=3, m=2, S=15, batch_size=8, steps=3, lr=0.2, reduction="sum, 1", model="two_head"),)


def _row(cfg: dict, quick: bool) -> dict:
    from onelayer.studies.trees.forward_edge_flag import train_members
    from onelayer.studies.trees.forward_limit_rates import member_chunk

    model = cfg["model"]
    kwargs = dict(m=cfg["m"], S=cfg["S"], steps=cfg["steps"], lr=cfg["lr"], reduction=cfg["reduction"],
                  edge_stage="empty", batch_size=cfg["batch_size"], record_every=cfg["steps"])
    seeds = list(range(cfg["seeds"]))

    chunk = member_chunk(cfg["batch_size"])

    def batched():
        return train_members(model, seeds=seeds, member_chunk=chunk, **kwargs)[0]

    def separate():
        return [train_members(model, seeds=[s], **kwargs)[0] for s in seeds]

    ours, ref = batched(), separate()
    diff = max(float((ours[k] - torch.cat([r[k] for r in ref])).abs().max()) for k in ours)
    repeat = 1 if quick else 2
    config = (f"{cfg['seeds']} seeds{f' ({chunk} per call)' if chunk else ''}, {model}, m={cfg['m']} S={cfg['S']}, "
              f"batch {cfg['batch_size']}, lr {cfg['lr']}, "
              f"loss {cfg['reduction']}, {cfg['steps']} GD steps, float64")
    return compare(f"trees forward sweep: {cfg['seeds']} seeds batched vs separate, {model}", config, batched, separate,
                   steps=cfg["steps"], repeat=repeat, warmup=0, max_abs_diff=diff)


def run(quick: bool = False) -> list[dict]:
    """The rows of the module docstring."""
    torch.set_default_dtype(torch.float64)
    return [_row(cfg, quick) for cfg in (QUICK if quick else FULL)]

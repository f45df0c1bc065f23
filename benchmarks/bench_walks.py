"""Benchmark: one full-batch GD step of the walks model, fast ``q = W x~_N`` simulation vs the literal model.

``run(quick=False)`` returns one row per configuration with the keys
``name, config, ours_s, reference_s, ratio, ours_peak_mb, reference_peak_mb``.

* ``ours``: :class:`onelayer.walks.model.WalkTransformer` (closed-form gradients,
  never builds ``X~``); time = mean of several steps after one warm-up step.
* ``reference``: :mod:`onelayer.walks.reference`, the plain full-``W`` model with
  autograd (``X~`` materialised once, outside the timed region, which favours
  the reference); time = mean of the timed steps after one warm-up step.
* ``ratio = reference_s / ours_s``, both measured in the same call of ``run``.
* Peak memory: each implementation runs in a fresh ``spawn`` subprocess; the
  value is the growth of the process's peak resident set size
  (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) from just after the imports to
  the end of the timed steps, i.e. data, ``X~`` (reference), parameters,
  gradients and autograd buffers.
"""

from __future__ import annotations

import multiprocessing as mp
import resource
import time

__all__ = ["run", "PAPER"]

#: The paper's size (Section 5.1): K=6, N=97, M=1000, 1000 training walks.
PAPER = {"K": 6, "N": 97, "M": 1000, "B": 1000, "p": 0.5}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


def _measure(kind: str, cfg: dict, steps: int, queue) -> None:
    import onelayer
    from onelayer.walks import reference, walk_data
    from onelayer.walks.model import WalkTransformer

    onelayer.setup(0)
    base = _peak_mb()
    model = WalkTransformer(K=cfg["K"], N=cfg["N"], M=cfg["M"])
    data = walk_data(cfg["K"], cfg["p"], cfg["N"], cfg["B"], seed=0)
    if kind == "ours":
        params = model.init()

        def step(prm):
            _, grads = model.loss_and_grads(prm, data)
            return {k: prm[k] - grads[k] for k in prm}
    else:
        Xt = reference.materialize(model, data)
        params = {k: v.requires_grad_(True) for k, v in model.init_full().items()}

        def step(prm):
            loss = reference.reference_loss(model, prm, data, Xt)
            grads = dict(zip(prm, __import__("torch").autograd.grad(loss, list(prm.values()))))
            return {k: (prm[k] - grads[k]).detach().requires_grad_(True) for k in prm}

    params = step(params)  # warm-up (also leaves the zero state, so the timed steps are generic)
    start = time.perf_counter()
    for _ in range(steps):
        params = step(params)
    elapsed = (time.perf_counter() - start) / steps
    queue.put((elapsed, _peak_mb() - base))


def _in_subprocess(kind: str, cfg: dict, steps: int) -> tuple[float, float]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(kind, cfg, steps, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def run(quick: bool = False) -> list[dict]:
    """Time one GD step of both implementations at the paper's size (``quick``: 100 walks instead of 1000)."""
    cfg = dict(PAPER)
    if quick:
        cfg["B"] = 100
    ours_s, ours_mb = _in_subprocess("ours", cfg, steps=20)
    ref_s, ref_mb = _in_subprocess("reference", cfg, steps=2 if quick else 3)
    return [{
        "name": "walks: one GD step, q-simulation vs full-W autograd",
        "config": cfg,
        "ours_s": ours_s,
        "reference_s": ref_s,
        "ratio": ref_s / ours_s,
        "ours_peak_mb": ours_mb,
        "reference_peak_mb": ref_mb,
    }]


if __name__ == "__main__":
    for row in run():
        print(row)

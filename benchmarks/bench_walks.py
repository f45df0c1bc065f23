"""Benchmark: one full-batch GD step of the walks model, fast ``q = W x~_N`` simulation vs the literal model.

``run(quick=False)`` returns one row per configuration with the keys
``name, config, ours_s, reference_s, ratio, ours_peak_mb, reference_peak_mb``
and ``max_abs_diff`` (see :mod:`benchmarks.harness`).

* ``ours``: :class:`onelayer.walks.model.WalkTransformer` (closed-form gradients,
  never builds ``X~``); time = mean of the timed steps after one warm-up step.
* ``reference``: :func:`onelayer.walks.model.literal_forward`, the plain full-``W`` model with
  autograd (``X~`` materialised once, outside the timed region, which favours
  the reference); time = mean of the timed steps after one warm-up step.
* ``ratio = reference_s / ours_s``, both measured in the same call of ``run``.
* ``max_abs_diff``: both sides start from zero on the same walks and take the
  same number of GD steps (step size 1); the value is the largest difference
  of ``V`` and of ``q = W x~_N`` (the reference's ``W`` reduced with
  :meth:`~onelayer.walks.model.WalkTransformer.reduce`).
* Peak memory: each implementation runs in a fresh ``spawn`` subprocess; the
  value is how far the resident set size rises above its level just after the
  imports, until the end of the timed steps (Linux: the ``VmHWM`` high-water
  mark, reset after the imports as in :func:`benchmarks.harness.peak_rss_mb`,
  minus the growth of file-backed pages), i.e. data, ``X~`` (reference),
  parameters, gradients and autograd buffers.

Sizes
-----
* The paper's size (Section 5.1): ``K=6, N=97, M=1000``, 1000 training walks.
* 10x: the walk length ``N`` times ten, ``N=970`` (``M=1000``, 1000 walks and
  ``p`` unchanged). We scale ``N`` rather than the number of walks because the
  sequence length is the axis that attention works along and that the
  ``q``-simulation shortens: the reference builds ``X~`` with ``B N (K+M)``
  numbers (about 0.78 GB in float64 at the paper's size, 7.8 GB at ``N=970``)
  and contracts it with ``W`` at every step, ours touches ``B N`` logits and the
  ``M x N`` positional matrix. (Ten times as many walks would cost the
  reference the same memory.) ``N=970`` still satisfies ``N < M``, which the
  sinusoidal positions need. Before the reference runs, the free memory
  (``MemAvailable``) is compared with what it needs (``X~`` plus a margin); if
  there is not enough, the reference side is skipped and the configuration
  string says so (no estimated number is reported in its place).
* Quick mode (``--quick``): 100 walks instead of 1000 at both lengths.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import time
from queue import Empty

from benchmarks.harness import _release_free_heap, _reset_high_water_mark, _status_kb, make_row

__all__ = ["run", "PAPER", "TEN_X"]

#: The paper's size (Section 5.1): K=6, N=97, M=1000, 1000 training walks.
PAPER = {"K": 6, "N": 97, "M": 1000, "B": 1000, "p": 0.5}
#: Ten times the paper's walk length (see the module docstring).
TEN_X = {**PAPER, "N": 970}
#: Timed steps of each side (after one warm-up step), full mode.
OURS_STEPS, REF_STEPS = 20, 3
#: The reference needs X~ plus about this much more memory (MB; autograd buffers, data, torch).
REF_MARGIN_MB = 1500.0


def _xt_mb(cfg: dict) -> float:
    """Size of the reference's materialised ``X~`` (float64), in MB."""
    return cfg["B"] * cfg["N"] * (cfg["K"] + cfg["M"]) * 8 / 2**20


def _available_mb() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


class _Peak:
    """Rise of the resident set size (MB) from construction to :meth:`mb` (``VmHWM``; ``ru_maxrss`` fallback)."""

    def __init__(self):
        gc.collect()
        _release_free_heap()
        self.exact = _reset_high_water_mark()
        self.before = _status_kb("VmRSS") if self.exact else self._maxrss_kb()
        self.files = _status_kb("RssFile") or 0

    @staticmethod
    def _maxrss_kb() -> int:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def mb(self) -> float:
        after = _status_kb("VmHWM") if self.exact else self._maxrss_kb()
        files = max((_status_kb("RssFile") or 0) - self.files, 0)
        return max(after - self.before - files, 0) / 1024.0


def _measure(kind: str, cfg: dict, steps: int, compare_after: int, queue) -> None:
    import torch

    import onelayer
    from onelayer.walks.data import walk_data
    from onelayer.walks.model import literal_loss, materialize
    from onelayer.walks.model import WalkTransformer

    onelayer.setup(0)
    peak = _Peak()
    model = WalkTransformer(K=cfg["K"], N=cfg["N"], M=cfg["M"])
    data = walk_data(cfg["K"], cfg["p"], cfg["N"], cfg["B"], seed=0)
    if kind == "ours":
        params = model.init()

        def step(prm):
            _, grads = model.loss_and_grads(prm, data)
            return {k: prm[k] - grads[k] for k in prm}

        def reduced(prm):
            return {k: v.clone() for k, v in prm.items()}
    else:
        Xt = materialize(model, data)
        params = {k: v.requires_grad_(True) for k, v in model.init_full().items()}

        def step(prm):
            loss = literal_loss(model, prm, data, Xt)
            grads = dict(zip(prm, torch.autograd.grad(loss, list(prm.values()))))
            return {k: (prm[k] - grads[k]).detach().requires_grad_(True) for k in prm}

        def reduced(prm):
            return model.reduce(prm)

    params = step(params)  # warm-up (also leaves the zero state, so the timed steps are generic)
    snapshot = reduced(params) if compare_after == 1 else None
    start = time.perf_counter()
    for t in range(2, steps + 2):
        params = step(params)
        if t == compare_after:
            snapshot = reduced(params)
    elapsed = (time.perf_counter() - start) / steps
    queue.put((elapsed, peak.mb(), {k: v.numpy() for k, v in snapshot.items()}))


def _in_subprocess(kind: str, cfg: dict, steps: int, compare_after: int):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(kind, cfg, steps, compare_after, queue))
    proc.start()
    try:
        while True:
            try:
                return queue.get(timeout=1.0)
            except Empty:
                if not proc.is_alive():
                    try:  # the result may still be in the pipe
                        return queue.get(timeout=1.0)
                    except Empty:
                        raise RuntimeError(
                            f"the {kind} subprocess ended without a result (exit code {proc.exitcode}; "
                            "a negative code is a signal, e.g. -9 when it ran out of memory)"
                        ) from None
    finally:
        proc.join()


def _row(label: str, cfg: dict, *, ours_steps: int, ref_steps: int) -> dict:
    size = (f"K={cfg['K']} N={cfg['N']} M={cfg['M']}, {cfg['B']} walks, p={cfg['p']}, float64; "
            "one full-batch GD step (lr 1, from zero)")
    compare_after = 1 + ref_steps  # warm-up + timed steps of the reference
    ours_s, ours_mb, ours_prm = _in_subprocess("ours", cfg, ours_steps, compare_after)
    need, free = _xt_mb(cfg) + REF_MARGIN_MB, _available_mb()
    if free is not None and free < need:
        return make_row(
            f"walks: one GD step, q-simulation vs full-W autograd{label}",
            f"{size} (ours timed over {ours_steps} steps; reference skipped: it needs about {need / 1024:.1f} GB, "
            f"{free / 1024:.1f} GB available)",
            ours_s=ours_s, reference_s=None, ours_peak_mb=ours_mb, reference_peak_mb=None, max_abs_diff=None,
        )
    ref_s, ref_mb, ref_prm = _in_subprocess("reference", cfg, ref_steps, compare_after)
    diff = max(float(abs(ours_prm[k] - ref_prm[k]).max()) for k in ours_prm)
    return make_row(
        f"walks: one GD step, q-simulation vs full-W autograd{label}",
        f"{size} (ours timed over {ours_steps} steps, reference over {ref_steps}; "
        f"parameters compared after {compare_after} steps)",
        ours_s=ours_s, reference_s=ref_s, ours_peak_mb=ours_mb, reference_peak_mb=ref_mb, max_abs_diff=diff,
    )


def run(quick: bool = False) -> list[dict]:
    """Time one GD step of both implementations at the paper's size and at 10x the walk length.

    ``quick``: 100 walks instead of 1000 at both sizes, and fewer timed steps.
    """
    rows = []
    for label, cfg in (("", PAPER), (" (10x: N x10)", TEN_X)):
        cfg = dict(cfg, B=100) if quick else dict(cfg)
        rows.append(_row(label, cfg, ours_steps=5 if quick else OURS_STEPS, ref_steps=1 if quick else REF_STEPS))
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)

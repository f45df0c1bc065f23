"""Gradient descent with a recorded history.

Both papers train with plain (full-batch or mini-batch) gradient descent from a
given initialisation. :func:`train` runs that loop on a dictionary of named
parameter tensors and records, at chosen steps, the loss and any number of
user-supplied statistics (accuracy, attention weights, symmetry-reduced
scalars...), plus full parameter snapshots at chosen steps.

Conventions
-----------
* Step ``t`` means "after ``t`` updates"; step 0 is the initialisation.
* The loss recorded at step ``t`` is ``L(theta_t)``, the loss whose gradient
  produces update ``t + 1``. The final step ``steps`` is always recorded.
* The default optimiser is plain gradient descent, ``theta <- theta - eta * grad``.
  Anything else (``"adam"``) is a named variation, never the default.

Why there are two trainers
--------------------------
:func:`train` runs one model; :func:`onelayer.batched.batched_gd` runs ``B``
independent members with a leading member axis. They share their conventions
(step numbering, what is recorded when, the update rule, the shape of a
:class:`History`: ``batched_gd(...).member(b)`` is one) and their checks
(:func:`check_record`, :func:`steps_to_record`), and a test holds that a
batched run reproduces separate :func:`train` runs. They are kept apart on
purpose: every chapter's single runs go through :func:`train`, whose stored
outputs were produced by unbatched tensor operations; routing them through a
member axis of size one changes the BLAS kernels (batched instead of plain
matrix products) and with them the last bits of every run, and it would give
the one-run loop the batched one's per-member bookkeeping (``(B,)`` step sizes,
``vmap``) that a single run never needs. Only :func:`train` has the ``"adam"``
variation and progress bars by default; only the batched trainer has per-member
step sizes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from .validation import check_choice, check_int

__all__ = ["History", "train", "OPTIMIZERS", "check_record", "steps_to_record"]

#: Names accepted by the ``optimizer`` argument of :func:`train`.
OPTIMIZERS = ("gd", "adam")


@dataclass
class History:
    """What :func:`train` recorded.

    Attributes
    ----------
    steps:
        The recorded steps, increasing, starting at 0 and ending at the last step.
    records:
        ``name -> array`` whose first axis runs over ``steps``. Always contains
        ``"loss"``.
    snapshots:
        ``step -> {parameter name -> tensor copy}`` for the requested steps.
    params:
        The parameters after the last update (the live tensors, detached).
    """

    steps: np.ndarray
    records: dict[str, np.ndarray]
    snapshots: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)
    params: dict[str, torch.Tensor] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.records:
            known = ", ".join(sorted(self.records))
            raise KeyError(f"no record named {name!r}; recorded: {known}")
        return self.records[name]

    def at(self, name: str, step: int):
        """The value of record ``name`` at recorded step ``step``."""
        idx = np.flatnonzero(self.steps == step)
        if idx.size == 0:
            raise ValueError(f"step {step} was not recorded; recorded steps run {self.steps[0]}..{self.steps[-1]}")
        return self[name][idx[0]]

    def final(self, name: str):
        """The last recorded value of ``name``."""
        return self[name][-1]


def _as_schedule(lr) -> Callable[[int], float]:
    if callable(lr):
        return lr
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise TypeError(f"lr must be a positive number or a callable step -> number, got {type(lr).__name__}")
    if not lr > 0:
        raise ValueError(f"lr must be a positive number, got {lr}")
    value = float(lr)
    return lambda t: value


def _to_numpy(value) -> np.ndarray:
    # Always copy: a record function may return a view of a live parameter.
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().copy()
    return np.array(value, copy=True)


def check_record(record) -> dict:
    """Validate a ``name -> fn`` mapping of statistics to record (``"loss"`` is reserved)."""
    record = dict(record or {})
    if "loss" in record:
        raise ValueError("record must not contain 'loss': the training loss is always recorded")
    for name, fn in record.items():
        if not callable(fn):
            raise TypeError(f"record[{name!r}] must be callable params -> value")
    return record


def steps_to_record(steps: int, record_every: int, record_at, snapshot_at) -> tuple[set[int], set[int]]:
    """The steps to record and the steps to snapshot (0 and ``steps`` are always recorded)."""
    if record_at is None:
        wanted = set(range(0, steps + 1, record_every))
    else:
        wanted = {check_int("record_at", s, low=0, high=steps) for s in record_at}
    wanted |= {0, steps}
    return wanted, {check_int("snapshot_at", s, low=0, high=steps) for s in snapshot_at}


def train(
    params: Mapping[str, torch.Tensor],
    loss_fn: Callable[[dict[str, torch.Tensor]], torch.Tensor],
    *,
    steps: int,
    lr,
    record: Mapping[str, Callable[[dict[str, torch.Tensor]], object]] | None = None,
    record_every: int = 1,
    record_at: Iterable[int] | None = None,
    snapshot_at: Iterable[int] = (),
    grad_fn: Callable[[dict[str, torch.Tensor]], tuple[torch.Tensor, Mapping[str, torch.Tensor]]] | None = None,
    optimizer: str = "gd",
    progress: bool = True,
    desc: str = "training",
) -> History:
    """Run gradient descent on ``params`` and return its :class:`History`.

    Parameters
    ----------
    params:
        ``name -> tensor``; copied, so the caller's tensors are not modified.
    loss_fn:
        ``params -> scalar tensor``; differentiated with autograd unless
        ``grad_fn`` is given.
    steps:
        Number of updates (``>= 0``).
    lr:
        Step size ``eta``: a positive number, or a callable ``t -> eta_t`` for a
        schedule (Theorem 4.1 of the walks paper allows any schedule), or a
        mapping ``name -> number`` giving each parameter its own step size.
    record:
        ``name -> fn(params)``; each function returns a number or an array and is
        evaluated under ``torch.no_grad()`` at every recorded step.
    record_every:
        Record every this many steps (step 0 and the last step are always recorded).
    record_at:
        Alternatively, the exact steps to record (0 and ``steps`` are added).
    snapshot_at:
        Steps at which to store a copy of every parameter.
    grad_fn:
        Optional ``params -> (loss, {name: gradient})`` giving the loss and exact
        gradients in closed form (used by the fast trainers).
    optimizer:
        ``"gd"`` (plain gradient descent, the papers' choice) or ``"adam"``
        (a named variation for exploration).
    progress:
        Show a ``tqdm`` progress bar.
    desc:
        Label of the progress bar.
    """
    if not isinstance(params, Mapping) or not params:
        raise TypeError("params must be a non-empty mapping name -> torch.Tensor")
    for name, value in params.items():
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"params[{name!r}] must be a torch.Tensor, got {type(value).__name__}")
    if not callable(loss_fn):
        raise TypeError("loss_fn must be callable params -> scalar tensor")
    steps = check_int("steps", steps, low=0)
    record_every = check_int("record_every", record_every, low=1)
    check_choice("optimizer", optimizer, OPTIMIZERS)
    record = check_record(record)

    if isinstance(lr, Mapping):
        unknown = set(lr) - set(params)
        missing = set(params) - set(lr)
        if unknown or missing:
            raise ValueError(f"lr mapping must name exactly the parameters {sorted(params)}; got {sorted(lr)}")
        schedules = {name: _as_schedule(v) for name, v in lr.items()}
    else:
        one = _as_schedule(lr)
        schedules = {name: one for name in params}

    wanted, snapshot_steps = steps_to_record(steps, record_every, record_at, snapshot_at)

    live = {name: value.detach().clone().requires_grad_(grad_fn is None) for name, value in params.items()}
    adam = None
    if optimizer == "adam":
        adam = torch.optim.Adam([{"params": [p], "lr": 1.0} for p in live.values()])

    def loss_and_grads():
        if grad_fn is not None:
            with torch.no_grad():
                loss, grads = grad_fn(live)
            return loss.detach(), grads
        loss = loss_fn(live)
        if loss.dim() != 0:
            raise ValueError(f"loss_fn must return a scalar tensor, got shape {tuple(loss.shape)}")
        grads = torch.autograd.grad(loss, list(live.values()), allow_unused=True)
        grads = {n: (torch.zeros_like(p) if g is None else g) for (n, p), g in zip(live.items(), grads)}
        return loss.detach(), grads

    recorded_steps: list[int] = []
    values: dict[str, list] = {"loss": []}
    values.update({name: [] for name in record})
    snapshots: dict[int, dict[str, torch.Tensor]] = {}

    def capture(t: int, loss_value: torch.Tensor) -> None:
        if t in snapshot_steps:
            snapshots[t] = {n: p.detach().clone() for n, p in live.items()}
        if t not in wanted:
            return
        recorded_steps.append(t)
        values["loss"].append(float(loss_value))
        with torch.no_grad():
            detached = {n: p.detach() for n, p in live.items()}
            for name, fn in record.items():
                values[name].append(_to_numpy(fn(detached)))

    bar = tqdm(total=steps, desc=desc, disable=not progress, leave=False)
    for t in range(steps):
        loss, grads = loss_and_grads()
        capture(t, loss)
        with torch.no_grad():
            if adam is None:
                for name, p in live.items():
                    p -= schedules[name](t) * grads[name]
            else:
                for group, (name, p) in zip(adam.param_groups, live.items()):
                    group["lr"] = schedules[name](t)
                    p.grad = grads[name]
                adam.step()
        bar.update(1)
    bar.close()
    if grad_fn is None:
        with torch.no_grad():
            final_loss = loss_fn(live)
    else:
        with torch.no_grad():
            final_loss, _ = grad_fn(live)
    capture(steps, final_loss)

    records = {name: np.stack([np.asarray(v) for v in vals]) if vals else np.empty(0) for name, vals in values.items()}
    return History(
        steps=np.asarray(recorded_steps),
        records=records,
        snapshots=snapshots,
        params={n: p.detach() for n, p in live.items()},
    )

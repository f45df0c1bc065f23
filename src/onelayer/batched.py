"""Batched training: train many independent problems with one set of tensor operations.

A batched run is plain gradient descent on ``B`` independent *members* (seeds, step
sizes, problem sizes that share shapes, ...). Instead of ``B`` calls of
:func:`onelayer.training.train`, :func:`batched_gd` keeps every parameter with
a leading batch axis and updates all members at once.

Shapes
------
``B`` is the number of members; member ``b`` is index ``b`` of the leading axis.

* ``init_params``: ``name -> tensor of shape (B, *shape)``, where ``shape`` is
  the shape the parameter has in a single run (``W`` of a single run is
  ``(d, d)``, so a batched run passes ``(B, d, d)``).
* ``loss_fn(params) -> tensor of shape (B,)``: member ``b``'s loss. It must
  depend only on member ``b`` of every parameter (and on member ``b``'s data,
  which the caller keeps with a leading ``B`` axis, e.g. ``X`` of shape
  ``(B, N, n, d)``). The trainer differentiates ``losses.sum()``; since
  ``L_c`` does not depend on ``theta_b`` for ``c != b``, the gradient with
  respect to ``theta_b`` is exactly ``grad L_b(theta_b)``.
* ``lr``: a number (all members), a ``(B,)`` tensor/array (one step size per
  member), a callable ``t -> number or (B,)`` (a schedule), or a mapping
  ``name -> any of these`` (one per parameter).
* ``record``: ``name -> fn(params) -> (B, ...)`` per-member statistics.
* The returned :class:`BatchedHistory` stores every record as an array of shape
  ``(T, B, ...)`` (``T`` recorded steps); ``history.member(b)`` gives member
  ``b`` as an ordinary :class:`~onelayer.training.History`.

With ``vmap=True`` the caller writes the *single-run* functions instead:
``loss_fn(params_one, *data_one) -> scalar`` (and ``record`` functions of the
same signature) and passes the per-member data as ``member_data``, a tuple of
tensors with leading axis ``B``. :func:`torch.func.vmap` vectorises them, so
the same function serves a single :func:`~onelayer.training.train` run and the
batched run. (The first ``torch.func`` call of a process takes a few seconds to
initialise; per step, the batched path is usually faster than ``vmap``.)

Why this is a second trainer and not an option of :func:`onelayer.training.train`:
see "Why there are two trainers" in :mod:`onelayer.training`.

Step conventions follow :func:`onelayer.training.train` exactly: step ``t``
means after ``t`` updates, the loss recorded at ``t`` is ``L(theta_t)``, and
the update is ``theta <- theta - eta_t * grad``. In float64 a batched run reproduces
separate ``train`` runs up to floating-point summation order (tested to
``1e-12``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from tqdm.auto import tqdm

from . import training
from .training import History, _to_numpy, check_record
from .validation import check_bool, check_choice, check_int

__all__ = [
    "BatchedHistory",
    "concat_histories",
    "batched_gd",
    "stack_params",
    "unstack_params",
    "grid",
    "DEVICES",
]

#: Devices :func:`batched_gd` accepts (``"cuda"`` only where available).
DEVICES = ("cpu", "cuda")


@dataclass
class BatchedHistory(History):
    """What :func:`batched_gd` recorded, for all ``B`` members at once.

    The same fields and methods as :class:`~onelayer.training.History`, with a
    member axis after the step axis: ``records[name]`` has shape ``(T, B, ...)``
    (``"loss"``: ``(T, B)``), ``final(name)`` and ``at(name, step)`` return
    ``(B, ...)``, ``snapshots[step][name]`` and ``params[name]`` are ``(B, ...)``
    tensors on the CPU.
    """

    @property
    def size(self) -> int:
        """The number of members ``B``."""
        return int(self.records["loss"].shape[1])

    def member(self, b: int) -> History:
        """Member ``b`` as an ordinary :class:`~onelayer.training.History`."""
        b = check_int("b", b, low=0, high=self.size - 1)
        return History(
            steps=self.steps.copy(),
            records={name: values[:, b].copy() for name, values in self.records.items()},
            snapshots={t: {n: p[b].clone() for n, p in snap.items()} for t, snap in self.snapshots.items()},
            params={n: p[b].clone() for n, p in self.params.items()},
        )


def concat_histories(parts: Sequence[BatchedHistory]) -> BatchedHistory:
    """One :class:`BatchedHistory` from histories of disjoint groups of members recorded at the same steps (for
    instance the chunks of one sweep trained one after the other): members in the order of ``parts``."""
    parts = list(parts)
    if not parts or not all(isinstance(h, BatchedHistory) for h in parts):
        raise TypeError("parts must be a non-empty sequence of BatchedHistory")
    first = parts[0]
    if any(not np.array_equal(h.steps, first.steps) or set(h.records) != set(first.records)
           or set(h.snapshots) != set(first.snapshots) for h in parts):
        raise ValueError("parts must be recorded at the same steps, with the same records and snapshots")
    return BatchedHistory(
        steps=first.steps.copy(),
        records={n: np.concatenate([h.records[n] for h in parts], axis=1) for n in first.records},
        snapshots={t: {n: torch.cat([h.snapshots[t][n] for h in parts]) for n in snap}
                   for t, snap in first.snapshots.items()},
        params={n: torch.cat([h.params[n] for h in parts]) for n in first.params},
    )


def stack_params(members: Iterable[Mapping[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Stack single-run parameter dictionaries into one with a leading batch axis.

    Parameters
    ----------
    members:
        ``B >= 1`` mappings with the same names and, per name, the same shape.

    Returns
    -------
    dict
        ``name -> tensor (B, *shape)``.
    """
    members = list(members)
    if not members:
        raise ValueError("members must contain at least one parameter mapping")
    names = list(members[0])
    for i, m in enumerate(members):
        if not isinstance(m, Mapping) or list(m) != names:
            raise ValueError(f"members[{i}] must name exactly the parameters {names}")
        for n in names:
            if not isinstance(m[n], torch.Tensor):
                raise TypeError(f"members[{i}][{n!r}] must be a torch.Tensor, got {type(m[n]).__name__}")
            if m[n].shape != members[0][n].shape:
                raise ValueError(
                    f"members[{i}][{n!r}] has shape {tuple(m[n].shape)}; members[0] has {tuple(members[0][n].shape)}"
                )
    return {n: torch.stack([m[n].detach() for m in members]) for n in names}


def unstack_params(params: Mapping[str, torch.Tensor]) -> list[dict[str, torch.Tensor]]:
    """Split ``name -> (B, ...)`` into ``B`` single-run dictionaries (views, not copies)."""
    size = _batch_size(params)
    return [{n: p[b] for n, p in params.items()} for b in range(size)]


def grid(**axes) -> dict[str, np.ndarray]:
    """The Cartesian product of named axes, flattened to one member axis.

    ``grid(lr=[0.1, 1.0], seed=[0, 1, 2])`` gives six members,
    ``{"lr": [0.1, 0.1, 0.1, 1.0, 1.0, 1.0], "seed": [0, 1, 2, 0, 1, 2]}``
    (the last axis varies fastest, as in ``itertools.product``).
    """
    if not axes:
        raise ValueError("grid needs at least one named axis, e.g. grid(seed=range(8))")
    values = {}
    for name, axis in axes.items():
        if isinstance(axis, (str, bytes)) or not isinstance(axis, Iterable):
            raise TypeError(f"axis {name!r} must be a sequence of values, got {type(axis).__name__}")
        values[name] = list(axis)
        if not values[name]:
            raise ValueError(f"axis {name!r} must contain at least one value")
    combos = list(itertools.product(*values.values()))
    return {name: np.array([c[i] for c in combos]) for i, name in enumerate(values)}


def _batch_size(params: Mapping[str, torch.Tensor]) -> int:
    if not isinstance(params, Mapping) or not params:
        raise TypeError("params must be a non-empty mapping name -> torch.Tensor with a leading batch axis")
    sizes = {}
    for name, value in params.items():
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"params[{name!r}] must be a torch.Tensor, got {type(value).__name__}")
        if value.dim() == 0 or value.shape[0] == 0:
            raise ValueError(
                f"params[{name!r}] must have a leading batch axis of size B >= 1, got shape {tuple(value.shape)}"
            )
        sizes[name] = value.shape[0]
    if len(set(sizes.values())) != 1:
        raise ValueError(f"every parameter must have the same batch size B (leading axis); got {sizes}")
    return next(iter(sizes.values()))


def _step_size(value, name: str, size: int, dtype: torch.dtype, device: torch.device):
    """A validated step size: a Python float (shared) or a (B,) tensor (per member)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a positive number or a (B,) tensor of positive numbers, got bool")
    if isinstance(value, (int, float)):
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive finite number, got {value}")
        return float(value)
    if isinstance(value, (torch.Tensor, np.ndarray, list, tuple)):
        arr = torch.as_tensor(value, dtype=dtype).to(device)
        if arr.shape != (size,):
            raise ValueError(f"{name} must have shape (B,) = ({size},), got {tuple(arr.shape)}")
        if not bool(torch.all(torch.isfinite(arr) & (arr > 0))):
            raise ValueError(f"{name} must contain positive finite step sizes")
        return arr
    raise TypeError(
        f"{name} must be a positive number, a (B,) tensor, a callable t -> step size or a mapping; "
        f"got {type(value).__name__}"
    )


def _schedule(value, name: str, size: int, dtype, device) -> Callable[[int], object]:
    if callable(value):
        return lambda t: _step_size(value(t), f"{name}({t})", size, dtype, device)
    fixed = _step_size(value, name, size, dtype, device)
    return lambda t: fixed


def batched_gd(
    init_params: Mapping[str, torch.Tensor],
    loss_fn: Callable[..., torch.Tensor],
    *,
    steps: int,
    lr,
    record: Mapping[str, Callable[..., object]] | None = None,
    record_every: int = 1,
    record_at: Iterable[int] | None = None,
    snapshot_at: Iterable[int] = (),
    grad_fn: Callable[[dict[str, torch.Tensor]], tuple[torch.Tensor, Mapping[str, torch.Tensor]]] | None = None,
    vmap: bool = False,
    member_data: tuple[torch.Tensor, ...] = (),
    device: str = "cpu",
    progress: bool = False,
    desc: str = "members",
) -> BatchedHistory:
    """Plain gradient descent on ``B`` independent members at once.

    Parameters
    ----------
    init_params:
        ``name -> tensor (B, *shape)``; copied (and moved to ``device``).
    loss_fn:
        Default: ``params -> (B,)`` per-member losses computed on the whole
        batch. With ``vmap=True``: the single-run loss
        ``(params_one, *data_one) -> scalar``.
    steps:
        Number of updates (``>= 0``).
    lr:
        Step size: a positive number, a ``(B,)`` tensor of per-member step
        sizes, a callable ``t -> number or (B,)``, or a mapping
        ``name -> any of these``.
    record:
        ``name -> fn``; ``fn(params) -> (B, ...)`` (or, with ``vmap=True``,
        ``fn(params_one, *data_one) -> value``), evaluated without gradients at
        every recorded step.
    record_every, record_at, snapshot_at:
        As in :func:`onelayer.training.train` (steps 0 and ``steps`` are always recorded).
    grad_fn:
        Optional closed form ``params -> ((B,) losses, {name: (B, ...) gradient})``
        replacing autograd (not combinable with ``vmap``).
    vmap:
        Vectorise single-run functions with :func:`torch.func.vmap`.
    member_data:
        With ``vmap=True``: tensors with leading axis ``B`` passed, member by
        member, after the parameters to ``loss_fn`` and the record functions.
    device:
        ``"cpu"`` (default) or ``"cuda"`` (if available). With the default
        batched ``loss_fn`` the caller's data must already live on that device.
    progress:
        Show a ``tqdm`` progress bar.
    desc:
        Label of the progress bar.

    Returns
    -------
    BatchedHistory
        Records of shape ``(T, B, ...)`` and the final parameters ``(B, ...)``.
    """
    size = _batch_size(init_params)
    if not callable(loss_fn):
        raise TypeError("loss_fn must be callable")
    steps = check_int("steps", steps, low=0)
    record_every = check_int("record_every", record_every, low=1)
    vmap = check_bool("vmap", vmap)
    check_choice("device", device, DEVICES)
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch.cuda.is_available() is False; use device='cpu'")
    dev = torch.device(device)
    if grad_fn is not None and vmap:
        raise ValueError("grad_fn and vmap=True cannot be combined: grad_fn already gives batched gradients")
    if grad_fn is not None and not callable(grad_fn):
        raise TypeError("grad_fn must be callable params -> (losses, gradients)")
    if not isinstance(member_data, tuple):
        raise TypeError(f"member_data must be a tuple of tensors, got {type(member_data).__name__}")
    if member_data and not vmap:
        raise ValueError("member_data is only used with vmap=True; a batched loss_fn closes over its data")
    for i, tensor in enumerate(member_data):
        if not isinstance(tensor, torch.Tensor) or tensor.dim() == 0 or tensor.shape[0] != size:
            shape = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise ValueError(f"member_data[{i}] must be a tensor with leading axis B = {size}, got {shape}")
    record = check_record(record)

    dtype = next(iter(init_params.values())).dtype
    if isinstance(lr, Mapping):
        if set(lr) != set(init_params):
            raise ValueError(f"lr mapping must name exactly the parameters {sorted(init_params)}; got {sorted(lr)}")
        schedules = {n: _schedule(v, f"lr[{n!r}]", size, dtype, dev) for n, v in lr.items()}
    else:
        shared = _schedule(lr, "lr", size, dtype, dev)
        schedules = {n: shared for n in init_params}

    wanted, snapshot_steps = training.steps_to_record(steps, record_every, record_at, snapshot_at)

    autograd = grad_fn is None and not vmap
    live = {n: p.detach().to(dev).clone().requires_grad_(autograd) for n, p in init_params.items()}
    data = tuple(d.to(dev) for d in member_data)
    names = list(live)

    if vmap:
        grad_and_loss = torch.func.vmap(torch.func.grad_and_value(loss_fn))
        recorders = {n: torch.func.vmap(fn) for n, fn in record.items()}

        def losses_and_grads():
            grads, losses = grad_and_loss(live, *data)
            return losses, grads

        def losses_only():
            return torch.func.vmap(loss_fn)(live, *data)
    else:
        recorders = record

        def losses_and_grads():
            if grad_fn is not None:
                with torch.no_grad():
                    losses, grads = grad_fn(live)
                return losses, grads
            losses = loss_fn(live)
            _check_losses(losses, size)
            # Members are independent, so d(sum_c L_c)/d theta_b = d L_b / d theta_b.
            grads = torch.autograd.grad(losses.sum(), [live[n] for n in names], allow_unused=True)
            return losses.detach(), {n: (torch.zeros_like(live[n]) if g is None else g) for n, g in zip(names, grads)}

        def losses_only():
            return grad_fn(live)[0] if grad_fn is not None else loss_fn(live)

    recorded_steps: list[int] = []
    values: dict[str, list] = {"loss": []}
    values.update({n: [] for n in record})
    snapshots: dict[int, dict[str, torch.Tensor]] = {}

    def capture(t: int, losses: torch.Tensor) -> None:
        if t in snapshot_steps:
            snapshots[t] = {n: p.detach().cpu().clone() for n, p in live.items()}
        if t not in wanted:
            return
        _check_losses(losses, size)
        recorded_steps.append(t)
        values["loss"].append(_to_numpy(losses))
        with torch.no_grad():
            for n, fn in recorders.items():
                out = fn(live, *data) if vmap else fn(live)
                values[n].append(_to_numpy(out))

    bar = tqdm(total=steps, desc=desc, disable=not progress, leave=False)
    for t in range(steps):
        losses, grads = losses_and_grads()
        capture(t, losses)
        with torch.no_grad():
            for n in names:
                eta = schedules[n](t)
                g = grads[n]
                if isinstance(eta, torch.Tensor):
                    eta = eta.reshape((size,) + (1,) * (g.dim() - 1))
                live[n] -= eta * g
        bar.update(1)
    bar.close()
    with torch.no_grad():
        capture(steps, losses_only())

    records = {}
    for n, vals in values.items():
        arrays = [np.asarray(v) for v in vals]
        for arr in arrays:
            if arr.ndim == 0 or arr.shape[0] != size:
                raise ValueError(f"record[{n!r}] must return one value per member (leading axis B = {size}), "
                                 f"got shape {arr.shape}")
        records[n] = np.stack(arrays)
    return BatchedHistory(
        steps=np.asarray(recorded_steps),
        records=records,
        snapshots=snapshots,
        params={n: p.detach().cpu() for n, p in live.items()},
    )


def _check_losses(losses, size: int) -> None:
    if not isinstance(losses, torch.Tensor) or tuple(losses.shape) != (size,):
        shape = tuple(losses.shape) if isinstance(losses, torch.Tensor) else type(losses).__name__
        raise ValueError(f"loss_fn must return one loss per member, a tensor of shape (B,) = ({size},); got {shape}")

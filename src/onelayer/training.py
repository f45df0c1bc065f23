"""Gradient descent with a recorded history: one trainer, for one model or for ``B`` independent members at once.

Both papers train with plain (full-batch or mini-batch) gradient descent from a given initialisation. :func:`train`
runs that loop on a dictionary of named parameter tensors and records, at chosen steps, the loss and any
user-supplied statistics, plus parameter snapshots.

* Step ``t`` means "after ``t`` updates"; step 0 is the initialisation. The loss recorded at ``t`` is
  ``L(theta_t)``, whose gradient gives update ``t + 1``; the last step is always recorded.
* The update is ``theta <- theta - eta_t * grad``; ``"adam"`` is a named variation, never the default.
* ``members=True``: every parameter has a leading member axis ``B`` (``W`` of one run is ``(d, d)``, a run of ``B``
  members passes ``(B, d, d)``), ``loss_fn`` returns the ``(B,)`` losses, member ``b`` depending only on member
  ``b`` of every parameter; autograd differentiates their sum, which gives each member its own gradient. A step
  size may then be one per member (``(B,)``), and :class:`BatchedHistory` stores ``(T, B, ...)`` records.
  A single run never goes through a member axis of size one: batched matrix products round differently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from .validation import check_bool, check_choice, check_int

__all__ = ["History", "BatchedHistory", "train", "stack_params", "concat_histories", "OPTIMIZERS", "DEVICES"]

#: Names accepted by the ``optimizer`` argument of :func:`train`.
OPTIMIZERS = ("gd", "adam")
#: Devices accepted with ``members=True`` (``"cuda"`` only where available).
DEVICES = ("cpu", "cuda")


@dataclass
class History:
    """What :func:`train` recorded: the recorded ``steps`` (from 0 to the last), ``records`` (``name -> array`` over
    the steps; always ``"loss"``), ``snapshots`` (``step -> {name -> tensor}``) and the final ``params``."""

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


@dataclass
class BatchedHistory(History):
    """:class:`History` of a run with ``members=True``: ``records[name]`` is ``(T, B, ...)``, ``snapshots`` and
    ``params`` are ``(B, ...)`` tensors on the CPU; :meth:`member` is one member's :class:`History`."""

    @property
    def size(self) -> int:
        """The number of members ``B``."""
        return int(self.records["loss"].shape[1])

    def member(self, b: int) -> History:
        """Member ``b`` as an ordinary :class:`History`."""
        b = check_int("b", b, low=0, high=self.size - 1)
        return History(
            steps=self.steps.copy(),
            records={name: values[:, b].copy() for name, values in self.records.items()},
            snapshots={t: {n: p[b].clone() for n, p in snap.items()} for t, snap in self.snapshots.items()},
            params={n: p[b].clone() for n, p in self.params.items()},
        )


def concat_histories(parts: Sequence[BatchedHistory]) -> BatchedHistory:
    """One :class:`BatchedHistory` from histories of disjoint groups of members recorded at the same steps (for
    instance the chunks of one study trained one after the other): members in the order of ``parts``."""
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
    """Stack ``B >= 1`` single-run parameter dictionaries (same names, same shapes) into ``name -> (B, *shape)``."""
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
                raise ValueError(f"members[{i}][{n!r}] has shape {tuple(m[n].shape)}; "
                                 f"members[0] has {tuple(members[0][n].shape)}")
    return {n: torch.stack([m[n].detach() for m in members]) for n in names}


# -- checks, done once at the start of train -----------------------------------------------------------------------
def _check_params(params, members: bool) -> int | None:
    """The member count ``B`` (``None`` for one run)."""
    if not isinstance(params, Mapping) or not params:
        raise TypeError("params must be a non-empty mapping name -> torch.Tensor"
                        + (" with a leading batch axis" if members else ""))
    for name, value in params.items():
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"params[{name!r}] must be a torch.Tensor, got {type(value).__name__}")
        if members and (value.dim() == 0 or value.shape[0] == 0):
            raise ValueError(
                f"params[{name!r}] must have a leading batch axis of size B >= 1, got shape {tuple(value.shape)}")
    if not members:
        return None
    sizes = {name: value.shape[0] for name, value in params.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"every parameter must have the same batch size B (leading axis); got {sizes}")
    return next(iter(sizes.values()))


def _as_schedule(lr) -> Callable[[int], float]:
    """One run: a positive number or a callable ``t -> number``."""
    if callable(lr):
        return lr
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise TypeError(f"lr must be a positive number or a callable step -> number, got {type(lr).__name__}")
    if not lr > 0:
        raise ValueError(f"lr must be a positive number, got {lr}")
    value = float(lr)
    return lambda t: value


def _step_size(value, name: str, size: int, dtype: torch.dtype, device: torch.device):
    """Members: a Python float (shared) or a checked ``(B,)`` tensor (one per member)."""
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
    raise TypeError(f"{name} must be a positive number, a (B,) tensor, a callable t -> step size or a mapping; "
                    f"got {type(value).__name__}")


def _member_schedule(value, name: str, size: int, dtype, device) -> Callable[[int], object]:
    if callable(value):
        return lambda t: _step_size(value(t), f"{name}({t})", size, dtype, device)
    fixed = _step_size(value, name, size, dtype, device)
    return lambda t: fixed


def _schedules(lr, params, size, dtype, device) -> dict[str, Callable[[int], object]]:
    def one(value, name):
        return _as_schedule(value) if size is None else _member_schedule(value, name, size, dtype, device)

    if isinstance(lr, Mapping):
        if set(lr) != set(params):
            raise ValueError(f"lr mapping must name exactly the parameters {sorted(params)}; got {sorted(lr)}")
        return {n: one(v, f"lr[{n!r}]") for n, v in lr.items()}
    shared = one(lr, "lr")
    return {n: shared for n in params}


def _check_record(record) -> dict:
    record = dict(record or {})
    if "loss" in record:
        raise ValueError("record must not contain 'loss': the training loss is always recorded")
    for name, fn in record.items():
        if not callable(fn):
            raise TypeError(f"record[{name!r}] must be callable params -> value")
    return record


def _check_member_options(grad_fn, vmap: bool, member_data, size) -> None:
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


def _check_losses(losses, size: int) -> None:
    if not isinstance(losses, torch.Tensor) or tuple(losses.shape) != (size,):
        shape = tuple(losses.shape) if isinstance(losses, torch.Tensor) else type(losses).__name__
        raise ValueError(f"loss_fn must return one loss per member, a tensor of shape (B,) = ({size},); got {shape}")


def _to_numpy(value) -> np.ndarray:
    # Always copy: a record function may return a view of a live parameter.
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().copy()
    return np.array(value, copy=True)


def train(
    params: Mapping[str, torch.Tensor],
    loss_fn: Callable[..., torch.Tensor],
    *,
    steps: int,
    lr,
    record: Mapping[str, Callable[..., object]] | None = None,
    record_every: int = 1,
    record_at: Iterable[int] | None = None,
    snapshot_at: Iterable[int] = (),
    grad_fn: Callable[[dict[str, torch.Tensor]], tuple[torch.Tensor, Mapping[str, torch.Tensor]]] | None = None,
    optimizer: str = "gd",
    members: bool = False,
    vmap: bool = False,
    member_data: tuple[torch.Tensor, ...] = (),
    device: str = "cpu",
    progress: bool | None = None,
    desc: str = "training",
) -> History:
    """Run gradient descent on ``params`` (copied, never modified) and return its :class:`History`.

    Parameters
    ----------
    loss_fn:
        ``params -> loss`` (a scalar; ``(B,)`` with ``members=True``), differentiated by autograd unless
        ``grad_fn`` is given.
    steps:
        Number of updates (``>= 0``).
    lr:
        Step size ``eta``: a positive number, a callable ``t -> eta_t`` (a schedule), or a mapping
        ``name -> either`` (one per parameter); with ``members=True`` also a ``(B,)`` tensor (one per member).
    record:
        ``name -> fn(params)`` returning a number or an array (``(B, ...)`` with ``members=True``), evaluated
        without gradients at every recorded step.
    record_every, record_at:
        Record every this many steps, or at exactly these steps (0 and ``steps`` are always recorded).
    snapshot_at:
        Steps at which to store a copy of every parameter.
    grad_fn:
        Optional ``params -> (loss, {name: gradient})`` in closed form, replacing autograd.
    optimizer:
        ``"gd"`` (the papers' choice) or ``"adam"`` (a named variation; one run only).
    members:
        Train ``B`` independent members along a leading axis of every parameter (module docstring); returns a
        :class:`BatchedHistory`.
    vmap, member_data:
        With ``members=True``: ``loss_fn`` (and every record function) is the single-run function
        ``(params_one, *data_one) -> scalar``, vectorised by :func:`torch.func.vmap` over the members and over
        ``member_data`` (tensors with leading axis ``B``).
    device:
        With ``members=True``: ``"cpu"`` or ``"cuda"`` (if available); results come back on the CPU.
    progress, desc:
        A ``tqdm`` progress bar (default: on for one run, off for members) and its label.
    """
    size = _check_params(params, check_bool("members", members))
    if not callable(loss_fn):
        raise TypeError("loss_fn must be callable params -> " + ("(B,) losses" if members else "scalar tensor"))
    steps = check_int("steps", steps, low=0)
    record_every = check_int("record_every", record_every, low=1)
    check_choice("optimizer", optimizer, OPTIMIZERS)
    vmap = check_bool("vmap", vmap)
    check_choice("device", device, DEVICES)
    if not members and (vmap or device != "cpu"):
        raise ValueError("vmap and device are options of members=True")
    if members and optimizer != "gd":
        raise ValueError("optimizer='adam' is a variation of one run; members=True trains with plain GD")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch.cuda.is_available() is False; use device='cpu'")
    _check_member_options(grad_fn, vmap, member_data, size)
    record = _check_record(record)
    dev = torch.device(device)
    schedules = _schedules(lr, params, size, next(iter(params.values())).dtype, dev)
    wanted = set(range(0, steps + 1, record_every)) if record_at is None else {
        check_int("record_at", s, low=0, high=steps) for s in record_at}
    wanted |= {0, steps}
    snapshot_steps = {check_int("snapshot_at", s, low=0, high=steps) for s in snapshot_at}

    autograd = grad_fn is None and not vmap
    live = {n: p.detach().to(dev).clone().requires_grad_(autograd) for n, p in params.items()}
    data = tuple(d.to(dev) for d in member_data)
    names = list(live)
    adam = None
    if optimizer == "adam":
        adam = torch.optim.Adam([{"params": [p], "lr": 1.0} for p in live.values()])
    if vmap:
        grad_and_loss = torch.func.vmap(torch.func.grad_and_value(loss_fn))
        record = {n: torch.func.vmap(fn) for n, fn in record.items()}

    def loss_and_grads():
        if vmap:
            grads, losses = grad_and_loss(live, *data)
            return losses, grads
        if grad_fn is not None:
            with torch.no_grad():
                loss, grads = grad_fn(live)
            return (loss if members else loss.detach()), grads
        loss = loss_fn(live)
        if members:
            _check_losses(loss, size)
            # Members are independent, so d(sum_c L_c)/d theta_b = d L_b / d theta_b.
            total = loss.sum()
        elif loss.dim() != 0:
            raise ValueError(f"loss_fn must return a scalar tensor, got shape {tuple(loss.shape)}")
        else:
            total = loss
        grads = torch.autograd.grad(total, [live[n] for n in names], allow_unused=True)
        return loss.detach(), {n: (torch.zeros_like(live[n]) if g is None else g) for n, g in zip(names, grads)}

    def loss_only():
        with torch.no_grad():
            if vmap:
                return torch.func.vmap(loss_fn)(live, *data)
            return grad_fn(live)[0] if grad_fn is not None else loss_fn(live)

    recorded_steps: list[int] = []
    values: dict[str, list] = {"loss": []}
    values.update({name: [] for name in record})
    snapshots: dict[int, dict[str, torch.Tensor]] = {}

    def capture(t: int, loss_value: torch.Tensor) -> None:
        if t in snapshot_steps:
            snapshots[t] = {n: p.detach().cpu().clone() for n, p in live.items()}
        if t not in wanted:
            return
        recorded_steps.append(t)
        with torch.no_grad():
            if members:
                _check_losses(loss_value, size)
                values["loss"].append(_to_numpy(loss_value))
                for name, fn in record.items():
                    values[name].append(_to_numpy(fn(live, *data) if vmap else fn(live)))
            else:
                values["loss"].append(float(loss_value))
                detached = {n: p.detach() for n, p in live.items()}
                for name, fn in record.items():
                    values[name].append(_to_numpy(fn(detached)))

    bar = tqdm(total=steps, desc=desc, disable=not (not members if progress is None else progress), leave=False)
    for t in range(steps):
        loss, grads = loss_and_grads()
        capture(t, loss)
        with torch.no_grad():
            if adam is not None:
                for group, (name, p) in zip(adam.param_groups, live.items()):
                    group["lr"] = schedules[name](t)
                    p.grad = grads[name]
                adam.step()
            else:
                for name, p in live.items():
                    eta = schedules[name](t)
                    if isinstance(eta, torch.Tensor):  # one step size per member
                        eta = eta.reshape((size,) + (1,) * (p.dim() - 1))
                    p -= eta * grads[name]
        bar.update(1)
    bar.close()
    capture(steps, loss_only())

    records = {}
    for name, vals in values.items():
        arrays = [np.asarray(v) for v in vals]
        if members and any(arr.ndim == 0 or arr.shape[0] != size for arr in arrays):
            shape = next(arr.shape for arr in arrays if arr.ndim == 0 or arr.shape[0] != size)
            raise ValueError(f"record[{name!r}] must return one value per member (leading axis B = {size}), "
                             f"got shape {shape}")
        records[name] = np.stack(arrays) if arrays else np.empty(0)
    kind = BatchedHistory if members else History
    return kind(steps=np.asarray(recorded_steps), records=records, snapshots=snapshots,
                params={n: p.detach().cpu() for n, p in live.items()})

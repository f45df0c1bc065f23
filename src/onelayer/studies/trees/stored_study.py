"""What the trees forward studies share around the runner: float64 while a member runs, and a study's summary.

:func:`float64` makes ``float64`` torch's default dtype while a member runs (the pre-runner scripts set it for the
whole process; a member must not leave it behind in the process that verifies it). :func:`summary` is the one way a
chapter reads a forward study: the stored file through :func:`onelayer.studies.registry.load`, or with ``quick`` the
study's quick members computed here, in this process (seconds; what a figure's quick mode shows).
:func:`history_record` and :func:`history` store a chapter's training run (a :class:`~onelayer.training.History`) as a
member's result and read it back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch

from ... import store
from ...training import History
from ..registry import load
from ..runner import Study, compute

__all__ = ["float64", "summary", "history_record", "history"]


@contextlib.contextmanager
def float64() -> Iterator[None]:
    """``torch.float64`` as the default dtype inside the block; the previous default afterwards."""
    saved = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)


def summary(study: Study, *, quick: bool = False) -> dict:
    """The stored summary of ``study`` (``quick``: its quick members computed now, in this process, summarized)."""
    if not isinstance(study, Study):
        raise TypeError(f"study must be a Study, not {type(study).__name__}")
    if not quick:
        return load(study.name)["summary"]
    records = [store.from_jsonable(compute(study, study.quick, m)[1]) for m in study.member_list(study.quick)]
    return store.from_jsonable(store.to_jsonable(dict(study.summarize(study.quick, records))))


def history_record(hist: History) -> dict:
    """``hist`` as a member's result: its recorded steps, records, snapshots (keyed by the step as text) and final
    parameters (:func:`history` reads it back)."""
    if not isinstance(hist, History):
        raise TypeError(f"hist must be a History, not {type(hist).__name__}")
    return {"steps": [int(t) for t in hist.steps], "records": {k: np.asarray(v) for k, v in hist.records.items()},
            "snapshots": {str(int(t)): snap for t, snap in hist.snapshots.items()}, "params": hist.params}


def history(result: dict) -> History:
    """A stored :func:`history_record` as the :class:`~onelayer.training.History` it was: float64 records and
    tensors."""
    def tensors(params):
        return {n: torch.tensor(v, dtype=torch.float64) for n, v in params.items()}

    return History(steps=np.asarray(result["steps"]),
                   records={k: np.asarray(v, dtype=np.float64) for k, v in result["records"].items()},
                   snapshots={int(t): tensors(p) for t, p in result["snapshots"].items()},
                   params=tensors(result["params"]))

"""Two variations of the reviewers over many training samples (issue 22): the ``1/sqrt(d)`` logit scale and the parent
at lag 2, each a rate over seeds instead of one run.

A *seed* ``s`` fixes one training sample and its test walks, exactly as the chapter's single runs do
(:func:`~onelayer.studies.walks.experiment.setup_experiment` and :func:`~onelayer.studies.walks.variations.lag.lag_check`: training
walks of seed ``s``, test walks of seed ``s + 1000``; seed 0 is the chapter's run). All seeds of one setting are
trained together by :func:`onelayer.studies.walks.batched.train_batched` from zero with the paper's ``eta = 1``.

* :func:`logit_scale_seeds`: per walk parameter ``p`` and seed, the first step from which every test prediction is
  Bayes-optimal (``T0``, as :func:`~onelayer.studies.walks.variations.logit_scale.logit_scale_table`) with logit scale 1 and
  with ``1/sqrt(K + M)``, and the final test-mean attention on the parent;
* :func:`lag_seeds`: per ``p`` and seed on the lag-2 chain (:func:`~onelayer.studies.walks.variations.lag.lag_walks`), the
  test-mean attention on ``x_{N-lag}`` and on ``x_{N-1}`` after steps 1-3 and ``T0`` (optimal for the Bayes rule
  ``Pi[s_{N-lag}]``).

``python -m onelayer study walks-variations-seeds`` runs the study (:data:`STUDY`; four members, one per experiment and
``p``, each the block of 20 seeds trained together; about a minute on one core).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ....validation import check_int, check_int_sequence, check_probability
from ....walks import prediction, ring
from .. import analysis
from ..batched import BatchedData, forward_pass, train_batched, walk_batched_data
from ....walks.data import TokenData
from ....walks.model import WalkTransformer
from ..random_init.runs import optimal_fraction
from .lag import lag_walks
from ..inputs import walk_model
from ...runner import Member, Study

__all__ = ["SCALES", "Settings", "QUICK", "STUDY", "logit_scale_seeds", "lag_seeds"]

#: The two logit scales compared (:class:`~onelayer.walks.model.ModelConfig` ``logit_scale``).
SCALES = ("one", "inv_sqrt_d")


def _check(ps, seeds, steps, n_train, n_test) -> tuple[list[float], list[int], int]:
    ps = [check_probability(f"ps[{i}]", p, open_low=True, open_high=True) for i, p in enumerate(ps)]
    if not ps:
        raise ValueError("ps must contain at least one walk parameter")
    seeds = list(check_int_sequence("seeds", seeds, low=0))
    if not seeds:
        raise ValueError("seeds must contain at least one seed")
    check_int("n_train", n_train, low=1)
    check_int("n_test", n_test, low=1)
    return ps, seeds, check_int("steps", steps, low=2)


def _optimal_record(model: WalkTransformer, test: BatchedData, last: torch.Tensor, Pi: np.ndarray):
    """``params -> (B,)``: each member's fraction of Bayes-optimal test predictions (``Pi[last, y_hat]`` maximal)."""
    def record(prm):
        f = forward_pass(model, prm, test)["f"]
        return torch.tensor([optimal_fraction(prediction.predict(f[b]), last[b], Pi) for b in range(test.B)],
                            dtype=torch.float64)
    return record


def _attention_record(model: WalkTransformer, test: BatchedData, position: int):
    """``params -> (B,)``: each member's test-mean attention on the token at index ``position`` (``N - 2``: the
    parent ``x_{N-1}``)."""
    return lambda prm: forward_pass(model, prm, test)["S"][:, :, position].mean(dim=1)


def logit_scale_seeds(ps=(0.5, 0.7), *, seeds=tuple(range(20)), steps: int = 60, K: int = 6, N: int = 97,
                      M: int = 1000, n_train: int = 1000, n_test: int = 1000) -> list[dict]:
    """Steps until every test prediction is Bayes-optimal with logit scale 1 and ``1/sqrt(K + M)``, seed by seed.

    Returns
    -------
    list of dict
        One row per ``(p, seed)``: ``p``, ``seed``, and per scale ``name`` of :data:`SCALES`: ``T0_<name>`` (first
        step from which every test prediction is optimal, :func:`onelayer.studies.walks.analysis.steps_to_optimal`; ``nan`` if
        not by ``steps``), ``optimal_<name>`` (final fraction of optimal test predictions) and ``parent_<name>``
        (final test-mean attention on the parent ``x_{N-1}``).
    """
    ps, seeds, steps = _check(ps, seeds, steps, n_train, n_test)
    rows = []
    for p in ps:
        train = walk_batched_data(K, N, n_train, ps=p, seeds=seeds)
        test = walk_batched_data(K, N, n_test, ps=p, seeds=[s + 1000 for s in seeds])
        Pi = ring.transition_matrix(K, p)
        out = [{"p": p, "seed": s} for s in seeds]
        for scale in SCALES:
            model = walk_model(K=K, N=N, M=M, logit_scale=scale)
            hist = train_batched(model, train, steps=steps, record={
                "optimal": _optimal_record(model, test, test.last, Pi),
                "parent": _attention_record(model, test, N - 2)})
            for b, row in enumerate(out):
                flags = np.asarray(hist["optimal"])[:, b] >= 1.0 - 1e-12  # tol: a fraction of 1000 walks, 1 up to round-off
                row.update({f"T0_{scale}": analysis.steps_to_optimal(flags),
                            f"optimal_{scale}": float(hist["optimal"][-1, b]),
                            f"parent_{scale}": float(hist["parent"][-1, b])})
        rows += out
    return rows


def lag_seeds(ps=(0.7, 0.5), *, lag: int = 2, seeds=tuple(range(20)), steps: int = 30, K: int = 6, N: int = 97,
              M: int = 1000, n_train: int = 1000, n_test: int = 1000) -> list[dict]:
    """GD on the lag-``lag`` chain, seed by seed: attention on ``x_{N-lag}`` and on the direct predecessor after the
    first steps, and when the predictions become optimal.

    Returns
    -------
    list of dict
        One row per ``(p, seed)``: ``p``, ``seed``, ``lag``; ``lag_attention`` and ``parent_attention`` (test means
        on ``x_{N-lag}`` and on ``x_{N-1}`` after steps 1, 2 and 3), ``T0`` (first step from which every test
        prediction is optimal for the Bayes rule ``Pi[s_{N-lag}]``; ``nan`` if not by ``steps``), ``optimal_end``
        (final fraction of optimal test predictions) and ``top_lag_end`` (the most attended position at the end, as a
        lag).
    """
    ps, seeds, steps = _check(ps, seeds, steps, n_train, n_test)
    lag = check_int("lag", lag, low=1, high=N - 2)
    steps = max(steps, 3)
    model = walk_model(K=K, N=N, M=M)
    rows = []
    for p in ps:
        def walks(seed, n, p=p):
            return TokenData.from_states(lag_walks(K, p, N, n, lag=lag, seed=seed), K)

        train = BatchedData.stack([walks(s, n_train) for s in seeds])
        test = BatchedData.stack([walks(s + 1000, n_test) for s in seeds])
        Pi = ring.transition_matrix(K, p)
        hist = train_batched(model, train, steps=steps, record={
            "optimal": _optimal_record(model, test, test.tokens[:, :, -lag], Pi),
            "lag": _attention_record(model, test, N - 1 - lag), "parent": _attention_record(model, test, N - 2)})
        final = forward_pass(model, hist.params, test)["S"].mean(dim=1)[:, :-1]  # (B, N - 1): token positions only
        for b, s in enumerate(seeds):
            flags = np.asarray(hist["optimal"])[:, b] >= 1.0 - 1e-12  # tol: a fraction of n_test walks, 1 up to round-off
            rows.append({"p": p, "seed": s, "lag": lag,
                         "lag_attention": [float(hist.at("lag", t)[b]) for t in (1, 2, 3)],
                         "parent_attention": [float(hist.at("parent", t)[b]) for t in (1, 2, 3)],
                         "T0": analysis.steps_to_optimal(flags), "optimal_end": float(hist["optimal"][-1, b]),
                         "top_lag_end": int(N - 1 - int(final[b].argmax()))})
    return rows


@dataclass(frozen=True)
class Settings:
    """The study's settings (the first script's defaults): walk parameters and GD steps of each experiment, seeds per
    ``p`` (a block trained together), and the chain, model and sample sizes."""

    scale_ps: tuple[float, ...] = (0.5, 0.7)
    scale_steps: int = 60
    lag_ps: tuple[float, ...] = (0.7, 0.5)
    lag_steps: int = 30
    seeds: int = 20
    lag: int = 2
    K: int = 6
    N: int = 97
    M: int = 1000
    n_train: int = 1000
    n_test: int = 1000


#: The ``--quick`` settings (seconds): short walks and runs, few seeds.
QUICK = Settings(scale_ps=(0.7,), scale_steps=12, lag_ps=(0.7,), lag_steps=4, seeds=3, N=25, M=100, n_train=200,
                 n_test=200)


def members(settings: Settings) -> list[Member]:
    """One member per experiment and walk parameter: the block of seeds ``0 .. seeds - 1`` that the first script trained
    together (a batch; training the seeds one by one moves the last bits), e.g. ``lag-p0.700``, ``scale-p0.500``."""
    return ([Member(f"scale-p{p:.3f}", {"experiment": "scale", "p": p}, cost=2.0 * settings.scale_steps)
             for p in settings.scale_ps]
            + [Member(f"lag-p{p:.3f}", {"experiment": "lag", "p": p}, cost=float(settings.lag_steps))
               for p in settings.lag_ps])


def run_member(settings: Settings, member: Member) -> dict:
    """The rows of one block (:func:`logit_scale_seeds` or :func:`lag_seeds` at one ``p``): ``{"rows": [...]}``."""
    c = settings
    size = {"K": c.K, "N": c.N, "M": c.M, "n_train": c.n_train, "n_test": c.n_test}
    seeds = tuple(range(c.seeds))
    if member.fields["experiment"] == "scale":
        return {"rows": logit_scale_seeds((member.fields["p"],), seeds=seeds, steps=c.scale_steps, **size)}
    return {"rows": lag_seeds((member.fields["p"],), lag=c.lag, seeds=seeds, steps=c.lag_steps, **size)}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The old file's payload: ``logit_scale`` and ``lag`` rows, walk parameters in the settings' order."""
    by_key = {r["key"]: r["result"]["rows"] for r in records}
    return {"logit_scale": [row for p in settings.scale_ps for row in by_key[f"scale-p{p:.3f}"]],
            "lag": [row for p in settings.lag_ps for row in by_key[f"lag-p{p:.3f}"]]}


STUDY = Study(name="walks-variations-seeds", stored="walks/data/variations_seeds.json", kind="walks-variations-seeds",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, variations: the 1/sqrt(d) logit scale and the parent at lag 2 over 20 seeds per p")


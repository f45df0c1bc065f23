"""The attention at step 0 of the random-initialisation runs, per normalisation (issue 31): is the start of
``walks-random-init`` inside the small-initialisation regime of the paper's Section 5.2?

Section 5.2 starts GD from ``V, W ~ N(0, sigma^2)`` with ``sigma = 0.01`` and argues from a start where the attention
is close to uniform. Whether it is depends on what is normalised: the logit of position ``i`` is ``x~_i^T W x~_N``
(times the key and query scales), a sum of ``(K + M)^2`` terms of size ``sigma |x~_i| |x~_N|``; with nothing
normalised ``|x~_i|^2 = 1 + M/2 = 501`` (sinusoidal positions, ``||p_i||^2 = M/2``), so the logits spread by about
``0.01 * sqrt(501 * 500) ≈ 5`` and the softmax is far from uniform, while unit-length ``x~`` give a spread of about
``sigma``. A member is one walk ``p``, normalisation and seed, with exactly the initial point and test walks of the run
of ``walks-random-init`` with that seed (the step-0 state does not depend on the loss reduction or the step size). Per
member, over the 1000 test walks: the largest attention weight (mean and largest over walks), the attention entropy
(mean, in nats, and relative to ``log N``, the uniform attention's) and the standard deviation of the logits over the
positions (mean over walks).

The study's settings are those of ``walks-random-init`` (:class:`~onelayer.studies.walks.random_init.stored.Settings`:
its normalisations, walks, seeds and sizes; the loss readings and run lengths are not used). ``python -m onelayer study
walks-initial-attention`` runs it (120 members of well under a second each).
"""

from __future__ import annotations

import math
import torch

from ...runner import Member, Study
from ..experiment import setup_experiment
from .runs import PAPER
from .stored import QUICK, Settings

__all__ = ["STUDY", "initial_attention", "REGIME_SPREAD"]

#: A start counts as inside the small-initialisation regime when the logits' spread over the positions (standard
#: deviation; mean over the test walks, largest over the members) is below this: the softmax of logits that differ by
#: much less than 1 is close to uniform (weights within a factor of about ``e^spread`` of ``1/N``), the state the
#: paper's Section 5.2 argues from; a spread of several units concentrates the attention at step 0 [ours].
REGIME_SPREAD = 1.0


def initial_attention(p: float, normalize: str, seed: int, settings: Settings = Settings()) -> dict:
    """The step-0 attention of the run ``(p, normalize, seed)`` of ``walks-random-init`` on its test walks."""
    c = settings
    exp = setup_experiment(p, K=c.K, N=c.N, M=c.M, n_train=c.n_train, n_test=c.n_test, seed=seed, normalize=normalize,
                           reduction="mean", epsilon=PAPER["epsilon"])
    m = exp.model
    params = m.init("gaussian", sigma=c.sigma, seed=seed)
    out = m.forward_raw(params, exp.test.tokens)
    S, z = out["S"], out["z"]
    w = exp.test.weights
    top = S.max(dim=1).values
    entropy = -(S * torch.log(S)).sum(dim=1)
    return {"max_weight_mean": float((top * w).sum()), "max_weight_max": float(top.max()),
            "entropy_mean": float((entropy * w).sum()), "entropy_relative": float((entropy * w).sum()) / math.log(c.N),
            "logit_spread": float((z.std(dim=1) * w).sum()), "uniform_weight": 1.0 / c.N}


def members(settings: Settings) -> list[Member]:
    """One member per normalisation, walk and seed, e.g. ``none-p1.0-s007``."""
    return [Member(f"{nz}-p{p:.1f}-s{seed:03d}", {"normalize": nz, "p": p, "seed": seed})
            for nz in settings.normalizations for p in settings.ps for seed in range(settings.seeds)]


def run_member(settings: Settings, member: Member) -> dict:
    """:func:`initial_attention` of the member."""
    f = member.fields
    return initial_attention(float(f["p"]), f["normalize"], int(f["seed"]), settings)


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per normalisation (over walks and seeds): the means and extremes of the member readings, and whether the start
    is inside the small-initialisation regime (``logit_spread`` below :data:`REGIME_SPREAD` for every member)."""
    rows = []
    for nz in settings.normalizations:
        sub = [r["result"] for r in records if r["fields"]["normalize"] == nz]
        spreads = [r["logit_spread"] for r in sub]
        rows.append({"normalize": nz, "members": len(sub),
                     "max_weight_mean": sum(r["max_weight_mean"] for r in sub) / len(sub),
                     "max_weight_max": max(r["max_weight_max"] for r in sub),
                     "entropy_relative_mean": sum(r["entropy_relative"] for r in sub) / len(sub),
                     "entropy_relative_min": min(r["entropy_relative"] for r in sub),
                     "logit_spread_mean": sum(spreads) / len(sub), "logit_spread_max": max(spreads),
                     "uniform_weight": 1.0 / settings.N,
                     "small_init": max(spreads) < REGIME_SPREAD})
    return {"regime_spread": REGIME_SPREAD, "by_normalization": rows}


STUDY = Study(name="walks-initial-attention", stored="walks/data/initial_attention.json", kind="walks-initial-attention",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Section 5.2: the attention at step 0 of the random-initialisation runs (largest "
                          "weight, entropy, logit spread) per normalisation, 2 walks x 20 seeds")

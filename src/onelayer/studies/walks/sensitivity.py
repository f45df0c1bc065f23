"""How the verdicts on Figures 4 and 5 depend on the reconstructed choices (positional norm, precision, Gram error).

The paper's positional formula did not survive; our reconstruction
``[p_i]_k = sin(pi i k / M)`` has ``||p_i||^2 = M/2`` (a [guess] of the spec).
Every attention-logit update is multiplied by ``||p_j||^2 ||p_N||^2``, so the
norm decides both how fast the parent is selected at ``p = 1/2`` (Figure 4) and
how fast a tiny asymmetry grows at ``p = 1`` (Figure 5: uniform attention and
accuracy ``1/K`` for 50 steps). This module reruns both figures over a range of
norms, precisions and symmetry breakers:

* :func:`scaled_model`: the paper's model with its positional vectors rescaled
  to a given ``||p_i||^2`` (the seeded Gram error is added before the rescaling,
  so its size *relative to* ``||p_i||^2`` is fixed; that is how round-off scales).
* :func:`figure45_row` / :func:`figure45_table`: the two figures' criteria for each
  setting; :func:`onelayer.figures.walks.figure45_figure` draws the table.
* :func:`figure45_seeds`: the same criteria over many training samples (data seeds) at one
  setting, trained together with :func:`onelayer.studies.walks.batched.train_batched`;
  :func:`figure45_rates`: the share of samples that reproduce each figure, with its interval.

Criteria (our operational reading of the figures)
    Figure 4 is reproduced when, at step ``steps`` (50), every test prediction
    is Bayes-optimal (conditional accuracy ``= 1/2``) and the test-mean attention
    on the parent is at least 0.99. Figure 5 is reproduced when, over all
    ``steps`` steps, the real-token logit spread on the training walks stays
    below 0.1 (attention within about 10 % of uniform) and the test accuracy
    stays below ``1/K + 0.05``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...rates import rate
from ...seeding import DTYPES
from ...validation import check_choice, check_float, check_int
from . import batched
from ...walks import ring
from ...walks.data import walk_data
from ...walks.model import WalkTransformer
from .theorem41 import GRAM_ERROR
from .inputs import positional_matrix, walk_model

__all__ = ["scaled_model", "figure45_row", "figure45_table", "figure45_figure", "figure45_seeds", "figure45_rates",
           "DEFAULT_NORMS", "RELATIVE_GRAM_ERROR", "READINGS"]

#: The seeded Gram error of :mod:`onelayer.studies.walks.theorem41` relative to ``||p_i||^2 = M/2`` at ``M = 1000``.
RELATIVE_GRAM_ERROR = GRAM_ERROR / 500.0

#: Default squared norms, as multiples of ``M``: ``1/M`` (unit norm), ``1/8, 1/4, 1/2`` (ours), ``1, 2``.
DEFAULT_NORMS = ("1", "M/8", "M/4", "M/2", "M", "2M")


#: The two positional readings of the seed study: sinusoidal positions with the chapters' seeded relative Gram error
#: (standing in for round-off), and exactly orthogonal positions without one.
READINGS = {"sin": RELATIVE_GRAM_ERROR, "exact": 0.0}


def _norm_value(norm, M: int) -> float:
    if isinstance(norm, str):
        table = {"1": 1.0, "M/32": M / 32, "M/16": M / 16, "M/8": M / 8, "M/4": M / 4, "M/2": M / 2, "M": float(M),
                 "2M": 2.0 * M, "4M": 4.0 * M}
        if norm not in table:
            raise ValueError(f"norm must be a positive number or one of {sorted(table)}; got {norm!r}")
        return table[norm]
    return check_float("norm", norm, low=0.0, low_open=True)


def scaled_model(K: int = 6, N: int = 97, M: int = 1000, *, norm=500.0, positions: str = "sin",
                 relative_gram_error: float = 0.0, gram_seed: int = 0, dtype: str = "float64",
                 **options) -> WalkTransformer:
    """A :class:`~onelayer.walks.model.WalkTransformer` whose positional vectors have ``||p_i||^2 = norm``.

    Parameters
    ----------
    K, N, M:
        Sizes.
    norm:
        The squared norm of every positional vector: a positive number or a name such as ``"M/2"``
        (the reconstruction's value), ``"1"``, ``"2M"``.
    positions:
        ``"sin"`` or ``"exact"`` (see :mod:`onelayer.walks.positions`; both have ``||p_i||^2 = M/2``
        before rescaling).
    relative_gram_error:
        Seeded Gaussian error of the Gram matrix, relative to ``||p_i||^2`` (0: none; the
        chapters' :data:`~onelayer.studies.walks.theorem41.GRAM_ERROR` is :data:`RELATIVE_GRAM_ERROR`).
    gram_seed:
        Seed of that error.
    dtype:
        ``"float64"`` or ``"float32"``; the positions are built and rescaled in float64 and then rounded.
    **options:
        Other :class:`~onelayer.walks.model.ModelConfig` fields (``loss``, ``reduction``, ...);
        ``normalize`` must stay ``"none"`` (unit normalisation would undo the rescaling).
    """
    check_choice("positions", positions, ("sin", "exact"))
    check_choice("dtype", dtype, tuple(DTYPES))
    relative_gram_error = check_float("relative_gram_error", relative_gram_error, low=0.0)
    if options.get("normalize", "none") != "none":
        raise ValueError("normalize must be 'none' for a rescaled model (normalisation removes the norm)")
    model = walk_model(K=K, N=N, M=M, positions=positions, dtype=dtype, **options)
    value = _norm_value(norm, model.config.M)
    base = M / 2.0
    P = positional_matrix(N, M, positions, dtype=torch.float64,
                          gram_error=relative_gram_error * base, gram_seed=gram_seed)
    P = (P * math.sqrt(value / base)).to(model.dtype)
    model.P = P
    model.x_query = torch.cat([torch.zeros(K, dtype=model.dtype), P[:, -1]])
    model.query_norm2 = float((P[:, -1] * P[:, -1]).sum())
    return model


def figure45_row(norm="M/2", *, dtype: str = "float64", relative_gram_error: float = RELATIVE_GRAM_ERROR,
                 positions: str = "sin", steps: int = 50, K: int = 6, N: int = 97, M: int = 1000,
                 n_train: int = 1000, n_test: int = 1000, seed: int = 0, lr: float = 1.0,
                 gram_seed: int = 0) -> dict:
    """Figures 4 (``p = 1/2``) and 5 (``p = 1``) at one setting, zero initialisation, ``steps`` GD steps.

    Training and test walks are sampled (``n_train``, ``n_test``; seeds ``seed``, ``seed + 1000``),
    as in the paper. Returns a row with the setting (``norm``, ``norm2``, ``dtype``,
    ``relative_gram_error``, ``positions``) and: ``fig4_T0`` (first step from which every test
    prediction is Bayes-optimal, ``nan`` if not by the end), ``fig4_parent`` (final test-mean
    attention on the parent), ``fig4_top_lag`` and ``fig4_top_attention`` (the position with the
    largest final test-mean attention, as a lag: 1 is the parent ``x_{N-1}``, 3 is ``x_{N-3}``),
    ``fig4_accuracy``, ``fig4_reproduced``; ``fig5_escape_step`` (first
    step with real-token logit spread above 1, ``nan`` if never), ``fig5_max_spread``,
    ``fig5_max_accuracy`` (largest test accuracy over the run), ``fig5_final_top_attention`` (test
    mean of the largest real-token attention weight at the end), ``fig5_reproduced``; ``both``.
    """
    steps = check_int("steps", steps, low=1)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    model = scaled_model(K, N, M, norm=norm, positions=positions, relative_gram_error=relative_gram_error,
                         gram_seed=gram_seed, dtype=dtype)
    out = {"norm": norm, "norm2": float(model.query_norm2), "dtype": dtype,
           "relative_gram_error": relative_gram_error, "positions": positions}
    # Figure 4
    train, test = walk_data(K, 0.5, N, n_train, seed=seed), walk_data(K, 0.5, N, n_test, seed=seed + 1000)
    hist = model.train(model.init(), train, steps=steps, lr=lr, record={
        "cond": lambda prm: model.conditional_accuracy(prm, test, 0.5),
        "parent": lambda prm: float(model.attention(prm, test)[:, -2].mean()),
        "acc": lambda prm: model.accuracy(prm, test),
        "profile": lambda prm: model.attention(prm, test).mean(0),
    })
    profile = hist.final("profile")
    optimal = np.abs(np.asarray(hist["cond"]) - 0.5) < 1e-6
    bad = np.flatnonzero(~optimal)
    T0 = float("nan") if not optimal[-1] else float(0 if bad.size == 0 else bad[-1] + 1)
    top = int(np.argmax(np.asarray(profile)[:-1]))
    out.update(fig4_T0=T0, fig4_parent=float(hist.final("parent")), fig4_accuracy=float(hist.final("acc")),
               fig4_top_lag=N - 1 - top, fig4_top_attention=float(np.asarray(profile)[top]))
    out["fig4_reproduced"] = bool(optimal[-1] and out["fig4_parent"] >= 0.99)
    # Figure 5
    train, test = walk_data(K, 1.0, N, n_train, seed=seed), walk_data(K, 1.0, N, n_test, seed=seed + 1000)

    def spread(prm):
        z = model.logits(prm, train)[:, :-1]
        return float((z.max(dim=1).values - z.min(dim=1).values).max())

    hist = model.train(model.init(), train, steps=steps, lr=lr, record={
        "spread": spread,
        "acc": lambda prm: model.accuracy(prm, test),
        "top": lambda prm: float(model.attention(prm, test)[:, :-1].max(dim=1).values.mean()),
    })
    sp = np.asarray(hist["spread"], dtype=float)
    esc = np.flatnonzero(sp > 1.0)
    out.update(fig5_escape_step=float(hist.steps[esc[0]]) if esc.size else float("nan"),
               fig5_max_spread=float(np.nanmax(sp)), fig5_max_accuracy=float(np.max(hist["acc"])),
               fig5_final_top_attention=float(hist.final("top")))
    out["fig5_reproduced"] = bool(out["fig5_max_spread"] < 0.1 and out["fig5_max_accuracy"] < 1.0 / K + 0.05)
    out["both"] = out["fig4_reproduced"] and out["fig5_reproduced"]
    return out


def figure45_table(norms=DEFAULT_NORMS, *, dtypes=("float64", "float32"),
                   relative_gram_errors=(RELATIVE_GRAM_ERROR,), positions=("sin",), steps: int = 50,
                   n_train: int = 1000, n_test: int = 1000, seed: int = 0) -> list[dict]:
    """:func:`figure45_row` for every ``positions x relative_gram_error x dtype x norm`` (a list of row dicts).

    The default grid (6 norms x 2 precisions, sinusoidal positions, the chapters' Gram error) runs in
    about 7 seconds on one core; each further row costs about 0.6 s.

    Measured (seed 0, 50 steps): with sinusoidal positions and the relative Gram error
    :data:`RELATIVE_GRAM_ERROR`, Figure 4 needs ``||p_i||^2 >= 40`` (below about 35 the attention
    leaves the parent, parent attention below 1e-3, and the accuracy is 0.346) and Figure 5 needs ``||p_i||^2 <= 40`` (the
    symmetric state is left within 50 steps above that; at ``M/2 = 500`` by step 10, by step 6 in
    float32): both only near ``||p_i||^2 = 40``. With exactly orthogonal positions and no Gram
    error, Figure 5 holds at every norm in both precisions and both figures hold from ``M/16`` up.
    That is one training sample: over 40 samples (:func:`figure45_seeds`, the stored study
    :mod:`onelayer.studies.walks.seed_rates`) Figure 4 at ``||p_i||^2 = 40`` holds in 7 of 40, and with sinusoidal positions
    both figures together in at most 6 of 40 at any norm tried; with exactly orthogonal positions Figure 5 holds in
    every sample and both together in most samples from ``M/8`` up.
    """
    norms, dtypes, errors = list(norms), list(dtypes), list(relative_gram_errors)
    kinds = [positions] if isinstance(positions, str) else list(positions)
    if not norms or not dtypes or not errors or not kinds:
        raise ValueError("norms, dtypes, relative_gram_errors and positions must each name at least one value")
    return [figure45_row(n, dtype=d, relative_gram_error=g, positions=k, steps=steps, n_train=n_train,
                         n_test=n_test, seed=seed)
            for k in kinds for g in errors for d in dtypes for n in norms]


def _spread_record(model, data, chunk: int = 4):
    """``params -> (B,)``: the largest real-token logit spread over each member's walks ``data``."""
    slices = [slice(lo, min(lo + chunk, data.B)) for lo in range(0, data.B, chunk)]

    def record(prm):
        out = []
        for s in slices:
            z = model.forward_raw({k: v[s] for k, v in prm.items()}, data.tokens[s])["z"][:, :, :-1]
            out.append((z.max(dim=2).values - z.min(dim=2).values).max(dim=1).values)
        return torch.cat(out)

    return record


def figure45_seeds(norm="M/2", *, positions: str = "sin", seeds=tuple(range(20)), relative_gram_error=None,
                   steps: int = 50, K: int = 6, N: int = 97, M: int = 1000, n_train: int = 1000, n_test: int = 1000,
                   lr: float = 1.0, gram_seed: int = 0) -> list[dict]:
    """:func:`figure45_row`'s criteria for many training samples at one setting (float64), one row per seed.

    Parameters
    ----------
    norm:
        ``||p_i||^2`` (a positive number or a name such as ``"M/2"``, see :func:`scaled_model`).
    positions:
        ``"sin"`` or ``"exact"``.
    seeds:
        Data seeds (at least one): training walks ``seed``, test walks ``seed + 1000``, for both figures,
        exactly as :func:`figure45_row` with ``seed=seed``.
    relative_gram_error:
        Seeded Gram error relative to ``||p_i||^2``; ``None``: the reading's default (:data:`READINGS`:
        :data:`RELATIVE_GRAM_ERROR` for ``"sin"``, 0 for ``"exact"``). The Gram error's own seed ``gram_seed`` is
        the same for every member (only the training sample varies).
    steps, K, N, M, n_train, n_test, lr:
        As in :func:`figure45_row` (the paper's setting, 50 steps).

    Returns
    -------
    list of dict
        ``norm``, ``norm2``, ``positions``, ``relative_gram_error``, ``seed``, ``fig4_T0``, ``fig4_parent``,
        ``fig4_reproduced``, ``fig5_escape_step``, ``fig5_max_spread``, ``fig5_max_accuracy``, ``fig5_reproduced``,
        ``both`` (as in :func:`figure45_row`; member ``b`` equals ``figure45_row(..., seed=seeds[b])`` up to
        round-off).

    Runtime: about 0.5 s per seed at the default size (both figures, 50 steps each).
    """
    check_choice("positions", positions, tuple(READINGS))
    seeds = [check_int(f"seeds[{i}]", v, low=0) for i, v in enumerate(batched.member_values("seeds", seeds))]
    steps = check_int("steps", steps, low=1)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    n_train = check_int("n_train", n_train, low=1)
    n_test = check_int("n_test", n_test, low=1)
    gram = READINGS[positions] if relative_gram_error is None else relative_gram_error
    model = scaled_model(K, N, M, norm=norm, positions=positions, relative_gram_error=gram, gram_seed=gram_seed)
    test_seeds = [s + 1000 for s in seeds]
    # Figure 4: p = 1/2
    train = batched.walk_batched_data(K, N, n_train, ps=0.5, seeds=seeds)
    test = batched.walk_batched_data(K, N, n_test, ps=0.5, seeds=test_seeds)
    rec = batched.attention_records(model, test, ps=0.5)
    hist = batched.train_batched(model, train, steps=steps, lr=lr, record={"cond": rec["conditional_accuracy"]})
    cond = np.asarray(hist["cond"])  # (T, B)
    parent = rec["parent_attention"](hist.params).numpy()
    # Figure 5: p = 1
    train = batched.walk_batched_data(K, N, n_train, ps=1.0, seeds=seeds)
    test = batched.walk_batched_data(K, N, n_test, ps=1.0, seeds=test_seeds)
    rec5 = batched.attention_records(model, test)
    hist5 = batched.train_batched(model, train, steps=steps, lr=lr,
                                record={"spread": _spread_record(model, train), "acc": rec5["accuracy"]})
    spread, acc = np.asarray(hist5["spread"], dtype=float), np.asarray(hist5["acc"], dtype=float)
    rows = []
    for b, seed in enumerate(seeds):
        optimal = np.abs(cond[:, b] - ring.bayes_accuracy(0.5)) < 1e-6
        bad = np.flatnonzero(~optimal)
        T0 = float("nan") if not optimal[-1] else float(hist.steps[0 if bad.size == 0 else bad[-1] + 1])
        esc = np.flatnonzero(spread[:, b] > 1.0)
        row = {"norm": norm, "norm2": float(model.query_norm2), "positions": positions,
               "relative_gram_error": float(gram), "seed": seed, "fig4_T0": T0, "fig4_parent": float(parent[b]),
               "fig4_reproduced": bool(optimal[-1] and parent[b] >= 0.99),
               "fig5_escape_step": float(hist5.steps[esc[0]]) if esc.size else float("nan"),
               "fig5_max_spread": float(spread[:, b].max()), "fig5_max_accuracy": float(acc[:, b].max())}
        row["fig5_reproduced"] = bool(row["fig5_max_spread"] < 0.1 and row["fig5_max_accuracy"] < 1.0 / K + 0.05)
        row["both"] = row["fig4_reproduced"] and row["fig5_reproduced"]
        rows.append(row)
    return rows


def figure45_rates(rows: list[dict]) -> list[dict]:
    """Rows of :func:`figure45_seeds` grouped by the setting ``(positions, relative_gram_error, norm)`` (the norm as
    asked for, not the measured ``norm2``, which the Gram error moves): ``samples`` and, for ``fig4``, ``fig5`` and
    ``both``, the :class:`~onelayer.rates.Rate` of samples that reproduce it (``fig4_rate``, ...) with its text
    (``fig4``, ...); sinusoidal positions first, then by error size and squared norm."""
    if not rows:
        raise ValueError("rows must not be empty")
    out, groups = [], {}
    for r in rows:
        groups.setdefault((r["positions"], r["relative_gram_error"], str(r["norm"])), []).append(r)
    for key, sub in sorted(groups.items(), key=lambda kv: (kv[0][0] != "sin", kv[0][1], kv[1][0]["norm2"])):
        row = {"positions": key[0], "gram_error": key[1], "norm": sub[0]["norm"], "norm2": sub[0]["norm2"],
               "samples": len(sub)}
        for name in ("fig4", "fig5", "both"):
            r = rate(sum(bool(x[name if name == "both" else f"{name}_reproduced"]) for x in sub), len(sub))
            row[f"{name}_rate"], row[name] = r, r.text(2)
        out.append(row)
    return out

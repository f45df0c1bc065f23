"""The first GD steps on a finite sample: what ``V^(1)`` and ``V^(2)`` really are, and what the model predicts.

Lemmas C.1-C.3 are statements about the population: there every label has
frequency ``1/K`` and ``V^(1)`` is circulant, with its largest entries at offset
``+1`` (for ``p > 1/2``). On a sample of walks this is not what happens, and
this module measures it on the object each name says.

Step 1, exactly
    At zero the attention is uniform (every logit is 0) and the weighted token
    is ``u = c / N`` with ``c`` the visit counts of the sequence. The log-loss
    gradient at ``f = 0`` is ``-e_y / epsilon``, so for the mean loss over a sample

        V^(1) = (eta / epsilon) sum_y freq(y) e_y h_y^T,

    with ``freq(y)`` the training frequency of label ``y`` and ``h_y`` the mean
    of ``u`` over the training walks with label ``y`` (:func:`first_step_from_counts`,
    computed by counting, without the model). Each ``h_y`` sums to ``(N-1)/N``, so
    row ``y`` of ``V^(1)`` sums to ``(eta/epsilon)((N-1)/N) freq(y)``: the rows are
    scaled by the label frequencies. The spread of those frequencies on 1000
    walks (a few percent) is larger than the spread of ``h_y`` over ``s`` (the
    part that carries the transition structure), so each column of ``V^(1)``
    peaks at a frequent label, not at offset ``+1``, and ``V^(1)`` is not circulant.
Predictions at steps 1-3
    Step 1: ``f = V^(1) u = (eta/epsilon) sum_y freq(y) <h_y, u> e_y``; all
    ``<h_y, u>`` are close to ``(N-1)/(N^2 K)``, so nearly every input is
    assigned the most frequent training label. Step 2: the attention is on the
    parent, ``f = V^(2) x_{N-1}``, but ``V^(2)`` was built from two gradients taken
    under uniform attention, so it has the same frequency-dominated columns.
    Step 3 is the first ``V`` update made with the attention on the parent; it
    adds ``(eta / epsilon') C[s, y]`` terms that put every column's maximum at the
    Bayes offset. :func:`first_steps_table` records all of this per step.
Why step 2 still selects the parent
    The frequency part of ``V^(1)`` multiplies every position of a sequence by
    the same ``freq(y)``; it moves the token part of the query (``W_12 p_N``) but
    not the positional part, whose parent-vs-rest gap is multiplied by
    ``||p_j||^2 ||p_N||^2 = M^2/4``. The table reports both.
"""

from __future__ import annotations

import numpy as np
import torch

from ...validation import check_float, check_int, check_probability
from . import batched
from ...walks import prediction, ring
from ...walks.data import TokenData, walk_data, walk_population

from .inputs import walk_model

__all__ = ["first_step_from_counts", "counting_check", "column_max_offsets", "maximal_offsets", "circulant_deviation", "first_steps_table",
           "first_steps_samples"]


def _by_offset(V) -> torch.Tensor:
    """Row ``s``: column ``s`` of ``V`` read by offset, entry ``o`` = ``V[(s + o) mod K, s]``."""
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] != V.shape[1]:
        raise ValueError(f"V must be a square matrix, got shape {V.shape}")
    return torch.from_numpy(np.stack([np.roll(V[:, s], -s) for s in range(V.shape[0])]))


def counting_check(V1, data: TokenData) -> dict:
    """A trained ``V1`` against :func:`first_step_from_counts` on its training ``data``: ``freq`` (the training label
    frequencies), ``column_max_labels`` (the label at each column's maximum of ``V1``,
    :func:`column_max_offsets`), ``top_label`` and ``counting_error`` (the largest difference of the two)."""
    counts = first_step_from_counts(data)
    K = V1.shape[0]
    labels = [(s + o) % K for s, o in enumerate(column_max_offsets(V1))]
    return {"freq": counts["freq"], "column_max_labels": labels, "top_label": int(np.argmax(counts["freq"])),
            "counting_error": float(np.abs(V1 - counts["V1"]).max())}


def column_max_offsets(V) -> list[int]:
    """For each column ``s`` of ``V`` (``K x K``), the offset ``(y - s) mod K`` of its largest entry.

    Entries within :data:`onelayer.walks.prediction.TIE_TOL` of the column's maximum count as tied
    (:func:`onelayer.walks.prediction.maximal`) and the smallest offset is reported, so that a tie (``p = 1/2`` on a
    population: offsets ``0, 1, K - 1``) is never decided by the machine's round-off.
    """
    return [int(o) for o in prediction.predict(_by_offset(V))]


def maximal_offsets(V, column: int = 0) -> list[int]:
    """Every offset ``(y - s) mod K`` at which column ``s = column`` of ``V`` is maximal, ties as in
    :func:`column_max_offsets` (whose answer for that column is the smallest of them)."""
    tied = prediction.maximal(_by_offset(V))
    if not 0 <= column < tied.shape[0]:
        raise ValueError(f"column must be in [0, {tied.shape[0] - 1}], got {column}")
    return [int(o) for o in np.flatnonzero(tied[column].numpy())]


def circulant_deviation(V) -> float:
    """Largest ``|V[i, j] - V[(i - j) mod K, 0]|``: 0 exactly for a circulant matrix."""
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] != V.shape[1]:
        raise ValueError(f"V must be a square matrix, got shape {V.shape}")
    rolled = np.stack([np.roll(V[:, 0], j) for j in range(V.shape[0])], axis=1)
    return float(np.abs(V - rolled).max())


def first_step_from_counts(data: TokenData, *, eta: float = 1.0, epsilon: float = 0.1) -> dict[str, np.ndarray]:
    """``V^(1)`` of the mean log-loss from zero, computed by counting tokens (no model, no gradient code).

    Returns ``V1`` (``(eta/epsilon) sum_y freq(y) e_y h_y^T``), ``freq`` (weighted label
    frequencies) and ``h`` (``K x K``, row ``y`` = weighted mean of ``counts / N`` over the
    sequences with label ``y``; zero for an absent label).
    """
    if not isinstance(data, TokenData):
        raise TypeError("data must be a onelayer.walks.data.TokenData")
    eta = check_float("eta", eta, low=0.0, low_open=True)
    epsilon = check_float("epsilon", epsilon, low=0.0, low_open=True)
    K, N = data.K, data.N
    counts = data.token_average().numpy() * (N - 1) / N  # u = counts / N
    w = data.weights.numpy()
    y = data.labels.numpy()
    freq = np.bincount(y, weights=w, minlength=K)
    sums = np.zeros((K, K))
    np.add.at(sums, y, w[:, None] * counts)
    h = np.divide(sums, freq[:, None], out=np.zeros_like(sums), where=freq[:, None] > 0)
    return {"V1": eta / epsilon * sums, "freq": freq, "h": h}


def first_steps_table(p: float = 0.5, *, K: int = 6, N: int = 97, M: int = 1000, n_train: int = 1000,
                      n_test: int = 1000, steps: int = 3, seed: int = 0, lr: float = 1.0,
                      train: str = "sample") -> list[dict]:
    """Steps ``1..steps`` of GD from zero: structure of ``V``, attention and predictions (one row per step).

    Parameters
    ----------
    p:
        Clockwise probability of the ring walk (``0 < p < 1``).
    K, N, M, n_train, n_test, seed, lr:
        Sizes, seeds (training walks ``seed``, test walks ``seed + 1000``) and step size; defaults
        are the paper's Section 5.1 setting.
    steps:
        Number of steps (``>= 1``).
    train:
        ``"sample"`` (``n_train`` sampled walks) or ``"population"`` (every walk of length ``N``;
        only for small ``N``).

    Returns
    -------
    list of dict
        Row keys: ``step``, ``train`` (the kind of training data), ``V_circulant_deviation`` and
        ``V_column_max_offsets`` (of ``V^(t)`` as trained), ``top_label_columns`` (columns whose
        maximum is a most frequent training label), ``label_freq_spread`` (max - min training label
        frequency), ``parent_attention`` (test mean), ``token_logit_spread`` (max - min of the token
        part of the query, ``W_12 p_N``), ``positional_gap`` (parent's positional logit minus the
        largest other one), ``test_accuracy``, ``conditional_accuracy`` (test mean of
        ``Pi[s_{N-1}, y_hat]``), ``predicts_top_label`` (share of test predictions equal to the most
        frequent training label), ``predicts_V_column`` (share equal to ``argmax V[:, s_{N-1}]``, the
        prediction of a model that looks at the parent only).
    """
    p = check_probability("p", p, open_low=True, open_high=True)
    steps = check_int("steps", steps, low=1)
    if train not in ("sample", "population"):
        raise ValueError(f"train must be 'sample' or 'population'; got {train!r}")
    model = walk_model(K=K, N=N, M=M)
    data = walk_data(K, p, N, n_train, seed=seed) if train == "sample" else walk_population(K, p, N)
    test = walk_data(K, p, N, n_test, seed=seed + 1000)
    Pi = ring.transition_matrix(K, p)
    freq = np.bincount(data.labels.numpy(), weights=data.weights.numpy(), minlength=K)
    top = set(np.flatnonzero(np.isclose(freq, freq.max(), rtol=0, atol=1e-12)).tolist())
    top_label = min(top)
    hist = model.train(model.init(), data, steps=steps, lr=lr, snapshot_at=tuple(range(1, steps + 1)))
    rows = []
    for t in range(1, steps + 1):
        prm = hist.snapshots[t]
        V = prm["V"].numpy()
        q = prm["q"]
        r = (model.P.T @ q[K:]).numpy()
        pred = model.predict(prm, test)
        last = test.last.numpy()
        rows.append({
            "step": t,
            "train": train,
            "V_circulant_deviation": circulant_deviation(V),
            "V_column_max_offsets": column_max_offsets(V),
            "top_label_columns": int(sum(int(np.argmax(V[:, s])) in top for s in range(K))),
            "label_freq_spread": float(freq.max() - freq.min()),
            "parent_attention": float(model.attention(prm, test)[:, -2].mean()),
            "token_logit_spread": float(q[:K].max() - q[:K].min()),
            "positional_gap": float(r[-2] - np.delete(r, -2).max()),
            "test_accuracy": model.accuracy(prm, test),
            "conditional_accuracy": prediction.conditional_accuracy(pred, test.last, Pi),
            "predicts_top_label": float((pred.numpy() == top_label).mean()),
            "predicts_V_column": float((pred.numpy() == V[:, last].argmax(axis=0)).mean()),
        })
    return rows


def first_steps_samples(p: float = 0.7, *, seeds=tuple(range(100)), K: int = 6, N: int = 97, M: int = 1000,
                        n_train: int = 1000, n_test: int = 1000, steps: int = 3, lr: float = 1.0) -> list[dict]:
    """Steps ``1..steps`` of GD from zero on many training samples (one row per data seed), trained together.

    Member ``b`` is :func:`first_steps_table` with ``seed=seeds[b]`` (training walks ``seed``, test walks
    ``seed + 1000``), run by :func:`onelayer.studies.walks.batched.train_batched`.

    Returns
    -------
    list of dict
        ``seed``, ``top_labels`` (the most frequent training labels; several when tied),
        ``label_freq_spread``, and per step ``t``: ``top_label_columns_t`` (columns of ``V^(t)`` whose maximum is a
        most frequent training label, as in :func:`first_steps_table`), ``plus_one_columns_t`` (columns whose
        maximum, :func:`column_max_offsets`, is at offset ``+1``), ``circulant_deviation_t``
        (:func:`circulant_deviation` of ``V^(t)``), ``parent_attention_t`` (test mean), ``token_logit_spread_t`` and
        ``positional_gap_t`` (as in :func:`first_steps_table`), ``predicts_top_label_t`` (share of test predictions
        equal to the smallest most frequent training label), ``conditional_accuracy_t`` (test mean of
        ``Pi[s_{N-1}, y_hat]``) and ``optimal_t`` (every test prediction Bayes-optimal).
    """
    p = check_probability("p", p, open_low=True, open_high=True)
    steps = check_int("steps", steps, low=1)
    seeds = [check_int(f"seeds[{i}]", v, low=0) for i, v in enumerate(batched.member_values("seeds", seeds))]
    model = walk_model(K=K, N=N, M=M)
    train = batched.walk_batched_data(K, N, n_train, ps=p, seeds=seeds)
    test = batched.walk_batched_data(K, N, n_test, ps=p, seeds=[s + 1000 for s in seeds])
    tops = []
    for b in range(len(seeds)):
        freq = np.bincount(train.labels[b].numpy(), weights=train.weights[b].numpy(), minlength=K)
        tops.append((freq, np.flatnonzero(np.isclose(freq, freq.max(), rtol=0, atol=1e-12)).tolist()))
    top_label = torch.tensor([min(top) for _, top in tops])[:, None]
    w = test.weights.to(model.dtype)

    def predicts_top_label(prm):
        f = batched.forward_pass(model, prm, test)["f"]
        pred = prediction.predict(f.reshape(-1, K)).reshape(f.shape[:2])
        return ((pred == top_label).to(model.dtype) * w).sum(dim=1)

    rec = batched.attention_records(model, test, ps=p)
    hist = batched.train_batched(model, train, steps=steps, lr=lr,
                               record={"cond": rec["conditional_accuracy"], "parent": rec["parent_attention"],
                                       "top": predicts_top_label},
                               snapshot_at=tuple(range(1, steps + 1)))
    cond, parent, top_share = (np.asarray(hist[k]) for k in ("cond", "parent", "top"))  # (T, B): steps 0..steps
    rows = []
    for b, seed in enumerate(seeds):
        freq, top = tops[b]
        row = {"seed": seed, "top_labels": top, "label_freq_spread": float(freq.max() - freq.min())}
        for t in range(1, steps + 1):
            V = hist.snapshots[t]["V"][b].numpy()
            q = hist.snapshots[t]["q"][b]
            r = (model.P.T @ q[K:]).numpy()
            row[f"top_label_columns_{t}"] = int(sum(int(np.argmax(V[:, s])) in top for s in range(K)))
            row[f"plus_one_columns_{t}"] = int(sum(o == 1 for o in column_max_offsets(V)))
            row[f"circulant_deviation_{t}"] = circulant_deviation(V)
            row[f"parent_attention_{t}"] = float(parent[t, b])
            row[f"token_logit_spread_{t}"] = float(q[:K].max() - q[:K].min())
            row[f"positional_gap_{t}"] = float(r[-2] - np.delete(r, -2).max())
            row[f"predicts_top_label_{t}"] = float(top_share[t, b])
            row[f"conditional_accuracy_{t}"] = float(cond[t, b])
            row[f"optimal_{t}"] = bool(abs(cond[t, b] - ring.bayes_accuracy(p)) < 1e-9)
        rows.append(row)
    return rows

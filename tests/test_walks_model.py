"""Units of the walks core: ring, data, positions, losses, tie rule, model options, validation,
and the equivalence of the fast ``q = W x~_N`` simulation with the literal full-``W`` autograd model."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from onelayer.walks import data as wd
from onelayer.walks import model as walks_model, positions, prediction, ring
from onelayer.walks.model import ModelConfig, WalkTransformer


@pytest.fixture(autouse=True)
def _float64():
    torch.set_default_dtype(torch.float64)


# -- ring ------------------------------------------------------------------------
@pytest.mark.parametrize("K", [3, 5, 6])
@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 1.0])
def test_transition_matrix_structure(K, p):
    Pi = ring.transition_matrix(K, p)
    Pi0 = ring.shift_matrix(K)
    assert np.allclose(Pi.sum(axis=1), 1.0)
    assert Pi[0, 1] == pytest.approx(p if K > 2 else 1) and Pi[1, 0] == pytest.approx(1 - p)
    # Lemma E.1
    assert np.array_equal(np.linalg.matrix_power(Pi0, K), np.eye(K))  # exact: 0/1 permutation matrices
    assert np.array_equal(Pi0 @ Pi0.T, np.eye(K))  # exact: 0/1 permutation matrices
    assert np.array_equal(sum(np.linalg.matrix_power(Pi0, k) for k in range(1, K + 1)), np.ones((K, K)))  # exact: 0/1 permutation matrices
    for R in range(6):
        assert ring.is_circulant(ring.matrix_power(Pi, R), tol=1e-14)


def test_is_circulant_detects_a_non_circulant_matrix():
    A = np.eye(4)
    A[0, 1] = 0.5
    assert not ring.is_circulant(A)


@pytest.mark.parametrize("K,p", [(5, 0.7), (6, 0.5), (7, 0.9), (8, 0.2)])
def test_eigenvalues_closed_form(K, p):
    lam = ring.eigenvalues(K, p)
    numeric = np.linalg.eigvals(ring.transition_matrix(K, p))
    assert np.allclose(np.sort_complex(np.round(lam, 12)), np.sort_complex(np.round(numeric, 12)), atol=1e-10)
    k = np.arange(K)
    assert np.allclose(np.abs(lam) ** 2, 1 - 4 * p * (1 - p) * np.sin(2 * np.pi * k / K) ** 2)
    unit = np.isclose(np.abs(lam), 1.0)
    assert unit.sum() == (1 if K % 2 else 2)


def test_sample_walks_moves_and_start():
    states = ring.sample_walks(7, 0.8, 30, 4000, seed=3)
    steps = torch.remainder(states[:, 1:] - states[:, :-1], 7)
    assert set(steps.unique().tolist()) <= {1, 6}
    assert abs(float((steps == 1).double().mean()) - 0.8) < 0.01
    counts = torch.bincount(states[:, 0], minlength=7).double() / 4000
    assert float((counts - 1 / 7).abs().max()) < 0.03
    assert torch.equal(states, ring.sample_walks(7, 0.8, 30, 4000, seed=3))  # exact: integer states, same seed


def test_enumerate_walks_probabilities():
    states, probs = ring.enumerate_walks(5, 0.7, 6)
    assert states.shape == (5 * 2**5, 6) and float(probs.sum()) == pytest.approx(1.0, abs=1e-14)
    assert len({tuple(s) for s in states.tolist()}) == states.shape[0]
    det, pd = ring.enumerate_walks(6, 1.0, 97)
    assert det.shape == (6, 97) and torch.all(torch.remainder(det[:, 1:] - det[:, :-1], 6) == 1)
    assert torch.allclose(pd, torch.full((6,), 1 / 6))


def test_bayes_rule_by_simulation():
    d = wd.walk_data(6, 0.7, 12, 20000, seed=4)
    pred = prediction.predict(ring.bayes_scores(d.last, 6, 0.7))
    assert abs(prediction.accuracy(pred, d.labels) - ring.bayes_accuracy(0.7)) < 0.015
    assert ring.bayes_accuracy(0.2) == pytest.approx(0.8)


def test_tie_rule_is_smallest_index():
    scores = torch.tensor([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0], [3.0, 3.0, 3.0], [0.0, -1.0, 5.0]])
    assert prediction.predict(scores).tolist() == [0, 1, 0, 2]
    with pytest.raises(ValueError, match="NaN"):
        prediction.predict(torch.tensor([[float("nan"), 1.0]]))


# -- positions -------------------------------------------------------------------------
def test_positional_gram_matrices():
    P = positions.positional_matrix(97, 1000, "sin")
    G = positions.gram(P)
    assert torch.allclose(torch.diagonal(G), torch.full((97,), 500.0), atol=1e-9)
    off = G - torch.diag(torch.diagonal(G))
    assert 0 < float(off.abs().max()) < 1e-9  # orthogonal up to round-off, not exactly
    E = positions.positional_matrix(97, 1000, "exact")
    GE = positions.gram(E)
    assert torch.equal(GE - torch.diag(torch.diagonal(GE)), torch.zeros(97, 97))  # exact: one nonzero per column, other products exact zeros
    assert torch.unique(torch.diagonal(GE)).numel() == 1  # exact: each is fl(a * a) plus exact zeros
    assert float(GE[0, 0]) == pytest.approx(500.0, abs=1e-12)
    assert torch.equal(positions.positional_matrix(5, 8, "none"), torch.zeros(8, 5))  # exact: "none" is torch.zeros


# -- data ------------------------------------------------------------------------------
def test_token_data_round_trip_and_generic_vocabulary():
    d = wd.walk_data(5, 0.6, 9, 50, seed=0)
    X = d.one_hot()
    assert X.shape == (50, 5, 9) and torch.all(X[:, :, -1] == 0) and torch.all(X[:, :, :-1].sum(1) == 1)  # exact: one-hot data
    back = wd.TokenData.from_one_hot(X, d.labels)
    assert torch.equal(back.tokens, d.tokens) and back.K == 5 and back.N == 9  # exact: integer tokens
    # any vocabulary size, e.g. 19 words and 16 tokens + the query slot
    tokens = torch.randint(0, 19, (3, 16))
    X19 = torch.zeros(3, 19, 17)
    X19[torch.arange(3)[:, None], tokens, torch.arange(16)[None, :]] = 1.0
    qa = wd.TokenData.from_one_hot(X19, [0, 1, 0])
    assert qa.K == 19 and qa.N == 17 and torch.equal(qa.tokens, tokens)  # exact: integer tokens
    assert torch.allclose(qa.token_average().sum(1), torch.ones(3))


def test_population_weights_are_probabilities():
    pop = wd.walk_population(6, 0.5, 7)
    assert pop.B == 6 * 64 and float(pop.weights.sum()) == pytest.approx(1.0)


# -- losses ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", walks_model.LOSSES)
def test_loss_gradients_match_autograd(kind):
    gen = torch.Generator().manual_seed(0)
    f = (torch.rand(7, 4, generator=gen) + 0.1).requires_grad_(True)
    y = torch.randint(0, 4, (7,), generator=gen)
    vals = walks_model.loss_values(f, y, kind, 0.1)
    (auto,) = torch.autograd.grad(vals.sum(), f)
    assert torch.allclose(auto, walks_model.loss_gradient(f.detach(), y, kind, 0.1), atol=1e-14)


# -- model -----------------------------------------------------------------------------
SMALL = dict(K=5, N=9, M=20)
OPTION_CASES = [
    dict(),
    dict(positions="exact"),
    dict(positions="none"),
    dict(normalize="keys"),
    dict(normalize="keys_and_query", logit_scale="inv_sqrt_d"),
    dict(residual=True, loss="squared"),
    dict(loss="cross_entropy", reduction="sum"),
    dict(hidden=4),
]


@pytest.mark.parametrize("options", OPTION_CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "paper")
def test_fast_simulation_matches_full_W_autograd_reference(options):
    """Same GD trajectory (V, q = W x~_N, loss) for 8 steps, float64, both from the same initial W."""
    model = WalkTransformer(**SMALL, **options)
    data = wd.walk_data(5, 0.7, 9, 30, seed=1)
    init = "gaussian" if options.get("hidden") else "zero"
    full = model.init_full(init, sigma=0.1, seed=3)
    lr = 0.05 if options.get("reduction") == "sum" else 1.0
    fast = model.train(model.reduce(full), data, steps=8, lr=lr, record={"V": lambda p: p["V"].clone(), "q": lambda p: p["q"].clone()})
    ref = walks_model.literal_train(model, full, data, steps=8, lr=lr, record={"V": lambda p: p["V"].clone(), "q": lambda p: p["W"] @ model.x_query})
    scale_q = max(1.0, float(np.abs(ref["q"]).max()))
    assert np.abs(fast["V"] - ref["V"]).max() < 1e-12 * max(1.0, float(np.abs(ref["V"]).max()))
    assert np.abs(fast["q"] - ref["q"]).max() < 1e-12 * scale_q
    assert np.abs(fast["loss"] - ref["loss"]).max() < 1e-12 * max(1.0, float(np.abs(ref["loss"]).max()))
    # the run did move (so the comparison is not between two frozen states)
    assert np.abs(ref["V"][-1] - ref["V"][0]).max() > 1e-3


def test_gaussian_init_trajectory_matches_reference_with_every_option():
    model = WalkTransformer(K=4, N=7, M=12, normalize="keys", residual=True, loss="squared")
    data = wd.walk_data(4, 0.3, 7, 20, seed=5)
    full = model.init_full("gaussian", sigma=0.2, seed=9)
    schedule = lambda t: 0.5 / (1 + t)  # noqa: E731
    fast = model.train(model.reduce(full), data, steps=6, lr=schedule)
    ref = walks_model.literal_train(model, full, data, steps=6, lr=schedule)
    assert torch.allclose(fast.params["V"], ref.params["V"], atol=1e-13)
    assert torch.allclose(fast.params["q"], ref.params["W"] @ model.x_query, atol=1e-13)


@pytest.mark.parametrize("loss, sigma", [("log", 0.02), ("squared", 0.3), ("cross_entropy", 0.3)])
def test_closed_form_gradients_match_autograd_of_fast_forward(loss, sigma):
    model = WalkTransformer(K=6, N=13, M=30, normalize="keys_and_query", loss=loss)
    data = wd.walk_data(6, 0.6, 13, 40, seed=2)
    params = model.init("gaussian", sigma=sigma, seed=1)
    live = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    loss = model.loss(live, data)
    gV, gq = torch.autograd.grad(loss, [live["V"], live["q"]])
    closed_loss, grads = model.loss_and_grads(params, data)
    assert float(closed_loss) == pytest.approx(float(loss.detach()), abs=1e-14)
    assert torch.allclose(grads["V"], gV, atol=1e-14)
    assert torch.allclose(grads["q"], model.query_norm2 * gq, atol=1e-12)


def test_full_W_reconstruction_and_blocks():
    model = WalkTransformer(K=5, N=9, M=20)
    data = wd.walk_data(5, 0.7, 9, 30, seed=1)
    hist = model.train(model.init(), data, steps=3, lr=1.0)
    W = model.full_W(hist.params["q"])
    ref = walks_model.literal_train(model, model.init_full(), data, steps=3, lr=1.0)
    assert torch.allclose(W, ref.params["W"], atol=1e-13)
    K = 5
    assert torch.all(W[:, :K] == 0)  # exact: product with the zero token part of x~_N: W_11, W_21 never move
    with pytest.raises(ValueError, match="query"):
        WalkTransformer(K=5, N=9, M=20, positions="none").full_W(hist.params["q"])


def test_reduction_sum_is_B_times_mean_and_residual_is_a_no_op():
    data = wd.walk_data(5, 0.7, 9, 30, seed=1)
    params = WalkTransformer(**SMALL).init("gaussian", sigma=0.02, seed=0)
    mean = WalkTransformer(**SMALL).loss(params, data)
    total = WalkTransformer(**SMALL, reduction="sum").loss(params, data)
    assert math.isfinite(float(mean))
    assert float(total) == pytest.approx(30 * float(mean), rel=1e-14)
    plain = WalkTransformer(**SMALL).forward(params, data)
    skip = WalkTransformer(**SMALL, residual=True).forward(params, data)
    assert torch.equal(plain, skip)  # exact: the residual adds an exact zero


def test_init_is_seeded_and_reduce_is_W_times_query():
    model = WalkTransformer(**SMALL)
    a, b = model.init_full("gaussian", sigma=0.01, seed=4), model.init_full("gaussian", sigma=0.01, seed=4)
    assert all(torch.equal(a[k], b[k]) for k in a)  # exact: the same seeded draw twice
    assert abs(float(a["W"].std()) - 0.01) < 0.002
    assert torch.equal(model.reduce(a)["q"], a["W"] @ model.x_query)  # exact: the same product twice in one process
    assert all(float(t.abs().max()) == 0 for t in model.init().values())  # exact: zero init


def test_float32_option_and_accuracies():
    model = WalkTransformer(K=5, N=9, M=20, dtype="float32")
    params = model.init()
    data = wd.walk_data(5, 0.7, 9, 30, seed=1)
    assert model.forward(params, data).dtype == torch.float32
    # zero init: every score ties, the rule predicts node 0, accuracy = frequency of label 0
    assert model.accuracy(params, data) == pytest.approx(float((data.labels == 0).double().mean()))
    assert model.conditional_accuracy(params, data, 0.7) == pytest.approx(float(ring.transition_matrix(5, 0.7)[data.last.numpy(), 0].mean()))


# -- validation ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, exc, word",
    [
        (lambda: ring.transition_matrix(6, 1.5), ValueError, "p"),
        (lambda: ring.transition_matrix(2, 0.5), ValueError, "K"),
        (lambda: ring.sample_walks(6, 0.5, 1, 10), ValueError, "N"),
        (lambda: ring.sample_walks(6, 0.5, 10, 0), ValueError, "n"),
        (lambda: ring.enumerate_walks(6, 0.5, 40), ValueError, "N"),
        (lambda: ring.matrix_power(np.ones((2, 3)), 2), ValueError, "square"),
        (lambda: positions.positional_matrix(10, 10, "sin"), ValueError, "M"),
        (lambda: positions.positional_matrix(10, 5, "exact"), ValueError, "M"),
        (lambda: positions.positional_matrix(10, 50, "cos"), ValueError, "positions"),
        (lambda: ModelConfig(K=6, N=97, normalize="query"), ValueError, "normalize"),
        (lambda: ModelConfig(K=6, N=97, logit_scale=2.0), ValueError, "logit_scale"),
        (lambda: ModelConfig(K=6, N=97, loss="hinge"), ValueError, "loss"),
        (lambda: ModelConfig(K=6, N=97, reduction="max"), ValueError, "reduction"),
        (lambda: ModelConfig(K=6, N=97, epsilon=-1.0), ValueError, "epsilon"),
        (lambda: ModelConfig(K=6, N=97, residual=1), TypeError, "residual"),
        (lambda: ModelConfig(K=6.0, N=97), TypeError, "K"),
        (lambda: ModelConfig(K=6, N=97, dtype="float16"), ValueError, "dtype"),
        (lambda: WalkTransformer(K=6, N=97).init("uniform"), ValueError, "init"),
        (lambda: WalkTransformer(K=6, N=97).init("gaussian", sigma=-0.1), ValueError, "sigma"),
        (lambda: wd.TokenData.from_one_hot(torch.ones(2, 3, 4), [0, 1]), ValueError, "one-hot"),
        (lambda: wd.TokenData(torch.zeros(2, 3, dtype=torch.int64), torch.zeros(2, dtype=torch.int64), torch.tensor([0.5, 0.6]), 3), ValueError, "weights"),
        (lambda: wd.TokenData(torch.full((2, 3), 5), torch.zeros(2, dtype=torch.int64), torch.tensor([0.5, 0.5]), 3), ValueError, "tokens"),
    ],
)
def test_validation_errors_name_the_parameter(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


def test_model_rejects_mismatched_data():
    model = WalkTransformer(K=6, N=97)
    with pytest.raises(ValueError, match="N=9"):
        model.forward(model.init(), wd.walk_data(6, 0.5, 9, 4))
    with pytest.raises(TypeError, match="TokenData"):
        model.forward(model.init(), torch.zeros(3, 6, 97))


def test_paper_size_step_never_builds_the_token_position_matrix():
    """The fast step never materialises X~ (B (K+M) N numbers): no tensor it makes is a tenth of that size."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class LargestTensor(TorchDispatchMode):
        largest = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in torch.utils._pytree.tree_leaves(out):
                if isinstance(t, torch.Tensor):
                    LargestTensor.largest = max(LargestTensor.largest, t.numel())
            return out

    K, N, M, B = 6, 97, 1000, 1000
    model = WalkTransformer(K=K, N=N, M=M)
    data = wd.walk_data(K, 0.5, N, B, seed=0)
    params = model.init()
    with LargestTensor():
        loss, grads = model.loss_and_grads(params, data)
    x_tilde = B * (K + M) * N
    assert 0 < LargestTensor.largest <= x_tilde // 10, (LargestTensor.largest, x_tilde)
    assert set(grads) == set(params) and torch.isfinite(loss)
    assert math.isclose(model.query_norm2, 500.0, rel_tol=1e-12)


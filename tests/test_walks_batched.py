"""The batched walk trainer (onelayer.studies.walks.batched) against separate WalkTransformer.train runs, and its validation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.studies.walks import batched as sw
from onelayer.walks.data import walk_data
from onelayer.walks.model import WalkTransformer

K, N, M, n = 6, 25, 125, 200
PS = (0.5, 0.7, 0.9)
SEEDS = (0, 1, 7)


@pytest.fixture(autouse=True)
def _float64():
    torch.set_default_dtype(torch.float64)


def _separate(model, ps, seeds, lrs, steps, init="zero", init_seeds=(0, 0, 0), sigma=0.01):
    runs = []
    for p, s, lr, i in zip(ps, seeds, lrs, init_seeds):
        data = walk_data(K, p, N, n, seed=s)
        runs.append(model.train(model.init(init, sigma=sigma, seed=i), data, steps=steps, lr=lr))
    return runs


@pytest.mark.parametrize("options, init, lrs", [
    ({}, "zero", (1.0, 0.5, 2.0)),  # the paper's setting, one step size per member
    ({"hidden": 4, "loss": "squared", "reduction": "sum"}, "gaussian", (0.01, 0.02, 0.005)),
    ({"normalize": "keys_and_query", "logit_scale": "inv_sqrt_d", "loss": "cross_entropy"}, "gaussian", (0.5, 1.0, 2.0)),
    ({"positions": "exact", "residual": True, "normalize": "keys"}, "zero", (1.0, 1.0, 1.0)),
])
def test_batched_training_reproduces_separate_runs(options, init, lrs):
    model = WalkTransformer(K=K, N=N, M=M, **options)
    data = sw.walk_batched_data(K, N, n, ps=PS, seeds=SEEDS)
    init_seeds = (3, 4, 5)
    hist = sw.train_batched(model, data, steps=15, lr=torch.tensor(lrs), init=init, init_seeds=init_seeds)
    runs = _separate(model, PS, SEEDS, lrs, 15, init=init, init_seeds=init_seeds)
    moved = 0.0
    for b, run in enumerate(runs):
        member = hist.member(b)
        np.testing.assert_allclose(member["loss"], run["loss"], rtol=0, atol=1e-10)
        for name, value in run.params.items():
            assert float((member.params[name] - value).abs().max()) < 1e-10, (b, name)
            moved = max(moved, float(value.abs().max()))
    assert moved > 0.05  # the runs did train


def test_records_match_the_single_model():
    model = WalkTransformer(K=K, N=N, M=M)
    train = sw.walk_batched_data(K, N, n, ps=PS, seeds=SEEDS)
    test = sw.walk_batched_data(K, N, 150, ps=PS, seeds=[s + 1000 for s in SEEDS])
    hist = sw.train_batched(model, train, steps=4, record=sw.attention_records(model, test, PS), snapshot_at=(2,))
    for b, p in enumerate(PS):
        data, test_b = train.member(b), test.member(b)
        single = model.train(model.init(), data, steps=4, record={
            "parent_attention": lambda prm: float(model.attention(prm, test_b)[:, -2].mean()),
            "accuracy": lambda prm: model.accuracy(prm, test_b),
            "conditional_accuracy": lambda prm, p=p: model.conditional_accuracy(prm, test_b, p),
        })
        for name in ("parent_attention", "accuracy", "conditional_accuracy"):
            np.testing.assert_allclose(hist[name][:, b], single[name], rtol=0, atol=1e-12, err_msg=name)
    assert hist["parent_attention"][-1].min() > 0.9  # the parent is selected by step 4 at this size
    assert set(hist.snapshots) == {2}


def test_chunking_does_not_change_the_result():
    model = WalkTransformer(K=K, N=N, M=M)
    data = sw.walk_batched_data(K, N, n, ps=PS, seeds=SEEDS)
    one = sw.train_batched(model, data, steps=6, chunk=1)
    all_ = sw.train_batched(model, data, steps=6, chunk=3)
    for name in one.params:
        assert float((one.params[name] - all_.params[name]).abs().max()) < 1e-12


def test_closed_form_gradients_match_autograd():
    model = WalkTransformer(K=K, N=N, M=M, hidden=5)
    data = sw.walk_batched_data(K, N, 50, ps=(0.6, 0.8), seeds=(2, 3))
    params = sw.init_params(model, 2, "gaussian", sigma=0.1, seeds=(0, 1))
    loss, grads = sw.loss_and_grads(model, params, data)
    live = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    auto = torch.autograd.grad(sw.losses_per_member(model, live, data).sum(), [live[k] for k in live])
    np.testing.assert_allclose(loss, sw.losses_per_member(model, params, data), rtol=0, atol=1e-14)
    for (name, g_auto) in zip(live, auto):
        factor = model.query_norm2 if name == "q" else 1.0
        assert float((grads[name] - factor * g_auto).abs().max()) < 1e-10, name


def test_init_params_match_the_single_model():
    model = WalkTransformer(K=K, N=N, M=M)
    params = sw.init_params(model, 3, "gaussian", sigma=0.05, seeds=(4, 5, 6))
    for b, s in enumerate((4, 5, 6)):
        single = model.init("gaussian", sigma=0.05, seed=s)
        for name in single:
            assert torch.equal(params[name][b], single[name])  # exact: the same seeded model.init in one process
    zero = sw.init_params(model, 2)
    assert zero["V"].shape == (2, K, K) and zero["q"].shape == (2, K + M) and not zero["q"].any()


def test_batched_data_stack_and_member_round_trip():
    datas = [walk_data(K, 0.7, N, 30, seed=s) for s in (0, 1)]
    stacked = sw.BatchedData.stack(datas)
    assert (stacked.B, stacked.n, stacked.N) == (2, 30, N)
    assert torch.equal(stacked.last, stacked.tokens[:, :, -1])  # exact: integer tokens
    for b in range(2):
        m = stacked.member(b)
        assert torch.equal(m.tokens, datas[b].tokens) and torch.equal(m.labels, datas[b].labels)  # exact: integer tokens and labels
    assert torch.equal(sw.walk_batched_data(K, N, 30, ps=0.7, seeds=(0, 1)).tokens, stacked.tokens)  # exact: integer tokens, same seeds


# -- validation ----------------------------------------------------------------------------------------------
def test_batched_data_validation():
    good = walk_data(K, 0.5, N, 10, seed=0)
    t, y, w = good.tokens[None], good.labels[None], good.weights[None]
    with pytest.raises(TypeError, match="tokens"):
        sw.BatchedData(t[0], y, w, K)
    with pytest.raises(TypeError, match="labels"):
        sw.BatchedData(t, y[0], w, K)
    with pytest.raises(TypeError, match="weights"):
        sw.BatchedData(t, y, w.float(), K)
    with pytest.raises(ValueError, match="lie in"):
        sw.BatchedData(t, y, w, 3)
    with pytest.raises(ValueError, match="sum to 1"):
        sw.BatchedData(t, y, 2 * w, K)
    with pytest.raises(ValueError, match="at least one"):
        sw.BatchedData.stack([])
    with pytest.raises(ValueError, match="datas\\[1\\]"):
        sw.BatchedData.stack([good, walk_data(K, 0.5, N, 11, seed=0)])
    with pytest.raises(TypeError, match="datas\\[0\\]"):
        sw.BatchedData.stack([t])
    with pytest.raises(ValueError, match="b must be"):
        sw.BatchedData.stack([good]).member(1)


def test_walk_batched_data_validation():
    with pytest.raises(ValueError, match="same number of members"):
        sw.walk_batched_data(K, N, 10, ps=(0.5, 0.6), seeds=(0, 1, 2))
    with pytest.raises(ValueError, match="ps\\[1\\]"):
        sw.walk_batched_data(K, N, 10, ps=(0.5, 1.5))
    with pytest.raises(ValueError, match="seeds\\[0\\]"):
        sw.walk_batched_data(K, N, 10, seeds=(-1,))
    with pytest.raises(TypeError, match="ps"):
        sw.walk_batched_data(K, N, 10, ps="0.5")
    with pytest.raises(ValueError, match="K must be"):
        sw.walk_batched_data(2, N, 10)


def test_trainer_validation():
    model = WalkTransformer(K=K, N=N, M=M)
    data = sw.walk_batched_data(K, N, 10, ps=(0.5, 0.7), seeds=(0, 1))
    with pytest.raises(TypeError, match="model"):
        sw.train_batched("model", data, steps=1)
    with pytest.raises(TypeError, match="data"):
        sw.train_batched(model, data.member(0), steps=1)
    with pytest.raises(ValueError, match="the model expects"):
        sw.train_batched(WalkTransformer(K=K, N=N + 1, M=M), data, steps=1)
    with pytest.raises(ValueError, match="steps"):
        sw.train_batched(model, data, steps=-1)
    with pytest.raises(ValueError, match="chunk"):
        sw.train_batched(model, data, steps=1, chunk=0)
    with pytest.raises(ValueError, match="init must be"):
        sw.train_batched(model, data, steps=1, init="ones")
    with pytest.raises(ValueError, match="seeds"):
        sw.train_batched(model, data, steps=1, init="gaussian", init_seeds=(0, 1, 2))
    with pytest.raises(ValueError, match="params\\['q'\\]"):
        sw.train_batched(model, data, steps=1, params={"V": torch.zeros(2, K, K), "q": torch.zeros(3, K + M)})
    with pytest.raises(ValueError, match="exactly"):
        sw.train_batched(model, data, steps=1, params={"V": torch.zeros(2, K, K)})
    with pytest.raises(ValueError, match="shape \\(B,\\)"):
        sw.train_batched(model, data, steps=1, lr=torch.ones(3))
    with pytest.raises(ValueError, match="ps must be a number or have one value per member"):
        sw.attention_records(model, data, ps=(0.5, 0.6, 0.7))
    with pytest.raises(ValueError, match="members"):
        sw.init_params(model, 0)

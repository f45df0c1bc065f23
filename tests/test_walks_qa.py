"""Section 6 of the walks paper (book/walks/qa.ipynb): the question-answering tasks, and the KL convention."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from onelayer.figures import walks_qa as qa_figures
from onelayer.studies.walks import kl, qa
from onelayer.walks import qa as qa_tasks
from onelayer.walks.model import loss_gradient
from onelayer.walks.data import TokenData


@pytest.fixture(scope="module")
def fig7():
    """The paper's Figure 7 setting, 30 steps for both tasks (the chapter runs 100)."""
    return {t: qa.run(qa.setup_task(t), steps=30) for t in qa_tasks.TASKS}


# -- building the tasks ------------------------------------------------------------------------------------------------

def test_vocabulary_order_and_encoding():
    assert len(qa_tasks.VOCABULARY) == 19 and len(set(qa_tasks.VOCABULARY)) == 19
    assert qa_tasks.word_index("apple") == 0 and qa_tasks.word_index("orange") == 1 and qa_tasks.word_index("do") == 18
    X = qa_tasks.encode(["I", "prefer", "an", "apple"])
    assert X.shape == (19, 5) and X.dtype == torch.float64
    assert torch.equal(X[:, :-1].sum(dim=0), torch.ones(4)) and float(X[:, -1].abs().sum()) == 0.0  # exact: one-hot columns, zero query slot
    assert X[qa_tasks.word_index("prefer"), 1] == 1.0  # exact: one-hot entry


def test_task_populations():
    t1, t2 = qa_tasks.task_population(1), qa_tasks.task_population(2)
    assert (t1.B, t1.N, t1.K) == (32, 17, 19) and (t2.B, t2.N, t2.K) == (2, 19, 19)
    apples = (t1.tokens == 0).sum(dim=1)
    assert torch.equal(t1.labels, torch.where(apples >= 3, 0, 1))  # exact: integer labels
    assert int((t1.labels == 0).sum()) == 16
    assert t2.labels.tolist() == [0, 1]
    # Task 2: the two questions are the same multiset of words, in different positions 8 and 11 (1-based)
    diff = torch.nonzero(t2.tokens[0] != t2.tokens[1]).flatten().tolist()
    assert diff == [7, 10]


def test_task_data_sampling_is_seeded_and_uniform():
    a, b = qa_tasks.task_data(1, 500, seed=3), qa_tasks.task_data(1, 500, seed=3)
    assert torch.equal(a.tokens, b.tokens) and a.B == 500  # exact: integer tokens
    assert abs(float((a.labels == 0).double().mean()) - 0.5) < 0.1
    assert float(a.weights.sum()) == pytest.approx(1.0)


def test_token_average_gaps():
    assert qa_tasks.average_gap(2) == 0.0  # exact: equal integer counts over the same N - 1
    assert qa_tasks.average_gap(1) == pytest.approx(1 / 16)


def test_qa_validation_errors():
    with pytest.raises(ValueError, match="word"):
        qa_tasks.encode(["banana"])
    with pytest.raises(ValueError, match="words"):
        qa_tasks.encode([])
    with pytest.raises(ValueError, match="task"):
        qa_tasks.task_population(3)
    with pytest.raises(ValueError, match="n must"):
        qa_tasks.task_data(1, 0)
    with pytest.raises(ValueError, match="normalize"):
        qa.setup_task(1, normalize="query")
    with pytest.raises(ValueError, match="sigma"):
        qa_figures.explorer(sigma=-1.0, steps=2)
    with pytest.raises(ValueError, match="histories"):
        qa_figures.figure_curves({})


# -- the claims of the chapter ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("normalize", ["keys_and_query", "none"])
def test_lemma_task2_symmetry_from_zero(normalize):
    """From zero the two Task-2 questions get identical outputs at every step (our lemma), up to round-off.

    Not bit for bit: the two questions sum the same numbers in another order, which gives an exact 0 on
    some CPUs and a few 1e-17 on others (5.6e-17 at step 14 on one Xeon with sin positions).
    """
    exp = qa.setup_task(2, normalize=normalize)
    hist = qa.run(exp, steps=40, init="zero")
    assert np.all(hist["output_gap"] < 1e-12)
    shares = [float((exp.test.labels == y).double().mean()) for y in (0, 1)]
    assert min(abs(hist.final("test_accuracy") - s) for s in shares) < 1e-12


def test_figure7_task1_learned_task2_not(fig7):
    h1, h2 = fig7[1], fig7[2]
    assert h1.at("test_accuracy", 5) == pytest.approx(1.0)
    assert h1.final("train_accuracy") == pytest.approx(1.0)
    # Task 2: the output gap is tiny and shrinking, the accuracy is the share of one answer
    assert h2["output_gap"][0] < 1e-4 and h2["output_gap"][-1] < h2["output_gap"][0]
    test = qa.setup_task(2).test
    shares = [float((test.labels == y).double().mean()) for y in (0, 1)]
    assert min(abs(h2.final("test_accuracy") - s) for s in shares) < 1e-12
    # KL convention: one-hot truth, so the mean KL is -log P_hat_y; Task 1's falls but stays well above 0
    assert h1["kl"][-1] < h1["kl"][0] and 0.3 < h1["kl"][-1] < 1.0
    assert h2.final("kl") == pytest.approx(math.log(2), abs=0.1)


def test_task1_attention_stays_spread(fig7):
    """Task 1 is solved by V reading the average: attention on the five fruits stays near 5/17."""
    fa = fig7[1]["fruit_attention"]
    assert abs(fa[0] - 5 / 17) < 0.02 and fa[-1] < 0.5


def test_task1_needs_query_normalisation():
    hist = qa.run(qa.setup_task(1, normalize="keys"), steps=30, record_every=30)
    assert hist.final("test_accuracy") < 0.6
    assert hist.final("fruit_attention") < 0.05


def test_relu_variant_zero_is_a_fixed_point_and_task1_not_learned():
    frozen = qa.run(qa.setup_task(1, hidden=19), steps=3, init="zero", record_every=3)
    assert all(float(v.abs().max()) == 0.0 for v in frozen.params.values())  # exact: every gradient is a product with an exact zero
    h1 = qa.run(qa.setup_task(1, hidden=19), steps=60, record_every=20)
    h2 = qa.run(qa.setup_task(2, hidden=19), steps=60, record_every=20)
    assert h1.final("test_accuracy") < 0.6  # our reading of Appendix F.2 does not learn Task 1 (paper: ~100 %)
    assert h2.final("test_accuracy") < 0.6


def test_explorer_and_widget():
    fig = qa_figures.explorer(sigma=0.0, lr=0.1, steps=3)
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == 2
    plt.close(fig)
    pytest.importorskip("ipywidgets")
    box = qa_figures.explorer_widget()
    assert len(box.cache) == 1
    plt.close("all")


# -- the KL convention (onelayer.studies.walks.kl) ------------------------------------------------------------------------------

def test_normalize_scores():
    f = torch.tensor([[2.0, 1.0, 1.0, -0.5], [0.0, 0.0, 0.0, 0.0]])
    P = kl.normalize_scores(f)
    assert torch.allclose(P.sum(dim=1), torch.ones(2, dtype=torch.float64))
    assert P[0, 0] == pytest.approx((2 + 1e-6) / (4 + 4e-6)) and P[0, 3] == pytest.approx(1e-6 / (4 + 4e-6))
    assert torch.allclose(P[1], torch.full((4,), 0.25, dtype=torch.float64))
    S = kl.normalize_scores(f, method="softmax")
    assert torch.allclose(S, torch.softmax(f.double(), dim=1))


def test_kl_values():
    truth = torch.tensor([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], dtype=torch.float64)
    f = torch.tensor([[3.0, 3.0, 0.0], [1.0, 1.0, 2.0]], dtype=torch.float64)
    d = kl.kl_divergence(truth, f)
    P_hat = kl.normalize_scores(f)
    assert d[0] == pytest.approx(float(0.5 * math.log(0.5 / P_hat[0, 0]) * 2), abs=1e-12)
    assert d[1] == pytest.approx(-math.log(P_hat[1, 2]), abs=1e-12)
    assert kl.mean_kl(truth, f) == pytest.approx(float(d.mean()))
    assert kl.mean_kl(truth, f, torch.tensor([1.0, 0.0], dtype=torch.float64)) == pytest.approx(float(d[0]))
    # exact scores give KL ~ 0 (only the floor remains)
    assert float(kl.kl_divergence(truth, 10 * truth).max()) < 1e-6


def test_truths():
    pop = qa_tasks.task_population(1)
    L = kl.label_truth(pop)
    assert torch.equal(L.argmax(dim=1), pop.labels) and torch.allclose(L.sum(dim=1), torch.ones(pop.B, dtype=torch.float64))  # exact: integer argmax
    walks = TokenData.from_states(torch.tensor([[0, 1, 2], [3, 2, 1]]), 4)
    Pi = np.full((4, 4), 0.25)
    assert torch.allclose(kl.walk_truth(walks, Pi), torch.full((2, 4), 0.25, dtype=torch.float64))


def test_kl_validation_errors():
    f = torch.zeros((2, 3))
    with pytest.raises(ValueError, match="method"):
        kl.normalize_scores(f, method="abs")
    with pytest.raises(ValueError, match="floor"):
        kl.normalize_scores(f, floor=0.0)
    with pytest.raises(TypeError, match="f must"):
        kl.normalize_scores(torch.zeros(3))
    with pytest.raises(ValueError, match="P_true"):
        kl.kl_divergence(torch.ones((2, 2)) / 2, f)
    with pytest.raises(ValueError, match="probability"):
        kl.kl_divergence(torch.ones((2, 3)), f)
    with pytest.raises(ValueError, match="weights"):
        kl.mean_kl(torch.ones((2, 3)) / 3, f, torch.ones(3) / 3)
    with pytest.raises(ValueError, match="Pi"):
        kl.walk_truth(qa_tasks.task_population(2), np.eye(3))
    with pytest.raises(TypeError, match="data"):
        kl.label_truth("not data")


# -- the bias option (issue 13, item 5(ii)) ------------------------------------------------------------------------
def test_bias_none_is_the_papers_model_and_its_gradient_is_the_closed_form():
    exp = qa.setup_task(1, n_train=64, n_test=64)
    params = qa.bias_init(exp, "none", init="gaussian", sigma=0.1, seed=3)
    loss, grads = qa.bias_loss_and_grads(exp.model, params, exp.train)
    loss_cf, grads_cf = exp.model.loss_and_grads(params, exp.train)
    assert torch.allclose(loss, loss_cf, rtol=1e-12, atol=0)
    for name in ("V", "q"):
        assert torch.allclose(grads[name], grads_cf[name], rtol=1e-9, atol=1e-12), name
    h_ref = qa.run(exp, steps=5, sigma=0.1, seed=3)
    h_bias = qa.bias_run(exp, "none", steps=5, sigma=0.1, seed=3)
    assert np.allclose(h_ref["test_accuracy"], h_bias["test_accuracy"])


def test_output_bias_gradient_is_the_summed_loss_gradient():
    exp = qa.setup_task(2, n_train=32, n_test=32)
    params = qa.bias_init(exp, "both", init="gaussian", sigma=0.1, seed=1)
    params["b"] = torch.linspace(0.1, 0.5, exp.model.config.K, dtype=torch.float64)
    params["beta"] = torch.linspace(-0.3, 0.3, exp.model.config.N, dtype=torch.float64)
    _, grads = qa.bias_loss_and_grads(exp.model, params, exp.train)
    f = qa.bias_forward(exp.model, params, exp.train)
    c = exp.model.config
    G = loss_gradient(f, exp.train.labels, c.loss, c.epsilon) * exp.train.weights[:, None]
    assert torch.allclose(grads["b"], G.sum(0), rtol=1e-10, atol=1e-14)
    # the attention bias: a finite difference of the loss along beta
    d = torch.zeros(c.N, dtype=torch.float64)
    d[3] = 1e-6
    lp = qa.bias_loss_and_grads(exp.model, {**params, "beta": params["beta"] + d}, exp.train)[0]
    lm = qa.bias_loss_and_grads(exp.model, {**params, "beta": params["beta"] - d}, exp.train)[0]
    assert abs(float((lp - lm) / 2e-6) - float(grads["beta"][3])) < 1e-6


@pytest.mark.parametrize("bias", ["output", "attention", "both"])
def test_task2_symmetry_survives_every_bias_from_zero(bias):
    """From zero init the two Task-2 sentences (one bag of words) get the same scores (to round-off) for ever: accuracy = label share."""
    exp = qa.setup_task(2, n_train=200, n_test=200)
    h = qa.bias_run(exp, bias, steps=20, init="zero", record_every=10)
    # The two sentences sum the same numbers in other orders (scatter_add over their positions, then BLAS), so their
    # scores agree to round-off only: [0, 2.8e-17, 5.6e-17] on an AMD EPYC. 1e-12 of the scores' scale is thousands
    # of ulp, and far below the gap of a model that tells them apart (of the order of the scores).
    scale = max(1.0, float(qa.bias_forward(exp.model, h.params, qa_tasks.task_population(2)).abs().max()))
    assert np.all(h["output_gap"] <= 1e-12 * scale)  # tol: round-off of the scores, see above
    share = float((exp.test.labels == qa_tasks.word_index("apple")).to(torch.float64).mul(exp.test.weights).sum())
    assert h.final("test_accuracy") in (pytest.approx(share), pytest.approx(1 - share))


def test_bias_option_is_validated():
    exp = qa.setup_task(1, n_train=8, n_test=8)
    with pytest.raises(ValueError, match="bias"):
        qa.bias_init(exp, "query")
    with pytest.raises(ValueError, match="bias"):
        qa.bias_run(exp, "everywhere", steps=1)
    params = qa.bias_init(exp, "both")
    assert set(params) == {"V", "q", "b", "beta"} and float(params["b"].abs().sum()) == 0.0  # exact: biases start as torch.zeros

"""Unit tests of the R-B layout, the single-head backward model, its decoding and figures."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from onelayer.seeding import generator, numpy_rng
from onelayer.figures import trees_backward as figs
from onelayer.trees.backward import layout
from onelayer.trees.backward import model
from onelayer.trees.backward import dynamics
from onelayer.studies.trees.inputs import gaussian_embeddings
from onelayer.trees.shared import data, embeddings


def reference_predictions(B, A, batch):
    """The literal formula (:func:`model.literal_predict`) on materialised tokens, one tree and one query at a time."""
    X = layout.token_vectors(batch, A)
    d = A.shape[0]
    out = torch.zeros(batch.size, batch.steps, 2 * d, dtype=B.dtype)
    for b in range(batch.size):
        for k in range(batch.steps):
            if batch.target_mask[b, k]:
                out[b, k] = model.literal_predict(B, X[b], int(batch.query[b, k]))
    return out


def test_worked_example_tokens():
    t = data.example_tree()
    prompt, targets = layout.backward_tokens(t, 4, shuffle=False)
    assert [layout.token_text(p, 9) for p in prompt[-2:]] == ["[5;5]", "[7;-]"]
    assert [layout.token_text(p, 9) for p in targets] == ["[3;7]", "[5;3]"]
    _, with_eos = layout.backward_tokens(t, 4, shuffle=False, eos=True)
    assert layout.token_text(with_eos[-1], 9) == "[5;5]"
    assert layout.path_from_targets(with_eos, eos=True).tolist() == [7, 3, 5]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), root_token=st.booleans(), eos=st.booleans())
def test_layout_properties(seed, root_token, eos):
    if eos and not root_token:
        with pytest.raises(ValueError, match="eos"):
            layout.backward_tokens(data.example_tree(), 4, numpy_rng(0), root_token=False, eos=True)
        return
    rng = numpy_rng(seed)
    tree = data.random_tree(20, rng, max_depth=5)
    goal = data.sample_goal(tree, rng, leaves_only=False)
    prompt, targets = layout.backward_tokens(tree, goal, rng, root_token=root_token, eos=eos)
    n_edges = tree.n - 1
    assert prompt.shape == (n_edges + root_token + 1, 2)
    edge_children = prompt[:n_edges, 1]
    assert sorted(edge_children.tolist()) == sorted(np.delete(tree.labels, tree.root).tolist())
    assert layout.path_from_targets(targets, eos=eos).tolist() == tree.labels[tree.path_to_root(goal)].tolist()
    assert targets.shape == (tree.depth_of(goal) + eos, 2)


def test_perfect_batch_matches_single_tree_layout():
    b = layout.perfect_tree_batch(3, 20, 50, numpy_rng(0))
    assert b.length == 16 + 3 - 1 and b.steps == 3 and bool(b.valid.all())
    for i in range(50):
        fst, snd = b.first[i].numpy(), b.second[i].numpy()
        parent_of = {c: p for p, c in zip(fst[:14], snd[:14])}
        assert len(parent_of) == 14 and len(set(fst[:14].tolist()) | set(snd[:14].tolist())) == 15
        path = [int(b.goal[i])]
        while path[-1] in parent_of:
            path.append(parent_of[path[-1]])
        assert path[-1] == int(b.root[i]) and len(path) == 4
        assert b.target_first[i].tolist() == path[1:] and b.target_second[i].tolist() == path[:-1]


@pytest.mark.parametrize("which", ["onehot", "gauss"])
def test_batched_model_equals_literal_formula(which):
    S = 15
    A = embeddings.one_hot_embeddings(S) if which == "onehot" else gaussian_embeddings(S, 18, generator(0))
    B = torch.randn(A.shape[0], A.shape[0], generator=generator(1))
    batch, _ = layout.random_tree_batch(S, 12, numpy_rng(2), max_depth=4)
    pred = model.predict(B, A, batch)
    ref = reference_predictions(B, A, batch)
    assert torch.allclose(pred[batch.target_mask], ref[batch.target_mask], atol=1e-12)
    # loss from masses equals the loss of the literal predictions
    E = embeddings.with_empty(A)
    y = torch.cat([E.T[batch.target_first], E.T[batch.target_second]], -1)
    err = ((ref - y) ** 2).sum(-1)[batch.target_mask]
    assert torch.isclose(model.loss(B, A, batch), 0.5 * err.mean())
    assert torch.isclose(model.loss(B, A, batch, model.LossOptions("sum", False)), err.sum() / batch.size)


def test_padding_does_not_change_a_tree():
    rng = numpy_rng(3)
    trees = [data.random_tree(15, rng, max_depth=4) for _ in range(5)]
    goals = [data.sample_goal(t, rng, leaves_only=False) for t in trees]
    joint = layout.backward_batch(trees, goals, numpy_rng(4), shuffle=False)
    A = embeddings.one_hot_embeddings(15)
    B = torch.randn(15, 15, generator=generator(5))
    for i in range(5):
        alone = layout.backward_batch([trees[i]], [goals[i]], shuffle=False)
        k = int(alone.steps)
        assert torch.allclose(model.predict(B, A, joint)[i, :k], model.predict(B, A, alone)[0])


def test_greedy_decoding_and_accuracies():
    A = embeddings.one_hot_embeddings(31)
    batch, _ = layout.random_tree_batch(31, 64, numpy_rng(6), max_depth=6, eos=True)
    good = model.greedy_decode(10 * torch.eye(31, dtype=torch.float64), A, batch)
    assert good.step_accuracy == 1.0 and good.path_accuracy == 1.0  # exact: means of booleans (integer counts)
    assert np.all(good.accuracy_by_step() == 1.0)  # exact: integer counts over integer counts
    assert model.teacher_forced_accuracy(10 * torch.eye(31, dtype=torch.float64), A, batch) == 1.0  # exact: mean of booleans (integer counts)
    bad = model.greedy_decode(-10 * torch.eye(31, dtype=torch.float64), A, batch)
    assert bad.path_accuracy == 0.0  # exact: mean of booleans (integer counts)
    w = model.correct_key_weight(10 * torch.eye(31, dtype=torch.float64), A, batch)
    assert float(w[batch.target_mask].min()) > 0.99


def test_training_from_zero_lowers_loss():
    A = embeddings.one_hot_embeddings(15)
    run = model.train_backward(A, m=3, steps=30, lr=2.0, batch_size=32, record_every=10)
    assert run["loss"][-1] < run["loss"][0]
    fixed = layout.perfect_tree_batch(3, 15, 16, numpy_rng(0))
    run_fixed = model.train_backward(A, m=3, steps=5, lr=1.0, fixed_batch=fixed)
    assert np.all(np.diff(run_fixed["loss"]) < 0)


def test_validation_errors():
    A = embeddings.one_hot_embeddings(15)
    batch = layout.perfect_tree_batch(2, 15, 2, numpy_rng(0))
    with pytest.raises(ValueError, match="reduction"):
        model.LossOptions(reduction="median")
    with pytest.raises(TypeError, match="half"):
        model.LossOptions(half=1)
    with pytest.raises(ValueError, match="B must"):
        model.loss(torch.zeros(3, 3), A, batch)
    with pytest.raises(ValueError, match="columns"):
        model.loss(torch.zeros(15, 15), embeddings.one_hot_embeddings(16), batch)
    with pytest.raises(TypeError, match="batch"):
        model.loss(torch.zeros(15, 15), A, "batch")
    with pytest.raises(ValueError, match="S must"):
        layout.perfect_tree_batch(3, 10, 2, numpy_rng(0))
    with pytest.raises(ValueError, match="goal must not be the root"):
        layout.backward_tokens(data.example_tree(), 0, numpy_rng(0))
    with pytest.raises(TypeError, match="rng"):
        layout.backward_tokens(data.example_tree(), 4, None)
    with pytest.raises(ValueError, match="targets"):
        layout.path_from_targets(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="one entry per tree"):
        layout.backward_batch([data.example_tree()], [4, 5])
    with pytest.raises(TypeError, match="options"):
        model.train_backward(A, m=2, steps=1, lr=1.0, options="mean")


def test_symmetry_helpers():
    H = dynamics.symmetric_matrix(2.0, -0.5, 5)
    assert dynamics.symmetric_part(H) == pytest.approx((2.0, -0.5))
    assert dynamics.symmetry_residual(H) == pytest.approx(0.0, abs=1e-15)
    H2 = H.clone()
    H2[0, 1] += 1.0
    assert dynamics.symmetry_residual(H2) > 0.1
    assert dynamics.symmetry_residual(torch.zeros(3, 3)) == 0.0  # exact: the explicit 0.0 for a zero matrix
    with pytest.raises(ValueError, match="square"):
        dynamics.symmetric_part(torch.zeros(2, 3))


def test_figures_and_widget_callbacks():
    fig = figs.sample_chain_figure(1, 3)
    assert len(fig.axes) == 2
    plt.close(fig)
    fig = figs.construction_attention_figure(2.0, 0, 4)
    assert fig.axes[0].images[0].get_array().shape[0] >= 1
    plt.close(fig)
    pos = figs.tree_positions(data.example_tree())
    assert pos[0, 0] == pytest.approx(pos[[1, 2], 0].mean()) and pos[3, 1] == -2
    with pytest.raises(ValueError, match="max_depth"):
        figs.sample_chain_figure(0, 0)
    with pytest.raises(ValueError, match="lam"):
        figs.construction_attention_figure(-1.0)
    with pytest.raises(ValueError, match="token_labels"):
        figs.attention_steps_figure(np.zeros((2, 3)), ["a"])
    from onelayer.widgets import slider_app
    import ipywidgets as widgets

    app = slider_app(figs.sample_chain_figure, {"seed": widgets.IntSlider(value=0, min=0, max=3)})
    app.children[0].value = 2
    assert len(app.cache) == 2
    plt.close("all")

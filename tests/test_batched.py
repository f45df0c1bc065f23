"""Members (onelayer.training.train with members=True): a run of B members is B separate ``train`` runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchmarks import problems
from onelayer.training import BatchedHistory, concat_histories, stack_params, train

B, D, STEPS = 5, 3, 30


def train_members(params, loss_fn, **kwargs):
    return train(params, loss_fn, members=True, **kwargs)


TOL = 1e-12


@pytest.fixture(scope="module")
def data():
    return problems.make_batch(range(B), N=12, n=5, d=D)


def separate_runs(data, lrs, **kwargs):
    X, v, t = data
    return [
        train(problems.zero_params(D), lambda p, b=b: problems.loss(p, X[b], v[b], t[b]),
              steps=STEPS, lr=float(lrs[b]), progress=False, **kwargs)
        for b in range(B)
    ]


def assert_matches(batched: BatchedHistory, runs, tol=TOL):
    assert batched.size == len(runs)
    for b, run in enumerate(runs):
        np.testing.assert_array_equal(batched.steps, run.steps)  # exact: integer steps
        for name in run.records:
            np.testing.assert_allclose(batched[name][:, b], run[name], rtol=0, atol=tol, err_msg=name)
        assert torch.allclose(batched.params["W"][b], run.params["W"], rtol=0, atol=tol)


def test_batched_members_reproduce_separate_runs_with_per_member_step_sizes(data):
    X, v, t = data
    lrs = torch.tensor([0.25, 0.5, 1.0, 2.0, 4.0])
    record = {"yhat0": lambda p: problems.readout(p["W"], X, v)[:, 0]}
    batched = train_members(problems.zero_params(D, B), lambda p: problems.loss(p, X, v, t),
                       steps=STEPS, lr=lrs, record=record, record_every=5)
    runs = [
        train(problems.zero_params(D), lambda p, b=b: problems.loss(p, X[b], v[b], t[b]), steps=STEPS,
              lr=float(lrs[b]), record={"yhat0": lambda p, b=b: problems.readout(p["W"], X[b], v[b])[0]},
              record_every=5, progress=False)
        for b in range(B)
    ]
    assert_matches(batched, runs)
    assert batched["loss"].shape == (STEPS // 5 + 1, B) and batched["yhat0"].shape == (STEPS // 5 + 1, B)
    # The step sizes really differ per member: the trajectories are not all the same.
    assert np.ptp(batched.final("loss")) > 1e-3
    np.testing.assert_array_equal(batched.at("loss", 5), batched["loss"][1])  # exact: the same stored numbers; History's methods, per member
    # member(b) is an ordinary History
    assert np.array_equal(batched.member(2)["loss"], batched["loss"][:, 2])  # exact: a column of the same array
    assert torch.equal(batched.member(2).params["W"], batched.params["W"][2])  # exact: a slice of the same tensor


def test_vmap_path_reproduces_separate_runs(data):
    lrs = np.full(B, 1.0)
    batched = train_members(problems.zero_params(D, B), problems.loss, steps=STEPS, lr=1.0,
                       vmap=True, member_data=data,
                       record={"W00": lambda p, X, v, t: p["W"][0, 0]})
    runs = separate_runs(data, lrs, record={"W00": lambda p: p["W"][0, 0]})
    assert_matches(batched, runs)


def test_closed_form_grad_fn_and_snapshots(data):
    X, v, t = data
    lrs = np.full(B, 0.5)
    batched = train_members(problems.zero_params(D, B), lambda p: problems.loss(p, X, v, t),
                       grad_fn=lambda p: problems.loss_and_grad(p, X, v, t), steps=STEPS, lr=0.5,
                       snapshot_at=[0, 10])
    runs = separate_runs(data, lrs, snapshot_at=[0, 10])
    assert_matches(batched, runs, tol=1e-10)  # another formula for the same gradient: rounding differs
    assert torch.equal(batched.snapshots[0]["W"], torch.zeros(B, D, D))  # exact: the initial zeros, not yet updated
    assert torch.allclose(batched.snapshots[10]["W"], torch.stack([r.snapshots[10]["W"] for r in runs]), atol=1e-10)


def test_schedules_and_per_parameter_step_sizes():
    # Two decoupled quadratics per member: L_b = 0.5 a_b x^2 + 0.5 y^2.
    a = torch.tensor([1.0, 2.0, 3.0])
    init = {"x": torch.ones(3), "y": torch.ones(3, 2)}

    def loss(p):
        return 0.5 * a * p["x"] ** 2 + 0.5 * (p["y"] ** 2).sum(-1)

    batched = train_members(init, loss, steps=3, lr={"x": torch.tensor([0.1, 0.2, 0.3]), "y": lambda t: 0.5 / (t + 1)})
    expected_x = torch.ones(3)
    expected_y = torch.ones(3, 2)
    for step in range(3):
        expected_x = expected_x - torch.tensor([0.1, 0.2, 0.3]) * a * expected_x
        expected_y = expected_y - 0.5 / (step + 1) * expected_y
    assert torch.allclose(batched.params["x"], expected_x, atol=1e-15)
    assert torch.allclose(batched.params["y"], expected_y, atol=1e-15)
    # The caller's tensors are not modified.
    assert torch.equal(init["x"], torch.ones(3))  # exact: the caller's tensor is never written


def test_members_are_independent():
    # Member 1 diverges to huge values; member 0 must be unaffected.
    init = {"x": torch.tensor([[1.0], [1.0]])}
    batched = train_members(init, lambda p: 0.5 * (p["x"] ** 2).sum(-1), steps=5, lr=torch.tensor([0.5, 3.0]))
    assert batched.params["x"][0, 0] == 0.5**5  # exact: x - 0.5 x halves a power of two
    assert batched.params["x"][1, 0] == (-2.0) ** 5  # exact: x - 3 x on powers of two


def test_concat_histories_joins_groups_of_members_in_order():
    def run(x0):
        init = {"x": torch.tensor(x0)}
        return train_members(init, lambda p: 0.5 * (p["x"] ** 2).sum(-1), steps=4, lr=0.5, snapshot_at=(2,))

    both = concat_histories([run([[1.0], [2.0]]), run([[4.0]])])
    assert both.size == 3 and both["loss"].shape == (5, 3) and both.snapshots[2]["x"].shape == (3, 1)
    assert both.params["x"][:, 0].tolist() == [1 / 16, 2 / 16, 4 / 16]  # exact: halving powers of two
    assert both["loss"][0].tolist() == [0.5, 2.0, 8.0]  # exact: x^2 / 2 of powers of two
    with pytest.raises(TypeError, match="parts"):
        concat_histories([])
    short = train_members({"x": torch.tensor([[1.0]])}, lambda p: 0.5 * (p["x"] ** 2).sum(-1), steps=3, lr=0.5)
    with pytest.raises(ValueError, match="same steps"):
        concat_histories([run([[1.0]]), short])


def test_stack_params():
    members = [{"W": torch.full((2, 2), float(b)), "u": torch.tensor([b])} for b in range(3)]
    stacked = stack_params(members)
    assert stacked["W"].shape == (3, 2, 2) and stacked["u"].shape == (3, 1)
    assert all(torch.equal(stacked["W"][b], members[b]["W"]) for b in range(3))  # exact: copies of the same tensors


def test_cuda_device_option():
    init = {"x": torch.ones(2, 1)}
    if torch.cuda.is_available():
        batched = train_members(init, lambda p: 0.5 * (p["x"] ** 2).sum(-1), steps=2, lr=0.5, device="cuda")
        assert batched.params["x"].device.type == "cpu"
    else:
        with pytest.raises(ValueError, match="device='cuda'"):
            train_members(init, lambda p: (p["x"] ** 2).sum(-1), steps=2, lr=0.5, device="cuda")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(lr=0.0), ValueError, "lr must be a positive finite number"),
        (dict(lr=True), TypeError, "lr must be a positive number"),
        (dict(lr="big"), TypeError, "lr must be a positive number"),
        (dict(lr=torch.ones(3)), ValueError, r"lr must have shape \(B,\) = \(2,\)"),
        (dict(lr=torch.tensor([1.0, -1.0])), ValueError, "positive finite step sizes"),
        (dict(lr=lambda t: -1.0), ValueError, r"lr\(0\) must be a positive finite number"),
        (dict(lr={"z": 1.0}), ValueError, "lr mapping must name exactly"),
        (dict(steps=-1), ValueError, "steps must be an integer in"),
        (dict(record_every=0), ValueError, "record_every must be an integer in"),
        (dict(device="tpu"), ValueError, "device must be one of"),
        (dict(vmap="yes"), TypeError, "vmap must be True or False"),
        (dict(member_data=(torch.ones(2),)), ValueError, "member_data is only used with vmap=True"),
        (dict(vmap=True, member_data=(torch.ones(3),)), ValueError, "member_data\\[0\\] must be a tensor"),
        (dict(vmap=True, grad_fn=lambda p: None), ValueError, "cannot be combined"),
        (dict(record={"loss": lambda p: 0}), ValueError, "must not contain 'loss'"),
        (dict(record={"bad": 3}), TypeError, "record\\['bad'\\] must be callable"),
        (dict(record={"scalar": lambda p: 1.0}), ValueError, "one value per member"),
        (dict(record_at=[9]), ValueError, "record_at must be an integer in"),
    ],
)
def test_validation(kwargs, error, match):
    base = dict(steps=2, lr=0.5)
    base.update(kwargs)
    with pytest.raises(error, match=match):
        train_members({"x": torch.ones(2, 1)}, lambda p: 0.5 * (p["x"] ** 2).sum(-1), **base)


def test_validation_of_parameters_and_losses():
    loss = lambda p: (p["x"] ** 2).sum(-1)  # noqa: E731
    with pytest.raises(TypeError, match="non-empty mapping"):
        train_members({}, loss, steps=1, lr=1.0)
    with pytest.raises(ValueError, match="leading batch axis"):
        train_members({"x": torch.tensor(1.0)}, loss, steps=1, lr=1.0)
    with pytest.raises(ValueError, match="same batch size"):
        train_members({"x": torch.ones(2, 1), "y": torch.ones(3)}, loss, steps=1, lr=1.0)
    with pytest.raises(TypeError, match=r"params\['x'\] must be a torch.Tensor"):
        train_members({"x": [1.0, 2.0]}, loss, steps=1, lr=1.0)
    with pytest.raises(ValueError, match=r"one loss per member, a tensor of shape \(B,\) = \(2,\)"):
        train_members({"x": torch.ones(2, 1)}, lambda p: (p["x"] ** 2).sum(), steps=1, lr=1.0)
    with pytest.raises(ValueError, match="members\\[1\\]\\['W'\\] has shape"):
        stack_params([{"W": torch.ones(2)}, {"W": torch.ones(3)}])
    with pytest.raises(ValueError, match="at least one"):
        stack_params([])
    with pytest.raises(ValueError, match="b must be an integer in"):
        train_members({"x": torch.ones(2, 1)}, loss, steps=1, lr=1.0).member(2)

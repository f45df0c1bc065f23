import numpy as np
import pytest
import torch

from onelayer.training import train


def quadratic(params):
    return 0.5 * ((params["x"] - 3.0) ** 2).sum()


def test_gd_matches_closed_form():
    # x_{t+1} = x_t - eta (x_t - 3)  =>  x_t = 3 - 3 (1 - eta)^t from x_0 = 0
    hist = train({"x": torch.zeros(2)}, quadratic, steps=10, lr=0.1, progress=False)
    expected = 3 - 3 * 0.9 ** np.arange(11)
    assert hist.steps.tolist() == list(range(11))
    np.testing.assert_allclose(hist["loss"], 0.5 * 2 * (expected - 3) ** 2, rtol=1e-12)
    np.testing.assert_allclose(hist.params["x"].numpy(), [expected[-1]] * 2, rtol=1e-12)


def test_caller_params_untouched_and_records_and_snapshots():
    x0 = torch.zeros(1)
    hist = train(
        {"x": x0},
        quadratic,
        steps=6,
        lr=0.5,
        record={"x": lambda p: p["x"][0]},
        record_every=4,
        snapshot_at=[0, 3],
        progress=False,
    )
    assert x0.item() == 0.0  # exact: the caller's tensor is never written
    assert hist.steps.tolist() == [0, 4, 6]
    np.testing.assert_allclose(hist["x"], [0.0, 3 - 3 * 0.5**4, 3 - 3 * 0.5**6])
    assert sorted(hist.snapshots) == [0, 3]
    assert hist.snapshots[3]["x"].item() == pytest.approx(3 - 3 * 0.5**3)
    assert hist.at("x", 4) == pytest.approx(3 - 3 * 0.5**4)
    assert hist.final("loss") == pytest.approx(0.5 * (3 * 0.5**6) ** 2)
    with pytest.raises(ValueError, match="step 5 was not recorded"):
        hist.at("x", 5)
    with pytest.raises(KeyError, match="no record named 'y'"):
        hist["y"]


def test_schedule_per_parameter_and_grad_fn():
    calls = []

    def schedule(t):
        calls.append(t)
        return 1.0 / (t + 1)

    params = {"a": torch.zeros(1), "b": torch.zeros(1)}

    def loss(p):
        return ((p["a"] - 1) ** 2 + (p["b"] - 2) ** 2).sum()

    def grad_fn(p):
        return loss(p), {"a": 2 * (p["a"] - 1), "b": 2 * (p["b"] - 2)}

    h1 = train(params, loss, steps=3, lr={"a": schedule, "b": 0.1}, progress=False)
    h2 = train(params, loss, steps=3, lr={"a": schedule, "b": 0.1}, grad_fn=grad_fn, progress=False)
    assert calls[:3] == [0, 1, 2]
    for name in params:
        torch.testing.assert_close(h1.params[name], h2.params[name])
    np.testing.assert_allclose(h1["loss"], h2["loss"])


def test_adam_is_a_named_variation_that_moves_parameters():
    hist = train({"x": torch.zeros(1)}, quadratic, steps=50, lr=0.1, optimizer="adam", progress=False)
    assert hist.final("loss") < hist["loss"][0]


@pytest.mark.parametrize(
    "kwargs, exc, msg",
    [
        ({"steps": -1}, ValueError, "steps must be"),
        ({"lr": 0.0}, ValueError, "lr must be a positive"),
        ({"lr": "big"}, TypeError, "lr must be"),
        ({"lr": {"y": 1.0}}, ValueError, "lr mapping"),
        ({"optimizer": "sgd"}, ValueError, "optimizer must be one of"),
        ({"record": {"loss": len}}, ValueError, "always recorded"),
        ({"record": {"x": 3}}, TypeError, "must be callable"),
    ],
)
def test_train_validates(kwargs, exc, msg):
    args = {"steps": 2, "lr": 0.1, "progress": False}
    args.update(kwargs)
    with pytest.raises(exc, match=msg):
        train({"x": torch.zeros(1)}, quadratic, **args)


def test_train_rejects_bad_params_and_nonscalar_loss():
    with pytest.raises(TypeError, match="non-empty mapping"):
        train({}, quadratic, steps=1, lr=0.1)
    with pytest.raises(TypeError, match=r"params\['x'\] must be a torch.Tensor"):
        train({"x": [0.0]}, quadratic, steps=1, lr=0.1)
    with pytest.raises(ValueError, match="scalar"):
        train({"x": torch.zeros(2)}, lambda p: p["x"] * 2, steps=1, lr=0.1, progress=False)

"""Section 6's experiments: the linear and ReLU models trained on the two question-answering tasks.

The tasks, their vocabulary and their data are the paper's objects (:mod:`onelayer.walks.qa`).

Training follows Section 6 and Appendix F.2: Gaussian initialisation with
``sigma = 0.01``, plain GD with ``eta = 0.1``, ``epsilon = 0.1``, 1000 training
and 1000 test inputs drawn uniformly from the task (1024 each for the ReLU
variant ``hidden=19``). Two details are not restated there and are options:
``M = 1000`` and unit-normalised attention inputs ``normalize="keys_and_query"``
(as in Section 5.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...training import History, train
from ...validation import check_choice, check_float, check_int
from . import kl
from ...walks import prediction
from ...walks.data import TokenData
from ...walks.qa import TASKS, task_data, task_population, word_index
from ...walks.model import WalkTransformer
from .inputs import walk_model

__all__ = [
    "QAExperiment",
    "setup_task",
    "qa_records",
    "run",
    "output_gap",
    "fruit_attention",
    "figure_curves",
    "explorer_runs",
    "explorer",
    "explorer_widget",
    "BIASES",
    "bias_init",
    "bias_forward",
    "bias_loss_and_grads",
    "bias_run",
]

@dataclass
class QAExperiment:
    """A model with its training and test sets for one task."""

    model: WalkTransformer
    train: TokenData
    test: TokenData
    task: int


def setup_task(task: int, *, hidden: int | None = None, n_train: int | None = None, n_test: int | None = None,
               M: int = 1000, normalize: str = "keys_and_query", seed: int = 0, **options) -> QAExperiment:
    """The Section 6 setting (``hidden=None``) or the Appendix F.2 ReLU variant (``hidden=19``).

    ``n_train`` / ``n_test`` default to 1000 (1024 with a hidden layer, as in
    Appendix F.2). The training set uses ``seed``, the test set ``seed + 1000``.
    ``options`` go to :class:`onelayer.walks.model.ModelConfig`.
    """
    task = check_choice("task", task, TASKS)
    default = 1000 if hidden is None else 1024
    n_train = default if n_train is None else n_train
    n_test = default if n_test is None else n_test
    seed = check_int("seed", seed, low=0)
    pop = task_population(task)
    model = walk_model(K=pop.K, N=pop.N, M=M, normalize=normalize, hidden=hidden, **options)
    return QAExperiment(model, task_data(task, n_train, seed=seed), task_data(task, n_test, seed=seed + 1000), task)


def _fruit_mask(data: TokenData) -> torch.Tensor:
    return (data.tokens == word_index("apple")) | (data.tokens == word_index("orange"))


def fruit_attention(model: WalkTransformer, params, data: TokenData) -> float:
    """Mean attention mass on the positions holding "apple" or "orange" (uniform attention gives ``#fruits / N``)."""
    S = model.attention(params, data)[:, :-1]
    return float((S * _fruit_mask(data)).sum(dim=1).mul(data.weights).sum())


def output_gap(model: WalkTransformer, params, task: int = 2) -> float:
    """Largest ``|f(X) - f(X')|`` over pairs of task inputs with *different* answers (exact population).

    For Task 2 it is 0 exactly when the model cannot tell the two sentences apart.
    """
    pop = task_population(task)
    f = model.forward(params, pop)
    diff = (f[:, None, :] - f[None, :, :]).abs().amax(dim=2)
    different = pop.labels[:, None] != pop.labels[None, :]
    return float(diff[different].max())


def qa_records(exp: QAExperiment, *, kl_method: str = "clip") -> dict:
    """Record functions: test and training accuracy, mean KL on the test set, attention on the fruits, Task-2 output gap."""
    m, test, train = exp.model, exp.test, exp.train
    truth = kl.label_truth(test)
    records = {
        "test_accuracy": lambda prm: m.accuracy(prm, test),
        "train_accuracy": lambda prm: m.accuracy(prm, train),
        "kl": lambda prm: kl.mean_kl(truth, m.forward(prm, test), test.weights, method=kl_method),
        "fruit_attention": lambda prm: fruit_attention(m, prm, test),
    }
    if exp.task == 2:
        records["output_gap"] = lambda prm: output_gap(m, prm, 2)
    return records


def run(exp: QAExperiment, *, steps: int = 100, lr=0.1, init: str = "gaussian", sigma: float = 0.01, seed: int = 0,
        record_every: int = 1, kl_method: str = "clip") -> History:
    """Full-batch GD on ``exp.train`` from ``init`` (Gaussian ``sigma`` by default), recording :func:`qa_records`."""
    params = exp.model.init(init, sigma=sigma, seed=seed)
    return exp.model.train(params, exp.train, steps=steps, lr=lr, record=qa_records(exp, kl_method=kl_method),
                           record_every=record_every)


# -- figures --------------------------------------------------------------------------------------------------------

def explorer_runs(sigma: float = 0.01, lr: float = 0.1, normalize: str = "keys_and_query", steps: int = 100) -> dict:
    """The runs :func:`onelayer.figures.walks_qa.explorer` draws: task -> training history with the test accuracy ``"acc"``.

    One run per task of :data:`TASKS` from a Gaussian initialisation of scale ``sigma`` (zero for
    ``sigma = 0``), ``steps`` GD steps of size ``lr``, recorded about 50 times.
    """
    sigma = check_float("sigma", sigma, low=0.0)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    steps = check_int("steps", steps, low=1, high=5000)
    runs = {}
    for task in TASKS:
        exp = setup_task(task, normalize=normalize)
        runs[task] = exp.model.train(exp.model.init("gaussian" if sigma > 0 else "zero", sigma=sigma), exp.train, steps=steps,
                                     lr=lr, record={"acc": lambda prm, e=exp: e.model.accuracy(prm, e.test)},
                                     record_every=max(1, steps // 50))
    return runs


# -- a bias term (issue 13, item 5(ii)) ---------------------------------------------------------------------------------
#: Where a bias sits. ``"none"``: the paper's model (no bias, the default everywhere). ``"output"``: ``f = V X S + b``
#: with ``b`` in ``R^K`` (one score per word). ``"attention"``: a bias ``beta`` in ``R^N`` added to the attention
#: logits (one per position; a bias on the query side would only shift ``q = W x~_N`` and change nothing).
#: ``"both"``: the two together. Biases start at zero whatever ``init`` is.
BIASES = ("none", "output", "attention", "both")


def bias_init(exp: QAExperiment, bias: str = "output", *, init: str = "gaussian", sigma: float = 0.01,
              seed: int = 0) -> dict[str, torch.Tensor]:
    """The model's initial ``{"V", "q"}`` (as in :func:`run`) plus zero biases ``"b"`` (``(K,)``) and/or ``"beta"`` (``(N,)``)."""
    bias = check_choice("bias", bias, BIASES)
    params = exp.model.init(init, sigma=sigma, seed=seed)
    c = exp.model.config
    if bias in ("output", "both"):
        params["b"] = torch.zeros(c.K, dtype=exp.model.dtype)
    if bias in ("attention", "both"):
        params["beta"] = torch.zeros(c.N, dtype=exp.model.dtype)
    return params


def bias_forward(model: WalkTransformer, params: dict[str, torch.Tensor], data: TokenData) -> torch.Tensor:
    """Scores ``f`` (``(B, K)``) of the model with the biases in ``params`` (``"b"``, ``"beta"``; absent = none)."""
    if model.config.hidden is not None:
        raise ValueError("the bias option is defined for the linear model (hidden=None)")
    return model.forward(params, data)


def bias_loss_and_grads(model: WalkTransformer, params: dict[str, torch.Tensor], data: TokenData):
    """Loss and GD directions of the biased model, by autograd.

    As in :meth:`~onelayer.walks.model.WalkTransformer.loss_and_grads`, the ``q`` direction is
    ``||x~_N||^2 dL/dq`` (the change of ``q = W x~_N`` under GD on ``W``); the
    other parameters get their plain gradients.
    """
    leaves = {n: t.detach().clone().requires_grad_(True) for n, t in params.items()}
    with torch.enable_grad():
        f = bias_forward(model, leaves, data)
        loss = model.loss_of_scores(f, data.labels, data.weights)
        grads = dict(zip(leaves, torch.autograd.grad(loss, list(leaves.values()))))
    grads["q"] = model.query_norm2 * grads["q"]
    return loss.detach(), grads


def bias_run(exp: QAExperiment, bias: str = "output", *, steps: int = 100, lr: float = 0.1, init: str = "gaussian",
             sigma: float = 0.01, seed: int = 0, record_every: int = 1) -> History:
    """Full-batch GD of the biased model on ``exp.train`` (as :func:`run`), recording accuracies and the Task-2 output gap.

    ``bias="none"`` trains the paper's model (same initial point and update as :func:`run`).
    """
    bias = check_choice("bias", bias, BIASES)
    steps = check_int("steps", steps, low=1)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    m, test, train_set = exp.model, exp.test, exp.train

    def accuracy(prm, data):
        return prediction.accuracy(prediction.predict(bias_forward(m, prm, data)), data.labels, data.weights)

    record = {"test_accuracy": lambda prm: accuracy(prm, test), "train_accuracy": lambda prm: accuracy(prm, train_set)}
    if exp.task == 2:
        pop = task_population(2)
        different = pop.labels[:, None] != pop.labels[None, :]

        def gap(prm):
            f = bias_forward(m, prm, pop)
            return float((f[:, None, :] - f[None, :, :]).abs().amax(dim=2)[different].max())

        record["output_gap"] = gap
    params = bias_init(exp, bias, init=init, sigma=sigma, seed=seed)
    return train(params, lambda prm: bias_loss_and_grads(m, prm, train_set)[0], steps=steps, lr=lr, record=record,
                 record_every=record_every, grad_fn=lambda prm: bias_loss_and_grads(m, prm, train_set), progress=False)

"""Section 6 of the walks paper: the two question-answering tasks over a 19-word vocabulary, and their data.

The deterministic-walk failure (Theorem 4.1) comes from the token average: at
zero or small initialisation the attention is (nearly) uniform, so the first
gradient steps see only ``(1/(N-1)) sum_i x_i``. If that average is the same
for inputs that need different answers, gradient descent has nothing to start
from. The paper tests the prediction on two toy tasks:

Task 1 (majority fruit, learnable)
    ``Based on the list f1 f2 f3 f4 f5 which type of fruit appears most
    frequently`` with every ``f_i`` in {apple, orange}; all 32 lists are
    equally likely and the answer is the more frequent fruit. 16 words, so
    ``N = 17`` with the query slot. The token average (the share of "apple")
    already decides the answer.
Task 2 (stated preference, hard)
    ``Based on the sentence I prefer an X to an Y which type of fruit do I
    prefer`` with ``(X, Y)`` = (apple, orange) or (orange, apple), equally
    likely; the answer is ``X``. 18 words, ``N = 19``. Both sentences are the
    same bag of words: their token averages coincide exactly.

Tokens are one-hot over :data:`VOCABULARY` (in the paper's order, so "apple"
is index 0 and wins ties under the smallest-index rule); the model's output has
one score per word (``K = 19``). Inputs are built as the paper's ``X`` (one-hot
columns, zero query slot) and passed through the generic entry point
:meth:`onelayer.walks.data.TokenData.from_one_hot`.

:func:`token_averages` and :func:`average_gap` are the quantity the argument is about: the token average of every
input, and whether it tells inputs with different answers apart.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from ..seeding import generator
from ..validation import check_choice, check_int
from .data import TokenData

__all__ = ["VOCABULARY", "TASKS", "word_index", "encode", "task_sentences", "task_population", "task_data",
           "token_averages", "average_gap"]

#: The 19 words, in the paper's order (index = one-hot coordinate = output score).
VOCABULARY = ("apple", "orange", "Based", "on", "the", "which", "type", "of", "fruit", "list", "appears", "most",
              "frequently", "sentence", "I", "prefer", "an", "to", "do")
#: Task numbers.
TASKS = (1, 2)

_FRUITS = ("apple", "orange")
_T1_HEAD = ("Based", "on", "the", "list")
_T1_TAIL = ("which", "type", "of", "fruit", "appears", "most", "frequently")
_T2_HEAD = ("Based", "on", "the", "sentence", "I", "prefer", "an")
_T2_TAIL = ("which", "type", "of", "fruit", "do", "I", "prefer")


def _check_task(task) -> int:
    return check_choice("task", task, TASKS)


def word_index(word: str) -> int:
    """Position of ``word`` in :data:`VOCABULARY`."""
    if word not in VOCABULARY:
        raise ValueError(f"word must be one of the 19 vocabulary words {VOCABULARY}; got {word!r}")
    return VOCABULARY.index(word)


def encode(words) -> torch.Tensor:
    """The paper's ``X`` for one sentence: ``(19, len(words) + 1)`` float64, one-hot columns and a zero query slot."""
    words = list(words)
    if not words:
        raise ValueError("words must contain at least one word")
    X = torch.zeros((len(VOCABULARY), len(words) + 1), dtype=torch.float64)
    for j, w in enumerate(words):
        X[word_index(w), j] = 1.0
    return X


def task_sentences(task: int) -> list[tuple[tuple[str, ...], str]]:
    """Every input of the task with its answer: 32 lists (Task 1) or 2 sentences (Task 2), equally likely."""
    task = _check_task(task)
    if task == 1:
        out = []
        for fruits in itertools.product(_FRUITS, repeat=5):
            answer = "apple" if fruits.count("apple") >= 3 else "orange"
            out.append((_T1_HEAD + fruits + _T1_TAIL, answer))
        return out
    return [(_T2_HEAD + (a, "to", "an", b) + _T2_TAIL, a) for a, b in (("apple", "orange"), ("orange", "apple"))]


def task_population(task: int) -> TokenData:
    """The exact task: every input once, with equal weights (expectations are exact averages)."""
    sentences = task_sentences(task)
    X = torch.stack([encode(words) for words, _ in sentences])
    y = [word_index(a) for _, a in sentences]
    return TokenData.from_one_hot(X, y)


def task_data(task: int, n: int, *, seed: int = 0) -> TokenData:
    """``n`` inputs drawn uniformly (with replacement) from the task, uniform weights ``1/n``."""
    n = check_int("n", n, low=1, high=10_000_000)
    pop = task_population(task)
    idx = torch.randint(0, pop.B, (n,), generator=generator(seed))
    return TokenData._trusted(pop.tokens[idx], pop.labels[idx], torch.full((n,), 1.0 / n, dtype=torch.float64), pop.K)


def token_averages(task: int) -> tuple[np.ndarray, np.ndarray]:
    """``(averages, labels)``: the token average ``(1/(N-1)) sum_i x_i`` of every task input (``(B, 19)``)."""
    pop = task_population(task)
    return pop.token_average().numpy(), pop.labels.numpy()


def average_gap(task: int) -> float:
    """Smallest ``max_k |avg(X)_k - avg(X')_k|`` over pairs of inputs with different answers.

    Positive: every pair with different answers is told apart by the token
    average. 0: some such pair has the same token average (Task 2).
    """
    avg, y = token_averages(task)
    gaps = np.abs(avg[:, None, :] - avg[None, :, :]).max(axis=2)
    return float(gaps[y[:, None] != y[None, :]].min())

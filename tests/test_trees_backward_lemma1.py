"""Lemma 1 (reconstruction): A^T B A = I for linearly independent embeddings."""

import pytest
import torch

from onelayer.seeding import generator
from onelayer.trees.shared import embeddings


@pytest.mark.parametrize("S, d", [(31, 40), (31, 31), (63, 70)])
def test_lemma1_gives_identity_scores(S, d):
    A = embeddings.independent_embeddings(S, d, generator(S + d))
    B = embeddings.lemma1_matrix(A)
    # the embeddings are genuinely non-orthogonal ...
    gram = A.T @ A
    assert (gram - torch.diag(torch.diagonal(gram))).abs().max() > 0.2
    # ... yet the scores are exactly "match a node to itself"
    assert torch.allclose(A.T @ B @ A, torch.eye(S, dtype=torch.float64), atol=1e-9)
    assert torch.allclose(B, B.T)


def test_lemma1_is_identity_for_one_hot():
    assert torch.equal(embeddings.lemma1_matrix(embeddings.one_hot_embeddings(7)), torch.eye(7, dtype=torch.float64))  # exact: 0/1 matrices, every step exact


def test_lemma1_rejects_dependent_columns():
    A = embeddings.independent_embeddings(5, 6, generator(0)).clone()
    A[:, 4] = A[:, 0] + A[:, 1]
    with pytest.raises(ValueError, match="linearly independent"):
        embeddings.lemma1_matrix(A)

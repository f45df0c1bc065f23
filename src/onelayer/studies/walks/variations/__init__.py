"""Variations of the walks model and task that the reviewers asked about.

Each function is one experiment of ``book/walks/variations.ipynb`` and of
``tests/test_walks_variations.py``. All models are the paper's (zero
initialisation, plain GD, ``eta = 1``, ``epsilon = 0.1``, log-loss) except for
the one named change.

Residual connection (:func:`~onelayer.studies.walks.variations.residual.residual_check`)
    The output is read at the query slot, whose token part is zero, so adding
    ``X`` to the output adds nothing there. Checked with the literal full-``W``
    autograd model of :func:`onelayer.walks.model.literal_forward`.
``1/sqrt(d)`` logit scale (:func:`~onelayer.studies.walks.variations.logit_scale.logit_scale_equivalence`, :func:`~onelayer.studies.walks.variations.logit_scale.logit_scale_table`)
    With a merged ``W``, a logit factor ``c`` is the same as the step size
    ``eta c^2`` on ``W`` (and the initialisation ``c W_0``). Same end state,
    reached later.
No positional embedding (:func:`~onelayer.studies.walks.variations.no_positions.no_position_table`)
    The query column is then zero, every logit is 0 forever, and the model only
    sees the token average.
A parent at lag 2 (:func:`~onelayer.studies.walks.variations.lag.lag_walks`, :func:`~onelayer.studies.walks.variations.lag.lag_population`, :func:`~onelayer.studies.walks.variations.lag.lag_c1_value`, :func:`~onelayer.studies.walks.variations.lag.lag_check`)
    ``s_i = s_{i-2} +- 1``: two interleaved ring walks, and ``s_N`` depends on
    ``s_{N-2}`` only. The authors predicted a circulant first-step ``V`` and
    attention on ``x_{N-2}`` after the second step.
A non-circulant Markov chain (:func:`~onelayer.studies.walks.variations.non_circulant.random_transition_matrix`, :func:`~onelayer.studies.walks.variations.non_circulant.markov_walks`, :func:`~onelayer.studies.walks.variations.non_circulant.chain_run`)
    A random row-stochastic ``Pi`` on ``K`` states, walks started from its
    stationary law ``mu``. Once attention sits on the parent, the log-loss step
    of ``V_{ys}`` is ``eta mu_s pi_sy / (V_{ys} + epsilon)``, so ``V`` should grow
    in the direction of ``sqrt(C^T)`` with ``C = diag(mu) Pi``: neither ``Pi^T``
    nor ``sqrt(Pi^T)`` unless ``mu`` is uniform, but with the same column-wise
    argmax, hence Bayes-optimal predictions.

One module per experiment (:mod:`~onelayer.studies.walks.variations.residual`,
:mod:`~onelayer.studies.walks.variations.logit_scale`, :mod:`~onelayer.studies.walks.variations.no_positions`,
:mod:`~onelayer.studies.walks.variations.lag`, :mod:`~onelayer.studies.walks.variations.non_circulant`), each with its figure;
import each from its module. What the chapter reads off their stored runs and studies (rates over seeds, rows of one
run, the refusal of a stored study with other settings): :mod:`~onelayer.studies.walks.variations.readings`.
"""

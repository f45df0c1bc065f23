"""How the walks model's convergence and cost grow with the sequence length ``N`` and the positional dimension ``M``.

Theorem 3.1 asks for ``M = Omega(N^{3/2})`` and then promises optimal
predictions after a *constant* number of GD steps ``T_0``. The spec's
reconstruction of the proof says why: after two steps from zero the parent's
attention logit leads the others by a gap of order ``eta^2 M^2 / (epsilon^2 N^2 K^2)``
(the positional vectors have ``||p_i||^2 = M/2`` and every logit update carries
``||p_j||^2 ||p_N||^2``), and asking that gap to be ``Omega(N)`` gives
``M ~ N^{3/2}``. This module measures the consequences with the batched
trainer :mod:`onelayer.studies.walks.batched` (all seeds of one size in one
:func:`onelayer.training.train` with ``members=True`` call):

* :func:`~onelayer.studies.walks.scaling.runs.measure` trains every seed of each ``(N, M)`` and returns one row per
  size: steps to converge under two criteria (upper median, min and max over
  seeds, and how many seeds converged), the step-2 parent log-odds, and the wall
  time of one GD step;
* :func:`~onelayer.studies.walks.scaling.runs.scaling_study` runs the three default grids (``N`` at ``M = 1000``,
  ``M`` at ``N = 97``, and along ``M = M_for(N) = ceil(N^{3/2})``);
* :func:`~onelayer.studies.walks.scaling.critical.critical_M` finds, for each ``N``, the smallest ``M`` at which the
  parent is selected at step 2. The step-2 logits are *exactly*
  ``(M/2) A + (M/2)^2 B`` with ``A, B`` independent of ``M`` (the first step
  sees uniform attention whatever ``M`` is, and the positions are orthogonal
  with ``||p_i||^2 = M/2``), so two trained values of ``M`` give the logits for
  every ``M`` and the threshold is found by bisection;
* :func:`~onelayer.studies.walks.scaling.summary.slopes`, :func:`~onelayer.studies.walks.scaling.summary.cost_model`, :func:`~onelayer.studies.walks.scaling.summary.table` and :func:`onelayer.figures.walks_scaling.figure` reduce
  and draw the result.

Convergence criteria (options of :func:`~onelayer.studies.walks.scaling.runs.measure`)
--------------------------------------------------------------------------------------
``T_parent`` is the first step at which the mean attention on the direct parent
``x_{N-1}`` over held-out test walks reaches ``parent_threshold = 0.99``;
``T_optimal`` is the first step at which every test prediction is
Bayes-optimal (conditional accuracy, the mean of ``Pi[s_{N-1}, y_hat]``, within
``optimal_tol = 1e-9`` of ``max(p, 1 - p)``). Attention on the parent is the
mechanism the proof of Theorem 3.1 controls, and optimal predictions are its
conclusion, reached one step later once ``V`` has caught up with the attention;
both are exact, noise-free readings of the state (no sampled labels enter).
A threshold of 0.99 asks for step-2 log-odds of ``log(0.99 (N - 1) / 0.01)``,
logarithmic in ``N``, whereas the theorem's leakage ``e^{-Omega(N)}`` asks for
log-odds linear in ``N``; :func:`~onelayer.studies.walks.scaling.critical.critical_M` computes the threshold ``M`` for
both readings.

Defaults: ``K = 6`` (the paper's), ``p = 0.7``, 1000 training walks per seed
(the paper's), zero initialisation, ``eta = 1``, log-loss with
``epsilon = 0.1``, sinusoidal positions; six data seeds, 500 test walks and
10 GD steps per size in the live functions (:data:`~onelayer.studies.walks.scaling.runs.DEFAULTS`), 16 seeds, 1000
test walks and 16 steps in the stored study. ``p = 0.7`` rather than the
paper's ``0.5``: at ``p = 0.7`` the Bayes-optimal prediction is unique (the
clockwise neighbour), so ``T_optimal`` cannot be met by predicting the other
neighbour; ``p`` is an option, and the stored study has both.

Theory and measurement (stored study, ``walks/data/scaling.json``, 16
seeds, ``p = 0.7``; ``p = 0.5`` agrees except where noted):

* Along ``M = ceil(N^{3/2})`` the number of steps is constant, as Theorem 3.1
  says: ``T_parent = 2`` and ``T_optimal = 3`` for ``N = 49 ... 385``, one step
  more (``T_parent = 3``) for ``N = 13, 25``, where ``N^{3/2}`` is still small
  against the constants.
* The step-2 log-odds of the parent grow like ``M^2`` (fitted slope 2.01; an
  algebraic identity of the first two steps) and fall like ``N^{-2.16}`` at
  ``M = 1000`` with 1000 walks (``N^{-2.03}`` with 4000 walks): the spec's
  guess ``M^2 / N^2`` holds.
* With ``M`` too small for ``N`` convergence slows down, but only by a few
  steps: at ``N = 97`` the steps grow from 2 (``M >= 566``) to 6 at
  ``M = 100`` (slope ``-0.60`` in the slow range); at ``M = 1000`` from 2
  (``N <= 97``) to 3-4 (``N = 193 ... 577``). What grows fast instead is the
  number of seeds that never converge: with a small step-2 gap, sampling
  noise of the 1000 training walks decides which lag the attention locks onto
  (at ``N = 385, M = 1000`` half of the seeds fail, 1 of 16 with 4000 walks;
  at ``p = 0.5`` failures are more frequent, e.g. 9 of 16 at ``N = 97, M = 100``).
* :func:`~onelayer.studies.walks.scaling.critical.critical_M`: with 4000 walks the smallest ``M`` that selects the parent
  at step 2 grows like ``N^{1.05}`` for attention ``>= 0.99`` (a ``log N``
  demand) and like ``N^{1.51}`` for log-odds ``>= N/4`` (leakage
  ``e^{-Omega(N)}``, the theorem's), with ``M_crit / N^{3/2}`` between 1.14 and
  1.20 from ``N = 13`` to ``769``. So ``N^{3/2}`` is what the exponentially
  small leakage costs; the practical threshold is nearly linear in ``N``.
* The wall time of a GD step is linear in ``n N`` (about 10-15 ns per
  attention entry and member on this machine) plus a fixed cost (about
  0.4 ms per member and step); the ``M N`` products with the positions cost
  under 2 ns per entry, so the time barely depends on ``M`` in these grids
  (:func:`~onelayer.studies.walks.scaling.summary.cost_model`).

The heavier grids are the stored study ``walks-scaling`` (:mod:`~onelayer.studies.walks.scaling.stored`);
regenerate them with::

    .venv/bin/python -m onelayer study walks-scaling --jobs 2

(``--quick`` writes a small version in seconds). ``tests/test_walks_scaling.py``
recomputes one stored point and compares.
"""

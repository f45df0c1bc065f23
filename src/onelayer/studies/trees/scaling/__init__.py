"""Scaling of backward training with the tree size: steps to converge and wall time against depth and labels.

What is measured
----------------
The backward model (:mod:`onelayer.trees.backward.model`, one-hot embeddings,
``B = 0`` at the start, loss = mean over chain-of-thought positions of
``1/2 ||y_hat - y||^2``, learning rate 1, as in the chapter on Theorem 3) is
trained on perfect binary trees of depth ``m`` whose labels are drawn from
``[S]``. Two grids:

* **depth**: ``m = 2..6`` with ``S = n = 2^(m+1) - 1`` (every label used, as in
  the paper's ``m = 4, S = 31``);
* **labels**: ``m = 3`` fixed (``n = 15`` nodes) and ``S = 15 .. 255``.

For every size two measurements of the number of steps to converge:

* the exact population recursion in the reduced coordinates ``(h1, h2)``
  (:func:`~onelayer.studies.trees.scaling.runs.population_run`: the recursion of
  :func:`onelayer.trees.backward.dynamics.population_gd`, written in closed form so that
  ``m = 6`` takes about a second; tested against it to ``1e-12``), computed live;
* eight sampled runs of mini-batch SGD (batch 256, a fresh batch every step,
  the paper's protocol; ``protocol="fixed"`` gives full-batch GD on a fixed
  sample instead), trained together in one
  :func:`~onelayer.studies.trees.backward_batched.train_backward_members` call (seeds
  0..7); their convergence is measured on a shared batch of 256 fresh
  training trees at about 300 recorded steps (finest, about 0.4% of the step
  count, near the population's crossings). Up to ``m = 5`` (and ``S = 127`` at
  ``m = 3``) these take about 17 minutes on one core and are stored in
  ``book/trees/data/scaling.json`` (the study ``trees-scaling``, :mod:`onelayer.studies.trees.scaling.stored`:
  ``python -m onelayer study trees-scaling``).

Result of the stored runs: the eight seeds cross within 4 steps of each other
and 0.1-0.3% after the population recursion (default criterion; the loss
criterion alike; teacher-forced accuracy 100% on 256 trees comes 1-4% later
than in the population, a stricter finite-sample test), and their attention on
the correct edge stays within 1e-3 of the population curve along the whole run
(:func:`~onelayer.studies.trees.scaling.rows.trajectory_gaps`): at batch 256, SGD follows the population recursion.

Convergence criterion (:class:`~onelayer.studies.trees.scaling.criteria.Criterion`)
-----------------------------------------------------------------------------------
Default: the first step at which the mean teacher-forced attention on the
correct edge reaches 0.9 (``Criterion("attention", 0.9)``). Theorem 1's
mechanism is exactly this attention becoming one-hot, so the criterion
measures the quantity the theory is about; at 0.9 the sharp transition is
complete at every size (the loss is then about 1% of its initial value), the
exact population recursion gives it deterministically, and it does not depend
on the unknown loss normalisation. The alternatives are options:
``"accuracy"`` (teacher-forced accuracy reaches ``threshold``, default 1.0;
this happens much earlier, when the attention on the correct edge is only
about ``2/N``, so it marks the end of the symmetric start rather than
convergence) and ``"loss"`` (loss at most ``threshold`` times its initial
value, default 0.01).

Theory
------
The paper's visible statements (spec section 6) give no rate in ``m`` or
``S``; the spec guesses a bound ``O(poly(n)/(eta t))`` and a size-dependent
step-size threshold. The reduced recursion suggests a heuristic of its own.
At ``B = 0`` the attention is uniform over the ``N`` visible tokens, so the
diagonal ``h1`` moves at rate ``~ (eta / S) / N`` (the ``1/S`` is the share of
one diagonal entry in the population gradient, the ``1/N`` the weight of the
correct edge); the margin needs an ``O(1)`` change before the correct edge
stands out, and then ``O(log N)`` more, at a rate ``~ eta / S``, to carry
most of the attention. Hence ``T ~ (S / eta) (c1 N + c0)``: exactly
proportional to ``S`` at fixed depth, and to ``n^2`` only once ``c1 N``
dominates ``c0``. Measured with the population recursion (lr 1):

* labels grid (``m = 3``, ``S = 15..255``): slope 1.02 in ``S`` for every criterion;
* depth grid, ``S = n``: with the accuracy criterion (end of the symmetric
  start) ``T / (S N)`` settles from 0.30 at ``m = 2`` to 0.249 at ``m = 5, 6``
  (slope 2.01 in ``N``); with the default
  criterion ``T ~ S (0.55 N + 35)`` to within 5% (:func:`~onelayer.studies.trees.scaling.fits.linear_model`), so the
  fitted slope in ``n`` over ``m = 2..6`` is only 1.35, with local slopes
  (:func:`~onelayer.studies.trees.scaling.fits.local_slopes`) rising 1.21, 1.29, 1.40, 1.54 towards 2.

The forward task is not re-run here: :func:`~onelayer.studies.trees.scaling.rows.forward_steps_vs_depth` reads the
stored heads x depth grid of :mod:`onelayer.studies.trees.forward_limits`.
"""

"""Section 5.2 of the walks paper: small random initialisation, and a study over the recipe's unknowns.

The paper's random-initialisation experiment (Figures 6, 11-13): ``K = 6``,
``N = 97``, ``M = 1000``, every entry of ``V`` and ``W`` drawn from
``N(0, sigma^2)`` with ``sigma = 0.01``, step size ``eta = 0.01``,
``epsilon = 0.1``, 1000 training walks, 1000 test walks, 1000 GD steps, and
"each ``x~_i`` normalised to unit length inside the attention". The claimed
outcome: ``p = 0.5`` reaches the optimal accuracy after roughly 400 steps,
while ``p = 1`` does not reach 100 % within 1000 steps.

Three details are not stated, and each is an option here:

* ``normalize``: ``"keys_and_query"``, ``"keys"`` (the query column
  ``x~_N`` left as it is) or ``"none"``;
* ``reduction``: the training loss is the *mean* or the *sum* over the 1000
  walks. The sum is the mean with the step size multiplied by 1000 (plain GD);
* ``lr``: the step size, in case the stated 0.01 belongs to another reduction.

:func:`~onelayer.studies.walks.random_init.runs.run_config` runs one setting and returns JSON-able curves (test accuracy,
fraction of Bayes-optimal predictions, KL, attention on the parent and on
``x_{N-2}``), snapshots of ``V``, the final attention profile and, at the
steps of the authors' OpenReview table, the *weighted average token*
``X S`` of one example sequence with its per-coordinate variance over the
training sequences. The study ``walks-random-init`` runs the grid; :func:`~onelayer.studies.walks.random_init.readings.ordering_table`
reduces it to "which ``p`` is learned first".

The full study (3 normalisations x 6 readings x 2 walks x 20 seeds, 720 runs of
about 1.3 s each on one idle core) takes about half an hour, so the chapter loads a
stored copy (:mod:`onelayer.studies.walks.random_init.stored`)::

    .venv/bin/python -m onelayer study walks-random-init --jobs 2

(``--quick`` writes a tiny version in seconds). Seeds 0-2 (``detail_seeds``) keep
every curve, ``V`` and the attention profile; the other seeds keep what the rates
need (the optimal-fraction curve, the final values, the attention peak and the
weighted-token table). :func:`~onelayer.studies.walks.random_init.readings.setting_rates`, :func:`~onelayer.studies.walks.random_init.readings.learned_attention` and
:func:`~onelayer.studies.walks.random_init.readings.table_variances` turn the study's runs into rates over the seeds.
``tests/test_walks_random_init.py`` recomputes stored runs and compares.

The runs are separate, not batched: :func:`onelayer.studies.walks.batched.train_batched`
trains the same members bit for bit (difference 0 on one seed of this setting),
but at ``N = 97``, ``M = 1000`` and 1000 walks it saves only about 12 % of the
training time per member (measured with 4 and 8 members), less than the per-run
records would cost to rewrite.

The KL convention is :mod:`onelayer.studies.walks.kl`'s default: negative scores
clipped, ``tau = 1e-6`` added, ``KL(P_true || P_hat)`` averaged over the test
walks.
"""

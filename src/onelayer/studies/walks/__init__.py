"""The walks studies: every experiment on the walks paper's model (:mod:`onelayer.walks`).

* :mod:`~onelayer.studies.walks.experiment`: the set-up the chapters share (model, data, GD) and the Theorem 3.1
  experiments; :mod:`~onelayer.studies.walks.first_steps`, :mod:`~onelayer.studies.walks.direction`,
  :mod:`~onelayer.studies.walks.edge`: the first steps, the direction of ``V`` and the boundary runs.
* :mod:`~onelayer.studies.walks.theorem41`, :mod:`~onelayer.studies.walks.sensitivity`: Theorem 4.1 and the
  escape from the symmetric state.
* :mod:`~onelayer.studies.walks.batched`: many members of one size trained in one call, through the model's own
  forward pass and gradients.
* :mod:`~onelayer.studies.walks.qa`, :mod:`~onelayer.studies.walks.kl`: Section 6's question answering.
* :mod:`~onelayer.studies.walks.random_init`, :mod:`~onelayer.studies.walks.variations`,
  :mod:`~onelayer.studies.walks.chains`, :mod:`~onelayer.studies.walks.histogram_bound`,
  :mod:`~onelayer.studies.walks.rebuttal`: Section 5.2 and the variations.
* :mod:`~onelayer.studies.walks.analysis`: readings of runs (steps to optimal, a sample's target, offset means, the
  sampled Bayes accuracy).
* :mod:`~onelayer.studies.walks.scaling`: steps to converge and time per step against ``N`` and ``M``.
* Stored studies: :mod:`~onelayer.studies.walks.seed_rates`, :mod:`~onelayer.studies.walks.gram_errors`,
  :mod:`~onelayer.studies.walks.direction_slopes`, :mod:`~onelayer.studies.walks.qa_seeds`.
"""

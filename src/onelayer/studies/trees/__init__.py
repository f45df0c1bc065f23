"""Studies of the trees paper: what runs :mod:`onelayer.trees` over seeds, sizes and readings, and the stored studies.

Backward (Trees I): :mod:`~onelayer.studies.trees.backward_generalization` (random test trees, Theorem 4),
:mod:`~onelayer.studies.trees.backward_batched` (many members of the backward trainer in one batched call),
:mod:`~onelayer.studies.trees.backward_seeds` (the stored seed study), :mod:`~onelayer.studies.trees.backward_own_tests`
(the Gaussian runs, each on its own test trees), :mod:`~onelayer.studies.trees.backward_beyond` (past the assumptions).
Forward (Trees II):
:mod:`~onelayer.studies.trees.forward_limits` (heads x depth), :mod:`~onelayer.studies.trees.forward_seeds`,
:mod:`~onelayer.studies.trees.forward_seeded_training`, :mod:`~onelayer.studies.trees.forward_rescaling`,
:mod:`~onelayer.studies.trees.forward_edge_flag`, :mod:`~onelayer.studies.trees.forward_limit_rates` (read by
:mod:`~onelayer.studies.trees.forward_readings`),
:mod:`~onelayer.studies.trees.forward_alternative_layouts` (its layouts: :mod:`~onelayer.studies.trees.layout_variants`),
:mod:`~onelayer.studies.trees.forward_learned_values`,
:mod:`~onelayer.studies.trees.forward_beyond` (past the assumptions), and :mod:`~onelayer.studies.trees.stored_study`
(what the forward studies share around the runner). Both: :mod:`~onelayer.studies.trees.analysis` (readings of runs and
constructions: H statistics, phases, the scale grid, the stage-entry search), :mod:`~onelayer.studies.trees.beyond` (the test shapes past
the assumptions) and :mod:`~onelayer.studies.trees.scaling`
(steps to converge against the tree size).

These modules import the papers' floor (:mod:`onelayer.trees`, the trainers, validation) and the storage and
perturbation helpers (``store``, ``paths``, ``jitter``, ``rates``), never the book's chapters, figures or widgets.
"""

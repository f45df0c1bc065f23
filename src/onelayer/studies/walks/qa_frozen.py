"""The frozen-attention control of Section 6 (issue 31): the runs of :mod:`onelayer.studies.walks.qa_seeds` again, with
the attention kept at its initialisation.

Every setting of ``walks-qa-seeds`` (both tasks under every normalisation, without a bias and with the rebuttal's three
bias placements, and the ReLU variant of Figure 10) with
the seeds, training samples, initialisations, steps and scoring of the stored study ``walks-qa-seeds`` (seed ``s`` of a
setting here starts from exactly the point of seed ``s`` there: a paired control), except that the
attention parameters (``q``, and the attention bias ``beta`` where there is one) get step size 0: only ``V`` trains
(with the output bias, or the ReLU layer's ``A``, where the setting has them). Whatever a setting learns here, it
learns without the attention moving; the difference between the two studies is what training the attention adds.
``python -m onelayer study walks-qa-frozen`` runs it (1,040
members, one per setting and seed; 6 minutes on 2 jobs of a shared 2-core machine).
"""

from __future__ import annotations

from ..runner import Study
from .qa_seeds import QUICK, Settings, members, run_member, summarize

__all__ = ["STUDY"]

STUDY = Study(name="walks-qa-frozen", stored="walks/data/qa_frozen.json", kind="walks-qa-frozen",
              settings=Settings(attention="frozen"),
              quick=Settings(**{**QUICK.__dict__, "attention": "frozen"}),
              members=members, run_member=run_member, summarize=summarize, rtol=0.0, atol=1e-12,
              description="Walks, Section 6: the question-answering runs of walks-qa-seeds with the attention frozen at "
                          "its initialisation (only V trains), every setting (bias placements included), 40 seeds each")

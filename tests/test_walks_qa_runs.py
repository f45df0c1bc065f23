"""The question-answering chapter's stored single runs (onelayer.studies.walks.qa_runs, the study walks-qa-runs)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from onelayer.chapters.walks import qa as chapter
from onelayer.studies import registry, runner
from onelayer.studies.walks import qa, qa_runs


def test_members_cover_every_run_the_chapter_reads():
    keys = [m.key for m in qa_runs.members(qa_runs.STUDY.settings)]
    assert len(keys) == len(set(keys)) == 6 + 4 + 4 + 8 + 3 + 1 + 9
    assert {"linear-keys_and_query-t1", "symmetry-zero-sin", "relu-s001-t2", "bias-both-t2", "bias-zero-output",
            "long", "explorer-s2-lr2"} <= set(keys)
    assert "bias-zero-none" not in keys  # the paper's model from zero is the symmetry check's run
    assert len(qa_runs.members(qa_runs.QUICK)) == 2 + 1 + 2 + 4 + 1 + 1 + 2


def test_a_stored_run_reads_back_as_the_history_it_recorded():
    settings = dataclasses.replace(qa_runs.QUICK, steps=3)
    member = next(m for m in qa_runs.members(settings) if m.key == "bias-output-t2")
    live = qa.bias_run(qa.setup_task(2), "output", steps=3, record_every=1)
    back = qa_runs.histories({"members": [{"key": member.key, "result": qa_runs.run_member(settings, member)}]})[member.key]
    assert np.array_equal(back.steps, live.steps) and set(back.records) == set(live.records)  # exact: integer steps
    assert all(np.array_equal(back[k], live[k]) for k in live.records)  # exact: floats stored at full precision
    frame = next(m for m in qa_runs.members(settings) if m.key == "explorer-s1-lr0")
    runs = qa_runs.histories({"members": [{"key": frame.key, "result": qa_runs.run_member(settings, frame)}]})[frame.key]
    assert sorted(runs) == [1, 2] and all(len(h["acc"]) == len(h.steps) for h in runs.values())


def test_the_chapter_refuses_a_stored_study_with_other_settings(monkeypatch):
    stored = registry.load(qa_runs.STUDY.name)
    monkeypatch.setattr(qa_runs, "load_study", lambda name, **kw: {**stored, "settings": {**stored["settings"], "steps": 50}})
    chapter._stored.cache_clear()
    try:
        with pytest.raises(ValueError, match="walks-qa-runs"):
            chapter._stored()
    finally:
        chapter._stored.cache_clear()


@pytest.mark.recompute
def test_the_cheapest_stored_member_is_recomputed():
    assert runner.verify(qa_runs.STUDY, sample=1, echo=None)


@pytest.mark.recompute
def test_the_stored_figure7_run_is_the_live_run():
    live = qa.run(qa.setup_task(1), steps=qa_runs.STUDY.settings.steps)
    stored = chapter.runs("linear-keys_and_query-t1")
    assert np.array_equal(stored.steps, live.steps)  # exact: integer steps
    for k in live.records:  # tol: the study's own tolerance (float64 round-off of another machine)
        np.testing.assert_allclose(stored[k], live[k], rtol=0, atol=qa_runs.STUDY.atol)

"""Chapter "Theorem 5: the heads specialize": its module (onelayer.chapters.trees.forward_training)."""

from __future__ import annotations

from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer import store
from onelayer.chapters.trees import forward_training as chapter
from onelayer.studies.runner import compute
from onelayer.studies.trees import forward_training_runs as runs_study, stored_study
from onelayer.rates import rate
from onelayer.trees.forward.dynamics import SCALAR_NAMES
from onelayer.verdicts import trees_forward_training as verdicts

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}
CACHED = (chapter._training_run, chapter._paper_lr_runs, chapter._stored_runs)  # the caches behind training_run and paper_lr_runs


def test_quick_run_records_every_interval_and_keeps_the_player_snapshots():
    s = chapter.SETTINGS
    _, hist = chapter.training_run(quick=True)
    assert list(hist.steps) == list(range(0, s.quick_steps + 1, s.record_every))
    assert sorted(hist.snapshots) == [t for t in s.scrub_steps if t <= s.quick_steps]
    _, frames = chapter.attention_steps_frames(quick=True)
    assert [f["setting"] for f in frames["frames"]] == [[t] for t in sorted(hist.snapshots)]


def test_node_block_columns_keep_summing_to_zero():
    """u_{l,2} = -u_{l,1} / (S - 1) at every recorded step: with one-hot embeddings the gradient of each column of U_l
    is a sum of softmax logit gradients, which add up to zero (the chapter's exercise)."""
    A, hist = chapter.training_run(quick=True)
    S = A.shape[1]
    sc = hist["scalars"]
    for diag, off in ((SCALAR_NAMES.index("u1,1"), SCALAR_NAMES.index("u1,2")), (SCALAR_NAMES.index("u2,1"), SCALAR_NAMES.index("u2,2"))):
        assert np.allclose(sc[:, off], -sc[:, diag] / (S - 1), atol=1e-12)  # tol: float64 sums of 625 entries


def test_rescaling_puts_the_sum_run_on_the_mean_scale():
    fig, numbers = chapter.rescaling(quick=True)
    plt.close(fig)
    s = chapter.SETTINGS
    positions = 2 * s.m + 1
    by_run = {}
    for r in numbers["table"]:
        by_run.setdefault(r["run"], []).append(r)
    assert set(by_run) == {"lr 2, mean (main run)", "lr 0.2, mean", "lr 0.2, sum over positions"}
    short = chapter.paper_lr_runs(quick=True)
    for r, loss in zip(by_run["lr 0.2, sum over positions"], short["sum"]["loss"]):
        assert r["eta_eff_t"] == pytest.approx(s.paper_lr * positions * r["step"], rel=1e-12)  # tol: round-off
        assert r["loss_mean_half"] == pytest.approx(loss / positions, rel=1e-12)  # tol: round-off
    assert numbers["pairs"] is None  # quick mode has no step 140 of the main run


def test_sign_table_has_one_row_per_scalar_and_frees_the_construction_zeros():
    fig, numbers = chapter.roles(quick=True)
    plt.close(fig)
    table = numbers["table"]
    assert [r["scalar"] for r in table] == list(SCALAR_NAMES)
    assert all((r["agree"] == "free") == (r["construction"] == 0) for r in table)


def test_verdicts_follow_from_their_measurements(monkeypatch):
    """On a short version of the live runs and the stored study: the keys, the rate rows' verdicts as their counts
    say, the symmetry row, one split row per stored initialisation scale."""
    small = replace(chapter.SETTINGS, steps=200, paper_lr_steps=200, scrub_steps=(0, 100, 200))
    monkeypatch.setattr(chapter, "SETTINGS", small)
    for f in CACHED:
        f.cache_clear()
    try:
        rows = chapter.verdict_rows()
    finally:
        for f in CACHED:
            f.cache_clear()
    stored = chapter.seeded_runs()
    assert len(rows) == 4 + len(stored["learned_values"])
    assert rows[-1]["claim"].startswith("the learning rate and the loss normalisation")
    assert rows[-1]["verdict"] in ("holds to within 1% in every seed", "fails: some seed differs by 1% or more")
    assert rows[-1]["measurement"].count("/20 = ") == 2 and "20 data seeds" in rows[-1]["settings"]
    for row in rows:
        assert KEYS <= set(row) <= KEYS | {"rates"} and row["chapter"] == "forward_training"
        assert row["source"] in {"[paper]", "[ours]"}
    runs = stored["two_head"]["runs"]
    k = sum(min(r["final_accuracy"]) == 1.0 and r["signs_agree"] == r["signs_fixed"] for r in runs)  # exact: shares
    assert f"{k}/{len(runs)} = " in rows[0]["measurement"]
    assert rows[0]["verdict"] == ("fails in every run" if k == 0 else f"holds {verdicts.rate_words(rate(k, len(runs)))}")
    assert rows[2]["verdict"] == "by symmetry" and rows[2]["source"] == "[ours]"
    for row, block in zip(rows[3:-1], stored["learned_values"]):
        assert f"sd {block['init_scale']:g}" in row["reading"]
        assert row["verdict"].startswith(("partly", "not seen")) and "stage block" in row["verdict"]


def test_rate_words_follow_the_interval():
    assert verdicts.rate_words(rate(20, 20)) == "in every run"
    assert verdicts.rate_words(rate(0, 20)) == "in no run"
    assert verdicts.rate_words(rate(3, 20)) == "in a minority of runs"
    assert verdicts.rate_words(rate(17, 20)) == "in most runs"
    assert verdicts.rate_words(rate(10, 20)) == "in about half the runs"


def test_split_curves_recount_the_stored_shares():
    """The rates of the table are the stored node shares counted again against each threshold."""
    stored = chapter.seeded_runs()
    rows = chapter.split_curves()
    for block in stored["learned_values"]:
        for threshold in chapter.SETTINGS.lv_thresholds:
            for i, t in enumerate(block["steps"]):
                if t == 0:
                    continue
                row = next(r for r in rows if r["init"] == block["init_scale"] and r["threshold"] == threshold
                           and r["step"] == t)
                top = np.max(block["node_share"][i], axis=1)
                assert row["node split"].k == int((top >= threshold).sum()) and row["node split"].n == len(top)
    fig, numbers = chapter.lv_split()
    plt.close(fig)
    assert len(numbers["table"]) == len(rows)


def test_rescaling_seeds_read_the_stored_runs_at_the_chapter_settings():
    """The table compares the stored runs at paper_lr (mean, sum) with the run at lr; the rates count seeds."""
    s = chapter.SETTINGS
    _, numbers = chapter.rescaling_seeds()
    assert [r["run"] for r in numbers["table"]] == [f"lr {s.paper_lr:g} (mean)", f"lr {s.paper_lr:g} (sum)"]
    seeds = len(numbers["seeds"])
    assert seeds >= 20
    for g in numbers["summaries"].values():
        assert g["seeds"] == seeds and g["within"].startswith(f"{g['within_k']}/{seeds} = ")
        assert (g["within_k"] == seeds) == (g["largest_gap"] < s.rescaling_tol)
    # the last common points are the chapter's two comparisons (the steps of rescaling_pairs)
    assert [r["steps at the end"] for r in numbers["table"]] == [f"{a} vs {b}" for a, b in s.rescaling_pairs]


def test_attention_player_frames_share_one_colour_scale():
    draw = chapter._attention_draw(True)
    limits = set()
    for t in (0, chapter.SETTINGS.quick_steps):
        fig = draw(t)
        limits |= {im.get_clim() for ax in fig.axes for im in ax.images}
        plt.close(fig)
    assert limits == {(0, 1)}


def test_the_cached_runs_do_not_depend_on_how_quick_is_passed():
    """The notebook calls training_run() and the figures training_run(False): one run, trained once."""
    assert chapter.training_run(True) is chapter.training_run(quick=True)
    assert chapter.paper_lr_runs(True) is chapter.paper_lr_runs(quick=True)


def test_split_at_reads_one_entry_and_names_a_missing_one():
    curves = chapter.split_curves()
    r = curves[0]
    assert chapter.split_at(curves, r["init"], r["threshold"], r["step"]) is r["node split"]
    assert chapter.split_at(curves, r["init"], r["threshold"], r["step"], "stage split") is r["stage split"]
    with pytest.raises(ValueError, match="no split curve"):
        chapter.split_at(curves, r["init"], r["threshold"], 7)


@pytest.mark.recompute
def test_stored_runs_are_the_chapters_runs():
    """The stored study ``trees-forward-training-runs`` was made with the chapter's settings; its cheapest member (the
    200-step run at lr 0.2, mean) recomputed now is the stored one, bit for bit (one float64 computation, stored
    exactly), and reads back as the History the chapter draws."""
    settings = chapter._runs_settings(False)
    assert settings == runs_study.STUDY.settings
    member = next(m for m in runs_study.STUDY.member_list(settings) if m.key == "paper-lr-mean")
    fresh = stored_study.history(store.from_jsonable(compute(runs_study.STUDY, settings, member)[1]["result"]))
    stored = chapter.paper_lr_runs()["mean"]
    assert np.array_equal(fresh.steps, stored.steps) and set(fresh.records) == set(stored.records) == {"loss"}  # exact: integer steps, record names
    assert np.array_equal(fresh["loss"], stored["loss"])  # exact: the same float64 computation
    assert all(np.array_equal(fresh.params[n].numpy(), stored.params[n].numpy()) for n in stored.params)  # exact: as above
    _, hist = chapter.training_run()
    assert sorted(hist.snapshots) == list(chapter.SETTINGS.scrub_steps)
    assert hist.steps[-1] == chapter.SETTINGS.steps and hist["scalars"].shape == (len(hist.steps), len(SCALAR_NAMES))


def test_the_chapter_refuses_stored_runs_of_other_settings(monkeypatch):
    monkeypatch.setattr(chapter, "SETTINGS", replace(chapter.SETTINGS, steps=500))
    for f in CACHED:
        f.cache_clear()
    try:
        with pytest.raises(ValueError, match="other settings"):
            chapter.training_run()
    finally:
        for f in CACHED:
            f.cache_clear()

"""Chapter "Theorem 3.1": its module (onelayer.chapters.walks.theorem31)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.chapters.walks import theorem31 as chapter
from onelayer.walks import experiment, first_steps, ring, theory

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "chapter"}


@pytest.fixture(autouse=True)
def _float64():
    torch.set_default_dtype(torch.float64)


def test_lemma_c1_numbers_report_the_measured_v1_apart_from_the_closed_form():
    # issue 21: the "1000 walks" rows once said circulant=True / max_offsets=1 (the closed form's properties under the
    # data's name); here each row is checked against V(1) counted from the training walks, without the model
    _, numbers = chapter.lemma_c1()
    rows = {(r["p"], r["data"]): r for r in numbers["table"]}
    assert set(rows) == {(p, d) for p in chapter.SETTINGS.lemma_c1_ps for d in ("population", "1000 walks")}
    for p in chapter.SETTINGS.lemma_c1_ps:
        counted = first_steps.first_step_from_counts(chapter.sample_experiment(p).train)["V1"]
        K = counted.shape[0]
        rolled = np.stack([np.roll(counted[:, 0], j) for j in range(K)], axis=1)
        sample = rows[(p, "1000 walks")]
        assert sample["V1_circulant"] is False and sample["V1_circulant_deviation"] > 0.01
        assert sample["V1_circulant_deviation"] == pytest.approx(np.abs(counted - rolled).max(), abs=1e-12)
        offsets = [int((np.argmax(counted[:, s]) - s) % K) for s in range(K)]  # no ties on the sample
        assert sample["V1_column_max_offsets"] == " ".join(map(str, offsets)) != " ".join(["1"] * K)
        closed = theory.lemma_c1_value(K, p, 97, 1.0, 0.1)[:, 0]
        expected = np.flatnonzero(closed > closed.max() - 1e-12).tolist()  # offsets = rows of column 0
        assert sample["closed_form_max_offsets"] == " ".join(map(str, expected))
        assert sample["closed_form_circulant"] is True and rows[(p, "population")]["V1_circulant"] is True
    assert rows[(0.7, "1000 walks")]["closed_form_max_offsets"] == "1"  # Lemma C.3 on the formula
    assert rows[(0.5, "1000 walks")]["closed_form_max_offsets"] == "0 1 5"  # the exact tie at p = 1/2
    counted07 = first_steps.first_step_from_counts(chapter.sample_experiment(0.7).train)["V1"]
    assert np.abs(np.asarray(numbers["V1_p07"]) - counted07).max() < 1e-12


def test_first_step_by_counting_names_the_most_frequent_label():
    counts = chapter.first_step_by_counting()
    labels = chapter.sample_experiment(chapter.SETTINGS.p).train.labels.numpy()
    assert counts["top_label"] == int(np.argmax(np.bincount(labels, minlength=6)))
    assert counts["counting_error"] < 1e-12
    assert len(counts["column_max_labels"]) == 6


def test_fig4_quick_is_bayes_optimal_from_step_3_and_the_player_shares_its_run():
    _, numbers = chapter.fig4(quick=True)
    table = numbers["table"]
    assert [r["step"] for r in table] == list(range(chapter.SETTINGS.quick_steps + 1))
    optimal = [abs(r["conditional_accuracy"] - 0.5) < 1e-9 for r in table]
    first = next(t for t in range(len(optimal)) if all(optimal[t:]))
    assert numbers["steps_to_optimal"] == first == 3
    assert chapter.fig4_run(True) is chapter.fig4_run(True)  # cached: one run for the figure and the frames
    _, frames = chapter.steps_frames(quick=True)
    assert len(frames["frames"]) == chapter.SETTINGS.quick_steps + 1


def test_parent_log_odds_quick_grow_with_N_under_the_power_rule():
    _, numbers = chapter.parent_log_odds(quick=True)
    power = [r for r in numbers["table"] if r["M_rule"].startswith("M = ceil")]
    assert [r["N"] for r in power] == list(chapter.SETTINGS.quick_log_odds_Ns)
    assert [r["M"] for r in power] == [int(np.ceil(N ** 1.5)) for N in chapter.SETTINGS.quick_log_odds_Ns]
    assert np.all(np.diff([r["median_min_log_odds"] for r in power]) > 0)


def test_value_direction_quick_rows_and_the_closed_forms():
    _, numbers = chapter.value_direction(quick=True)
    rows = numbers["table"]
    assert [r["p"] for r in rows] == list(chapter.SETTINGS.direction_ps)
    for r in rows:
        assert r["sqrt_odds"] == pytest.approx(np.sqrt(r["p"] / (1 - r["p"])), rel=1e-15)
        assert r["norm_over_sqrt_2t"] == pytest.approx(1.0, abs=0.1)
    assert numbers["loglog_slope_d_empirical_p07"] is None and numbers["loglog_from_step"] is None  # 8 records
    assert set(numbers["reduced_dynamics_ratio"]) == {"0.7", "0.9"}
    assert set(chapter.DIRECTION_HEADERS) <= set(rows[0])


def test_steps_to_optimal_quick_and_lemma_c5_rows():
    _, numbers = chapter.steps_to_optimal(quick=True)
    assert [(r["K"], r["N"]) for r in numbers["table"]] == list(chapter.SETTINGS.steps_table_sizes[:2])
    assert all(r["T0"] <= 4 for r in numbers["table"])
    population, sample = chapter.lemma_c5_rows()
    assert population["q_tok_rel_spread"] < 1e-10 and sample["q_tok_rel_spread"] > 0.1
    assert min(population["parent_attention_min"], sample["parent_attention_min"]) > 0.9999


def test_verdicts_follow_from_their_measurements(monkeypatch):
    rows = chapter.verdict_rows()
    assert all(set(r) == KEYS and r["chapter"] == "theorem31" and r["source"] == "[paper]" for r in rows)
    verdicts = {r["claim"].split(":")[0]: r for r in rows}
    c1 = verdicts["Lemmas C.1-C.3"]
    assert "circulant True" in c1["measurement"] and c1["verdict"].startswith("holds on the population only")
    assert verdicts["Theorem 3.1 item 3"]["verdict"].startswith("false for p != 1/2")
    assert verdicts["Lemma C.7"]["verdict"].startswith("the remainder grows")
    edge = next(r for r in rows if r["claim"].startswith("Theorem 3.1 needs N"))
    assert edge["measurement"].startswith("24/25 runs") and edge["verdict"].startswith("holds in almost every run")
    assert "one seed" in c1["measurement"]
    # a population V(1) that is not circulant would make the first verdict fail
    bad = [dict(r, V1_circulant=False) for r in chapter.lemma_c1_rows()]
    monkeypatch.setattr(chapter, "lemma_c1_rows", lambda: bad)
    assert chapter.verdict_rows()[0]["verdict"] == "fails on the population"


def test_bayes_accuracy_of_the_fig4_experiment():
    exp = chapter.fig4_experiment()
    assert exp.bayes_accuracy == ring.bayes_accuracy(0.5) == 0.5  # exact: max(p, 1 - p) of 0.5
    assert exp.model.config.N == chapter.SETTINGS.fig4_N and exp is chapter.fig4_experiment()
    assert experiment.OPTIMAL_TOL < 1e-6

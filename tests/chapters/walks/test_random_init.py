"""Chapter "Random initialisation": its module (onelayer.chapters.walks.random_init)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.chapters.walks import random_init as chapter
from onelayer.verdicts import walks_random_init as verdicts
from onelayer.rates import rate
from onelayer.studies.walks.random_init import readings as ri_readings, runs as ri_runs, stored as ri_stored

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


@pytest.fixture(scope="module")
def rows():
    return chapter.verdict_rows()


def test_the_initial_attention_marks_nothing_normalised_as_outside_the_small_init_regime():
    rows = {r["normalize"]: r for r in chapter.initial_attention_rows()}
    assert set(rows) == {"keys_and_query", "keys", "none"}
    assert not rows["none"]["small_init"] and rows["none"]["logit_spread_mean"] > 1  # about 0.01 sqrt(501 * 500) = 5
    assert rows["keys_and_query"]["small_init"] and rows["keys_and_query"]["max_weight_max"] < 2 / 97
    for r in rows.values():
        assert r["label"].startswith("inside" if r["small_init"] else "OUTSIDE") and r["members"] == 40


def test_quick_study_has_the_quick_grid_and_sizes():
    data = chapter.study(quick=True)
    assert data["meta"]["N"] == ri_stored.QUICK.N and len(data["runs"]) == 2 * 2  # 2 readings x 2 walks x 1 seed
    assert chapter.study(quick=True) is data  # cached: the figures and the player read one study


def test_ordering_counts_add_up_and_settings_rows_group_the_seeds():
    rows = chapter.ordering()[1]["table"]
    counts = chapter.ordering_counts()
    assert sum(counts[k] for k in ("p=0.5", "p=1", "tie", "neither")) == counts["pairs"] == len(rows) == 720 // 2
    assert sum(counts["outcomes"].values()) == counts["pairs"] and counts["outcomes"]["p=0.5 only"] == counts["paper_pattern"]
    assert (counts["paper_rate"].k, counts["paper_rate"].n) == (counts["paper_pattern"], counts["pairs"])
    assert (counts["settings"], counts["seeds"]) == (18, 20)
    per = chapter.setting_rates()
    assert len(per) == 18 and all(r["n"] >= chapter.SETTINGS.min_seeds for r in per)
    assert all(sum(r[o].k for o in ri_readings.OUTCOMES) == r["n"] for r in per)
    grouped = ri_readings.pattern_by_normalization(per)
    assert [g["normalize"] for g in grouped] == list(dict.fromkeys(r["normalize"] for r in per))
    assert all(len(g["settings"]) == 6 and g["seeds"] == [20] for g in grouped)
    assert sum(g["pooled"].k for g in grouped) == counts["paper_pattern"]


def test_closest_ranking_is_sorted_by_the_mean_distance_to_the_authors_table():
    ranking = chapter.closest_ranking()
    means = [np.mean(d) for _, d in ranking]
    assert means == sorted(means) and chapter.closest_reading() == ranking[0][0]
    p1, half = chapter.closest_runs()
    assert (p1["config"]["p"], half["config"]["p"]) == (1.0, 0.5)
    assert ri_readings.table_distance(p1) == pytest.approx(ranking[0][1][0], abs=1e-12)  # seed 0 is the first distance


def test_value_rows_are_the_snapshots_of_the_closest_run():
    V = chapter.fig12()[1]["V"]
    for r in chapter.value_rows():
        A = np.array(V[str(r["step"])])
        assert r["mean"] == pytest.approx(A.mean(), rel=1e-12)
        assert r["relative_spread"] == pytest.approx((A.max() - A.min()) / A.mean(), rel=1e-12)


def test_sum_loss_is_the_mean_loss_with_a_thousand_fold_step():
    assert chapter.equivalence() < 1e-9  # tol: round-off of 30 steps (the same trajectory in exact arithmetic)


def test_lock_rows_point_at_the_profile_maximum():
    for r in chapter.lock_rows():
        assert r["position"] + r["lag"] == 97 and 0 < r["attention"] <= 1


def test_verdict_rows_have_the_keys_and_follow_from_the_measurements(rows):
    assert all(KEYS <= set(r) <= KEYS | {"rates", "checks"} and r["chapter"] == "random_init" for r in rows)
    per = chapter.setting_rates()
    groups = list(dict.fromkeys(r["normalize"] for r in per))
    assert len(rows) == len(groups) + 2
    for row, normalize in zip(rows, groups):  # one Figure 6 row per normalisation, in the study's order
        group = [r for r in per if r["normalize"] == normalize]
        assert row["claim"].startswith("Figure 6") and row["reading"].startswith(chapter.NORMALIZE_NAMES[normalize])
        for r in group:  # every setting's own count is in the row
            assert f"{r['reduction']}, {r['lr']:g} (eff. {r['effective_lr']:g}): {r['p=0.5 only'].k}/{r['n']}" in row["measurement"]
            assert r["n"] >= 20
        words = {verdicts.figure6_verdict(r["p=0.5 only"]) for r in group}
        start = next(r for r in chapter.initial_attention_rows() if r["normalize"] == normalize)
        verdict = row["verdict"]
        if not start["small_init"]:  # a start outside the small-initialisation regime is labelled first
            assert verdict.startswith("not a test of the claim: the start is outside the small-initialisation regime")
            assert "OUTSIDE the small-initialisation regime" in row["measurement"]
            verdict = verdict.split("in these runs the pattern ", 1)[1]
        assert verdict.startswith(words.pop()) if len(words) == 1 else verdict.startswith("depends")
    literal = [row for row in rows if "the paper's stated numbers" in row["reading"]]
    assert len(literal) == 1 and literal[0]["verdict"] == "fails in every run (0/20) of each of its 6 settings"
    tv = chapter.table_variances()
    assert rows[-2]["claim"].startswith("Figure 13") and f"{tv['seeds']} seeds" in rows[-2]["settings"]
    assert tv["pattern"].text() in rows[-2]["measurement"]
    learned = [r for r in chapter.study()["runs"] if r["config"]["p"] == 0.5
               and ri_readings.final(r, "optimal_fraction") >= chapter.SETTINGS.learned_threshold]
    half = chapter.learned_half_rates()["all"]
    assert half["n"] == len(learned) == sum(r["n"] for r in chapter.learned_half_rates()["settings"])
    assert f"{len(learned)} of {half['runs']} runs learned p=1/2" in rows[-1]["measurement"]
    assert f"on x_(N-1) in {half['parent'].text()}" in rows[-1]["measurement"]


def test_figure6_verdict_follows_the_interval():
    assert verdicts.figure6_verdict(rate(0, 20)) == "fails in every run (0/20)"
    assert verdicts.figure6_verdict(rate(20, 20)) == "holds in every run (20/20)"
    assert verdicts.figure6_verdict(rate(3, 20)) == "holds in a minority of runs"  # upper bound 0.36
    assert verdicts.figure6_verdict(rate(17, 20)) == "holds in most runs"  # lower bound 0.64
    assert verdicts.figure6_verdict(rate(10, 20)) == "holds in some runs"


def test_the_tables_read_the_ranking_and_the_authors_table():
    ranking = ri_readings.distance_intervals(chapter.closest_ranking()[:chapter.SETTINGS.top_ranked])
    assert len(ranking) == chapter.SETTINGS.top_ranked and all(r["seeds"] == 20 for r in ranking)
    assert [r["mean"] for r in ranking] == sorted(r["mean"] for r in ranking)
    variances = chapter.table_variances()["steps"]
    assert [r["step"] for r in variances] == list(ri_runs.TABLE_STEPS)
    assert all(r["variance"][0] > 0 and r["authors"] > 0 for r in variances)
    table = ri_readings.token_table(chapter.closest_runs()[0])
    assert [r["step"] for r in table] == list(ri_runs.TABLE_STEPS)
    assert all(len(r["ours"]) == len(r["authors"]) == 6 for r in table)


def test_figure6_verdict_follows_the_count_of_runs_with_the_pattern(monkeypatch):
    real = ri_readings.ordering_table
    monkeypatch.setattr(ri_readings, "ordering_table",
                        lambda data, **kw: [{**r, "paper_pattern": True, "outcome": "p=0.5 only"} for r in real(data, **kw)])
    assert chapter.verdict_rows()[0]["verdict"] == "holds in every run (20/20) of each of its 6 settings"


def test_figure6_rows_name_a_step_size_that_differs():
    per = chapter.setting_rates()
    group = [r for r in per if r["normalize"] == per[0]["normalize"]]
    mixed = [dict(r, **{"p=0.5 only": rate(20, 20)}) if i == 0 else r for i, r in enumerate(group)]
    row = verdicts.figure6_rows(chapter.SETTINGS, setting_rates=mixed, initial_attention=chapter.initial_attention_rows(),
                                normalize_names=chapter.NORMALIZE_NAMES)[0]
    assert row["verdict"].startswith(f"depends on the step size: eff. {group[0]['effective_lr']:g}: holds in every run")
    assert f": 20/{group[0]['n']}" in row["measurement"]


def test_player_frames_share_their_axes():
    import matplotlib.pyplot as plt

    data = chapter.study()
    limits = ri_readings.kl_limits(data, seed=chapter.SETTINGS.seed)
    draw, norms, readings = chapter._player_grid(data)
    for norm, reading in ((norms[0], readings[0]), (norms[-1], readings[-1])):
        fig = draw(norm, reading)
        assert fig.axes[1].get_ylim() == pytest.approx(limits, rel=1e-12)  # tol: a log axis stores its limits
        assert fig.axes[0].get_ylim() == fig.axes[2].get_ylim() == (-0.02, 1.02)  # exact: set from these literals
        plt.close(fig)


def test_claim_summary_counts_what_the_verdict_table_describes():
    rows = ri_readings.ordering_table(chapter.study(), threshold=chapter.SETTINGS.learned_threshold)
    c = ri_readings.claim_summary(rows, literal=chapter.SETTINGS.literal)
    literal = [r for r in rows if (r["normalize"], r["reduction"], r["lr"]) == chapter.SETTINGS.literal]
    assert c["seeds"] == len(literal) >= 20 and c["literal_half"] == sum(np.isfinite(r["T_half"]) for r in literal)
    assert c["half_min"] <= c["half_max"] <= c["seeds"] and c["half_step_min"] <= c["half_step_max"] <= 1000
    # the table's prose: the settings where p = 1 is never learned are those with keys and query normalised and an
    # effective step up to 1, the literal reading among them, and they learn nothing at all
    never = {(r["normalize"], r["effective_lr"]) for r in rows} - {(r["normalize"], r["effective_lr"]) for r in rows
                                                                    if np.isfinite(r["T_one"])}
    assert c["one_never"] == len(never) and all(n == "keys_and_query" and e <= 1 for n, e in never)
    assert c["one_never_learn_nothing"] and 0 < c["one_min"] <= c["one_max"] <= c["seeds"]


def test_the_player_shows_its_stored_frames_without_drawing():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    player = chapter.study_player()
    assert plt.get_fignums() == before  # nothing drawn
    data = chapter.study()
    assert player.shape == (len(data["meta"]["normalizations"]), len(data["meta"]["readings"]))
    assert repr(player).startswith("Scrubber('walks-random-init-sweep': 3 x 6 frames")

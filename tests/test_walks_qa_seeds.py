"""Section 6 over many seeds (onelayer.studies.walks.qa_seeds): the runs, the outcome counts, the stored study and the
frozen-attention control (onelayer.studies.walks.qa_frozen)."""

from __future__ import annotations

import pytest
import torch

from onelayer.training import train

from onelayer.studies import registry, runner
from onelayer.studies.walks import qa, qa_frozen, qa_seeds


def test_seed_zero_is_the_chapters_run_scored_on_the_exact_task():
    run = qa_seeds.seed_run(1, 0, steps=10)
    direct = qa.run(qa.setup_task(1), steps=10)
    assert run["steps"] == list(range(11))
    # the chapter's run is right on every test sentence from step 3 on; on the exact task too
    assert run["first_learned"] == 3 and float(direct.at("test_accuracy", 3)) == pytest.approx(1.0, abs=1e-12)  # tol: weights 1/1000
    assert run["accuracy"][-1] == 1.0  # exact: 32 weights 1/32 summed
    assert run["answers"][-1] == 2


def test_bias_none_is_the_papers_model_and_the_output_bias_changes_the_run():
    plain = qa_seeds.seed_run(1, 3, steps=20, keep_every=5)
    assert plain["steps"] == [0, 5, 10, 15, 20]
    assert plain == {**qa_seeds.seed_run(1, 3, bias="none", steps=20, keep_every=5)}
    out = qa_seeds.seed_run(1, 0, bias="output", steps=20, keep_every=5)
    assert out["accuracy"][-1] == 0.5 and out["answers"][-1] == 1 and out["first_learned"] is None  # exact: 16/32


def test_the_last_step_is_kept_and_task2_has_two_inputs():
    run = qa_seeds.seed_run(2, 1, steps=7, keep_every=5)
    assert run["steps"] == [0, 5, 7]
    assert all(a in (0.0, 0.5, 1.0) for a in run["accuracy"])  # exact: two inputs of weight 1/2


def test_outcome_counts_on_hand_made_runs():
    def run(acc20, acc_end, answers):
        return {"steps": [0, 20, 100], "accuracy": [0.0, acc20, acc_end], "answers": [2, 2, answers]}

    runs = [run(1.0, 1.0, 2), run(0.5, 0.5, 1), run(0.6875, 0.53125, 2), run(0.995, 0.9, 2)]
    counts = qa_seeds.outcome_counts(runs)
    assert counts == {"n": 4, "learned_20": 2, "learned_100": 1, "near_chance": 2, "single_answer": 1,
                      "single_and_near": 1}
    with pytest.raises(ValueError, match="check_steps"):
        qa_seeds.outcome_counts(runs, check_steps=(50,))
    with pytest.raises(ValueError, match="runs"):
        qa_seeds.outcome_counts([])


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="task"):
        qa_seeds.seed_run(3, 0)
    with pytest.raises(ValueError, match="bias"):
        qa_seeds.seed_run(1, 0, bias="input")
    with pytest.raises(ValueError, match="bias"):
        qa_seeds.seed_run(1, 0, bias="output", hidden=19)
    with pytest.raises(ValueError, match="normalize"):
        qa_seeds.seed_run(1, 0, normalize="query")
    with pytest.raises(ValueError, match="seed"):
        qa_seeds.seed_run(1, -1)
    with pytest.raises(TypeError, match="frozen"):
        qa_seeds.seed_run(1, 0, frozen=1)


@pytest.mark.recompute
def test_the_stored_study_is_recomputed_on_a_small_case():
    stored = qa_seeds.payload(registry.load(qa_seeds.STUDY.name))
    n = qa_seeds.STUDY.settings.seeds
    assert stored["seeds"] == list(range(n)) and len(stored["settings"]) == 26
    assert all(len(s["runs"]) == n for s in stored["settings"])
    # recompute three seeds of the output bias (Task 1) and of the ReLU variant (Task 2) at full length
    for setting in ({"task": 1, "bias": "output", "normalize": "keys_and_query"}, {"task": 2, "hidden": 19}):
        entry = next(s for s in stored["settings"] if all(s.get(k) == v for k, v in setting.items()))
        for seed in (0, 1, 2):
            live = qa_seeds.seed_run(seed=seed, steps=stored["steps"], keep_every=stored["keep_every"], **setting)
            kept = entry["runs"][seed]
            assert live["steps"] == kept["steps"] and live["answers"] == kept["answers"]
            assert live["first_learned"] == kept["first_learned"]
            assert live["accuracy"] == pytest.approx(kept["accuracy"], abs=1e-12)  # tol: sums of 32 weights 1/32


@pytest.mark.recompute
def test_the_cheapest_stored_member_is_recomputed():
    assert runner.verify(qa_seeds.STUDY, sample=1, echo=None)


def test_frozen_attention_keeps_the_attention_and_moves_v():
    exp = qa.setup_task(1, seed=0)
    start = qa.bias_init(exp, "both", seed=0)
    assert set(qa_seeds.ATTENTION) < set(start)
    end = train(start, lambda prm: qa.bias_loss_and_grads(exp.model, prm, exp.train)[0], steps=3,
                lr=qa_seeds.step_sizes(start, 0.1, frozen=True), progress=False,
                grad_fn=lambda prm: qa.bias_loss_and_grads(exp.model, prm, exp.train)).params
    assert all(torch.equal(end[n], start[n]) for n in qa_seeds.ATTENTION)  # exact: step size 0
    assert not torch.equal(end["V"], start["V"]) and not torch.equal(end["b"], start["b"])  # exact: any change counts
    assert qa_seeds.step_sizes(start, 0.1, frozen=False) == 0.1
    frozen, trained = qa_seeds.seed_run(1, 0, steps=5, frozen=True), qa_seeds.seed_run(1, 0, steps=5)
    assert frozen["steps"] == trained["steps"] and frozen["accuracy"][0] == trained["accuracy"][0]  # exact: one start


@pytest.mark.recompute
def test_the_frozen_control_is_recomputed_and_pairs_with_the_trained_runs():
    assert runner.verify(qa_frozen.STUDY, sample=1, echo=None)
    frozen = qa_seeds.payload(registry.load(qa_frozen.STUDY.name))
    trained = qa_seeds.payload(registry.load(qa_seeds.STUDY.name))
    assert frozen["attention"] == "frozen" and frozen["seeds"] == trained["seeds"]
    keys = [{k: v for k, v in s.items() if k not in ("steps", "runs")} for s in trained["settings"]]
    for setting in frozen["settings"]:
        assert {k: v for k, v in setting.items() if k not in ("steps", "runs")} in keys
        assert all(r["accuracy"][0] == t["accuracy"][0]  # exact: the same initial point, seed by seed
                   for r, t in zip(setting["runs"], next(t for t in trained["settings"] if all(
                       t.get(k) == v for k, v in setting.items() if k not in ("steps", "runs")))["runs"]))

"""Recipes of the chapter ``qa``: Figures 7 and 10 and the normalisation table."""

from __future__ import annotations

from ...registry import register
from ..settings import QA_STEPS, RELU_HIDDEN, RELU_SEEDS


def _qa_table(runs: dict) -> list[dict]:
    return [{"run": name, "step": int(t), "test_accuracy": float(h["test_accuracy"][i]), "kl": float(h["kl"][i]),
             "fruit_attention": float(h["fruit_attention"][i])}
            for name, h in runs.items() for i, t in enumerate(h.steps)]


@register("walks-fig7", "Question answering: test accuracy and KL of the linear model on Tasks 1 and 2, sigma=0.01, eta=0.1 (paper's Figure 7)")
def _fig7(quick: bool):
    from .. import qa

    steps = 5 if quick else QA_STEPS
    runs = {f"Task {t}": qa.run(qa.setup_task(t), steps=steps) for t in qa.TASKS}
    fig = qa.figure_curves(runs, title="linear model, sigma=0.01, eta=0.1 (paper's Figure 7)")
    return fig, {"steps": steps, "average_gap": {f"Task {t}": qa.average_gap(t) for t in qa.TASKS}, "table": _qa_table(runs)}


@register("walks-fig10", "Question answering with a hidden ReLU layer (m=19): accuracy and KL on Tasks 1 and 2 (paper's Figure 10)")
def _fig10(quick: bool):
    from .. import qa

    steps, seeds = (5, (0,)) if quick else (QA_STEPS, RELU_SEEDS)
    runs = {f"Task {t} (ReLU), seed {s}": qa.run(qa.setup_task(t, hidden=RELU_HIDDEN, seed=s), steps=steps, seed=s)
            for s in seeds for t in qa.TASKS}
    fig = qa.figure_curves({f"Task {t} (ReLU)": runs[f"Task {t} (ReLU), seed 0"] for t in qa.TASKS},
                           title="hidden ReLU layer, m = 19 (paper's Figure 10)")
    return fig, {"steps": steps, "seeds": list(seeds), "table": _qa_table(runs)}


@register("walks-qa-normalization", "Question answering (table): final accuracy and attention on the fruits for three input normalisations")
def _qa_normalization(quick: bool):
    from .. import qa

    steps = 5 if quick else QA_STEPS
    rows = []
    for normalize in ("keys_and_query", "keys", "none"):
        runs = {t: qa.run(qa.setup_task(t, normalize=normalize), steps=steps, record_every=10 if steps >= 10 else 1) for t in qa.TASKS}
        rows.append({"normalize": normalize, "task1_accuracy": float(runs[1].final("test_accuracy")),
                     "task2_accuracy": float(runs[2].final("test_accuracy")),
                     "task1_fruit_attention_start": float(runs[1]["fruit_attention"][0]),
                     "task1_fruit_attention_end": float(runs[1].final("fruit_attention"))})
    return None, {"steps": steps, "table": rows}


@register("walks-qa-explorer-default", "Question answering: the explorer widget's default state: test accuracy of Tasks 1 and 2, sigma=0.01, eta=0.1")
def _qa_explorer_default(quick: bool):
    from .. import qa

    steps = 5 if quick else 100  # the explorer's default
    runs = qa.explorer_runs(steps=steps)
    rows = [{"task": task, "step": int(t), "test_accuracy": float(h["acc"][i])} for task, h in runs.items() for i, t in enumerate(h.steps)]
    return qa.explorer(steps=steps), {"sigma": 0.01, "lr": 0.1, "normalize": "keys_and_query", "steps": steps, "table": rows}

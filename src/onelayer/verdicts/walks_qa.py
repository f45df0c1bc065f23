"""The verdicts of the chapter "Beyond random walks: two question-answering tasks" (``book/walks/qa.ipynb``): Section 6's two tasks, the hidden
ReLU layer of Appendix F.2 and the rebuttal's bias term, each beside the frozen-attention control, from the rates
:mod:`onelayer.chapters.walks.qa` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class, rated
from ..formatting import near_zero_text
from ..studies.walks import qa_seeds
from ..studies.walks.qa_readings import attention_verdict, find, share_verdict

__all__ = ["rows"]


def rows(settings, *, gap: float, symmetry: list[dict], bias_zero_gap: float, rates: list[dict], frozen: list[dict],
         n_seeds: int, steps: int) -> list[dict]:
    """The chapter's verdicts (Section 6, Appendix F.2 and the rebuttal's bias claim). Every claim about training runs
    is a rate over the stored study's seeds (``rates``: :func:`~onelayer.studies.walks.qa_readings.seed_rates` over
    ``n_seeds`` seeds of ``steps`` steps; each seed its own training sample and initialisation, accuracies on the
    exact task), one row per reading (normalisation, bias placement); the rows of Figure 7 and of the bias claim state
    the frozen-attention control of the same seeds (``frozen``) and what training the attention adds
    (:func:`~onelayer.studies.walks.qa_readings.attention_verdict`). ``gap``: the largest difference of the two Task-2
    questions' token averages; ``symmetry``: the symmetry rows of the chapter; ``bias_zero_gap``: how closely the
    bias runs from zero tie the two questions."""
    s = settings
    sym = {(r["init"], r["positions"]): r for r in symmetry}
    zero_tied = max(r["gap_max"] for (init, _), r in sym.items() if init == "zero")
    first, last = s.seed_check_steps[0], s.seed_check_steps[-1]
    runs = (f"sigma = 0.01, eta = 0.1, M = 1000, {steps} steps, 1000 training sentences; {n_seeds} seeds (training "
            f"sample and initialisation); accuracy on the exact task")
    learned = f"accuracy >= {qa_seeds.LEARNED:g}"
    near = f"accuracy within {qa_seeds.NEAR:g} of 1/2"
    rows = [
        {"claim": "the two Task-2 questions have the same token average", "source": "[paper]", "reading": "-",
         "settings": "the exact task (both questions)",
         "measurement": f"largest difference of the two token averages: {near_zero_text(gap)}",
         "verdict": "holds" if gap < 1e-12 else "fails", "class": exact_class(bool(gap < 1e-12)), "chapter": "qa"},
    ]
    for normalize in qa_seeds.NORMALIZATIONS:
        r, f = find(rates, 1, normalize=normalize), find(frozen, 1, normalize=normalize)
        trained, still = r["rates"][f"learned_{last}"], f["rates"][f"learned_{last}"]
        rows.append({"claim": "Task 1 is learned to about 100% within 100 steps (Figure 7)", "source": "[paper]",
                     "reading": r["reading"] + (" (ours; Section 6 does not say)" if normalize == "keys_and_query" else ""),
                     "settings": runs + "; control: the same runs with the attention frozen at its initialisation",
                     "measurement": (f"{learned} at step {last}: {trained.text()}"
                                     + (f"; seed 0 from step {r['seed0_first_learned']}"
                                        if r["seed0_first_learned"] is not None else "")
                                     + f"; attention frozen, only V trained: {still.text()}"),
                     "verdict": share_verdict(trained) + "; " + attention_verdict(trained, still),
                     **rated({f"Task 1 learned by step {last}": trained}), "chapter": "qa"})
    for normalize in qa_seeds.NORMALIZATIONS:
        r, f = find(rates, 2, normalize=normalize), find(frozen, 2, normalize=normalize)
        rows.append({"claim": "Task 2 stays at about 50% (Figure 7)", "source": "[paper]", "reading": r["reading"],
                     "settings": runs + "; control: the same runs with the attention frozen at its initialisation",
                     "measurement": (f"{near} at step {last}: {r['rates']['near_chance'].text()}"
                                     + (f"; from zero the two questions' outputs differ by at most "
                                        f"{near_zero_text(zero_tied)}" if normalize == "keys_and_query" else "")
                                     + f"; attention frozen, only V trained: {f['rates']['near_chance'].text()}"),
                     "verdict": share_verdict(r["rates"]["near_chance"]),
                     **rated({"Task 2 near 1/2": r["rates"]["near_chance"]}), "chapter": "qa"})
    r1, r2 = find(rates, 1, hidden=s.runs.relu_hidden), find(rates, 2, hidden=s.runs.relu_hidden)
    rows.append({"claim": "with a hidden ReLU layer Task 1 is learned and Task 2 is not (Figure 10)", "source": "[paper]",
                 "reading": "f = A ReLU(V X S), m = 19, all Gaussian (ours; Appendix F.2 does not give the form)",
                 "settings": runs.replace("1000 training", "1024 training"),
                 "measurement": (f"Task 1 {learned} at step {last}: {r1['rates'][f'learned_{last}'].text()}, one answer "
                                 f"for every list: {r1['rates']['single_answer'].text()}; Task 2 {near}: "
                                 f"{r2['rates']['near_chance'].text()}"),
                 "verdict": (f"Task 1 {share_verdict(r1['rates'][f'learned_{last}'])}; "
                             f"Task 2 {share_verdict(r2['rates']['near_chance'])}"),
                 **rated({f"Task 1 learned by step {last}": r1["rates"][f"learned_{last}"],
                          "Task 2 near 1/2": r2["rates"]["near_chance"]}),
                 "chapter": "qa"})
    for normalize in qa_seeds.NORMALIZATIONS:
        for placement in ("attention", "output", "both"):
            t1, t2 = find(rates, 1, placement, normalize), find(rates, 2, placement, normalize)
            f1, f2 = find(frozen, 1, placement, normalize), find(frozen, 2, placement, normalize)
            trained, still = t1["rates"][f"learned_{first}"], f1["rates"][f"learned_{first}"]
            rows.append({
                "claim": "with a bias term Task 1 is at 100% after 20 steps and Task 2 at about 50%", "source": "[summary]",
                "reading": t1["reading"] + " (ours; the bias starts at zero)",
                "settings": runs + ("; control: the same runs with the attention (and the attention bias) frozen at "
                                    "its initialisation"),
                "measurement": (f"Task 1 {learned} at step {first}: {trained.text()}, at step "
                                f"{last}: {t1['rates'][f'learned_{last}'].text()}; Task 1 {near} at step {last}: "
                                f"{t1['rates']['near_chance'].text()}, one answer for every list: "
                                f"{t1['rates']['single_answer'].text()}; Task 2 {near}: {t2['rates']['near_chance'].text()}"
                                + (f"; from zero tied to {near_zero_text(bias_zero_gap)}" if normalize == "keys_and_query"
                                   else "")
                                + f"; attention frozen, only V (and the output bias) trained: Task 1 {learned} at step "
                                  f"{first}: {still.text()}, Task 2 {near}: {f2['rates']['near_chance'].text()}"),
                "verdict": (f"Task 1 {share_verdict(trained)}; Task 2 {share_verdict(t2['rates']['near_chance'])}; "
                            f"Task 1 {attention_verdict(trained, still)}"),
                **rated({f"Task 1 learned by step {first}": trained, "Task 2 near 1/2": t2["rates"]["near_chance"]}),
                "chapter": "qa"})
    return rows

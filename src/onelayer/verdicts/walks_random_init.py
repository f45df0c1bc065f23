"""The verdicts of the chapter "Random initialisation" (``book/walks/random_init.ipynb``): Figure 6 (from a small
random start, ``p = 1/2`` is learned and ``p = 1`` is not) as a rate per setting and normalisation, the weighted token
of Figure 13 against the authors' table, and what the learned ``p = 1/2`` runs attend to (Figure 11), from the numbers
:mod:`onelayer.chapters.walks.random_init` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import rated
from ..formatting import number_text
from ..studies.walks.random_init import readings as ri_readings
from ..tables import bounds_text

__all__ = ["figure6_verdict", "figure6_rows", "rows"]


def figure6_verdict(r) -> str:
    """The verdict on Figure 6 in one setting from the rate of the paper's pattern."""
    if r.k == 0:
        return f"fails in every run (0/{r.n})"
    if r.k == r.n:
        return f"holds in every run ({r.n}/{r.n})"
    if r.high < 0.5:
        return "holds in a minority of runs"
    if r.low > 0.5:
        return "holds in most runs"
    return "holds in some runs"


def _outcome_text(r) -> str:
    """One setting's outcomes as ``"sum, 0.01 (eff. 10): 0/20; p=1 only 3/20, both 17/20, neither 0/20"``."""
    outcomes = ", ".join(f"{o} {r[o].k}/{r[o].n}" for o in ("p=1 only", "both", "neither") if r[o].k)
    return (f"{r['reduction']}, {r['lr']:g} (eff. {r['effective_lr']:g}): {r['p=0.5 only'].k}/{r['n']}"
            + (f"; {outcomes}" if outcomes else ""))


def _initial_text(r: dict) -> str:
    """One normalisation's attention at step 0 in words."""
    return (f"at step 0 the largest attention weight is {number_text(r['max_weight_mean'], 3)} on average (up to "
            f"{number_text(r['max_weight_max'], 3)}; uniform 1/N = {number_text(r['uniform_weight'], 3)}), the entropy "
            f"{number_text(r['entropy_relative_mean'], 3)} of log N, the logits' spread {number_text(r['logit_spread_mean'], 3)}")


def figure6_rows(settings, *, setting_rates: list[dict], initial_attention: list[dict],
                 normalize_names: dict[str, str]) -> list[dict]:
    """The verdict rows on Figure 6, one per normalisation: the rate of the paper's pattern in each of its settings
    (loss reduction x step size, every seed of the study), what happens instead, and the verdict per setting, stated
    once where every setting has the same one.

    The inputs, as :mod:`onelayer.chapters.walks.random_init` reads them: ``setting_rates`` (the rate of every outcome
    per setting of the study, :func:`onelayer.studies.walks.random_init.readings.setting_rates`),
    ``initial_attention`` (the attention at step 0 per normalisation, with ``small_init`` and its ``label``) and
    ``normalize_names`` (how a row names each normalisation)."""
    per = setting_rates
    start = {r["normalize"]: r for r in initial_attention}
    rows = []
    for g in ri_readings.pattern_by_normalization(per):
        normalize, group, pooled, seeds = g["normalize"], g["settings"], g["pooled"], g["seeds"]
        words = [figure6_verdict(r["p=0.5 only"]) for r in group]
        if len(set(words)) == 1:
            verdict = f"{words[0]} of each of its {len(group)} settings" if len(group) > 1 else words[0]
        else:
            verdict = "depends on the step size: " + "; ".join(
                f"eff. {r['effective_lr']:g}: {v}" for r, v in zip(group, words))
        literal = any((r["normalize"], r["reduction"], r["lr"]) == settings.literal for r in group)
        steps = ", ".join(f"{r['reduction']} {r['lr']:g}" for r in group)
        init = start[normalize]
        if not init["small_init"]:
            verdict = (f"not a test of the claim: the start is outside the small-initialisation regime of Section 5.2 "
                       f"(the attention is far from uniform at step 0); in these runs the pattern {verdict}")
        rows.append({
            "claim": "Figure 6 (small random init): p=1/2 is learned within 1000 steps and p=1 is not", "source": "[paper]",
            "reading": (normalize_names[normalize] + f" (ours); loss reduction and step size "
                        f"{steps}" + (f", among them the paper's stated numbers ({settings.literal[1]}, "
                                      f"{settings.literal[2]:g}; the scope of the normalisation is our reading)"
                                      if literal else "")),
            "settings": (f"K=6, N=97, M=1000, sigma=0.01, 1000 training and 1000 test walks, 1000 GD steps; "
                         f"{'/'.join(map(str, seeds))} seeds per setting (each its own walks and initialisation); "
                         f"learned = optimal fraction >= {settings.learned_threshold:g} from some recorded step to the end"),
            "measurement": (f"the paper's pattern (p=1/2 learned, p=1 not), per setting (loss, eta (effective step)): "
                            + "; ".join(_outcome_text(r) for r in group) + f"; pooled {pooled.text()}; "
                            + _initial_text(init) + f" ({init['label']})"),
            "verdict": verdict,
            # outside the small-initialisation regime the runs do not test the claim
            **(rated({f"pattern, {r['reduction']} {r['lr']:g}": r["p=0.5 only"] for r in group}) if init["small_init"]
               else {"class": "undecided"}),
            "chapter": "random_init",
        })
    return rows


def rows(settings, *, setting_rates: list[dict], initial_attention: list[dict], normalize_names: dict[str, str],
         closest: tuple, table_variances: dict, learned_half: dict, seeds: int) -> list[dict]:
    """The chapter's verdicts, from the stored study: the paper's ordering (Figure 6) as a rate per setting, one row
    per normalisation (:func:`figure6_rows`), the weighted token of Figure 13 over the seeds of the closest reading,
    and what the learned ``p = 1/2`` runs attend to (Figure 11) as a rate over all of them (with the settings that
    differ).

    The inputs, as :mod:`onelayer.chapters.walks.random_init` reads them: ``setting_rates``, ``initial_attention``
    and ``normalize_names`` (see :func:`figure6_rows`), ``closest`` (the reading ``(normalize, reduction, lr)``
    closest to the authors' table), ``table_variances`` (its weighted token over the seeds,
    :func:`onelayer.studies.walks.random_init.readings.table_variances`), ``learned_half`` (what the learned
    ``p = 1/2`` runs attend to, :func:`onelayer.studies.walks.random_init.readings.learned_attention`) and ``seeds``
    (the study's seeds per setting)."""
    per = setting_rates
    rows = figure6_rows(settings, setting_rates=per, initial_attention=initial_attention,
                        normalize_names=normalize_names)
    best = closest
    tv = table_variances
    first, last, pattern = tv["steps"][0], tv["steps"][-1], tv["pattern"]
    rows.append({
        "claim": ("Figure 13 (the authors' table, p=1): the weighted token stays near 1/6 for hundreds of steps while "
                  "its variance grows"), "source": "[review]",
        "reading": f"the reading closest to the authors' variances (mean over the seeds): {best[0]}, {best[1]} loss, lr = {best[2]:g}",
        "settings": (f"K=6, N=97, M=1000, p=1, {tv['seeds']} seeds, steps {', '.join(str(s['step']) for s in tv['steps'])}; "
                     f"the example is the first training walk, the variance is over the 1000 training walks"),
        "measurement": (f"example within {settings.drift:g} of 1/6 at every step and variance growing at every step in "
                        f"{pattern.text()} of the seeds; variance (geometric mean over the seeds) {number_text(first['variance'][0], 2)} "
                        f"{bounds_text(*first['variance'][1:], 2)} at step {first['step']} (authors "
                        f"{number_text(first['authors'], 2)}), {number_text(last['variance'][0], 2)} "
                        f"{bounds_text(*last['variance'][1:], 2)} at step {last['step']} (authors "
                        f"{number_text(last['authors'], 2)}); ours / authors {number_text(tv['factor'], 2)} on average "
                        f"(geometric mean over the steps)"),
        "verdict": (("holds qualitatively in every run" if pattern.k == pattern.n else
                     "holds qualitatively in most runs" if pattern.low > 0.5 else
                     "fails in most runs" if pattern.high < 0.5 else "holds qualitatively in some runs")
                    + ("; our variances smaller than the authors' at every step" if tv["smaller"] else "")),
        **rated({"runs with the authors' pattern": pattern}),
        "chapter": "random_init",
    })
    half = learned_half
    allh = half["all"]
    rows.append({
        "claim": "Figure 11: trained on p=1/2, the attention sits on the parent and V recovers Pi^T", "source": "[paper]",
        "reading": "every reading of the sweep",
        "settings": (f"the stored p=1/2 runs ({len(per)} settings x {seeds} seeds) with at least "
                     f"{settings.learned_threshold:g} optimal predictions at the end; 'on' = more than "
                     f"{settings.attention_threshold:g} of the final attention"),
        "measurement": ((f"{allh['n']} of {allh['runs']} runs learned p=1/2; attention on x_(N-1) in "
                         f"{allh['parent'].text()}, on x_(N-2) in {allh['lag2'].text()} of them"
                         + ("; per setting: " + "; ".join(
                             f"{r['normalize']}, {r['reduction']} {r['lr']:g}: x_(N-1) in {r['parent'].k}/{r['n']}"
                             for r in half["settings"] if r["n"]) if half["parent_differs"] else ""))
                        if allh["n"] else "no run learned p=1/2"),
        "verdict": ("holds in every learned run" if allh["n"] and allh["parent"].k == allh["n"] else
                    ("holds in most learned runs; the others attend to x_(N-2)"
                     if allh["parent"].k + allh["lag2"].k == allh["n"] else "holds in most learned runs")
                    if allh["n"] and allh["parent"].low > 0.5 else
                    "partly: many learned runs attend to x_(N-2) instead" if allh["n"] and allh["parent"].k else
                    "fails"),
        # no learned run: nothing to test
        **(rated({"learned runs attending to the parent": allh["parent"]}) if allh["n"] else {"class": "undecided"}),
        "chapter": "random_init",
    })
    return rows

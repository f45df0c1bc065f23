"""The verdicts of the chapter "Theorem 4.1: a deterministic walk is not learned" (``book/walks/theorem41.ipynb``):
the exact symmetric state of Theorem 4.1, and the paper's Figures 4 and 5 together under each positional reading and
against the size of the seeded Gram error, from the numbers :mod:`onelayer.chapters.walks.theorem41` passes in (see
:mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class, rated
from ..formatting import near_zero_text, number_text
from ..studies.walks import sensitivity as sens

__all__ = ["power_text", "norm_name", "error_name", "same_counts", "READING_NAMES", "figure45", "gram_error", "rows"]


def power_text(x: float) -> str:
    """``2*10^-12`` for ``2e-12``: a setting, written so that it does not read as a round-off digit."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}*10^{int(exponent)}"


def norm_name(norm) -> str:
    """A squared norm as the verdicts name it: ``40`` or ``M/2 = 500``."""
    return f"{norm:g}" if isinstance(norm, float) else f"{norm} = {number_text(_NORM2[norm], 3)}"


_NORM2 = {"M/16": 62.5, "M/8": 125.0, "M/4": 250.0, "M/2": 500.0, "M": 1000.0}

#: What each positional reading of the seed study is, as the verdict rows name it.
READING_NAMES = {"sin": ("sinusoidal positions rescaled to |p_i|^2, with the seeded relative Gram error "
                         f"{power_text(sens.RELATIVE_GRAM_ERROR)} standing in for round-off [ours]"),
                 "exact": "exactly orthogonal positions rescaled to |p_i|^2, no Gram error [ours]"}


def error_name(error: float) -> str:
    """A Gram error as the verdicts name it: ``0`` or ``2*10^-12``."""
    return "0" if error == 0 else power_text(error)


def same_counts(rates: list[dict]) -> bool:
    """Whether both positional readings give the same counts at every (error, norm) they share."""
    by = {(r["positions"], r["gram_error"], str(r["norm"])): tuple(r[f"{k}_rate"].k for k in ("fig4", "fig5", "both"))
          for r in rates}
    shared = [(e, n) for (pos, e, n) in by if pos == "sin" and ("exact", e, n) in by]
    return bool(shared) and all(by[("sin", e, n)] == by[("exact", e, n)] for e, n in shared)


def figure45(reading: str, rates: list[dict], samples: int) -> dict:
    """The verdict row on Figures 4 and 5 together under one positional reading, from the rates over training
    samples (:func:`onelayer.studies.walks.sensitivity.figure45_rates`; ``samples`` per norm): "holds" at a norm only
    where the interval of the share of samples that reproduce both lies above 1/2."""
    rates = [r for r in rates if r["positions"] == reading]
    if not rates:
        raise ValueError(f"no rates for the reading {reading!r}")
    names = [norm_name(r["norm"]) for r in rates]
    most = [n for n, r in zip(names, rates) if r["both_rate"].low > 0.5]
    few = [n for n, r in zip(names, rates) if r["both_rate"].high < 0.5]
    fig5_all = all(r["fig5_rate"].low > 0.5 for r in rates)
    best = max(zip(names, rates), key=lambda nr: nr[1]["both_rate"].k)
    if len(most) == len(rates):
        verdict = "holds at every norm tried"
    elif most:
        verdict = (f"depends on the norm: both in most samples only at |p|^2 in {{{', '.join(most)}}}; "
                   + ("Figure 5 holds at every norm, Figure 4 needs a large enough norm" if fig5_all else
                      "elsewhere one of the two fails"))
    elif len(few) == len(rates):
        verdict = (f"fails: at every norm tried most samples miss one figure (best |p|^2 = {best[0]}: both in "
                   f"{best[1]['both']})")
    else:
        verdict = "undecided: no norm where most samples reproduce both, but not every interval excludes 1/2"
    return {
        "claim": "Figures 4 and 5 together (zero init, 50 steps: p=1/2 learned, p=1 stays at 1/6)", "source": "[paper]",
        "reading": READING_NAMES[reading] + ("; Figure 4 reproduced: every test prediction optimal at step 50 with "
                                             "attention >= 0.99 on the parent; Figure 5: logit spread < 0.1 and "
                                             "accuracy < 1/K + 0.05 for 50 steps [ours]"),
        "settings": (f"K=6, N=97, M=1000, 1000 training and 1000 test walks per sample, float64, "
                     f"{samples} training samples (data seeds) per norm, |p_i|^2 in "
                     f"{{{', '.join(names)}}} (our guess M/2)"),
        "measurement": "; ".join(f"|p|^2={n}: Fig. 4 {r['fig4']}, Fig. 5 {r['fig5']}, both {r['both']}"
                                 for n, r in zip(names, rates)),
        "verdict": verdict,
        **rated({f"Figures 4 and 5, |p|^2={n}": r["both_rate"] for n, r in zip(names, rates)}),
        "chapter": "theorem41",
    }


def gram_error(rates: list[dict]) -> dict:
    """The verdict row on Figures 4 and 5 together against the size of the seeded Gram error, from the rates over
    training samples per error size (:func:`onelayer.studies.walks.sensitivity.figure45_rates`): an error size
    reproduces both where the interval of the share of samples that reproduce both lies above 1/2 at some norm."""
    exact = [r for r in rates if r["positions"] == "exact"]
    if not exact:
        raise ValueError("rates must hold rows of exactly orthogonal positions")
    errors = sorted({r["gram_error"] for r in exact})
    parts, good = [], []
    for e in errors:
        sub = [r for r in exact if r["gram_error"] == e]
        most = [norm_name(r["norm"]) for r in sub if r["both_rate"].low > 0.5]
        best = max(sub, key=lambda r: r["both_rate"].k)
        no5 = [norm_name(r["norm"]) for r in sub if r["fig5_rate"].high < 0.5]
        good += [e] if most else []
        parts.append(f"error {error_name(e)}: both " + (f"in most samples at |p|^2 in {{{', '.join(most)}}}" if most else
                     f"at best in {best['both']} (|p|^2 = {norm_name(best['norm'])})")
                     + (f", Figure 5 in a minority at |p|^2 in {{{', '.join(no5)}}}" if no5 else ", Figure 5 at every norm"))
    if len(good) == len(errors):
        verdict = "holds at every error size tried"
    elif good:
        verdict = (f"depends on the error: both figures in most samples only at error {', '.join(map(error_name, good))}; "
                   f"from {error_name(min(e for e in errors if e not in good))} on Figure 5 fails at the norms where "
                   "Figure 4 holds")
    else:
        verdict = "fails at every error size tried"
    same = same_counts(rates)
    samples = sorted({r["samples"] for r in rates})
    return {
        "claim": "Figures 4 and 5 together (zero init, 50 steps: p=1/2 learned, p=1 stays at 1/6)", "source": "[paper]",
        "reading": ("the size of the seeded relative Gram error that stands in for round-off [ours], exactly orthogonal "
                    "positions (sinusoidal ones give " + ("the same counts" if same else "other counts") +
                    " at every error size and norm both were run at); criteria as in the rows above [ours]"),
        "settings": (f"K=6, N=97, M=1000, 1000 training and 1000 test walks per sample, float64, "
                     f"{'/'.join(map(str, samples))} training samples (data seeds) per cell, errors "
                     f"{', '.join(map(error_name, errors))}, |p_i|^2 in "
                     f"{{{', '.join(dict.fromkeys(norm_name(r['norm']) for r in exact))}}}"),
        "measurement": "; ".join(parts),
        "verdict": verdict,
        **rated({f"Figures 4 and 5, error {error_name(r['gram_error'])}, |p|^2={norm_name(r['norm'])}": r["both_rate"]
                 for r in exact}),
        "chapter": "theorem41",
    }


def rows(settings, *, symmetry: list[dict], schedules: int, figure45_rates: list[dict], samples: int,
         gram_error_rates: list[dict]) -> list[dict]:
    """The chapter's verdicts: the exact symmetric state (Theorem 4.1; ``symmetry``: one row per loss and schedule,
    ``schedules`` step-size schedules), and Figures 4 and 5 together, one row per positional reading, as rates over
    training samples (``figure45_rates``, ``samples`` per norm; ``gram_error_rates``)."""
    s, out = settings, []
    sym = symmetry
    lo, hi = number_text(min(r["min_accuracy"] for r in sym), 3), number_text(max(r["max_accuracy"] for r in sym), 3)
    acc = lo if lo == hi else f"from {lo} to {hi}"
    spread = max(r["max_logit_spread"] for r in sym)
    exact = spread < 1e-12 and abs(min(r["min_accuracy"] for r in sym) - 1 / s.K) < 1e-12 \
        and abs(max(r["max_accuracy"] for r in sym) - 1 / s.K) < 1e-12  # tol: round-off of weighted sums
    out.append({
        "claim": "Theorem 4.1: for p=1, N=rK+1, any loss and step size, attention stays uniform, V ~ 11^T, accuracy 1/K",
        "source": "[paper]", "reading": "the paper's model in exact symmetry (exactly orthogonal positions) [ours]",
        "settings": (f"exact population (deterministic: no sampling, so no interval), exactly orthogonal positions, "
                     f"K=6, N=97, {len(s.lemma_d1_losses)} losses x "
                     f"{schedules} step-size schedules, {s.symmetry_steps} steps"),
        "measurement": (f"largest real-token logit spread {near_zero_text(spread)}; "
                        f"accuracy at every step {acc} (1/K = {number_text(1 / s.K, 3)})"),
        "verdict": "holds exactly" if exact else "fails",
        "class": exact_class(bool(exact)),
        "chapter": "theorem41",
    })
    for reading in ("sin", "exact"):
        out.append(figure45(reading, figure45_rates, samples))
    out.append(gram_error(gram_error_rates))
    return out

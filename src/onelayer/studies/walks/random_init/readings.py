"""Readings of a study: find a run, the step at which it is learned, which ``p`` comes first, the distance to the authors' table."""

from __future__ import annotations

import numpy as np

from ....rates import mean_interval, rate
from ....validation import check_float
from .runs import AUTHORS_TABLE, RECORD_KEYS, TABLE_STEPS

#: The outcomes of a (setting, seed) pair in :func:`ordering_table` (``"outcome"``): which of the two walks is learned
#: within the horizon. ``"p=0.5 only"`` is the paper's Figure 6.
OUTCOMES = ("p=0.5 only", "p=1 only", "both", "neither")


def final(run: dict, key: str) -> float:
    """The last recorded value of the curve ``key`` of a run (its ``"final"`` entry; older files: the curve's end)."""
    if "final" in run:
        return run["final"][key]
    return run["curves"][key][-1]


def find_run(data: dict, *, p: float, normalize: str, reduction: str, lr: float, seed: int = 0) -> dict:
    """The run of a study with these settings (``KeyError`` if it is not there)."""
    for r in data["runs"]:
        c = r["config"]
        if (c["p"], c["normalize"], c["reduction"], c["seed"]) == (p, normalize, reduction, seed) and np.isclose(c["lr"], lr):
            return r
    raise KeyError(f"no run with p={p}, normalize={normalize!r}, reduction={reduction!r}, lr={lr}, seed={seed}")


def learned_step(steps, fractions, *, threshold: float = 0.95) -> float:
    """First recorded step from which the optimal-prediction fraction stays ``>= threshold`` (``nan`` if never)."""
    threshold = check_float("threshold", threshold, low=0.0, high=1.0)
    ok = np.asarray(fractions) >= threshold
    steps = np.asarray(steps)
    if ok.size == 0 or not ok[-1]:
        return float("nan")
    bad = np.flatnonzero(~ok)
    return float(steps[0] if bad.size == 0 else steps[bad[-1] + 1])


def _outcome(half: bool, one: bool) -> str:
    """The entry of :data:`~onelayer.studies.walks.random_init.readings.OUTCOMES` for "``p = 0.5`` learned" and "``p = 1`` learned"."""
    return {(True, False): "p=0.5 only", (False, True): "p=1 only", (True, True): "both", (False, False): "neither"}[
        (half, one)]


def ordering_table(data: dict, *, threshold: float = 0.95) -> list[dict]:
    """One row per setting and seed: when ``p = 0.5`` and ``p = 1`` are learned, and which comes first.

    ``T_half`` / ``T_one`` are :func:`learned_step` values (``nan``: not within the
    horizon); ``first`` is ``"p=0.5"``, ``"p=1"``, ``"tie"`` or ``"neither"``;
    ``paper_pattern`` is true when ``p = 0.5`` is learned and ``p = 1`` is not (the
    paper's Figure 6), ``outcome`` is one of :data:`~onelayer.studies.walks.random_init.readings.OUTCOMES`, ``final_*`` are the
    last optimal fractions and ``parent_half`` the final attention on the parent for ``p = 0.5``.
    """
    rows = []
    keyed = {}
    for r in data["runs"]:
        c = r["config"]
        keyed.setdefault((c["normalize"], c["reduction"], c["lr"], c["seed"]), {})[c["p"]] = r
    for (norm, red, lr, seed), by_p in keyed.items():
        if 0.5 not in by_p or 1.0 not in by_p:
            continue
        h, o = by_p[0.5], by_p[1.0]
        Th = learned_step(h["steps"], h["curves"]["optimal_fraction"], threshold=threshold)
        To = learned_step(o["steps"], o["curves"]["optimal_fraction"], threshold=threshold)
        if np.isnan(Th) and np.isnan(To):
            first = "neither"
        elif np.isnan(To) or (not np.isnan(Th) and Th < To):
            first = "p=0.5"
        elif np.isnan(Th) or To < Th:
            first = "p=1"
        else:
            first = "tie"
        rows.append({
            "normalize": norm, "reduction": red, "lr": lr, "effective_lr": lr * (data["meta"]["n_train"] if red == "sum" else 1),
            "seed": seed, "T_half": Th, "T_one": To, "first": first,
            "paper_pattern": bool(not np.isnan(Th) and np.isnan(To)),
            "outcome": _outcome(not np.isnan(Th), not np.isnan(To)),
            "final_half": final(h, "optimal_fraction"), "final_one": final(o, "optimal_fraction"),
            "parent_half": final(h, "parent_attention"), "lag2_half": final(h, "lag2_attention"),
        })
    return rows


def _setting(row: dict) -> tuple:
    return row["normalize"], row["reduction"], row["lr"]


def setting_rates(rows: list[dict]) -> list[dict]:
    """Per setting ``(normalize, reduction, lr)`` of :func:`ordering_table` rows, in their order: the number of seeds
    ``n``, a :class:`~onelayer.rates.Rate` for every outcome of :data:`~onelayer.studies.walks.random_init.readings.OUTCOMES` (``"p=0.5 only"`` is the paper's
    pattern) and, of the pairs where both walks are learned, how many learned ``p = 1`` first (``"p=1 first"``)."""
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError("rows must be a list of ordering_table rows (dicts)")
    out = []
    for key in dict.fromkeys(_setting(r) for r in rows):
        cell = [r for r in rows if _setting(r) == key]
        n = len(cell)
        both = [r for r in cell if r["outcome"] == "both"]
        out.append({"normalize": key[0], "reduction": key[1], "lr": key[2], "effective_lr": cell[0]["effective_lr"],
                    "n": n, **{o: rate(sum(r["outcome"] == o for r in cell), n) for o in OUTCOMES},
                    "p=1 first": sum(r["first"] == "p=1" for r in both), "both_n": len(both)})
    return out


def learned_attention(data: dict, *, threshold: float = 0.95, attention: float = 0.9) -> dict:
    """What the learned ``p = 1/2`` runs attend to (the paper's Figure 11).

    A ``p = 1/2`` run is learned when its final optimal fraction is at least
    ``threshold``. Returns ``{"all": ..., "settings": [...]}``: over all learned
    runs and per setting ``(normalize, reduction, lr)`` (every setting of the study,
    in its order), ``n`` (learned runs), ``runs`` (all ``p = 1/2`` runs) and, when
    ``n > 0``, the rates ``"parent"`` / ``"lag2"`` of learned runs with more than
    ``attention`` of the final attention on ``x_{N-1}`` / ``x_{N-2}`` (else ``None``); ``"parent_differs"``: whether
    the settings with a learned run differ in the proportion attending to the parent.
    """
    threshold = check_float("threshold", threshold, low=0.0, high=1.0)
    attention = check_float("attention", attention, low=0.0, high=1.0)
    half = [r for r in data["runs"] if r["config"]["p"] == 0.5]

    def summary(runs):
        learned = [r for r in runs if final(r, "optimal_fraction") >= threshold]
        n = len(learned)
        parent = sum(final(r, "parent_attention") > attention for r in learned)
        lag2 = sum(final(r, "lag2_attention") > attention for r in learned)
        return {"n": n, "runs": len(runs), "parent": rate(parent, n) if n else None,
                "lag2": rate(lag2, n) if n else None}

    keys = dict.fromkeys((r["config"]["normalize"], r["config"]["reduction"], r["config"]["lr"]) for r in half)
    per = [{"normalize": k[0], "reduction": k[1], "lr": k[2],
            **summary([r for r in half if (r["config"]["normalize"], r["config"]["reduction"], r["config"]["lr"]) == k])}
           for k in keys]
    return {"all": summary(half), "settings": per,
            "parent_differs": len({round(r["parent"].value, 9) for r in per if r["n"]}) > 1}


def table_variances(data: dict, *, normalize: str, reduction: str, lr: float, drift: float = 0.05) -> dict:
    """The weighted-token table over the seeds of one reading's ``p = 1`` runs, against the authors' (Figure 13).

    Per step of :data:`~onelayer.studies.walks.random_init.runs.TABLE_STEPS`: ``"variance"``, the
    geometric mean over the seeds of the mean per-coordinate variance with its 95%
    interval (``10`` to the :func:`onelayer.rates.mean_interval` of the ``log10``
    values: variances spread over decades), ``"authors"``, the authors' mean variance,
    and ``"log10_ratio"``, the mean of ``log10(ours / authors)`` with its interval. ``"pattern"``: the rate of seeds whose
    example token stays within ``drift`` of ``1/6`` at every table step while the mean
    variance grows from step to step (the authors' qualitative picture). ``"seeds"``: how many. ``"factor"``: ours /
    authors on average (``10`` to the mean over the steps of the mean log ratio); ``"smaller"``: whether the upper end
    of the log ratio's interval is below 0 at every step (our variances smaller than the authors' at every step).
    """
    drift = check_float("drift", drift, low=0.0, low_open=True)
    runs = [r for r in data["runs"] if r["config"]["p"] == 1.0 and r["config"]["normalize"] == normalize
            and r["config"]["reduction"] == reduction and np.isclose(r["config"]["lr"], lr)]
    if len(runs) < 2:
        raise ValueError(f"table_variances needs at least two seeds of the reading ({normalize}, {reduction}, lr={lr}); "
                         f"got {len(runs)}")
    steps = []
    for s in TABLE_STEPS:
        ours = [float(np.mean(r["table"][str(s)]["variance"])) for r in runs]
        theirs = float(np.mean(AUTHORS_TABLE[s][1]))
        steps.append({"step": s, "variance": tuple(10 ** x for x in mean_interval(np.log10(ours))), "authors": theirs,
                      "log10_ratio": mean_interval([np.log10(v / theirs) for v in ours])})
    ok = 0
    for r in runs:
        var = [float(np.mean(r["table"][str(s)]["variance"])) for s in TABLE_STEPS]
        near = max(float(np.max(np.abs(np.asarray(r["table"][str(s)]["example"]) - 1 / 6))) for s in TABLE_STEPS)
        ok += bool(near < drift and all(b > a for a, b in zip(var, var[1:])))
    return {"seeds": len(runs), "steps": steps, "pattern": rate(ok, len(runs)),
            "factor": 10 ** float(np.mean([s["log10_ratio"][0] for s in steps])),
            "smaller": all(s["log10_ratio"][2] < 0 for s in steps)}


def table_distance(run: dict) -> float:
    """How far a ``p = 1`` run's weighted-average-token variances are from the authors' table.

    The mean over the table steps of ``|log10(mean variance ours / mean variance authors)|``
    (0: same size at every step; 1: a factor 10 off on average). ``nan`` if a step is missing.
    """
    gaps = []
    for step, (_, var) in AUTHORS_TABLE.items():
        if str(step) not in run["table"]:
            return float("nan")
        ours = float(np.mean(run["table"][str(step)]["variance"]))
        gaps.append(abs(np.log10(max(ours, 1e-300) / float(np.mean(var)))))
    return float(np.mean(gaps))


def ordering_counts(rows: list[dict]) -> dict:
    """How often each walk came first in :func:`ordering_table` rows (``p=0.5``, ``p=1``, ``tie``, ``neither``), each
    outcome of :data:`OUTCOMES`, and the paper's pattern (its count, its rate over the (setting, seed) pairs, and the
    largest count and Wilson upper bound in any one setting)."""
    counts = {k: sum(r["first"] == k for r in rows) for k in ("p=0.5", "p=1", "tie", "neither")}
    outcomes = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    hits = sum(bool(r["paper_pattern"]) for r in rows)
    per = setting_rates(rows)
    worst = max(per, key=lambda r: (r["p=0.5 only"].k, r["p=0.5 only"].high))
    return {**counts, "outcomes": outcomes, "pairs": len(rows), "paper_pattern": hits, "paper_rate": rate(hits, len(rows)),
            "settings": len(per), "seeds": min(r["n"] for r in per), "max_setting": worst["p=0.5 only"],
            "max_high": max(r["p=0.5 only"].high for r in per)}


def claim_summary(rows: list[dict], *, literal: tuple) -> dict:
    """What the chapter's prose says of Section 5.2's two claims, from :func:`ordering_table` rows: for ``p = 1/2``,
    the learned seeds in the ``literal`` reading ``(normalize, reduction, lr)`` and the range of learned seeds and of
    learning steps over the other settings; for ``p = 1``, the settings where no seed learns it and the range of
    learned seeds over the others."""
    settings = list(dict.fromkeys(_setting(r) for r in rows))
    cells = {k: [r for r in rows if _setting(r) == k] for k in settings}
    half = {k: sum(np.isfinite(r["T_half"]) for r in c) for k, c in cells.items()}
    one = {k: sum(np.isfinite(r["T_one"]) for r in c) for k, c in cells.items()}
    others = [k for k in settings if k != tuple(literal)]
    steps = [r["T_half"] for r in rows if np.isfinite(r["T_half"])]
    never = [k for k in settings if one[k] == 0]
    learning = [one[k] for k in settings if one[k] > 0]
    return {"seeds": len(cells[settings[0]]), "settings": len(settings),
            "literal_half": int(half.get(tuple(literal), 0)),
            "half_min": int(min(half[k] for k in others)), "half_max": int(max(half[k] for k in others)),
            "half_step_min": int(min(steps)) if steps else None, "half_step_max": int(max(steps)) if steps else None,
            "one_never": len(never), "one_never_learn_nothing": bool(all(half[k] == 0 for k in never)),
            "one_min": int(min(learning)) if learning else 0, "one_max": int(max(learning)) if learning else 0}


def reading_distances(data: dict) -> list[tuple[tuple, list[float]]]:
    """Every reading ``(normalize, reduction, lr)`` with the :func:`table_distance` of each of its ``p = 1`` runs
    (one per seed), closest first by the mean distance (a reading with a missing step ranks last)."""
    dist = {}
    for r in data["runs"]:
        c = r["config"]
        if c["p"] == 1.0:
            dist.setdefault((c["normalize"], c["reduction"], c["lr"]), []).append(table_distance(r))

    def score(d):
        return float(np.mean(d)) if np.all(np.isfinite(d)) else np.inf

    return sorted(dist.items(), key=lambda kv: score(kv[1]))


def kl_limits(data: dict, *, seed: int) -> tuple[float, float]:
    """A KL axis for every stored curve of ``seed``: from 0.8 times the smallest to 1.25 times the largest positive
    recorded KL (a log scale)."""
    kl = np.concatenate([np.asarray(r["curves"]["kl"], dtype=float) for r in data["runs"] if r["config"]["seed"] == seed])
    kl = kl[np.isfinite(kl) & (kl > 0)]
    return 0.8 * float(kl.min()), 1.25 * float(kl.max())


def value_spread(run: dict) -> list[dict]:
    """``V`` of a run at each stored snapshot: its mean entry and its spread relative to it."""
    rows = []
    for s, V in run["V"].items():
        V = np.array(V)
        rows.append({"step": int(s), "mean": float(V.mean()), "relative_spread": float((V.max() - V.min()) / V.mean())})
    return rows


def run_difference(live: dict, stored: dict, *, step: int) -> dict:
    """How far a run recomputed for ``step`` steps is from the stored run of the same setting: the largest difference
    of the recorded curves over the live run's recorded steps and of ``V`` at ``step``."""
    n = len(live["steps"])
    diff = max(np.abs(np.array(live["curves"][k]) - np.array(stored["curves"][k][:n])).max() for k in RECORD_KEYS)
    V_diff = np.abs(np.array(live["V"][str(step)]) - np.array(stored["V"][str(step)])).max()
    return {"steps": step, "recorded": n, "quantities": len(RECORD_KEYS), "curves_diff": float(diff),
            "V_diff": float(V_diff)}


def weighted_token_steps(run: dict) -> list[dict]:
    """A ``p = 1`` run's weighted-token table beside the authors' (Figure 13): one row per stored step and coordinate
    (the authors' entries ``None`` at a step of theirs that is missing)."""
    rows = []
    for step, entry in sorted(run["table"].items(), key=lambda kv: int(kv[0])):
        authors = AUTHORS_TABLE.get(int(step))
        for k, (ex, var) in enumerate(zip(entry["example"], entry["variance"])):
            rows.append({"step": int(step), "coordinate": k + 1, "example": ex, "variance": var,
                         "authors_example": authors[0][k] if authors else None,
                         "authors_variance": authors[1][k] if authors else None})
    return rows


def lock_rows(data: dict, *, normalize: str, reduction: str, lr: float) -> list[dict]:
    """The ``p = 1/2`` runs of one reading, by seed: the largest final attention weight, its position (1-based), its lag
    ``N - position`` and the final optimal fraction."""
    meta = data["meta"]
    rows = []
    for seed in meta["seeds"]:
        r = find_run(data, p=0.5, normalize=normalize, reduction=reduction, lr=lr, seed=seed)
        j, weight = r["peak"]
        rows.append({"seed": seed, "attention": float(weight), "position": j + 1, "lag": meta["N"] - (j + 1),
                     "optimal_fraction": final(r, "optimal_fraction")})
    return rows


def curve_rows(runs: dict) -> list[dict]:
    """The recorded curves of named runs (``{name: run}``) as rows: run, step and every recorded quantity."""
    return [{"run": name, "step": int(t), **{k: r["curves"][k][i] for k in RECORD_KEYS}}
            for name, r in runs.items() for i, t in enumerate(r["steps"])]


def most_parent_run(data: dict, *, threshold: float = 0.95) -> dict:
    """Of the ``p = 1/2`` runs stored with ``V`` snapshots, the learned one (final optimal fraction at least
    ``threshold``) with the most final attention on the parent (of all of them if none learned)."""
    half = [r for r in data["runs"] if r["config"]["p"] == 0.5 and "V" in r]
    learned = [r for r in half if final(r, "optimal_fraction") >= threshold] or half
    return max(learned, key=lambda r: final(r, "parent_attention"))


def endpoint_rows(runs: dict, *, N: int) -> list[dict]:
    """Each named run (``{name: run}``): optimal fraction and KL at the first and the last recorded step, the final
    attention on the parent, the largest final attention weight and the uniform weight ``1/N``."""
    return [{"run": name, "optimal_start": c["optimal_fraction"][0], "optimal_end": c["optimal_fraction"][-1],
             "kl_start": c["kl"][0], "kl_end": c["kl"][-1], "parent_end": c["parent_attention"][-1],
             "top_end": c["top_attention"][-1], "uniform": 1 / N}
            for name, c in ((name, r["curves"]) for name, r in runs.items())]


def token_table(run: dict) -> list[dict]:
    """At every step of the authors' table (:data:`~onelayer.studies.walks.random_init.runs.TABLE_STEPS`): a
    ``p = 1`` run's weighted token of the example (``"ours"``) and the authors' (``"authors"``), and the mean variance
    over the coordinates, ours and theirs."""
    return [{"step": s, "ours": list(run["table"][str(s)]["example"]), "authors": list(AUTHORS_TABLE[s][0]),
             "variance, ours": float(np.mean(run["table"][str(s)]["variance"])),
             "variance, authors": float(np.mean(AUTHORS_TABLE[s][1]))} for s in TABLE_STEPS]


def distance_intervals(ranking: list[tuple[tuple, list[float]]]) -> list[dict]:
    """:func:`reading_distances` entries as rows: the reading, the mean distance over its seeds with its 95% interval
    (:func:`onelayer.rates.mean_interval`) and the number of seeds."""
    return [{"reading": key, **dict(zip(("mean", "low", "high"), mean_interval(d))), "seeds": len(d)}
            for key, d in ranking]


def pattern_by_normalization(per: list[dict]) -> list[dict]:
    """:func:`setting_rates` rows grouped by normalisation, in their order: the rows (``"settings"``), the rate of the
    paper's pattern pooled over them (``"pooled"``) and the numbers of seeds of its settings (``"seeds"``, sorted)."""
    out = []
    for normalize in dict.fromkeys(r["normalize"] for r in per):
        group = [r for r in per if r["normalize"] == normalize]
        hits = [r["p=0.5 only"] for r in group]
        out.append({"normalize": normalize, "settings": group, "pooled": rate(sum(h.k for h in hits), sum(h.n for h in hits)),
                    "seeds": sorted({r["n"] for r in group})})
    return out

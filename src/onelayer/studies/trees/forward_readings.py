"""Rates over the stored runs of the forward studies: what the chapters of Trees II read from them.

The stored studies keep counts per run (goals and goals right, by goal depth, tree size or both); this module turns
them into rates over runs and pooled goals (:func:`onelayer.rates.rate`, Wilson 95%):

* :func:`edge_flag_cells`: one head against two (:mod:`~onelayer.studies.trees.forward_edge_flag`) per cell;
* :func:`heads_seeds`, :func:`heads_joint`, :func:`heads_regions`, :func:`heads_where`, :func:`heads_runs_below`:
  1-4 full heads over 20 seeds (part ``heads`` of :mod:`~onelayer.studies.trees.forward_limit_rates`);
* :func:`merge_bins` and :func:`pooled`: goals pooled by depth or size, neighbouring bins merged until each holds
  enough goals.

The thresholds (``solved_at``, ``converged_below``, bin sizes) are arguments: the chapters' settings pass them.
"""

from __future__ import annotations

import math

from ...rates import mean_interval, rate
from .beyond import DEPTH_BINS, SHAPES
from .forward_edge_flag import converged

__all__ = ["bin_label", "merge_bins", "pooled", "rate_or_none", "runs_verdict", "edge_flag_cells", "heads_bins", "gaussian_rates",
           "heads_settings", "heads_seeds", "heads_joint", "REGIONS", "heads_regions", "heads_where", "heads_runs_below"]


def bin_label(lo: int, hi: int | None) -> str:
    """``"3"``, ``"3-5"`` or ``"3+"`` (``hi=None``: open)."""
    return f"{lo}" if lo == hi else (f"{lo}+" if hi is None else f"{lo}-{hi}")


def merge_bins(counts: dict[int, int], min_goals: int) -> list[tuple[int, int]]:
    """Contiguous ``(low, high)`` bins over the sorted keys of ``counts`` (value -> goals) such that every bin holds
    at least ``min_goals`` goals: start from one bin per key and merge the smallest bin below ``min_goals`` into its
    smaller neighbour until none is left (one bin if the total is below ``min_goals``)."""
    if not isinstance(counts, dict):
        raise TypeError("counts must be a dict value -> goals")
    if not isinstance(min_goals, int) or min_goals < 1:
        raise ValueError(f"min_goals must be a positive integer, got {min_goals!r}")
    bins = [[k, k, n] for k, n in sorted(counts.items()) if n > 0]
    while len(bins) > 1:
        small = [i for i, b in enumerate(bins) if b[2] < min_goals]
        if not small:
            break
        i = min(small, key=lambda i: bins[i][2])
        j = i - 1 if i == len(bins) - 1 or (i > 0 and bins[i - 1][2] <= bins[i + 1][2]) else i + 1
        lo, hi = min(i, j), max(i, j)
        bins[lo:hi + 1] = [[bins[lo][0], bins[hi][1], bins[lo][2] + bins[hi][2]]]
    return [(b[0], b[1]) for b in bins]


def pooled(runs, key: str, bins, column: int = 1) -> list[tuple[str, int, int]]:
    """``(bin label, goals, right)`` pooled over ``runs`` from their ``key`` counts (``str(value) -> [goals, ...]``);
    ``bins`` are ``(low, high)`` pairs, ``high=None`` open."""
    out = []
    for lo, hi in bins:
        n = k = 0
        for r in runs:
            for v, c in (r[key] or {}).items():
                if int(v) >= lo and (hi is None or int(v) <= hi):
                    n, k = n + c[0], k + c[column]
        out.append((bin_label(lo, hi), n, k))
    return out


def rate_or_none(k: int, n: int):
    """:func:`onelayer.rates.rate`, or ``None`` for an empty bin."""
    return rate(k, n) if n else None


def runs_verdict(r, what: str) -> str:
    """``"holds in every run"`` / ``"holds in most runs"`` / ``"fails in most runs"`` / ``"undecided"`` from a rate of
    runs in which ``what`` holds (most: the interval lies above 1/2)."""
    if r.k == r.n:
        return f"holds in every run ({what})"
    if r.low > 0.5:
        return f"holds in most runs ({what})"
    if r.high < 0.5:
        return f"fails in most runs ({what})"
    return f"undecided ({what})"


def edge_flag_cells(runs: list[dict], settings: dict | None, *, converged_below: float, solved_at: float) -> list[dict]:
    """One row per (edge stage, loss reduction, model) of a study part: runs converged (final/initial loss below
    ``converged_below``; a diverged run is not), runs solving the chains and the paths (at least ``solved_at`` of
    their test goals right), the test goals pooled over runs (one test set per cell, so these pooled goals are not
    independent across runs: read them beside the per-run rates), and the mean final/initial loss ratio over the
    runs that did not diverge."""
    settings = settings or {}
    cells: dict = {}
    for r in runs:
        cells.setdefault((r["edge_stage"], r["reduction"], r["arch"]), []).append(r)
    rows = []
    for (stage, reduction, arch), rs in cells.items():
        ratios = [float(r["loss"][-1]) / float(r["loss"][0]) for r in rs]
        finite = [x for x in ratios if math.isfinite(x)]
        goals = sum(r["goals"] for r in rs)
        rows.append({
            "edge stage": stage, "loss": reduction, "lr": settings.get("lr"), "steps": settings.get("steps"),
            "model": rs[0]["label"], "arch": arch, "runs": len(rs), "diverged": len(rs) - len(finite),
            "converged": rate(sum(converged(r["loss"], converged_below) for r in rs), len(rs)),
            "chains solved": rate(sum(r["chain"] >= solved_at * r["goals"] for r in rs), len(rs)),
            "paths solved": rate(sum(r["path"] >= solved_at * r["goals"] for r in rs), len(rs)),
            "chain goals": rate(sum(r["chain"] for r in rs), goals), "path goals": rate(sum(r["path"] for r in rs), goals),
            "loss ratio": mean_interval(finite) if len(finite) > 1 else None,
        })
    return rows


def heads_bins(runs: list[dict], *, solved_at: float) -> dict:
    """Where several full heads fail in the heads x depth runs ``runs`` (three seeds per cell, :func:`onelayer.studies.trees.forward_seeds.all_seeds`): the runs of 2-4 full
    heads below ``solved_at`` and those of one full head, as rates, and per training depth the goals of the runs with
    a failure profile (seeds 1 and 2) pooled by goal depth relative to ``m`` and by tree size."""
    multi = [r for r in runs if r["arch"] in ("full2", "full3", "full4")]
    full1 = [r for r in runs if r["arch"] == "full1"]
    out = {"multi failing": rate(sum(r["test_path_accuracy"] < solved_at for r in multi), len(multi)),
           "full1 failing": rate(sum(r["test_path_accuracy"] < solved_at for r in full1), len(full1)),
           "multi fit": rate(sum(r["train_path_accuracy"] >= solved_at for r in multi), len(multi)),
           "by_m": {}, "rows": []}
    for m in sorted({r["m"] for r in multi}):
        sub = [r for r in multi if r["m"] == m]
        fails = rate(sum(r["test_path_accuracy"] < solved_at for r in sub), len(sub))
        out["by_m"][m] = fails
        groups: dict[str, list[int]] = {}
        for r in sub:
            if not r.get("profile"):
                continue
            for d, (n, acc) in r["profile"]["by_goal_depth"].items():
                key = "goal depth < m" if int(d) < m else ("goal depth = m" if int(d) == m else "goal depth > m")
                g = groups.setdefault(key, [0, 0])
                g[0], g[1] = g[0] + n, g[1] + round(n * acc)
            for b, (n, acc) in r["profile"]["by_size"].items():
                g = groups.setdefault(f"size {b}", [0, 0])
                g[0], g[1] = g[0] + n, g[1] + round(n * acc)
        row = {"m": m, "training nodes": 2 ** (m + 1) - 1, "runs below 99%": fails.text()}
        for key in ("goal depth < m", "goal depth = m", "goal depth > m", "size <=15", "size 16-30", "size >30"):
            n, k = groups.get(key, (0, 0))
            row[key] = rate(k, n) if n >= 50 else None
        out["rows"].append(row)
    return out


def gaussian_rates(data: dict, *, solved_at: float) -> dict:
    """The two-head model with Gaussian embeddings over the stored draws (:func:`onelayer.studies.trees.forward_beyond.stored`):
    per shape the runs solving it (at least ``solved_at`` of its goals) and the goals pooled over runs (each run on its
    own test trees), the self-stop rate, and every goal pooled by goal-depth bin
    (:data:`onelayer.studies.trees.beyond.DEPTH_BINS`)."""
    runs = data["per_run"]
    shapes = SHAPES
    rows = []
    for shape in shapes:
        per = [(sum(c[0] for c in r["counts"][shape].values()), sum(c[1] for c in r["counts"][shape].values()),
                sum(c[2] for c in r["counts"][shape].values())) for r in runs]
        n, k, st = (sum(x[i] for x in per) for i in range(3))
        rows.append({"test trees": shape, "goals": n, "runs solving": rate(sum(x[1] >= solved_at * x[0] for x in per), len(per)),
                     "path accuracy": rate(k, n), "stops by itself": rate(st, n)})
    depth = []
    for lo, hi in DEPTH_BINS:
        for group, keep in (("all shapes", shapes), ("random trees", ("random",))):
            n = k = 0
            for r in runs:
                for shape in keep:
                    for d, c in r["counts"][shape].items():
                        if lo <= int(d) <= hi:
                            n, k = n + c[0], k + c[1]
            depth.append({"goal depth": bin_label(lo, hi), "test trees": group, "goals": n,
                          "path accuracy": rate_or_none(k, n)})
    return {"runs": len(runs), "rows": rows, "depth": depth,
            "random solved": rows[shapes.index("random")]["runs solving"],
            "loss": mean_interval([r["train_loss"] for r in runs])}


def _heads_key(r: dict) -> tuple[int, int, int]:
    return r["m"], r["batch_size"], r["steps"]


def heads_settings(data: dict) -> list[tuple[int, int, int]]:
    """The ``(m, batch size, steps)`` cells of the stored 20-seed full-heads study, in the study's order."""
    return [(c["m"], c["batch_size"], c["steps"]) for c in data["settings"]["heads"]["cells"]]


def _heads_cell(data: dict, cell: tuple[int, int, int]) -> list[dict]:
    runs = [r for r in data["heads"] if _heads_key(r) == tuple(cell)]
    if not runs:
        raise ValueError(f"cell must be one of the stored (m, batch size, steps) cells, got {cell!r}")
    return runs


def _joint_total(r: dict) -> tuple[int, int]:
    """``(goals, whole paths right)`` of one run's joint profile."""
    return sum(c[0] for c in r["joint"].values()), sum(c[1] for c in r["joint"].values())


def _run_solves(r: dict, solved_at: float) -> bool:
    """Whether a run gets at least ``solved_at`` of its test paths right (a diverged run does not)."""
    if r["joint"] is None:
        return False
    n, k = _joint_total(r)
    return k >= solved_at * n


def heads_seeds(data: dict, *, solved_at: float) -> list[dict]:
    """1-4 full heads over the stored seeds, one row per ``(m, batch size, steps, model)``: runs fitting their
    training trees and runs below ``solved_at`` on their own random test trees (rates over runs), the test paths
    pooled over the runs, and the same rates for 2-4 full heads together (``model`` "2-4 full heads")."""
    rows = []
    for cell in heads_settings(data):
        runs = _heads_cell(data, cell)
        groups = [(r0["label"], [r for r in runs if r["arch"] == a])
                  for a, r0 in {r["arch"]: r for r in runs}.items()]
        groups.append(("2-4 full heads", [r for r in runs if r["arch"] != "full1"]))
        for label, sub in groups:
            totals = [_joint_total(r) for r in sub if r["joint"] is not None]
            rows.append({"m": cell[0], "batch": cell[1], "steps": cell[2], "model": label, "runs": len(sub),
                         "fit training trees": rate(sum(r["train"][1] >= solved_at * r["train"][0] for r in sub), len(sub)),
                         "below 99% on test": rate(sum(not _run_solves(r, solved_at) for r in sub), len(sub)),
                         "paths right": rate(sum(k for _, k in totals), sum(n for n, _ in totals)),
                         "goals per run": sub[0]["joint"] and _joint_total(sub[0])[0]})
    return rows


def _seed_goals(runs: list[dict]) -> dict[tuple[int, int], int]:
    """Test goals by ``(tree size, goal depth)`` pooled over the distinct seeds of ``runs`` (every model of a seed
    sees the same test trees, so each seed counts once)."""
    per_seed = {r["seed"]: r["joint"] for r in runs if r["joint"] is not None}
    out: dict[tuple[int, int], int] = {}
    for joint in per_seed.values():
        for key, c in joint.items():
            n, d = (int(x) for x in key.split(","))
            out[(n, d)] = out.get((n, d), 0) + c[0]
    return out


def heads_joint(data: dict, cell: tuple[int, int, int], *, size_edges, min_bin_goals: int) -> dict:
    """The joint profile of one stored cell: tree-size bins (lower edges ``size_edges``), and within each the goal
    depths merged by :func:`merge_bins` so that every (size, depth) bin holds at least ``min_bin_goals`` goals pooled
    over the seeds; per bin the goals and each model's pooled path accuracy (:class:`~onelayer.rates.Rate`)."""
    runs = _heads_cell(data, cell)
    goals = _seed_goals(runs)
    edges = [e for e in size_edges if e <= max(n for n, _ in goals)] + [max(n for n, _ in goals) + 1]
    archs = list(dict.fromkeys(r["arch"] for r in runs))
    labels = {r["arch"]: r["label"] for r in runs}
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        by_depth: dict[int, int] = {}
        for (n, d), g in goals.items():
            if lo <= n < hi:
                by_depth[d] = by_depth.get(d, 0) + g
        for dlo, dhi in merge_bins(by_depth, min_bin_goals):
            row = {"tree size": bin_label(lo, hi - 1), "goal depth": bin_label(dlo, dhi),
                   "goals": sum(g for d, g in by_depth.items() if dlo <= d <= dhi)}
            for a in archs:
                n = k = 0
                for r in runs:
                    if r["arch"] != a or r["joint"] is None:
                        continue
                    for key, c in r["joint"].items():
                        size, d = (int(x) for x in key.split(","))
                        if lo <= size < hi and dlo <= d <= dhi:
                            n, k = n + c[0], k + c[1]
                row[labels[a]] = rate_or_none(k, n)
            rows.append(row)
    return {"cell": tuple(cell), "training nodes": 2 ** (cell[0] + 1) - 1, "models": [labels[a] for a in archs],
            "rows": rows}


#: The four regions of :func:`heads_regions`: (name, size above the training trees', goal deeper than m).
REGIONS = (("trees no larger, goals no deeper", False, False), ("trees no larger, goals deeper", False, True),
           ("larger trees, goals no deeper", True, False), ("larger trees, goals deeper", True, True))


def heads_regions(data: dict, cell: tuple[int, int, int], *, solved_at: float) -> list[dict]:
    """Where the misses sit in one stored cell: per (region of :data:`REGIONS`, model) the goals, the paths right
    (pooled), the runs below ``solved_at`` in that region (per-run rate) and the region's share of the model's
    misses. Larger = more nodes than the perfect training trees (``2^(m+1) - 1``); deeper = goal depth above ``m``."""
    runs = _heads_cell(data, cell)
    m, n_train = cell[0], 2 ** (cell[0] + 1) - 1
    rows = []
    for arch in dict.fromkeys(r["arch"] for r in runs):
        sub = [r for r in runs if r["arch"] == arch and r["joint"] is not None]
        per_run = []
        for r in sub:
            counts = {name: [0, 0] for name, _, _ in REGIONS}
            for key, c in r["joint"].items():
                size, d = (int(x) for x in key.split(","))
                name = next(nm for nm, big, deep in REGIONS if big == (size > n_train) and deep == (d > m))
                counts[name][0] += c[0]
                counts[name][1] += c[1]
            per_run.append(counts)
        misses = sum(n - k for c in per_run for n, k in c.values())
        for name, _, _ in REGIONS:
            n, k = sum(c[name][0] for c in per_run), sum(c[name][1] for c in per_run)
            if n == 0:
                continue
            with_goals = [c[name] for c in per_run if c[name][0]]
            rows.append({"model": sub[0]["label"], "arch": arch, "region": name, "goals": n,
                         "goals per run (min)": min(g for g, _ in with_goals),
                         "paths right": rate(k, n),
                         "runs below 99%": rate(sum(kk < solved_at * g for g, kk in with_goals), len(with_goals)),
                         "share of misses": (n - k) / misses if misses else None})
    return rows


def heads_where(data: dict, m: int, *, solved_at: float) -> tuple[int, int, int]:
    """The stored cell at training depth ``m`` whose misses the chapter locates: the one with the most runs of 2-4 full
    heads below ``solved_at`` (ties: the smaller batch, then fewer steps)."""
    cells = [c for c in heads_settings(data) if c[0] == m]
    if not cells:
        raise ValueError(f"m must be a training depth of the stored sweep, got {m!r}")
    below = {(r["m"], r["batch"], r["steps"]): r["below 99% on test"].k for r in heads_seeds(data, solved_at=solved_at)
             if r["model"] == "2-4 full heads"}
    return min(cells, key=lambda c: (-below[c], c[1], c[2]))


def heads_runs_below(data: dict, cell: tuple[int, int, int], archs, sizes: tuple[int, int],
                     depths: tuple[int, int] = (1, 99), *, solved_at: float):
    """Runs of the models ``archs`` in one stored cell whose path accuracy on the goals with tree size in ``sizes``
    and goal depth in ``depths`` (inclusive ranges) is below ``solved_at``, as a rate over the runs with such goals;
    and the fewest such goals in one run: ``(Rate, min goals per run)``."""
    below, counts = 0, []
    for r in _heads_cell(data, cell):
        if r["arch"] not in archs or r["joint"] is None:
            continue
        n = k = 0
        for key, c in r["joint"].items():
            size, d = (int(x) for x in key.split(","))
            if sizes[0] <= size <= sizes[1] and depths[0] <= d <= depths[1]:
                n, k = n + c[0], k + c[1]
        if n:
            counts.append(n)
            below += k < solved_at * n
    if not counts:
        raise ValueError("no run has goals in these sizes and depths")
    return rate(below, len(counts)), min(counts)

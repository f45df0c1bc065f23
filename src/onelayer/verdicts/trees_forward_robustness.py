"""The verdicts of the chapter "Robustness" (``book/trees/forward_robustness.ipynb``), the appendix of Trees II: several
full heads against one (20 seeds at each training depth), the single-head outcome without a turning token (20 seeds)
and Gaussian embeddings (20 draws), from the numbers :mod:`onelayer.chapters.trees.forward_robustness` passes in (see
:mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import combine, rated
from ..formatting import number_text
from ..studies.trees import beyond, forward_readings as readings
from ..tables import interval_text

__all__ = ["setting_text", "heads_verdict", "heads_rows", "rows"]


def setting_text(cell: tuple[int, int, int]) -> str:
    """``"batch b, t steps"`` of a setting ``(m, batch, steps)`` of the 20-seed full-heads study."""
    return f"batch {cell[1]}, {number_text(cell[2], 4)} steps"


def heads_verdict(rows: list[dict]) -> str:
    """The verdict on "several full heads do not generalize as one does" in one cell, from the rows of that cell
    (:func:`~onelayer.studies.trees.forward_readings.heads_seeds`): "holds" when the runs of 2-4 full heads below
    ``solved_at`` form a rate whose interval lies above one full head's (disjoint), "fails" when that rate's interval
    lies below 1/2 (most runs of 2-4 heads generalize), "undecided" otherwise."""
    by = {r["model"]: r["below 99% on test"] for r in rows}
    if "1 full head" not in by or "2-4 full heads" not in by:
        raise ValueError("rows must hold one full head and 2-4 full heads of one cell")
    multi, one = by["2-4 full heads"], by["1 full head"]
    if multi.excludes(one) and multi.value > one.value:
        return "holds"
    if multi.high < 0.5:
        return "fails"
    return "undecided"


def heads_rows(settings, limit_rates: dict) -> list[dict]:
    """One verdict row per training depth of the stored 20-seed full-heads study (``limit_rates``: the summary of
    :mod:`onelayer.studies.trees.forward_limit_rates`, read with :mod:`onelayer.studies.trees.forward_readings` at
    ``settings.solved_at``): per (batch size, steps) setting the runs below ``solved_at`` (1 full head, 2-4 full heads,
    and each of 2-4), the runs of 2-4 full heads fitting their training trees, and where the misses of 2-4 full heads
    sit (:func:`~onelayer.studies.trees.forward_readings.heads_regions` of the setting with the most failing runs,
    tree sizes binned at ``settings.heads_size_edges``); the verdict of each setting by :func:`heads_verdict`."""
    s, data = settings, limit_rates
    hs = readings.heads_seeds(data, solved_at=s.solved_at)
    cs = data["settings"]["heads"]
    out = []
    for m in dict.fromkeys(c[0] for c in readings.heads_settings(data)):
        cells = [c for c in readings.heads_settings(data) if c[0] == m]
        parts, verdicts = [], {}
        for cell in cells:
            rows = [r for r in hs if (r["m"], r["batch"], r["steps"]) == cell]
            by = {r["model"]: r for r in rows}
            verdicts[cell] = heads_verdict(rows)
            parts.append(f"{setting_text(cell)}: runs below {s.solved_at:g} on the test trees, "
                         + ", ".join(f"{r['model']} {r['below 99% on test'].text()}" for r in rows)
                         + f"; 2-4 full heads fitting their training trees {by['2-4 full heads']['fit training trees'].text()}")
        where = readings.heads_where(data, m, solved_at=s.solved_at)
        regions = [r for r in readings.heads_regions(data, where, solved_at=s.solved_at) if r["arch"] != "full1"]
        misses = {name: sum(r["goals"] - r["paths right"].k for r in regions if r["region"] == name) for name, _, _ in readings.REGIONS}
        top = max(misses, key=misses.get)
        multi = [a for a in cs["models"] if a != "full1"]
        S = 2 ** (m + 1) + 9
        edges = [e for e in s.heads_size_edges if e <= S]
        small, large = (edges[0], edges[1] - 1), (edges[-1], S)
        parts_where = []
        for lab, rng in ((f"trees of {small[0]}-{small[1]} nodes", small), (f"of {large[0]}-{large[1]} nodes", large),
                         (f"of {small[1] + 1}-{large[0] - 1} nodes", (small[1] + 1, large[0] - 1))):
            r_, n_min = readings.heads_runs_below(data, where, multi, rng, solved_at=s.solved_at)
            parts_where.append(f"{lab} {r_.text()} (at least {n_min} goals per run)")
        where_text = (f". Where ({setting_text(where)}, 2-4 full heads; training trees of {2 ** (m + 1) - 1} nodes): "
                      f"{number_text(misses[top] / sum(misses.values()), 3)} of the misses in {top}; runs below "
                      f"{s.solved_at:g} on " + ", ".join(parts_where))
        words = set(verdicts.values())
        if len(words) == 1:
            verdict = next(iter(words))
        else:
            # the batch size alone never changes the verdict when every step count has one verdict
            by_steps = all(len({v for c, v in verdicts.items() if c[2] == st}) == 1 for st in {c[2] for c in verdicts})
            verdict = ("depends on the training length: " if by_steps else "depends on the setting: ") + "; ".join(
                f"{v} at {setting_text(c)}" for c, v in verdicts.items())
        out.append({
            "claim": "several full heads fit the training trees but do not generalize as one full head does",
            "source": "[ours]", "reading": f"R-F layout (ours), full heads from N(0, {cs['init_scale']:g}^2), trained at m = {m}",
            "settings": (f"{data['settings']['seeds']} seeds per model trained together (batched): 1-4 full heads, m = {m}, "
                         f"S = {2 ** (m + 1) + 9}, lr {cs['lr']:g} (mean loss), "
                         + " / ".join(setting_text(c) for c in cells)
                         + f"; each run tested on its own {cs['test_trees']:,} random trees (0-3 children, depth caps "
                         f"1-{cs['test_max_depth']}), training fit on {cs['train_trees']} perfect trees; the three-seed "
                         f"heads x depth sweep (batch 256, trained to twice its convergence step) is an illustration"),
            "measurement": "; ".join(parts) + where_text,
            "verdict": verdict,
            "class": combine(verdicts.values()),  # heads_verdict gives a class per setting
            "chapter": "forward_robustness"})
    return out


def rows(settings, *, limit_rates: dict, no_turn: list[dict], gaussian: dict, gaussian_study: dict) -> list[dict]:
    """The chapter's verdicts, every one over runs: several full heads (20 seeds at ``m = 2`` and 3), the single-head
    outcome without a turning token (20 seeds), Gaussian embeddings (20 draws).

    The inputs, as :mod:`onelayer.chapters.trees.forward_robustness` reads its stored studies at ``settings``:
    ``limit_rates`` (the summary of :mod:`onelayer.studies.trees.forward_limit_rates`, read by :func:`heads_rows`),
    ``no_turn`` (one full head and the two-head model with and without the turning token: edge-flag cells with a
    ``turning`` key), ``gaussian`` (the Gaussian-embedding draws' rates,
    :func:`~onelayer.studies.trees.forward_readings.gaussian_rates`) and ``gaussian_study`` (that study's summary:
    its settings)."""
    s, data = settings, limit_rates
    ns = data["settings"]["no_turn"]
    nt = {(c["arch"], c["turning"]): c for c in no_turn}
    g, gd = gaussian, gaussian_study
    gshape = {r["test trees"]: r for r in g["rows"]}
    g_deep = next(r for r in g["depth"] if (r["goal depth"], r["test trees"]) == ("10-12", "random trees"))
    full1_nt, two_nt, full1_t = nt[("full1", "no")], nt[("two_head", "no")], nt[("full1", "yes")]
    seeds_note = f"{data['settings']['seeds']} seeds trained together (batched)"
    batch_note = " (the chapter's one-seed illustrations use batch 256; the batch is 32 here)"
    return [
        *heads_rows(s, data),
        {"claim": "the single-head outcome does not depend on the turning token",
         "source": "[ours]", "reading": "alternative layout without a turning token (chain of 2m steps), prompt edges "
                                        "with an empty stage block",
         "settings": (f"{seeds_note} per model: m = {ns['m']}, S = {ns['S']}, lr {ns['lr']:g}, batch {ns['batch_size']}, "
                      f"{ns['steps']} steps, loss {ns['reduction']} (the one-against-two sweep's settings; with the "
                      f"turning token: that sweep's runs); converged: final/initial loss < {s.converged_below:g}; "
                      f"{ns['test_trees']} random test trees per cell" + batch_note),
         "measurement": (f"one full head without the turning token: converged {full1_nt['converged'].text()}, paths "
                         f"solved {full1_nt['paths solved'].text()}, final/initial loss {interval_text(full1_nt['loss ratio'])}; "
                         f"with it: converged {full1_t['converged'].text()}, paths solved {full1_t['paths solved'].text()}; "
                         f"two heads without it: converged {two_nt['converged'].text()}, paths solved "
                         f"{two_nt['paths solved'].text()}, final/initial loss {interval_text(two_nt['loss ratio'])}"),
         "verdict": (readings.runs_verdict(full1_nt["converged"], "one full head converges without the turning token")
                     if full1_t["converged"].low > 0.5 else "undecided: one full head does not converge with it"),
         **(rated({"one full head converged without the turning token": full1_nt["converged"]})
            if full1_t["converged"].low > 0.5 else {"class": "undecided"}),
         "chapter": "forward_robustness"},
        {"claim": "the forward model still solves large unseen trees with non-orthogonal (Gaussian) embeddings",
         "source": "[ours]", "reading": "R-F layout (ours), Gaussian embeddings d = S, end token at test time",
         "settings": (f"{g['runs']} embedding draws (draw i with training seed i, trained together): S = {gd['S']}, "
                      f"m = {gd['m']}, lr {gd['lr']:g}, batch {gd['batch_size']}, {gd['steps']} steps; each run tested "
                      f"on its own {gd['count']} paths of depth 12, stars of 20 leaves and random trees of 30-70 nodes "
                      f"(the one-seed illustration: batch {s.beyond_batch})"),
         "measurement": (", ".join(f"{k}: runs solving {gshape[k]['runs solving'].text()}, paths right "
                                   f"{gshape[k]['path accuracy'].text()}" for k in beyond.SHAPES)
                         + f"; random trees, goals 10-12 deep: {g_deep['path accuracy'].text()}"),
         "verdict": readings.runs_verdict(gshape["random"]["runs solving"], "the large random trees, the hardest shape"),
         **rated({"runs solving the large random trees": gshape["random"]["runs solving"]}),
         "chapter": "forward_robustness"},
    ]

"""The verdicts of the chapter "Theorem 8 and the chain of thought" (``book/trees/forward_cot.ipynb``): Theorem 8 (the
two-head model trained on perfect trees solves any tree) and the forward task without a chain of thought, from the
numbers :mod:`onelayer.chapters.trees.forward_cot` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import rated
from ..rates import rate
from ..studies.trees.forward_readings import runs_verdict

__all__ = ["rows"]


def rows(settings, *, study_settings: dict, theorem8: dict, direct: list[dict]) -> list[dict]:
    """The chapter's verdicts, both over 20 seeds (stored): Theorem 8, and no run solving the forward task without the
    chain of thought.

    The inputs, as :mod:`onelayer.chapters.trees.forward_cot` reads the stored study
    :mod:`onelayer.studies.trees.forward_limit_rates` with ``settings.solved_at``: ``study_settings`` (the study's
    settings: ``seeds``, ``theorem8`` and ``direct``), ``theorem8`` (its Theorem 8 runs: the runs solving their paths
    and their chains, the pooled path, chain and deeper-goal rates) and ``direct`` (one row per model trained without
    a chain of thought: the runs solving the perfect trees, their pooled accuracy, the random-tree accuracy by goal
    depth)."""
    s = settings
    ls, t8 = study_settings, theorem8
    t8s, ds = ls["theorem8"], ls["direct"]
    seeds_note = f"{ls['seeds']} seeds trained together (batched)"
    batch_note = " (the chapter's one-seed illustrations use batch 256; the batch is 32 here)"
    unsolved = rate(sum(r["runs solving"].n - r["runs solving"].k for r in direct), sum(r["runs solving"].n for r in direct))
    return [
        {"claim": "Theorem 8: trained on perfect binary trees, the two-head model solves any tree (any shape, depth "
                  "and goal)",
         "source": "[review]", "reading": "R-F layout (ours), structured two heads with fixed value maps",
         "settings": (f"{seeds_note}: m = {t8s['m']}, S = {t8s['S']}, lr {t8s['lr']:g} (mean loss), batch "
                      f"{t8s['batch_size']}, {t8s['steps']} steps; each run tested on its own {t8s['test_trees']} random "
                      f"trees (0-3 children, depth caps 1-{t8s['test_max_depth']}, any non-root goal)" + batch_note),
         "measurement": (f"runs with at least {s.solved_at:g} of their paths right {t8['paths solved'].text()}, of their "
                         f"chains {t8['chains solved'].text()}; goals pooled: path accuracy {t8['path'].text()}, chain "
                         f"accuracy (every token, flags included) {t8['chain'].text()}, goals deeper than any training "
                         f"goal {t8['deeper'].text()}"),
         "verdict": runs_verdict(t8["paths solved"], "paths"), **rated({"runs solving their paths": t8["paths solved"]}),
         "chapter": "forward_cot"},
        {"claim": "without the chain of thought one layer cannot produce the forward path: the chain of thought does the "
                  "work of depth",
         "source": "[paper]", "reading": "R-F layout (ours), answer-only targets (the turning token and the forward steps)",
         "settings": (f"{seeds_note} per model, from zero: m = {ds['m']}, S = {ds['S']}, lr {ds['lr']:g} (mean loss), "
                      f"batch {ds['batch_size']}, {ds['steps']} steps; {ds['test_trees']} perfect depth-{ds['m']} "
                      f"trees per run" + batch_note),
         "measurement": ("; ".join(f"{r['model']}: runs solving the perfect trees (at least {s.solved_at:g} of the "
                                   f"paths) {r['runs solving'].text()}, paths right {r['perfect trees'].text()}, random "
                                   f"trees by goal depth 1 / 2 / 3+: {r['random, depth 1'].value:.2f} / "
                                   f"{r['random, depth 2'].value:.2f} / {r['random, depth 3+'].value:.2f}" for r in direct)
                         + f"; with the chain of thought: runs solving {t8['paths solved'].text()}"),
         "verdict": runs_verdict(unsolved, "no run solves the perfect trees without the chain of thought"),
         **rated({"runs not solving without the chain of thought": unsolved}),
         "chapter": "forward_cot"},
    ]

"""Chapter "Theorem 8 and the limits" (``book/trees/forward_limits.ipynb``).

The two-head model trained on perfect trees and decoded on random ones (Theorem 8), one head against two beside the
authors' table, the runs without a chain of thought, heads against training depth over seeds, the alternative
layouts and the runs past the theorems' assumptions. The long runs are stored studies
(:mod:`onelayer.studies.trees.forward_limits`, :mod:`~onelayer.studies.trees.forward_seeds`,
:mod:`~onelayer.studies.trees.forward_alternative_layouts`); the chapter and its registered figures load them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from ...claims import combine, rate_class
from ...formatting import number_text
from ...rates import Rate, mean_interval, rate
from ...registry import register
from ...seeding import numpy_rng
from ...studies.registry import load
from ...studies.trees import beyond, forward_beyond, stored_study
from ...studies.trees.layout_variants import EDGE_STAGES
from ...studies.trees import forward_alternative_layouts as alternative_layouts, forward_edge_flag as edge_flag, forward_limit_rates as limit_rates, forward_limits as limits, forward_seeds as seeds
from ...trees.forward.model import loss, single_head, train_forward, two_head
from ...trees.forward.decoding import ForwardDecodeResult, accuracy_by_type, block_correct, goal_counts, greedy_decode
from ...figures.trees_forward import architecture_label, heads_depth_figure, loss_table_figure, seeds_figure
from ...trees.forward.layout import forward_batch, perfect_forward_batch, random_forward_batch
from ...trees.shared import embeddings

__all__ = ["Settings", "SETTINGS", "stored", "trained_two_head", "test_set", "train_eval_batch", "test_decoding",
           "goal_depth_rows", "losses", "loss_table", "single_head_blocks", "direct_runs", "direct_table",
           "heads_depth", "over_seeds", "layout_sensitivity", "layout_tables", "beyond_runs", "edge_flag_stored", "edge_flag_minutes",
           "goal_rates", "edge_flag_cells", "edge_flag_table", "value_map_check", "edge_flag_class", "edge_flag_verdict",
           "limit_rates_stored",
           "rate_texts", "interval_texts", "theorem8_seeds", "direct_seeds", "no_turn_seeds", "heads_runs", "heads_cell_rows", "construction_layouts",
           "heads_bins", "heads_seeds", "heads_settings", "merge_bins", "heads_joint", "REGIONS", "heads_regions",
           "heads_verdict", "heads_where", "heads_runs_below", "heads_rows", "merged_offsets", "gaussian_stored",
           "gaussian_seeds", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows.

    ``S = 25``, ``m = 3``, 1,024 random test trees [summary]; ``lr = 2`` (mean loss), 1,000 steps, the 600 steps of
    the runs without a chain of thought, the depth cap 6, the hard-attention scales and the seeds [guess]. The
    stored studies have their own settings in :mod:`~onelayer.studies.trees.forward_limits`.
    """

    S: int = 25
    m: int = 3
    steps: int = 1000
    lr: float = 2.0
    test_trees: int = 1024
    test_seed: int = 8
    test_max_depth: int = 6
    train_eval_trees: int = 1024
    train_eval_seed: int = 9
    #: the single head given head 1's construction at (lambda, mu): hard attention
    hard_at: tuple[float, float] = (20.0, 10.0)
    #: without a chain of thought: steps, the models, and the seeds of the answer-only test batches
    direct_steps: int = 600
    direct_models: tuple[str, ...] = ("two_head", "full1")
    direct_test_seed: int = 10
    direct_perfect_seed: int = 11
    direct_perfect_trees: int = 1024
    #: beyond the assumptions (onelayer.studies.trees.beyond): S = 80, m = 2, 1,000 steps at lr 8, batch 64, one seed,
    #: 20 test trees of each shape [guess]
    beyond_S: int = 80
    beyond_m: int = 2
    beyond_steps: int = 1000
    beyond_lr: float = 8.0
    beyond_batch: int = 64
    beyond_seeds: tuple[int, ...] = (0,)
    beyond_count: int = 20
    beyond_kinds: tuple[str, ...] = ("one_hot",)
    #: one head against two under both edge-stage readings (stored study onelayer.studies.trees.forward_edge_flag): a run
    #: "converged" when its final loss is below this fraction of its initial loss [ours]; the authors' two heads end
    #: at 0.0056 of their initial loss, their single head at 0.65 [review]; ours: two heads 0.007-0.044, one full head
    #: under s_b 0.08 (lr 0.1) or above 0.4 (lr 0.2)
    converged_below: float = 0.05
    #: a run "solves" the chains (or the paths) when at least this share of its test goals is right
    solved_at: float = 0.99
    #: the 20-seed full-heads study's joint profile: lower edges of the tree-size bins (node counts); goal depths are
    #: merged within a size bin until every (size, depth) bin holds at least ``min_bin_goals`` goals pooled over seeds
    heads_size_edges: tuple[int, ...] = (2, 5, 8, 12, 16, 21, 26)
    min_bin_goals: int = 100
    #: every other depth or size bin the chapter shows holds at least this many goals (neighbours merged)
    min_shown_goals: int = 50


SETTINGS = Settings()


@functools.lru_cache(maxsize=1)
def stored() -> dict:
    """The stored loss-table and heads x depth runs (the study ``trees-forward-limits``,
    :mod:`onelayer.studies.trees.forward_limits`)."""
    return stored_study.summary(limits.STUDY)


@functools.lru_cache(maxsize=1)
def _quick_limits() -> dict:
    return stored_study.summary(limits.STUDY, quick=True)


@functools.lru_cache(maxsize=1)
def trained_two_head():
    """The two-head model trained as in the training chapter (one-hot, from zero, seed 0): ``(A, history)``."""
    s = SETTINGS
    A = embeddings.one_hot_embeddings(s.S)
    return A, train_forward(two_head(), A, m=s.m, steps=s.steps, lr=s.lr)


@functools.lru_cache(maxsize=1)
def test_set():
    """The random test trees ``(batch, trees)``: 0-3 children, depth caps up to ``test_max_depth``, any non-root goal."""
    s = SETTINGS
    return random_forward_batch(s.S, s.test_trees, numpy_rng(s.test_seed), max_depth=s.test_max_depth)


@functools.lru_cache(maxsize=1)
def train_eval_batch():
    """``train_eval_trees`` perfect trees of depth ``m`` from the training distribution (seed ``train_eval_seed``)."""
    s = SETTINGS
    return perfect_forward_batch(s.m, s.S, s.train_eval_trees, numpy_rng(s.train_eval_seed))


@functools.lru_cache(maxsize=1)
def test_decoding():
    """Greedy decoding of the test trees by :func:`trained_two_head`."""
    A, hist = trained_two_head()
    return greedy_decode(hist.params, two_head(), A, test_set()[0])


def goal_depth_rows() -> list[dict]:
    """Whole-path and whole-chain accuracy of :func:`test_decoding` by goal depth (depths merged by
    :func:`merge_bins` so that every row holds at least ``min_shown_goals`` trees), and whether the training trees
    have that depth."""
    test, _ = test_set()
    res = test_decoding()
    depths = test.goal_depth
    counts = {D: int((depths == D).sum()) for D in range(1, int(depths.max()) + 1)}
    rows = []
    for lo, hi in merge_bins(counts, SETTINGS.min_shown_goals):
        sel = (depths >= lo) & (depths <= hi)
        rows.append({"goal depth": _bin_label(lo, hi), "trees": int(sel.sum()),
                     "path accuracy": float(res.answer_correct[sel].double().mean()),
                     "chain accuracy": float(res.cot_correct[sel].double().mean()),
                     "seen in training": "yes" if lo == hi == SETTINGS.m else "no"})
    return rows


def merged_offsets(offsets: dict[int, tuple[int, float]], min_goals: int | None = None) -> dict[int, tuple[int, float]]:
    """``offset -> (goals, accuracy)`` with neighbouring offsets merged by :func:`merge_bins` until each holds at least
    ``min_goals`` (default ``min_shown_goals``) goals; a merged bin is keyed by its lowest offset."""
    min_goals = SETTINGS.min_shown_goals if min_goals is None else min_goals
    out = {}
    for lo, hi in merge_bins({k: n for k, (n, _) in offsets.items()}, min_goals):
        n = sum(offsets[k][0] for k in offsets if lo <= k <= hi)
        hits = sum(offsets[k][0] * offsets[k][1] for k in offsets if lo <= k <= hi)
        out[lo] = (n, hits / n)
    return out


def losses() -> tuple[float, float]:
    """The trained model's loss on the test trees and on :func:`train_eval_batch`."""
    A, hist = trained_two_head()
    with torch.no_grad():
        return (float(loss(hist.params, two_head(), A, test_set()[0])),
                float(loss(hist.params, two_head(), A, train_eval_batch())))


@register("trees-forward-loss-table", "Trees II: training loss of two structured heads, one structured head and one full head against the authors' table")
def loss_table(quick: bool = False):
    """Our stored runs (quick: short live runs) beside the authors' table, one panel per loss normalisation."""
    runs = (_quick_limits() if quick else stored())["loss_table"]
    fig = loss_table_figure(runs, limits.AUTHORS_TABLE, limits.TABLE_STEPS)
    rows = limits.table_rows(runs)
    columns = list(dict.fromkeys(k for r in rows for k in r))  # the authors' rows have no test accuracy
    return fig, {"source": "quick live runs" if quick else Path(limits.STUDY.stored).name,
                 "table": [{c: r.get(c) for c in columns} for r in rows]}


def single_head_blocks() -> tuple[list[dict], float]:
    """The stored structured single head ("sum, 1") scored teacher-forced on :func:`train_eval_batch`: accuracy of
    its node blocks, its stage block and the whole token by step type; and the loss of the single head given head
    1's construction at ``hard_at`` (hard attention)."""
    A, batch = embeddings.one_hot_embeddings(SETTINGS.S), train_eval_batch()
    run = next(r for r in stored()["loss_table"] if (r["arch"], r["norm"]) == ("single_head", "sum, 1"))
    nodes_ok, stage_ok = block_correct(limits.params_from_json(run), single_head(), A, batch)
    rows = [{"block": name, **{k: round(v, 4) for k, v in accuracy_by_type(ok, batch).items()}}
            for name, ok in (("node blocks", nodes_ok), ("stage block", stage_ok), ("whole token", nodes_ok & stage_ok))]
    lam, mu = SETTINGS.hard_at
    hard = {"U1": lam * torch.eye(SETTINGS.S, dtype=A.dtype),
            "V1": mu * torch.tensor([[-1.0, 1.0], [0.0, -1.0]], dtype=A.dtype)}
    with torch.no_grad():
        return rows, float(loss(hard, single_head(), A, batch))


@functools.lru_cache(maxsize=1)
def direct_runs() -> dict:
    """The models of ``direct_models`` trained without a chain of thought (the answer only): name -> parameters."""
    s = SETTINGS
    A = embeddings.one_hot_embeddings(s.S)
    return {name: train_forward(limits.architecture(name), A, m=s.m, steps=s.direct_steps, lr=s.lr, cot=False).params
            for name in s.direct_models}


def direct_table() -> list[dict]:
    """Whole-path accuracy without the chain of thought (perfect depth-``m`` trees; random trees by goal depth) for
    :func:`direct_runs`, and the chain-of-thought model :func:`trained_two_head` in the last row."""
    s = SETTINGS
    A = embeddings.one_hot_embeddings(s.S)
    test, trees = test_set()
    goals = [t.node_of(int(g)) for t, g in zip(trees, test.goal)]
    test_direct = forward_batch(trees, goals, numpy_rng(s.direct_test_seed), cot=False)
    perfect_direct = perfect_forward_batch(s.m, s.S, s.direct_perfect_trees, numpy_rng(s.direct_perfect_seed), cot=False)
    depths = range(1, s.m + 1)
    table = []
    for name, params in direct_runs().items():
        arch = limits.architecture(name)
        r_test = greedy_decode(params, arch, A, test_direct)
        r_perf = greedy_decode(params, arch, A, perfect_direct)
        row = {"model": arch.label(), "chain of thought": "no", f"perfect depth {s.m}": r_perf.path_accuracy}
        for D in depths:
            row[f"random, depth {D}"] = float(r_test.answer_correct[test.goal_depth == D].double().mean())
        table.append(row)
    _, hist = trained_two_head()
    res = test_decoding()
    cot_row = {"model": two_head().label(), "chain of thought": "yes",
               f"perfect depth {s.m}": greedy_decode(hist.params, two_head(), A, train_eval_batch()).path_accuracy}
    for D in depths:
        cot_row[f"random, depth {D}"] = float(res.answer_correct[test.goal_depth == D].double().mean())
    table.append(cot_row)
    return table


@register("trees-heads-depth", "Trees II: steps to converge and test whole-path accuracy of 1-4 full heads and two structured heads against training depth")
def heads_depth(quick: bool = False):
    """Steps to converge and test accuracy of the stored heads x depth runs (quick: short live runs)."""
    runs = (_quick_limits() if quick else stored())["heads_depth"]
    keys = ("label", "m", "S", "budget", "steps_to_converge", "final_step", "train_path_accuracy", "test_path_accuracy")
    return heads_depth_figure(runs), {"source": "quick live runs" if quick else Path(limits.STUDY.stored).name,
                                      "table": [{k: r[k] for k in keys} for r in runs]}


@register("trees-forward-seeds", "Trees II: test whole-path accuracy of every seed of the heads x depth sweep, and accuracy against goal depth minus training depth")
def over_seeds(quick: bool = False):
    """Every seed of the heads x depth runs (seed 0 from the limits study, seeds 1 and 2 from their own stored study), and
    the accuracy against goal depth minus training depth (quick: seed 1 of short live runs)."""
    if quick:
        seed0 = _quick_limits()
        seeded = stored_study.summary(seeds.STUDY, quick=True)
    else:
        seed0, seeded = stored(), stored_study.summary(seeds.STUDY)
    runs = seeds.all_seeds(seed0, seeded)
    cells = seeds.stored_cells(runs)
    # offsets merged so that every point holds at least min_shown_goals goals (the deepest offsets are few)
    offsets = {c["arch"]: merged_offsets(seeds.depth_offset_profile(runs, c["arch"])) for c in cells}
    keys = ("arch", "m", "seeds", "converged", "steps_median", "acc_median")
    table = [{**{k: c[k] for k in keys}, "acc_min": c["acc_range"][0], "acc_max": c["acc_range"][1]} for c in cells]
    return seeds_figure(cells, offsets), {
        "source": "quick live runs" if quick else f"{Path(limits.STUDY.stored).name} (seed 0) + {Path(seeds.STUDY.stored).name}",
        "table": table, "by_depth_offset": {a: {str(k): v for k, v in o.items()} for a, o in offsets.items()}}


def heads_runs() -> list[dict]:
    """Every run of the stored heads x depth runs, seeds 0-2 (:func:`onelayer.studies.trees.forward_seeds.all_seeds`)."""
    return seeds.all_seeds(stored(), stored_study.summary(seeds.STUDY))


def heads_cell_rows() -> list[dict]:
    """One row per (architecture, m) of :func:`heads_runs`: seeds, converged runs, steps and test accuracy, with the
    model's short name (``model``)."""
    return [{**r, "model": architecture_label(r["arch"])} for r in seeds.cell_rows(seeds.stored_cells(heads_runs()))]


def construction_layouts() -> list[dict]:
    """The constructions decoded in the R-F layout and without a turning token
    (:func:`onelayer.studies.trees.forward_alternative_layouts.construction_check`)."""
    return alternative_layouts.construction_check()


def _layout_runs(quick: bool) -> dict:
    return stored_study.summary(alternative_layouts.STUDY, quick=quick)


def layout_tables(quick: bool = False) -> tuple[list[dict], list[dict]]:
    """Every model with and without the turning token: the single-head comparison and the heads x depth protocol,
    one row per (R-F, no turning token) pair."""
    data = _layout_runs(quick)
    return alternative_layouts.comparison_rows(data["table"]), alternative_layouts.comparison_rows(data["cells"])


@register("trees-forward-layouts", "Trees II (table): every forward model with and without the turning token (alternative layout), and the child-first check")
def layout_sensitivity(quick: bool = False):
    """The stored layout runs (quick: short live runs): :func:`layout_tables` in one table, and the child-first check."""
    single, cells = layout_tables(quick)
    return None, {"source": "quick live runs" if quick else Path(alternative_layouts.STUDY.stored).name,
                  "table": single + cells, "child_first": _layout_runs(quick).get("child_first")}


@functools.lru_cache(maxsize=1)
def beyond_runs() -> list[dict]:
    """The two-head model past the theorems' assumptions (:func:`onelayer.studies.trees.beyond.forward_beyond`), one list of
    runs over ``beyond_kinds`` of embeddings."""
    s = SETTINGS
    return [r for kind in s.beyond_kinds
            for r in beyond.forward_beyond(kind, S=s.beyond_S, m=s.beyond_m, steps=s.beyond_steps, lr=s.beyond_lr,
                                           seeds=s.beyond_seeds, count=s.beyond_count, batch_size=s.beyond_batch)]


@functools.lru_cache(maxsize=1)
def edge_flag_stored() -> dict:
    """The stored one-against-two-heads study under both edge-stage readings (:mod:`onelayer.studies.trees.forward_edge_flag`)."""
    return stored_study.summary(edge_flag.STUDY)


def edge_flag_minutes() -> float:
    """Minutes of one core the stored one-against-two-heads study took: its run's wall time, or for members adopted
    from the pre-runner script, the minutes that script recorded for its two parts."""
    made = load(edge_flag.STUDY.name)["provenance"]
    if "adopted" in made:
        made = made["adopted"]["made"]
        return made["minutes"] + made["extra"]["minutes"]
    return round(made["wall_seconds"] / 60, 1)


def edge_flag_cells(runs: list[dict] | None = None, settings: dict | None = None) -> list[dict]:
    """One row per (edge stage, loss reduction, model) of a study part (default: the stored main part): runs
    converged (final/initial loss below ``converged_below``; a diverged run is not), runs solving the chains and the
    paths (at least ``solved_at`` of their test goals right), the test goals pooled over runs (one test set per
    cell, so these pooled goals are not independent across runs: read them beside the per-run rates), and the mean
    final/initial loss ratio over the runs that did not diverge."""
    s = SETTINGS
    if runs is None:
        runs, settings = edge_flag_stored()["runs"], edge_flag_stored()["settings"]
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
            "converged": rate(sum(edge_flag.converged(r["loss"], s.converged_below) for r in rs), len(rs)),
            "chains solved": rate(sum(r["chain"] >= s.solved_at * r["goals"] for r in rs), len(rs)),
            "paths solved": rate(sum(r["path"] >= s.solved_at * r["goals"] for r in rs), len(rs)),
            "chain goals": rate(sum(r["chain"] for r in rs), goals), "path goals": rate(sum(r["path"] for r in rs), goals),
            "loss ratio": mean_interval(finite) if len(finite) > 1 else None,
        })
    return rows


def _interval_text(mi) -> str:
    if mi is None:
        return "-"
    return f"{number_text(mi[0], 3)} [{number_text(mi[1], 3)}, {number_text(mi[2], 3)}]"


@register("trees-forward-edge-flag", "Trees II (table): one full head, two heads and the structured single head over 20 seeds, prompt edges with an empty stage block or with s_b, sum and mean loss")
def edge_flag_table(quick: bool = False):
    """The stored study (quick: its seconds-long version run live) as one table of rates with 95% intervals."""
    if quick:
        data = stored_study.summary(edge_flag.STUDY, quick=True)
        parts = [(data["runs"], data["settings"])]
        source = "quick live runs"
    else:
        data = edge_flag_stored()
        parts = [(data["runs"], data["settings"]), (data["extra"]["runs"], data["extra"]["settings"])]
        source = Path(edge_flag.STUDY.stored).name
    table = [{**{k: c[k] for k in ("edge stage", "loss", "lr", "steps", "model", "runs", "diverged")},
              **{k: c[k].text() for k in ("converged", "chains solved", "paths solved", "chain goals", "path goals")},
              "final/initial loss": _interval_text(c["loss ratio"])}
             for runs, settings in parts for c in edge_flag_cells(runs, settings)]
    return None, {"source": source, "converged_below": SETTINGS.converged_below, "solved_at": SETTINGS.solved_at,
                  "table": table}


def value_map_check(S: int | None = None) -> list[dict]:
    """The least-squares check of :func:`onelayer.studies.trees.forward_edge_flag.value_map_residual` under both readings."""
    return [edge_flag.value_map_residual(SETTINGS.S if S is None else S, stage) for stage in EDGE_STAGES]


def edge_flag_class(cells: list[dict], edge_stage: str, reduction: str) -> str:
    """The class of the authors' claim (one full head stalls, two heads converge) in one reading, from the converged
    rates of ``cells`` (one study part): ``holds`` when one full head's interval lies below 1/2 and some two-head
    model's (structured or two full heads) above it; ``fails`` when one full head's lies above 1/2; ``undecided``
    otherwise."""
    by = {c["arch"]: c["converged"] for c in cells if (c["edge stage"], c["loss"]) == (edge_stage, reduction)}
    twos = [by[a] for a in ("two_head", "full2") if a in by]
    if "full1" not in by or not twos:
        raise ValueError(f"cells must hold full1 and a two-head model for ({edge_stage!r}, {reduction!r})")
    if by["full1"].low > 0.5:
        return "fails"
    if by["full1"].high < 0.5 and any(r.low > 0.5 for r in twos):
        return "holds"
    return "undecided"


def edge_flag_verdict(cells: list[dict], edge_stage: str, reduction: str) -> str:
    """The one-against-two verdict of one reading in words (:func:`edge_flag_class`): "agrees", "disagrees" or
    "undecided", saying so when no model converges."""
    cls = edge_flag_class(cells, edge_stage, reduction)
    if cls == "fails":
        return "disagrees: one full head converges"
    if cls == "holds":
        return "agrees: one full head stalls, two heads converge"
    by = {c["arch"]: c["converged"] for c in cells if (c["edge stage"], c["loss"]) == (edge_stage, reduction)}
    if by["full1"].high < 0.5 and all(by[a].high < 0.5 for a in ("two_head", "full2") if a in by):
        return "undecided: one full head stalls, and so do two heads in this budget"
    return "undecided"


def _edge_flag_rows() -> list[dict]:
    """One verdict row per (study part, edge-stage reading, loss reduction) of the stored one-against-two study."""
    s = SETTINGS
    data = edge_flag_stored()
    parts = [(data["settings"], edge_flag_cells())]
    if "extra" in data:
        parts.append((data["extra"]["settings"], edge_flag_cells(data["extra"]["runs"], data["extra"]["settings"])))
    rows = []
    for sweep, cells in parts:
        for stage, reduction in ((st, red) for st in sweep["edge_stages"] for red in sweep["reductions"]):
            by = {c["arch"]: c for c in cells if (c["edge stage"], c["loss"]) == (stage, reduction)}
            rows.append({
                "claim": ("two heads are needed: the authors' single head with full key-query and value matrices "
                          "stalls (loss near 10 after 1,500 steps) while two heads converge"),
                "source": "[review]",
                "reading": (f"prompt edges {'[a_p; a_c; 0] (empty stage block, R-F)' if stage == 'empty' else '[a_p; a_c; s_b]'}"
                            f"; loss {reduction}; lr {sweep['lr']:g}"),
                "settings": (f"m = {sweep['m']}, S = {sweep['S']}, lr {sweep['lr']:g}, batch {sweep['batch_size']}, "
                             f"{sweep['steps']} steps, {sweep['seeds']} seeds per model; converged: final/initial loss "
                             f"< {s.converged_below:g}; {sweep['test_trees']} random test goals per run (the authors' "
                             f"setting and our one-seed loss table: batch 256)"),
                "measurement": "; ".join(
                    f"{by[a]['model']}: converged {by[a]['converged'].text()}, chain accuracy {by[a]['chain goals'].text()}, "
                    f"path accuracy {by[a]['path goals'].text()}" for a in ("full1", "full2", "two_head", "single_head")
                    if a in by),
                "verdict": edge_flag_verdict(cells, stage, reduction),
                "class": edge_flag_class(cells, stage, reduction),
                "chapter": "forward_limits"})
    return rows


@functools.lru_cache(maxsize=1)
def limit_rates_stored() -> dict:
    """The stored 20-seed study of :mod:`onelayer.studies.trees.forward_limit_rates` (Theorem 8, no chain of thought, no
    turning token, full heads at ``m = 2``)."""
    return stored_study.summary(limit_rates.STUDY)


@functools.lru_cache(maxsize=1)
def gaussian_stored() -> dict:
    """The stored 20-draw study :mod:`onelayer.studies.trees.forward_beyond` (its summary)."""
    return forward_beyond.stored()


def rate_texts(rows: list[dict]) -> list[dict]:
    """``rows`` with every :class:`~onelayer.rates.Rate` as its text ``k/n = p [low, high]`` (for a table)."""
    return [{k: (v.text() if isinstance(v, Rate) else v) for k, v in r.items()} for r in rows]


def interval_texts(rows: list[dict]) -> list[dict]:
    """``rows`` with every :class:`~onelayer.rates.Rate` as ``p [low, high]`` (its counts are in another column)."""
    return [{k: (v.text()[v.text().index("= ") + 2:] if isinstance(v, Rate) else v) for k, v in r.items()} for r in rows]


def _bin_label(lo: int, hi: int | None) -> str:
    return f"{lo}" if lo == hi else (f"{lo}+" if hi is None else f"{lo}-{hi}")


def _pooled(runs, key: str, bins, column: int = 1) -> list[tuple[str, int, int]]:
    """``(bin label, goals, right)`` pooled over ``runs`` from their ``key`` counts (``str(value) -> [goals, ...]``);
    ``bins`` are ``(low, high)`` pairs, ``high=None`` open."""
    out = []
    for lo, hi in bins:
        n = k = 0
        for r in runs:
            for v, c in (r[key] or {}).items():
                if int(v) >= lo and (hi is None or int(v) <= hi):
                    n, k = n + c[0], k + c[column]
        out.append((_bin_label(lo, hi), n, k))
    return out


def _rate(k: int, n: int):
    """:func:`onelayer.rates.rate`, or ``None`` for an empty bin."""
    return rate(k, n) if n else None


def _solved(counts_by_depth: dict, share: float, column: int = 1) -> bool:
    goals = sum(c[0] for c in counts_by_depth.values())
    return sum(c[column] for c in counts_by_depth.values()) >= share * goals


def theorem8_seeds(data: dict | None = None) -> dict:
    """Theorem 8 over the stored seeds (``data``: a summary dict, default :func:`limit_rates_stored`): ``rows`` by goal
    depth (goals pooled over runs, each run on its own test trees), the runs solving their paths and their chains
    (at least ``solved_at`` of their goals right), the pooled rates and the final/initial loss ratio."""
    data = limit_rates_stored() if data is None else data
    runs, m = data["theorem8"], data["settings"]["theorem8"]["m"]
    bins = [(d, d) for d in range(1, m + 2)] + [(m + 2, None)]
    rows = [{"goal depth": label, "goals": n, "path accuracy": _rate(k, n), "chain accuracy": _rate(kc, n),
             "seen in training": "yes" if label == str(m) else "no"}
            for (label, n, k), (_, _, kc) in zip(_pooled(runs, "by_depth", bins), _pooled(runs, "by_depth", bins, 2))]
    total = _pooled(runs, "by_depth", [(1, None)])[0]
    chains = _pooled(runs, "by_depth", [(1, None)], 2)[0]
    deeper = _pooled(runs, "by_depth", [(m + 1, None)])[0]
    return {"rows": rows, "runs": len(runs),
            "paths solved": rate(sum(_solved(r["by_depth"], SETTINGS.solved_at) for r in runs), len(runs)),
            "chains solved": rate(sum(_solved(r["by_depth"], SETTINGS.solved_at, 2) for r in runs), len(runs)),
            "path": rate(total[2], total[1]), "chain": rate(chains[2], chains[1]), "deeper": rate(deeper[2], deeper[1]),
            "loss ratio": mean_interval([r["loss"][-1] / r["loss"][0] for r in runs])}


def direct_seeds(data: dict | None = None) -> list[dict]:
    """Without a chain of thought, over the stored seeds: per model the runs solving the perfect depth-``m`` trees (at
    least ``solved_at`` of their paths right), the pooled perfect-tree accuracy and the random-tree accuracy by goal
    depth."""
    data = limit_rates_stored() if data is None else data
    runs = data["direct"]
    rows = []
    for arch in dict.fromkeys(r["arch"] for r in runs):
        sub = [r for r in runs if r["arch"] == arch]
        row = {"model": sub[0]["label"], "runs": len(sub),
               "runs solving": rate(sum(r["perfect"][1] >= SETTINGS.solved_at * r["perfect"][0] for r in sub), len(sub)),
               "perfect trees": rate(sum(r["perfect"][1] for r in sub), sum(r["perfect"][0] for r in sub))}
        for label, n, k in _pooled(sub, "by_depth", [(1, 1), (2, 2), (3, None)]):
            row[f"random, depth {label}"] = _rate(k, n)
        rows.append(row)
    return rows


def no_turn_seeds(data: dict | None = None, with_turn: list[dict] | None = None) -> list[dict]:
    """One full head and the two-head model with the turning token (the stored one-against-two study's empty-stage,
    sum-loss cells) and without it (the stored 20-seed study): :func:`edge_flag_cells` rows with a ``turning`` key."""
    data = limit_rates_stored() if data is None else data
    s = data["settings"]["no_turn"]
    archs = s["models"]
    if with_turn is None:
        with_turn = [r for r in edge_flag_stored()["runs"] if (r["edge_stage"], r["reduction"]) == ("empty", s["reduction"])]
    rows = []
    for turning, runs in (("yes", with_turn), ("no", data["no_turn"])):
        for c in edge_flag_cells([r for r in runs if r["arch"] in archs], s):
            rows.append({**c, "turning": turning})
    return sorted(rows, key=lambda c: (archs.index(c["arch"]), c["turning"] == "no"))


def heads_bins(runs: list[dict] | None = None) -> dict:
    """Where several full heads fail in the stored heads x depth runs (three seeds per cell): the runs of 2-4 full
    heads below ``solved_at`` and those of one full head, as rates, and per training depth the goals of the runs with
    a failure profile (seeds 1 and 2) pooled by goal depth relative to ``m`` and by tree size."""
    runs = heads_runs() if runs is None else runs
    s = SETTINGS
    multi = [r for r in runs if r["arch"] in ("full2", "full3", "full4")]
    full1 = [r for r in runs if r["arch"] == "full1"]
    out = {"multi failing": rate(sum(r["test_path_accuracy"] < s.solved_at for r in multi), len(multi)),
           "full1 failing": rate(sum(r["test_path_accuracy"] < s.solved_at for r in full1), len(full1)),
           "multi fit": rate(sum(r["train_path_accuracy"] >= s.solved_at for r in multi), len(multi)),
           "by_m": {}, "rows": []}
    for m in sorted({r["m"] for r in multi}):
        sub = [r for r in multi if r["m"] == m]
        fails = rate(sum(r["test_path_accuracy"] < s.solved_at for r in sub), len(sub))
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


def _heads_key(r: dict) -> tuple[int, int, int]:
    return r["m"], r["batch_size"], r["steps"]


def heads_settings(data: dict | None = None) -> list[tuple[int, int, int]]:
    """The ``(m, batch size, steps)`` cells of the stored 20-seed full-heads study, in the study's order."""
    data = limit_rates_stored() if data is None else data
    return [(c["m"], c["batch_size"], c["steps"]) for c in data["settings"]["heads"]["cells"]]


def _heads_cell(data: dict, cell: tuple[int, int, int]) -> list[dict]:
    runs = [r for r in data["heads"] if _heads_key(r) == tuple(cell)]
    if not runs:
        raise ValueError(f"cell must be one of the stored (m, batch size, steps) cells, got {cell!r}")
    return runs


def _joint_total(r: dict) -> tuple[int, int]:
    """``(goals, whole paths right)`` of one run's joint profile."""
    return sum(c[0] for c in r["joint"].values()), sum(c[1] for c in r["joint"].values())


def _run_solves(r: dict) -> bool:
    """Whether a run gets at least ``solved_at`` of its test paths right (a diverged run does not)."""
    if r["joint"] is None:
        return False
    n, k = _joint_total(r)
    return k >= SETTINGS.solved_at * n


def heads_seeds(data: dict | None = None) -> list[dict]:
    """1-4 full heads over the stored seeds, one row per ``(m, batch size, steps, model)``: runs fitting their
    training trees and runs below ``solved_at`` on their own random test trees (rates over runs), the test paths
    pooled over the runs, and the same rates for 2-4 full heads together (``model`` "2-4 full heads")."""
    data = limit_rates_stored() if data is None else data
    rows = []
    for cell in heads_settings(data):
        runs = _heads_cell(data, cell)
        groups = [(r0["label"], [r for r in runs if r["arch"] == a])
                  for a, r0 in {r["arch"]: r for r in runs}.items()]
        groups.append(("2-4 full heads", [r for r in runs if r["arch"] != "full1"]))
        for label, sub in groups:
            totals = [_joint_total(r) for r in sub if r["joint"] is not None]
            rows.append({"m": cell[0], "batch": cell[1], "steps": cell[2], "model": label, "runs": len(sub),
                         "fit training trees": rate(sum(r["train"][1] >= SETTINGS.solved_at * r["train"][0] for r in sub), len(sub)),
                         "below 99% on test": rate(sum(not _run_solves(r) for r in sub), len(sub)),
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


def heads_joint(cell: tuple[int, int, int], data: dict | None = None) -> dict:
    """The joint profile of one stored cell: tree-size bins (``heads_size_edges``), and within each the goal depths
    merged by :func:`merge_bins` so that every (size, depth) bin holds at least ``min_bin_goals`` goals pooled over
    the seeds; per bin the goals and each model's pooled path accuracy (:class:`~onelayer.rates.Rate`)."""
    data = limit_rates_stored() if data is None else data
    runs = _heads_cell(data, cell)
    s = SETTINGS
    goals = _seed_goals(runs)
    edges = [e for e in s.heads_size_edges if e <= max(n for n, _ in goals)] + [max(n for n, _ in goals) + 1]
    archs = list(dict.fromkeys(r["arch"] for r in runs))
    labels = {r["arch"]: r["label"] for r in runs}
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        by_depth: dict[int, int] = {}
        for (n, d), g in goals.items():
            if lo <= n < hi:
                by_depth[d] = by_depth.get(d, 0) + g
        for dlo, dhi in merge_bins(by_depth, s.min_bin_goals):
            row = {"tree size": _bin_label(lo, hi - 1), "goal depth": _bin_label(dlo, dhi),
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
                row[labels[a]] = _rate(k, n)
            rows.append(row)
    return {"cell": tuple(cell), "training nodes": 2 ** (cell[0] + 1) - 1, "models": [labels[a] for a in archs],
            "rows": rows}


#: The four regions of :func:`heads_regions`: (name, size above the training trees', goal deeper than m).
REGIONS = (("trees no larger, goals no deeper", False, False), ("trees no larger, goals deeper", False, True),
           ("larger trees, goals no deeper", True, False), ("larger trees, goals deeper", True, True))


def heads_regions(cell: tuple[int, int, int], data: dict | None = None) -> list[dict]:
    """Where the misses sit in one stored cell: per (region of :data:`REGIONS`, model) the goals, the paths right
    (pooled), the runs below ``solved_at`` in that region (per-run rate) and the region's share of the model's
    misses. Larger = more nodes than the perfect training trees (``2^(m+1) - 1``); deeper = goal depth above ``m``."""
    data = limit_rates_stored() if data is None else data
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
                         "runs below 99%": rate(sum(kk < SETTINGS.solved_at * g for g, kk in with_goals), len(with_goals)),
                         "share of misses": (n - k) / misses if misses else None})
    return rows


def heads_where(m: int, data: dict | None = None) -> tuple[int, int, int]:
    """The stored cell at training depth ``m`` whose misses the chapter locates: the one with the most runs of 2-4 full
    heads below ``solved_at`` (ties: the smaller batch, then fewer steps)."""
    data = limit_rates_stored() if data is None else data
    cells = [c for c in heads_settings(data) if c[0] == m]
    if not cells:
        raise ValueError(f"m must be a training depth of the stored sweep, got {m!r}")
    below = {(r["m"], r["batch"], r["steps"]): r["below 99% on test"].k for r in heads_seeds(data) if r["model"] == "2-4 full heads"}
    return min(cells, key=lambda c: (-below[c], c[1], c[2]))


def heads_runs_below(cell: tuple[int, int, int], archs, sizes: tuple[int, int], depths: tuple[int, int] = (1, 99),
                     data: dict | None = None):
    """Runs of the models ``archs`` in one stored cell whose path accuracy on the goals with tree size in ``sizes``
    and goal depth in ``depths`` (inclusive ranges) is below ``solved_at``, as a rate over the runs with such goals;
    and the fewest such goals in one run: ``(Rate, min goals per run)``."""
    data = limit_rates_stored() if data is None else data
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
            below += k < SETTINGS.solved_at * n
    if not counts:
        raise ValueError("no run has goals in these sizes and depths")
    return rate(below, len(counts)), min(counts)


def heads_verdict(rows: list[dict]) -> str:
    """The verdict on "several full heads do not generalize as one does" in one cell, from :func:`heads_seeds` rows
    of that cell: "holds" when the runs of 2-4 full heads below ``solved_at`` form a rate whose interval lies above
    one full head's (disjoint), "fails" when that rate's interval lies below 1/2 (most runs of 2-4 heads
    generalize), "undecided" otherwise."""
    by = {r["model"]: r["below 99% on test"] for r in rows}
    if "1 full head" not in by or "2-4 full heads" not in by:
        raise ValueError("rows must hold one full head and 2-4 full heads of one cell")
    multi, one = by["2-4 full heads"], by["1 full head"]
    if multi.excludes(one) and multi.value > one.value:
        return "holds"
    if multi.high < 0.5:
        return "fails"
    return "undecided"


def gaussian_seeds(data: dict | None = None) -> dict:
    """The two-head model with Gaussian embeddings over the stored draws: per shape the runs solving it (at least
    ``solved_at`` of its goals) and the goals pooled over runs (each run on its own test trees), the self-stop rate,
    and every goal pooled by goal-depth bin (:data:`onelayer.studies.trees.beyond.DEPTH_BINS`)."""
    data = gaussian_stored() if data is None else data
    runs = data["per_run"]
    shapes = beyond.SHAPES
    rows = []
    for shape in shapes:
        per = [(sum(c[0] for c in r["counts"][shape].values()), sum(c[1] for c in r["counts"][shape].values()),
                sum(c[2] for c in r["counts"][shape].values())) for r in runs]
        n, k, st = (sum(x[i] for x in per) for i in range(3))
        rows.append({"test trees": shape, "goals": n, "runs solving": rate(sum(x[1] >= SETTINGS.solved_at * x[0] for x in per), len(per)),
                     "path accuracy": rate(k, n), "stops by itself": rate(st, n)})
    depth = []
    for lo, hi in beyond.DEPTH_BINS:
        for group, keep in (("all shapes", shapes), ("random trees", ("random",))):
            n = k = 0
            for r in runs:
                for shape in keep:
                    for d, c in r["counts"][shape].items():
                        if lo <= int(d) <= hi:
                            n, k = n + c[0], k + c[1]
            depth.append({"goal depth": _bin_label(lo, hi), "test trees": group, "goals": n,
                          "path accuracy": _rate(k, n)})
    return {"runs": len(runs), "rows": rows, "depth": depth,
            "random solved": rows[shapes.index("random")]["runs solving"],
            "loss": mean_interval([r["train_loss"] for r in runs])}


def _runs_verdict(r, what: str) -> str:
    """``"holds in every run"`` / ``"holds in most runs"`` / ``"fails in most runs"`` / ``"undecided"`` from a rate of
    runs in which ``what`` holds (most: the interval lies above 1/2)."""
    if r.k == r.n:
        return f"holds in every run ({what})"
    if r.low > 0.5:
        return f"holds in most runs ({what})"
    if r.high < 0.5:
        return f"fails in most runs ({what})"
    return f"undecided ({what})"


def _pool_rates(rates) -> str:
    rs = [r for r in rates if r is not None]
    return rate(sum(r.k for r in rs), sum(r.n for r in rs)).text()


def _setting_text(cell: tuple[int, int, int]) -> str:
    return f"batch {cell[1]}, {number_text(cell[2], 4)} steps"


def heads_rows(data: dict | None = None) -> list[dict]:
    """One verdict row per training depth of the stored 20-seed full-heads study: per (batch size, steps) setting
    the runs below ``solved_at`` (1 full head, 2-4 full heads, and each of 2-4), the runs of 2-4 full heads fitting
    their training trees, and where the misses of 2-4 full heads sit (:func:`heads_regions` of the longest run at
    the smallest batch); the verdict of each setting by :func:`heads_verdict`."""
    data = limit_rates_stored() if data is None else data
    hs = heads_seeds(data)
    cs = data["settings"]["heads"]
    out = []
    for m in dict.fromkeys(c[0] for c in heads_settings(data)):
        cells = [c for c in heads_settings(data) if c[0] == m]
        parts, verdicts = [], {}
        for cell in cells:
            rows = [r for r in hs if (r["m"], r["batch"], r["steps"]) == cell]
            by = {r["model"]: r for r in rows}
            verdicts[cell] = heads_verdict(rows)
            parts.append(f"{_setting_text(cell)}: runs below {SETTINGS.solved_at:g} on the test trees, "
                         + ", ".join(f"{r['model']} {r['below 99% on test'].text()}" for r in rows)
                         + f"; 2-4 full heads fitting their training trees {by['2-4 full heads']['fit training trees'].text()}")
        where = heads_where(m, data)
        regions = [r for r in heads_regions(where, data) if r["arch"] != "full1"]
        misses = {name: sum(r["goals"] - r["paths right"].k for r in regions if r["region"] == name) for name, _, _ in REGIONS}
        top = max(misses, key=misses.get)
        multi = [a for a in data["settings"]["heads"]["models"] if a != "full1"]
        S = 2 ** (m + 1) + 9
        edges = [e for e in SETTINGS.heads_size_edges if e <= S]
        small, large = (edges[0], edges[1] - 1), (edges[-1], S)
        parts_where = []
        for lab, rng in ((f"trees of {small[0]}-{small[1]} nodes", small), (f"of {large[0]}-{large[1]} nodes", large),
                         (f"of {small[1] + 1}-{large[0] - 1} nodes", (small[1] + 1, large[0] - 1))):
            r_, n_min = heads_runs_below(where, multi, rng, data=data)
            parts_where.append(f"{lab} {r_.text()} (at least {n_min} goals per run)")
        where_text = (f". Where ({_setting_text(where)}, 2-4 full heads; training trees of {2 ** (m + 1) - 1} nodes): "
                      f"{number_text(misses[top] / sum(misses.values()), 3)} of the misses in {top}; runs below "
                      f"{SETTINGS.solved_at:g} on " + ", ".join(parts_where))
        words = set(verdicts.values())
        if len(words) == 1:
            verdict = next(iter(words))
        else:
            # the batch size alone never changes the verdict when every step count has one verdict
            by_steps = {c[2] for c in verdicts} if all(len({v for c, v in verdicts.items() if c[2] == st}) == 1
                                                        for st in {c[2] for c in verdicts}) else None
            verdict = ("depends on the training length: " if by_steps else "depends on the setting: ") + "; ".join(
                f"{v} at {_setting_text(c)}" for c, v in verdicts.items())
        out.append({
            "claim": "several full heads fit the training trees but do not generalize as one full head does",
            "source": "[ours]", "reading": f"R-F layout (ours), full heads from N(0, {cs['init_scale']:g}^2), trained at m = {m}",
            "settings": (f"{data['settings']['seeds']} seeds per model trained together (batched): 1-4 full heads, m = {m}, "
                         f"S = {2 ** (m + 1) + 9}, lr {cs['lr']:g} (mean loss), "
                         + " / ".join(_setting_text(c) for c in cells)
                         + f"; each run tested on its own {cs['test_trees']:,} random trees (0-3 children, depth caps "
                         f"1-{cs['test_max_depth']}), training fit on {cs['train_trees']} perfect trees; the three-seed "
                         f"heads x depth sweep (batch 256, trained to twice its convergence step) is an illustration"),
            "measurement": "; ".join(parts) + where_text,
            "verdict": verdict,
            "class": combine(verdicts.values()),  # heads_verdict gives a class per setting
            "chapter": "forward_limits"})
    return out


def verdict_rows() -> list[dict]:
    """The chapter's verdicts, every one over runs: Theorem 8, the runs without a chain of thought and without a
    turning token over 20 seeds, Gaussian embeddings over 20 draws (stored sweeps), several full heads over the
    heads x depth sweep's 36 runs plus 20 seeds at ``m = 2``; one head against two is one row per (edge-stage reading,
    loss reduction), 20 seeds per model."""
    s = SETTINGS
    data = limit_rates_stored()
    ls = data["settings"]
    t8 = theorem8_seeds(data)
    direct = direct_seeds(data)
    nt = {(c["arch"], c["turning"]): c for c in no_turn_seeds(data)}
    g, gd = gaussian_seeds(), gaussian_stored()
    gshape = {r["test trees"]: r for r in g["rows"]}
    g_deep = next(r for r in g["depth"] if (r["goal depth"], r["test trees"]) == ("10-12", "random trees"))
    edge_rows = _edge_flag_rows()
    t8s, ds, ns = ls["theorem8"], ls["direct"], ls["no_turn"]
    full1_nt, two_nt, full1_t = nt[("full1", "no")], nt[("two_head", "no")], nt[("full1", "yes")]
    seeds_note = f"{data['settings']['seeds']} seeds trained together (batched)"
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
         "verdict": _runs_verdict(t8["paths solved"], "paths"), "class": rate_class(t8["paths solved"]),
         "chapter": "forward_limits"},
        *edge_rows,
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
                         + f"; with the chain of thought: runs solving {theorem8_seeds(data)['paths solved'].text()}"),
         "verdict": _runs_verdict(unsolved, "no run solves the perfect trees without the chain of thought"),
         "class": rate_class(unsolved),
         "chapter": "forward_limits"},
        *heads_rows(data),
        {"claim": "the single-head outcome does not depend on the turning token",
         "source": "[ours]", "reading": "alternative layout without a turning token (chain of 2m steps), prompt edges "
                                        "with an empty stage block",
         "settings": (f"{seeds_note} per model: m = {ns['m']}, S = {ns['S']}, lr {ns['lr']:g}, batch {ns['batch_size']}, "
                      f"{ns['steps']} steps, loss {ns['reduction']} (the one-against-two sweep's settings; with the "
                      f"turning token: that sweep's runs); converged: final/initial loss < {s.converged_below:g}; "
                      f"{ns['test_trees']} random test trees per cell" + batch_note),
         "measurement": (f"one full head without the turning token: converged {full1_nt['converged'].text()}, paths "
                         f"solved {full1_nt['paths solved'].text()}, final/initial loss {_interval_text(full1_nt['loss ratio'])}; "
                         f"with it: converged {full1_t['converged'].text()}, paths solved {full1_t['paths solved'].text()}; "
                         f"two heads without it: converged {two_nt['converged'].text()}, paths solved "
                         f"{two_nt['paths solved'].text()}, final/initial loss {_interval_text(two_nt['loss ratio'])}"),
         "verdict": (_runs_verdict(full1_nt["converged"], "one full head converges without the turning token")
                     if full1_t["converged"].low > 0.5 else "undecided: one full head does not converge with it"),
         "class": rate_class(full1_nt["converged"]) if full1_t["converged"].low > 0.5 else "undecided",
         "chapter": "forward_limits"},
        {"claim": "the forward model still solves large unseen trees with non-orthogonal (Gaussian) embeddings",
         "source": "[ours]", "reading": "R-F layout (ours), Gaussian embeddings d = S, end token at test time",
         "settings": (f"{g['runs']} embedding draws (draw i with training seed i, trained together): S = {gd['S']}, "
                      f"m = {gd['m']}, lr {gd['lr']:g}, batch {gd['batch_size']}, {gd['steps']} steps; each run tested "
                      f"on its own {gd['count']} paths of depth 12, stars of 20 leaves and random trees of 30-70 nodes "
                      f"(the one-seed illustration: batch {s.beyond_batch})"),
         "measurement": (", ".join(f"{k}: runs solving {gshape[k]['runs solving'].text()}, paths right "
                                   f"{gshape[k]['path accuracy'].text()}" for k in beyond.SHAPES)
                         + f"; random trees, goals 10-12 deep: {g_deep['path accuracy'].text()}"),
         "verdict": _runs_verdict(gshape["random"]["runs solving"], "the large random trees, the hardest shape"),
         "class": rate_class(gshape["random"]["runs solving"]),
         "chapter": "forward_limits"},
    ]


def goal_rates(result: ForwardDecodeResult) -> dict:
    """Chain and path accuracy of a greedy decoding as :class:`onelayer.rates.Rate` (``k/n`` goals, Wilson 95%)."""
    c = goal_counts(result)
    return {"chain": rate(c["chain"], c["goals"]), "path": rate(c["path"], c["goals"])}

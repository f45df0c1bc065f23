"""The verdicts of the chapter "Theorem 5: the heads specialize" (``book/trees/forward_training.ipynb``): Theorem 5's
phases and signs, the heads' specialisation, the identical heads from zero, the division of labour with learned value
maps and the learning rate as a rescaling of time, from the numbers :mod:`onelayer.chapters.trees.forward_training`
passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

import numpy as np

from ..claims import exact_class, rated
from ..formatting import number_text
from ..rates import mean_interval, rate
from ..studies.trees import forward_rescaling as rescaling_study, forward_seeded_training as seeded_training

__all__ = ["runs_mean_text", "rate_words", "rows"]


def runs_mean_text(values) -> str:
    """``"mean m [low, high] over n runs"`` (t interval) of the finite values (``None`` or ``nan``: a run where the event
    never came); ``"n runs"`` when fewer than two are finite."""
    vals = [float(v) for v in values if v is not None and np.isfinite(v)]
    if len(vals) < 2:
        return f"{len(vals)} runs"
    mean, low, high = mean_interval(vals)
    return f"mean {number_text(mean)} [{number_text(low)}, {number_text(high)}] over {len(vals)} runs"


def _step_text(t) -> str:
    return "never" if t is None else number_text(t)


def rate_words(r) -> str:
    """Short words for a rate, read off its Wilson interval."""
    if r.k == 0:
        return "in no run"
    if r.k == r.n and r.low > 0.8:
        return "in every run"
    if r.low > 0.5:
        return "in most runs"
    if r.high < 0.5:
        return "in a minority of runs"
    return "in about half the runs"


def rows(settings, *, two_head: dict, learned_values: list[dict], curves: list[dict], rescaling: dict) -> list[dict]:
    """The chapter's verdicts: training from zero reaches every step type with the construction's signs and the
    heads' attention specializes in our fixed-value-map model (rates over 20 data seeds, stored), the division of
    labour with learned value maps (rates over 20 random starts per initialisation scale at several step counts,
    stored), the identical heads from zero (a symmetry fact), and the learning rate only rescales time (relative loss
    gaps over 20 data seeds, stored).

    The inputs, as :mod:`onelayer.chapters.trees.forward_training` reads them from its stored studies: ``two_head``
    (the two-head runs over data seeds and their settings), ``learned_values`` (one block per initialisation scale of
    the learned-value-map runs), ``curves`` (their split rates per threshold and step,
    :func:`~onelayer.studies.trees.forward_seeded_training.split_curves` at ``settings.lv_thresholds``) and
    ``rescaling`` (the numbers of the chapter's rescaling table over data seeds: ``seeds``, ``settings`` and the
    ``summaries`` per loss normalisation)."""
    s = settings
    two = two_head
    runs = two["runs"]
    n = len(runs)
    holds = rate(sum(map(seeded_training.theorem5_holds, runs)), n)
    order = "forward < backward < turning"
    ordered = rate(sum(r["phases"]["order"] == order for r in runs), n)
    special = rate(sum(map(seeded_training.specialized, runs)), n)
    seed0 = next(r for r in runs if r["seed"] == 0)
    over = (f"{n} training runs, one per data seed {min(r['seed'] for r in runs)}..{max(r['seed'] for r in runs)}: "
            f"m = {two['m']}, S = {two['S']}, one-hot, lr {two['lr']:g} (mean loss), batch {two['batch_size']}, "
            f"{two['steps']} steps from zero (stored sweep)")
    fixed_maps = "R-F layout (ours), structured heads with fixed value maps (head 1 swaps, head 2 copies the stage)"
    rows = [
        {"claim": "Theorem 5: from zero, gradient descent trains the two-head model through phases in which the step "
                  "types become right one after another, to the construction's sign pattern",
         "source": "[paper]", "reading": fixed_maps, "settings": over,
         "measurement": (f"every step type at teacher-forced accuracy 1 and every non-zero construction entry with the "
                         f"same sign: {holds.text()}; phases in the order {order}: {ordered.text()}; the chapter's "
                         f"illustrated run (seed 0): order {seed0['phases']['order']}, signs {seed0['signs_agree']} of "
                         f"{seed0['signs_fixed']}"),
         "verdict": "fails in every run" if holds.k == 0 else f"holds {rate_words(holds)}",
         **rated({"runs with every step type right and every sign": holds}), "chapter": "forward_training"},
        {"claim": "the two heads specialize without being told to: one walks the path, the other controls the stage",
         "source": "[paper]", "reading": fixed_maps + ": which head writes what is imposed, only the attention is learned",
         "settings": over,
         "measurement": (f"head 1 takes the traversal role and head 2 the stage role, neither the other's: "
                         f"{special.text()}; step at which head 1 passes the traversal threshold (1/2): "
                         f"{runs_mean_text(r['events']['head1 traversal'] for r in runs)}; head 2 the stage threshold: "
                         f"{runs_mean_text(r['events']['head2 stage'] for r in runs)} (seed 0: "
                         f"{_step_text(seed0['events']['head1 traversal'])} and {_step_text(seed0['events']['head2 stage'])})"),
         "verdict": "fails in every run" if special.k == 0 else f"holds for the attention {rate_words(special)}",
         **rated({"runs where the heads specialize": special}), "chapter": "forward_training"},
        {"claim": "from zero, the two heads with learned value maps stay identical",
         "source": "[ours]", "reading": "R-F layout (ours), structured logits and a trainable dense value map per head",
         "settings": "zero initialisation of every matrix",
         "measurement": ("not a measurement: heads with equal parameters receive equal gradients, so they stay equal at "
                         "every step whatever the data (two identical heads are one head with twice the value map)"),
         "verdict": "by symmetry",
         "class": exact_class(True),  # a symmetry of the update: identical heads get identical gradients
         "chapter": "forward_training"},
    ]
    threshold, other = s.lv_thresholds[0], s.lv_thresholds[1]
    for block in learned_values:
        scale = block["init_scale"]
        mine = [r for r in curves if r["init"] == scale]
        main = [r for r in mine if r["threshold"] == threshold]
        low = [r for r in mine if r["threshold"] == other]
        first, last = main[0], main[-1]
        node_low = low[-1]["node split"]
        rising = any(c[-1]["node split"].low > c[0]["node split"].high for c in (main, low))
        if node_low.k == 0 and last["node split"].k == 0:
            verdict = f"not seen: no run splits the node blocks by step {last['step']}"
        else:
            verdict = (f"partly: the node blocks split in {rate_words(node_low)[3:]} (>= {other:g}) and "
                       f"{rate_words(last['node split'])[3:]} (>= {threshold:g}) by step {last['step']}"
                       + (f", up from step {first['step']}" if rising else ""))
        verdict += f"; the stage block {'in no run' if last['stage split'].k == 0 else rate_words(last['stage split'])}"
        rows.append({
            "claim": "with learned value maps the heads still divide the work (node blocks to one head, the stage to the other)",
            "source": "[paper]",
            "reading": (f"R-F layout (ours), structured logits and a trainable dense value map per head, Gaussian "
                        f"initialisation sd {scale:g}"),
            "settings": (f"m = {block['m']}, S = {block['S']}, lr {block['lr']:g}, batch {block['batch_size']}, "
                         f"{last['node split'].n} random starts (seeds), recorded at steps {[r['step'] for r in main]} "
                         f"(stored sweep)"),
            "measurement": ("one head writes >= " + f"{threshold:g} of the node blocks: "
                            + "; ".join(f"step {r['step']} {r['node split'].text()}" for r in main)
                            + f"; >= {other:g}: " + "; ".join(f"step {r['step']} {r['node split'].text()}" for r in low)
                            + f"; of the stage block (>= {threshold:g}) at step {last['step']}: "
                            f"{last['stage split'].text()}; every chain right at step {last['step']}: "
                            f"{last['all chains right'].text()}"),
            "verdict": verdict,
            **rated({f"node blocks split (>= {other:g})": node_low, "stage block split": last["stage split"]}),
            "chapter": "forward_training"})
    resc = rescaling
    within = all(g["within_k"] == g["seeds"] for g in resc["summaries"].values())
    parts = []
    for reduction, g in resc["summaries"].items():
        mean, low, high = g["last"]["gap"]
        parts.append(f"lr {s.paper_lr:g} ({reduction}) vs lr {s.lr:g} at eta_eff t = {g['eta_t'][0]:g} to "
                     f"{g['eta_t'][-1]:g} ({len(g['eta_t'])} points): largest gap {rescaling_study.percent_text(g['largest_gap'])}, at "
                     f"eta_eff t = {g['last']['eta_t']:g} mean {rescaling_study.percent_text(mean)} [{rescaling_study.percent_text(low)}, {rescaling_study.percent_text(high)}], seeds with "
                     f"every gap below {s.rescaling_tol:.0%}: {g['within']}, lower loss at lr {s.paper_lr:g} in "
                     f"{g['a_below']}/{g['pairs']} (point, seed) pairs, seed-to-seed spread of the loss there "
                     f"{rescaling_study.percent_text(g['last']['spread'])}")
    systematic = all(g["a_below"] in (0, g["pairs"]) and g["last"]["gap"][1] > g["last"]["spread"]
                     for g in resc["summaries"].values())
    seeds = resc["seeds"]
    rows.append(
        {"claim": "the learning rate and the loss normalisation only rescale time (eta_eff t)",
         "source": "[ours]", "reading": "R-F layout (ours), the two normalisations of LossOptions",
         "settings": (f"{len(seeds)} data seeds {seeds[0]}..{seeds[-1]} per run, from zero: lr {s.paper_lr:g} for "
                      f"{s.paper_lr_steps} steps (mean; sum over positions) against lr {s.lr:g} (mean), loss (mean, "
                      f"1/2) on a fixed batch of {resc['settings']['eval_size']} training trees at the recorded steps "
                      f"with equal eta_eff t (stored sweep)"),
         "measurement": (f"relative loss gap |L(lr {s.paper_lr:g}) - L(lr {s.lr:g})| / L(lr {s.lr:g}): " + "; ".join(parts)
                         + ("; the gap has one sign in every seed and exceeds the seed-to-seed spread: a step-size "
                            "effect, not mini-batch noise" if systematic else "")),
         "verdict": (f"holds to within {s.rescaling_tol:.0%} in every seed" if within
                     else f"fails: some seed differs by {s.rescaling_tol:.0%} or more"),
         **rated({f"seeds within {s.rescaling_tol:.0%} ({reduction})": rate(g["within_k"], g["seeds"])
                  for reduction, g in resc["summaries"].items()}),
         "chapter": "forward_training"})
    return rows

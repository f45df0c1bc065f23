"""Recipes of the walks half of the book's ``scaling`` chapter (:mod:`onelayer.walks.scaling`)."""

from __future__ import annotations

from ...registry import register


@register("walks-scaling", "Scaling (table + figure): GD steps to converge and time per step against N (M = 1000), M (N = 97) and along M = N^1.5")
def _scaling(quick: bool):
    from .. import scaling

    study = scaling.scaling_study(quick=quick)
    return scaling.figure(study), {"slopes": scaling.slopes(study), "cost_model": scaling.cost_model(study),
                                   "table": scaling.table(study, wall=True)}


@register("walks-scaling-critical-m", "Scaling: smallest M that selects the parent at step 2 against N (attention >= 0.99 and log-odds >= N/4)")
def _scaling_critical_m(quick: bool):
    from .. import scaling

    Ns, seeds = ((13, 25, 49), (0, 1)) if quick else (scaling.CRITICAL_N, scaling.DEFAULTS["seeds"])
    sets = {"mean parent attention >= 0.99": scaling.critical_M(Ns, seeds=seeds),
            "median log-odds >= N/4": scaling.critical_M(Ns, seeds=seeds, criterion="log_odds")}
    rows = [row for rows in sets.values() for row in scaling.critical_table(rows)]
    slopes = {label: scaling.slopes({}, rows)[f"M_crit vs N ({rows[0]['criterion']})"] for label, rows in sets.items()}
    return scaling.critical_figure(sets), {"slopes": slopes, "table": rows}

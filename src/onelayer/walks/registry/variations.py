"""Recipes of the chapter ``variations``."""

from __future__ import annotations

import numpy as np

from ...registry import register
from ..settings import CHAIN_STEPS, NO_POSITION_STEPS, SCALING_PS, SCALING_STEPS


@register("walks-variations-residual", "Variations (table): a residual connection changes neither the output nor the GD path")
def _variations_residual(quick: bool):
    from .. import variations

    res = variations.residual_check()
    return None, {"table": [{"quantity": k, "value": float(v)} for k, v in res.items() if np.isscalar(v)]}


@register("walks-variations-scaling", "Variations: 1/sqrt(d) logit scaling against scale 1: optimal predictions and parent attention (p = 0.5, 0.7)")
def _variations_scaling(quick: bool):
    from .. import variations

    steps = 5 if quick else SCALING_STEPS
    eq = variations.scaling_equivalence(0.7, steps=3 if quick else 30)
    rows = variations.scaling_table(SCALING_PS, steps=steps)
    fig = variations.figure_scaling(rows)
    table = [{k: r[k] for k in ("p", "logit_scale", "T0", "final_accuracy", "parent_attention")} for r in rows]
    return fig, {"steps": steps, "equivalence": {k: v for k, v in eq.items() if np.isscalar(v)}, "table": table}


@register("walks-variations-no-position", "Variations (table): without positional embeddings attention stays uniform and accuracy near 1/K")
def _variations_no_position(quick: bool):
    from .. import variations

    steps = 5 if quick else NO_POSITION_STEPS
    return None, {"steps": steps, "table": variations.no_position_table(steps=steps)}


@register("walks-variations-lag", "Variations: a parent at lag 2 (p=0.7): closed-form V(1), attention after step 2, attention over the run")
def _variations_lag(quick: bool):
    from .. import variations

    res = variations.lag_check(0.7, steps=3 if quick else 30)
    fig = variations.figure_lag(res)
    keys = ("V1_error", "V1_scale", "population_V1_circulant_deviation", "population_V1_column_max_offsets",
            "sample_V1_circulant_deviation", "sample_V1_column_max_offsets", "closed_form_circulant", "closed_form_offsets",
            "steps", "lag_attention", "parent_attention", "optimal_fraction", "test_accuracy", "bayes")
    return fig, {k: res[k] for k in keys}


def _chain_numbers(res: dict) -> dict:
    keys = ("V1_rel_error", "token_spread_step2", "position_gap_step2", "Pi", "mu", "parent_step2", "T0", "bayes_test")
    out = {k: res[k] for k in keys}
    out["final"] = {"parent_attention": float(res["parent_attention"][-1]), "optimal_fraction": float(res["optimal_fraction"][-1]),
                    "test_accuracy": float(res["test_accuracy"][-1]), **{f"d {k}": float(d[-1]) for k, d in res["d"].items()}}
    return out


@register("walks-variations-chain", "Variations: a random (non-circulant) Markov chain, K=6: Pi, final V, direction of V against the candidate targets")
def _variations_chain(quick: bool):
    from .. import variations

    res = variations.chain_run(variations.random_transition_matrix(6, seed=0), steps=10 if quick else CHAIN_STEPS)
    return variations.figure_chain(res), _chain_numbers(res)


@register("walks-variations-doubly-stochastic", "Variations: a doubly stochastic non-circulant chain, K=6: learned like the ring walk")
def _variations_doubly_stochastic(quick: bool):
    from .. import variations

    res = variations.chain_run(variations.random_doubly_stochastic(6, seed=1), steps=10 if quick else CHAIN_STEPS)
    return variations.figure_chain(res), _chain_numbers(res)


@register("walks-variations-chain-explorer", "Variations: the chain explorer's default state: a random chain (seed 0, Dirichlet 1), N=49, M=400, 100 GD steps")
def _variations_chain_explorer(quick: bool):
    from .. import variations

    steps = 10 if quick else 100  # the explorer's default
    res = variations.chain_explorer_run(steps=steps)
    return variations.chain_explorer(steps=steps), {"seed": 0, "concentration": 1.0, "steps": steps, **_chain_numbers(res)}

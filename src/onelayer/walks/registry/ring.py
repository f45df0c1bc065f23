"""Recipes of the chapter ``ring``: transition matrices (the paper's Figure 2), mixing, the Bayes rule."""

from __future__ import annotations

import numpy as np

from ...registry import register
from ..settings import BAYES_N, BAYES_PS, BAYES_SEED, BAYES_WALKS, MIXING_KS, MIXING_P, MIXING_R_MAX, RING_EXPLORE, RING_PS
from .. import figures, ring


@register("walks-transition-matrices", "Ring walk: transition matrices Pi for K=6 and p = 0.5, 0.7, 1 (paper's Figure 2)")
def _transition_matrices(quick: bool):
    ps = RING_PS
    fig = figures.transition_heatmaps(6, ps)
    return fig, {"K": 6, "p": list(ps), "Pi": {f"{p:g}": ring.transition_matrix(6, p) for p in ps}}


@register("walks-mixing", "Ring walk: max |Pi^R - limit| against R for K=5 (odd) and K=6 (even), p=0.7")
def _mixing(quick: bool):
    Ks, p, R_max = MIXING_KS, MIXING_P, MIXING_R_MAX
    fig = figures.mixing_figure(Ks, p=p, R_max=R_max)
    rows = [{"K": K, "R": R, "distance": float(d)} for K in Ks for R, d in enumerate(ring.mixing_distance(K, p, R_max))]
    moduli = {str(K): np.sort(np.abs(ring.eigenvalues(K, p)))[::-1] for K in Ks}
    return fig, {"p": p, "eigenvalue_moduli": moduli, "table": rows}


@register("walks-bayes-accuracy", "Ring walk (table): Bayes rule on simulated walks against max(p, 1-p), K=6, N=20")
def _bayes_accuracy(quick: bool):
    n = 2000 if quick else BAYES_WALKS
    rows = [{"p": p, "simulated": ring.simulate_bayes_accuracy(6, p, BAYES_N, n, seed=BAYES_SEED), "max_p_1_minus_p": ring.bayes_accuracy(p)}
            for p in BAYES_PS]
    return None, {"K": 6, "N": BAYES_N, "walks": n, "seed": BAYES_SEED, "table": rows}


@register("walks-ring-explorer-default", "Ring walk: the explorer widget's default state (K=6, p=0.7): Pi, its eigenvalues, max |Pi^R - limit|")
def _ring_explorer_default(quick: bool):
    K, p = RING_EXPLORE["K"], RING_EXPLORE["p"]
    lam = ring.eigenvalues(K, p)
    rows = [{"R": R, "distance": float(d)} for R, d in enumerate(ring.mixing_distance(K, p, 40))]  # R_max of the figure
    return figures.ring_explorer(K, p), {"K": K, "p": p, "Pi": ring.transition_matrix(K, p), "eigenvalues_real": lam.real,
                                         "eigenvalues_imag": lam.imag, "bayes_accuracy": ring.bayes_accuracy(p), "table": rows}

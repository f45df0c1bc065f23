"""Chapter "The ring" (``book/walks/ring.ipynb``): the walk's transition matrix, its mixing, and the Bayes rule.

The paper's Figure 2 (the transition matrices), the mixing of ``Pi^R`` for an odd and an even ring, the Bayes rule
``max(p, 1 - p)`` checked on simulated walks (a rate with its interval), and the explorer over ``K`` and ``p`` (a
live widget in a kernel, a precomputed player in the HTML book, shown from stored frames: :data:`PLAYER_FRAMES`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...rates import rate
from ...paths import data_path
from ...registry import register
from ...scrubber import frame_numbers, load_frames, scrub_grid
from ...validation import check_bool
from ...figures import walks as figures
from ...studies.walks import analysis
from ...verdicts import walks_ring as verdicts
from ...walks import ring

__all__ = ["Settings", "SETTINGS", "PLAYER_FRAMES", "transition_matrices", "mixing", "bayes_accuracy", "explorer_default", "explorer",
           "explorer_player", "explorer_frames", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows."""

    #: ring size of the heat-maps and checks; walk parameters of the paper's Figure 2
    K: int = 6
    transition_ps: tuple[float, ...] = (0.5, 0.7, 1.0)
    #: walk parameters and largest power of the circulant check; (K, p) pairs of the spectrum check
    circulant_ps: tuple[float, ...] = (0.5, 0.7)
    circulant_R_max: int = 100
    spectrum: tuple[tuple[int, float], ...] = ((5, 0.7), (6, 0.7))
    #: the mixing figure: an odd and an even ring, one walk parameter, powers 0..R_max
    mixing_Ks: tuple[int, ...] = (5, 6)
    mixing_p: float = 0.7
    mixing_R_max: int = 60
    #: the simulated Bayes rule (K = 6): walk parameters, walk length, number of walks (quick: 2000) and seed
    bayes_ps: tuple[float, ...] = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
    bayes_N: int = 20
    bayes_walks: int = 20000
    bayes_quick_walks: int = 2000
    bayes_seed: int = 1
    #: the exact tie of the Bayes scores at p = 1/2 and the last node that shows it
    bayes_tie_p: float = 0.5
    bayes_tie_node: int = 1
    #: sequence length and dimension of the positional Gram check
    gram_N: int = 97
    gram_M: int = 1000
    #: the explorer's default state; the largest power its mixing panel shows
    explore_K: int = 6
    explore_p: float = 0.7
    explore_R_max: int = 40
    #: the player's grid (ring sizes by walk parameters; quick mode: every third p)
    scrub_Ks: tuple[int, ...] = (5, 6)
    scrub_ps: tuple[float, ...] = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)


SETTINGS = Settings()
#: The player's rendered frames in the data directory (``python -m tools.player_frames walks-ring-explorer-frames``).
PLAYER_FRAMES = "walks/frames/ring_explorer.json"


@register("walks-transition-matrices", "Ring walk: transition matrices Pi for K=6 and p = 0.5, 0.7, 1 (paper's Figure 2)")
def transition_matrices(quick: bool = False):
    """Heat-maps of ``Pi`` for ``SETTINGS.transition_ps`` (the paper's Figure 2)."""
    K, ps = SETTINGS.K, SETTINGS.transition_ps
    return figures.transition_heatmaps(K, ps), {"K": K, "p": list(ps),
                                                "Pi": {f"{p:g}": ring.transition_matrix(K, p) for p in ps}}


@register("walks-mixing", "Ring walk: max |Pi^R - limit| against R for K=5 (odd) and K=6 (even), p=0.7")
def mixing(quick: bool = False):
    """``max |Pi^R - limit|`` against ``R`` for an odd and an even ring, with the eigenvalue moduli behind the rate."""
    Ks, p, R_max = SETTINGS.mixing_Ks, SETTINGS.mixing_p, SETTINGS.mixing_R_max
    fig = figures.mixing_figure(Ks, p=p, R_max=R_max)
    rows = [{"K": K, "R": R, "distance": float(d)} for K in Ks for R, d in enumerate(ring.mixing_distance(K, p, R_max))]
    moduli = {str(K): np.sort(np.abs(ring.eigenvalues(K, p)))[::-1] for K in Ks}
    return fig, {"p": p, "eigenvalue_moduli": moduli, "table": rows}


@register("walks-bayes-accuracy", "Ring walk (table): Bayes rule on simulated walks against max(p, 1-p), K=6, N=20")
def bayes_accuracy(quick: bool = False):
    """The Bayes rule on ``bayes_walks`` simulated walks per ``p``: right in ``k`` of ``n``, with a 95% Wilson interval,
    against the population value ``max(p, 1 - p)``."""
    n = SETTINGS.bayes_quick_walks if quick else SETTINGS.bayes_walks
    rows = []
    for p in SETTINGS.bayes_ps:
        accuracy = analysis.simulate_bayes_accuracy(SETTINGS.K, p, SETTINGS.bayes_N, n, seed=SETTINGS.bayes_seed)
        r = rate(round(accuracy * n), n)  # accuracy is an unweighted mean over n walks: k / n up to round-off
        rows.append({"p": p, "simulated": r.value, "right": r.k, "walks": r.n, "low": r.low, "high": r.high,
                     "max_p_1_minus_p": ring.bayes_accuracy(p)})
    return None, {"K": SETTINGS.K, "N": SETTINGS.bayes_N, "walks": n, "seed": SETTINGS.bayes_seed, "table": rows}


@register("walks-ring-explorer-default", "Ring walk: the explorer widget's default state (K=6, p=0.7): Pi, its eigenvalues, max |Pi^R - limit|")
def explorer_default(quick: bool = False):
    """The explorer's figure at its default ``K`` and ``p``, and what it plots."""
    K, p = SETTINGS.explore_K, SETTINGS.explore_p
    lam = ring.eigenvalues(K, p)
    rows = [{"R": R, "distance": float(d)} for R, d in enumerate(ring.mixing_distance(K, p, SETTINGS.explore_R_max))]
    return figures.ring_explorer(K, p), {"K": K, "p": p, "Pi": ring.transition_matrix(K, p), "eigenvalues_real": lam.real,
                                         "eigenvalues_imag": lam.imag, "bayes_accuracy": ring.bayes_accuracy(p),
                                         "table": rows}


def explorer():
    """The live sliders (in a kernel) for ``K`` and ``p``, redrawing the explorer's figure."""
    return figures.ring_widget(K=SETTINGS.explore_K, p=SETTINGS.explore_p)


def explorer_player(live: bool = False):
    """The precomputed player of the HTML book, the explorer's figure over ``scrub_Ks`` by ``scrub_ps``: its stored
    frames (:data:`PLAYER_FRAMES`, nothing drawn), or (``live``) drawn again."""
    if not check_bool("live", live):
        return load_frames(data_path(PLAYER_FRAMES))
    return scrub_grid(figures.ring_explorer, SETTINGS.scrub_Ks, SETTINGS.scrub_ps, labels=("K", "p"),
                      name="walks-ring-explorer", fmt=("{:d}", "{:.1f}"),
                      alt="Transition matrix heat-map, eigenvalues against the unit circle and the distance of Pi^R to "
                          "its limit on a log scale, for a ring of K = {0} nodes and walk parameter p = {1}.")


@register("walks-ring-explorer-frames", "Ring walk player (frames): Pi, its eigenvalues and max |Pi^R - limit| over "
                                        "K = 5, 6 and p from 0 to 1")
def explorer_frames(quick: bool = False):
    """The numbers behind every frame of :func:`explorer_player`."""
    ps = SETTINGS.scrub_ps[::3] if quick else SETTINGS.scrub_ps
    return None, frame_numbers(figures.ring_explorer, SETTINGS.scrub_Ks, ps, labels=("K", "p"), fmt=("{:d}", "{:.1f}"))


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.walks_ring.rows` of the circulant check of ``Pi^R`` and
    the simulated Bayes rule."""
    K, R_max = SETTINGS.K, SETTINGS.circulant_R_max
    circulant = all(ring.is_circulant(ring.matrix_power(ring.transition_matrix(K, p), R), tol=1e-14)
                    for p in SETTINGS.circulant_ps for R in range(R_max + 1))
    return verdicts.rows(SETTINGS, circulant=circulant, bayes_table=bayes_accuracy()[1]["table"])

"""The verdicts of the chapter "Theorem 3: gradient descent finds it" (``book/trees/backward_training.ipynb``): the
relabelling symmetry under SGD, Theorem 3's growing diagonal and vanishing loss, the phases of its proof outline and
the late-time rate, from the population runs' readings and the rates over stored SGD seeds that
:mod:`onelayer.chapters.trees.backward_training` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class, rated
from ..formatting import mean_text, number_text

__all__ = ["rows"]


def rows(settings, *, population: dict, late_rate: dict, seeds: dict) -> list[dict]:
    """The chapter's verdicts: the symmetry reduction under SGD, the growing diagonal and vanishing loss, the sign-based
    phases, and the late-time rate (population GD is exact and deterministic; the SGD numbers are over the stored
    seeds).

    ``population``: :func:`~onelayer.studies.trees.analysis.detect_phases` of the long population run; ``late_rate``:
    the late-time rate of the population run at the largest step size
    (:func:`onelayer.chapters.trees.backward_training.rate_summary`); ``seeds``: the SGD runs over the stored seeds
    (:func:`onelayer.chapters.trees.backward_training.seed_summary`)."""
    s, n = settings, seeds["runs"]
    population_descends = bool(population["h1_increasing"] and population["loss_decreasing"])
    base = {"source": "[review]", "reading": "R-B layout, one-hot embeddings, mean loss with 1/2 (ours)",
            "chapter": "backward_training"}
    seeds_setting = (f"S = {s.S}, m = {s.m}, SGD at lr {s.lr:g}, batch {s.batch_size}, {seeds['steps']} steps, "
                     f"{n} seeds (batched, stored sweep trees-backward-seeds)")
    pop_setting = f"S = {s.S}, m = {s.m}, population GD at lr {s.lr:g}, {s.phase_steps} steps (deterministic: no seed enters)"
    return [
        {**base, "claim": "from B = 0, H = A^T B A stays in the span of I and 11^T - I (the relabelling symmetry)",
         "source": "[ours]", "settings": seeds_setting,
         "measurement": f"{n} seeds: largest relative residual of H from step {s.late_from} on, mean "
                        f"{mean_text(seeds['late_residual'])}, at most {number_text(seeds['max_late_residual'])}; h1 within "
                        f"{mean_text(seeds['h1_gap'])} (mean relative gap) of population GD",
         "verdict": "holds up to sampling noise" if seeds["max_late_residual"] < 0.05 else
                    ("holds on average" if seeds["late_residual"][2] < 0.05 else "fails"),
         "class": ("holds" if seeds["max_late_residual"] < 0.05 else
                   "most" if seeds["late_residual"][2] < 0.05 else "fails")},
        {**base, "claim": "Theorem 3: the diagonal of H increases at every step and the training loss tends to zero",
         "settings": f"{pop_setting}; {seeds_setting}",
         "measurement": f"population: h1 increasing at every recorded step {population['h1_increasing']}, loss "
                        f"decreasing at every step {population['loss_decreasing']}, "
                        f"{number_text(late_rate['final_loss'])} at eta t = {number_text(late_rate['final_eta_t'])} "
                        f"(lr {late_rate['lr']:g}); SGD, h1 increasing at every recorded "
                        f"step: {seeds['h1_increasing'].text()}; batch loss below {s.loss_threshold:g} at step "
                        f"{seeds['steps']}: {seeds['loss_below'].text()}",
         "verdict": ("holds" if population_descends and seeds["h1_increasing"].low >= 0.8
                     and seeds["loss_below"].low >= 0.8 else
                     "holds for population GD; not on every SGD run" if population_descends else "fails"),
         **rated({"SGD runs with h1 increasing": seeds["h1_increasing"], "SGD runs with a low loss": seeds["loss_below"]},
                 checks=[exact_class(population_descends)])},
        {**base, "claim": "Theorem 3 (proof outline): phase I, the off-diagonal of H bounded; then phase II, strictly decreasing",
         "settings": pop_setting,
         "measurement": f"h2 decreasing from step {number_text(population['T_offdiag_decreasing'])} on; |h2| at most "
                        f"{number_text(population['max_abs_h2_phase1'])} until T_att = "
                        f"{number_text(population['T_attention'])}",
         "verdict": ("bounded holds, but the two sign-based phases are not distinguished: h2 decreases from the first step"
                     if population["T_offdiag_decreasing"] == 0 else "two phases seen"),
         # bounded off-diagonal (phase I) holds; phase II only if the off-diagonal starts decreasing after a while
         "class": "partly" if population["T_offdiag_decreasing"] == 0 else "exact"},
        {**base, "claim": "after the transition the loss decays like 1/t (log-log slope -1, margin gain (1/2) log 2 per doubling)",
         "source": "[ours]", "settings": f"S = {s.S}, m = {s.m}, population GD at lr {late_rate['lr']:g}, against eta t "
                                             "(the deterministic population recursion: no seed enters)",
         "measurement": f"log-log slope {number_text(late_rate['loglog_slope_last_decade'])} over the last decade; "
                        f"margin gain {number_text(late_rate['margin_gain_per_doubling'])} per doubling",
         "verdict": "holds" if abs(late_rate["loglog_slope_last_decade"] + 1.0) < 0.05 else "fails",
         "class": "holds" if abs(late_rate["loglog_slope_last_decade"] + 1.0) < 0.05 else "fails"},
    ]

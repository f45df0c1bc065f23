"""Chapter "Walks lab" (``book/walks/lab.ipynb``): retrain the ring-walk transformer for any setting and look at
what it learned.

:func:`lab_run` samples walks, builds the model of :mod:`onelayer.walks.model`
and trains it by full-batch gradient descent, recording at every step the
quantities of the paper's Figure 4 (:func:`onelayer.studies.walks.experiment.standard_records`).
:func:`lab_figure` draws the result with :func:`onelayer.figures.walks.training_figure`:
test accuracy against the step, ``V`` as a heat-map and the attention profile
over the positions. :func:`lab_widget` puts ipywidgets controls in front of
:func:`lab_figure` (through :func:`onelayer.widgets.slider_app`, which caches
every setting already drawn) and shows a progress bar while a setting trains.

The default setting (:data:`DEFAULTS`) is chosen to retrain in about a second
on one CPU core, figure included: ``K = 6``, ``N = 25`` (``= 4K + 1``),
``M = ceil(N^{3/2}) = 125``, ``p = 0.7``, 400 training and 400 test walks,
30 GD steps of size ``eta = 1`` from zero, the log-loss with ``epsilon = 0.1``
averaged over the walks, sinusoidal positions. Everything else is the paper's
model unchanged. ``M`` always follows ``N`` by :func:`M_for`, the growth of M the
theorems assume.

Controls and their ranges (:data:`CONTROL_RANGES`): ``p`` in ``[0, 1]``,
``K``, ``N``, step size ``lr``, initialisation scale ``sigma`` (``0`` is the
paper's zero initialisation, ``sigma > 0`` a Gaussian ``N(0, sigma^2)`` for
every entry of ``V`` and ``W``), the loss (``"log"``, ``"squared"``,
``"cross_entropy"``), its reduction over the walks (``"mean"`` or ``"sum"``),
the positional vectors (``"sin"`` or ``"exact"``) and the number of steps.

Round-off is never what decides a lab run. At ``p in {0, 1}`` with sinusoidal
positions the model leaves the symmetric state of Theorem 4.1 only through the
tiny non-orthogonality of the positions, which is round-off and differs between
machines. The lab's sinusoidal positions therefore carry the seeded Gram error of
:mod:`onelayer.studies.walks.theorem41` (``gram_error = GRAM_ERROR = 1e-9``, about 600
times the round-off, the same on every machine); exact positions carry none, so
that they keep the exact symmetry the theorem is about. ``gram_error`` overrides
that choice.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from ...paths import data_path
from ...registry import register
from ...scrubber import frame_numbers, load_frames, scrub_grid
from ...training import History
from ...validation import check_bool, check_choice, check_float, check_int, check_probability
from ...figures import walks as figures
from ...walks import model
from ...studies.walks import analysis, experiment, theorem41
from ...walks.positions import M_for
from ...widgets import merged_settings, progress_app, selection_slider, timed
from ...verdicts import walks_lab as verdicts

__all__ = [
    "Settings",
    "SETTINGS",
    "PLAYER_FRAMES",
    "p_eta_v_limits",
    "DEFAULTS",
    "CONTROL_RANGES",
    "LR_CHOICES",
    "SIGMA_CHOICES",
    "M_for",
    "default_gram_error",
    "LabResult",
    "lab_run",
    "compare",
    "lab_title",
    "lab_figure",
    "lab_widget",
    "timed",
    "selection_slider",
    "merged_settings",
    "progress_app",
    "default_state",
    "p_eta_player",
    "p_eta_frames",
    "variations_table",
    "verdict_rows",
]

@dataclass(frozen=True)
class Settings:
    """What the chapter shows besides the lab's own controls (:data:`DEFAULTS`, :data:`CONTROL_RANGES`)."""

    #: the player's grid: walk parameters by step sizes, 30 GD steps from zero each (quick mode: 1 x 2 runs of 5 steps)
    scrub_ps: tuple[float, ...] = (0.5, 0.7, 0.9, 1.0)
    scrub_lrs: tuple[float, ...] = (0.1, 1.0, 10.0)
    #: the table of variations of the default setting: (name, overrides of :data:`DEFAULTS`)
    variations: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = (
        ("default (p=0.7)", ()),
        ("p=0.5", (("p", 0.5),)),
        ("p=0.9", (("p", 0.9),)),
        ("p=1, sin positions", (("p", 1.0),)),
        ("p=1, exact positions", (("p", 1.0), ("positions", "exact"))),
        ("p=1, exact, N=26", (("p", 1.0), ("positions", "exact"), ("N", 26))),
        ("init sigma=0.01", (("sigma", 0.01),)),
        ("squared loss", (("loss", "squared"),)),
        ("sum reduction, eta=1", (("reduction", "sum"),)),
        ("eta=0.1", (("lr", 0.1),)),
    )
    #: sequence lengths of the p = 1 exact-positions divisibility exercise
    divisibility_Ns: tuple[int, ...] = tuple(range(25, 32))


SETTINGS = Settings()
#: The player's rendered frames in the data directory (``python -m tools.player_frames walks-lab-p-eta-frames``).
PLAYER_FRAMES = "walks/frames/lab_p_eta.json"


#: The default setting of the lab (about one second per retrain on one CPU core).
DEFAULTS = {
    "p": 0.7,
    "K": 6,
    "N": 25,
    "lr": 1.0,
    "sigma": 0.0,
    "loss": "log",
    "reduction": "mean",
    "positions": "sin",
    "steps": 30,
}

#: Allowed ranges of the integer controls: ``name -> (low, high)``.
CONTROL_RANGES = {"K": (3, 20), "N": (5, 121), "steps": (1, 500), "n_train": (1, 20_000), "n_test": (1, 20_000)}

#: Step sizes offered by the widget's slider.
LR_CHOICES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: Initialisation scales offered by the widget (0 = zero initialisation, the paper's).
SIGMA_CHOICES = (0.0, 0.001, 0.01, 0.1, 1.0)
#: Positional vectors the lab offers (``"none"`` removes the only signal the attention can use).
LAB_POSITIONS = ("sin", "exact")
#: Records that are single numbers (NaN once the parameters are no longer finite).
_SCALAR_RECORDS = ("test_accuracy", "conditional_accuracy", "parent_attention", "train_accuracy")


@dataclass
class LabResult:
    """One trained setting: the experiment, its recorded history and the wall-clock time of the training."""

    experiment: experiment.Experiment
    history: History
    seconds: float
    settings: dict

    @property
    def first_nonfinite_step(self) -> float:
        """First recorded step whose training loss is not finite (``nan`` if every loss is finite)."""
        bad = np.flatnonzero(~np.isfinite(self.history["loss"]))
        return float(self.history.steps[bad[0]]) if bad.size else float("nan")

    def steps_to_optimal(self) -> float:
        """First step from which every test prediction is Bayes-optimal (conditional accuracy ``max(p, 1-p)``); ``nan`` if never."""
        gap = np.abs(self.history["conditional_accuracy"] - self.experiment.bayes_accuracy)
        return analysis.steps_to_optimal(gap < experiment.OPTIMAL_TOL)

    def summary(self) -> dict[str, float]:
        """Final test accuracy, the Bayes rule's accuracy on the same test walks, attention on the parent, loss,
        first non-finite loss step and :meth:`steps_to_optimal`."""
        h = self.history
        return {
            "test_accuracy": float(h.final("test_accuracy")),
            "bayes_test_accuracy": float(self.experiment.bayes_test_accuracy),
            "conditional_accuracy": float(h.final("conditional_accuracy")),
            "parent_attention": float(h.final("parent_attention")),
            "final_loss": float(h.final("loss")),
            "first_nonfinite_step": self.first_nonfinite_step,
            "steps_to_optimal": self.steps_to_optimal(),
        }


def compare(variations: Mapping[str, Mapping]) -> list[dict]:
    """Run :func:`lab_run` for each named variation of the default setting; one row (``name`` + summary) per run."""
    if not isinstance(variations, Mapping) or not variations:
        raise TypeError("variations must be a non-empty mapping name -> settings")
    return [{"name": name, **lab_run(**dict(kw)).summary()} for name, kw in variations.items()]


def _finite(params: dict[str, torch.Tensor]) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in params.values())


def _guarded(records: dict) -> dict:
    """Scalar records return NaN instead of raising once a diverging run has non-finite parameters."""

    def guard(fn):
        return lambda prm: fn(prm) if _finite(prm) else float("nan")

    return {name: guard(fn) if name in _SCALAR_RECORDS else fn for name, fn in records.items()}


def default_gram_error(positions: str) -> float:
    """The seeded Gram error a lab run injects by default: :data:`onelayer.studies.walks.theorem41.GRAM_ERROR` for sinusoidal
    positions (so that the escape at ``p in {0, 1}`` is the same on every machine), ``0`` for exact positions."""
    return theorem41.GRAM_ERROR if check_choice("positions", positions, LAB_POSITIONS) == "sin" else 0.0


def _check_settings(p, K, N, lr, sigma, loss, reduction, positions, steps, n_train, n_test, seed,
                    gram_error=None) -> dict:
    out = {"p": check_probability("p", p)}
    for name, value in (("K", K), ("N", N), ("steps", steps), ("n_train", n_train), ("n_test", n_test)):
        low, high = CONTROL_RANGES[name]
        out[name] = check_int(name, value, low=low, high=high)
    out["lr"] = check_float("lr", lr, low=0.0, low_open=True)
    out["sigma"] = check_float("sigma", sigma, low=0.0)
    out["loss"] = check_choice("loss", loss, model.LOSSES)
    out["reduction"] = check_choice("reduction", reduction, model.REDUCTIONS)
    out["positions"] = check_choice("positions", positions, LAB_POSITIONS)
    out["seed"] = check_int("seed", seed, low=0)
    out["gram_error"] = (default_gram_error(out["positions"]) if gram_error is None
                         else check_float("gram_error", gram_error, low=0.0))
    return out


def lab_run(p: float = 0.7, K: int = 6, N: int = 25, lr: float = 1.0, sigma: float = 0.0, loss: str = "log",
            reduction: str = "mean", positions: str = "sin", steps: int = 30, *, n_train: int = 400,
            n_test: int = 400, seed: int = 0, gram_error: float | None = None, progress: bool = False) -> LabResult:
    """Sample walks, train from the chosen initialisation and record Figure 4's quantities at every step.

    Parameters
    ----------
    p:
        Probability of a clockwise step, in ``[0, 1]`` (``0`` and ``1`` are the deterministic walks of Theorem 4.1).
    K, N:
        Ring size in ``[3, 20]`` and sequence length in ``[5, 121]``; ``M = M_for(N)``.
    lr:
        Constant GD step size ``eta > 0``.
    sigma:
        ``0`` for the zero initialisation (the paper's), otherwise the standard
        deviation of a Gaussian initialisation of ``V`` and ``W`` (seeded by ``seed``).
    loss, reduction, positions:
        Options of :class:`onelayer.walks.model.ModelConfig` (positions ``"sin"`` or ``"exact"``).
    steps:
        Number of GD steps, in ``[1, 500]``.
    n_train, n_test:
        Numbers of sampled training and test walks (training seed ``seed``, test seed ``seed + 1000``).
    gram_error:
        Seeded Gram error of the positions (``>= 0``, seed ``0``); ``None`` (default): :func:`onelayer.chapters.walks.lab.default_gram_error`
        (``1e-9`` for sinusoidal positions, ``0`` for exact ones).
    progress:
        Show a ``tqdm`` progress bar while training.
    """
    s = _check_settings(p, K, N, lr, sigma, loss, reduction, positions, steps, n_train, n_test, seed, gram_error)
    exp = experiment.setup_experiment(s["p"], K=s["K"], N=s["N"], M=M_for(s["N"]), n_train=s["n_train"],
                                   n_test=s["n_test"], seed=s["seed"], loss=s["loss"], reduction=s["reduction"],
                                   positions=s["positions"], gram_error=s["gram_error"])
    start = time.perf_counter()
    init = "zero" if s["sigma"] == 0 else "gaussian"
    params = exp.model.init(init, sigma=s["sigma"], seed=s["seed"])
    hist = exp.model.train(params, exp.train, steps=s["steps"], lr=s["lr"], record=_guarded(experiment.standard_records(exp)),
                           progress=progress, desc="walks lab")
    return LabResult(exp, hist, time.perf_counter() - start, s)


def lab_title(result: LabResult) -> str:
    """Three lines (four if the loss diverged) describing the setting and what the run reached (the figure's title)."""
    s, c, r = result.settings, result.experiment.model.config, result.summary()
    init = "zero init" if s["sigma"] == 0 else f"Gaussian init sigma={s['sigma']:g}"
    gram = f" + seeded Gram error {c.gram_error:g}" if c.gram_error > 0 else ""
    lines = [f"p={s['p']:g}, K={c.K}, N={c.N}, M={c.M}, eta={s['lr']:g}, {init}, {s['steps']} steps",
             f"{c.loss} loss ({c.reduction}), {c.positions} positions{gram}",
             f"test accuracy {r['test_accuracy']:.3f} (Bayes rule {r['bayes_test_accuracy']:.3f}), "
             f"attention on the parent {r['parent_attention']:.3f}"]
    if np.isfinite(r["first_nonfinite_step"]):
        lines.append(f"loss not finite from step {r['first_nonfinite_step']:.0f}")
    return "\n".join(lines)


def lab_figure(p: float = 0.7, K: int = 6, N: int = 25, lr: float = 1.0, sigma: float = 0.0, loss: str = "log",
               reduction: str = "mean", positions: str = "sin", steps: int = 30, *, n_train: int = 400,
               n_test: int = 400, seed: int = 0, gram_error: float | None = None, progress: bool = False):
    """Widget callback: train with :func:`lab_run` and draw accuracy, ``V`` and the attention profile.

    The panels are those of :func:`onelayer.figures.walks.training_figure` at the
    last step; the title states the setting and the final numbers.
    """
    result = lab_run(p, K, N, lr, sigma, loss, reduction, positions, steps, n_train=n_train, n_test=n_test,
                     seed=seed, gram_error=gram_error, progress=progress)
    return figures.training_figure(result.history, result.experiment, title=lab_title(result))


def lab_widget(**defaults):
    """Controls for every setting of :func:`lab_figure`, a progress bar, and the figure.

    Keyword arguments override :data:`DEFAULTS` (they are validated). Sliders
    redraw when released; every setting drawn once is cached, so going back is
    instant. The returned box has ``redraw`` and ``cache`` (from
    :func:`onelayer.widgets.slider_app`) and ``controls`` (name -> widget).
    """
    import ipywidgets as widgets

    d = merged_settings(DEFAULTS, defaults)
    d.update({k: v for k, v in _check_settings(**d, n_train=1, n_test=1, seed=0).items() if k in DEFAULTS})
    (k_lo, k_hi), (n_lo, n_hi), (t_lo, t_hi) = (CONTROL_RANGES[k] for k in ("K", "N", "steps"))
    controls = {
        "p": widgets.FloatSlider(value=d["p"], min=0.0, max=1.0, step=0.05, description="p", continuous_update=False),
        "K": widgets.IntSlider(value=d["K"], min=k_lo, max=k_hi, description="K", continuous_update=False),
        "N": widgets.IntSlider(value=d["N"], min=n_lo, max=n_hi, description="N", continuous_update=False),
        "lr": selection_slider(LR_CHOICES, d["lr"], "step size"),
        "sigma": selection_slider(SIGMA_CHOICES, d["sigma"], "init sigma"),
        "loss": widgets.Dropdown(options=list(model.LOSSES), value=d["loss"], description="loss"),
        "reduction": widgets.Dropdown(options=list(model.REDUCTIONS), value=d["reduction"], description="reduction"),
        "positions": widgets.Dropdown(options=list(LAB_POSITIONS), value=d["positions"], description="positions"),
        "steps": widgets.IntSlider(value=d["steps"], min=t_lo, max=t_hi, description="GD steps", continuous_update=False),
    }
    for w in controls.values():
        w.style = {"description_width": "initial"}
    return progress_app(lab_figure, controls)


@register("walks-lab-default", "Walks lab: the default state of the widget (p=0.7, K=6, N=25, 30 GD steps)")
def default_state(quick: bool = False):
    """The lab's figure at :data:`DEFAULTS` and the summary of that run (trained once: :func:`lab_figure`'s picture of
    the same run)."""
    result = lab_run()
    return (figures.training_figure(result.history, result.experiment, title=lab_title(result)),
            {"settings": dict(DEFAULTS), "summary": result.summary()})


@functools.lru_cache(maxsize=32)
def _p_eta_run(p: float, lr: float, steps: int | None = None) -> LabResult:
    return lab_run(p=p, lr=lr, **({"steps": steps} if steps else {}))


@functools.lru_cache(maxsize=4)
def p_eta_v_limits(ps: tuple[float, ...], lrs: tuple[float, ...], steps: int | None = None) -> tuple[float, float]:
    """The colour limits of ``V`` shared by every frame of the player over ``ps`` by ``lrs``: the smallest and the
    largest finite entry of the final ``V`` over all those runs (so that a colour means the same value in each frame)."""
    finals = []
    for p in ps:
        for lr in lrs:
            h = _p_eta_run(p, lr, steps).history
            V = np.asarray(h.at("V", int(h.steps[-1])), dtype=float)
            finals.append(V[np.isfinite(V)])
    values = np.concatenate(finals)
    return float(values.min()), float(values.max())


def _p_eta_frame(p: float, lr: float, steps: int | None = None, grid: tuple | None = None):
    """One frame of the player: :func:`lab_figure`'s picture with ``V`` on the colour scale of the whole ``grid``
    (``(ps, lrs)``; default the player's)."""
    ps, lrs = grid if grid is not None else (SETTINGS.scrub_ps, SETTINGS.scrub_lrs)
    result = _p_eta_run(p, lr, steps)
    fig = figures.training_figure(result.history, result.experiment, title=lab_title(result))
    fig.axes[1].images[0].set_clim(*p_eta_v_limits(tuple(ps), tuple(lrs), steps))
    return fig


def p_eta_player(live: bool = False):
    """The precomputed player of the HTML book, the lab over ``scrub_ps`` by ``scrub_lrs``: its stored frames
    (:data:`PLAYER_FRAMES`, nothing trained or drawn), or (``live``) retrained and drawn again."""
    if not check_bool("live", live):
        return load_frames(data_path(PLAYER_FRAMES))
    return scrub_grid(_p_eta_frame, SETTINGS.scrub_ps, SETTINGS.scrub_lrs, labels=("p", "step size eta"),
                      name="walks-lab-p-eta", fmt=("{:.1f}", "{:g}"),
                      alt="The lab retrained for 30 GD steps from zero with walk parameter p = {0} and step size {1}: "
                          "accuracy against the step beside the Bayes level, the value matrix V, and the mean attention "
                          "over the positions with a zoom on the last ten.")


@register("walks-lab-p-eta-frames", "Walks lab player (frames): 30 GD steps from zero over the walk parameter p and "
                                    "the step size eta: accuracy, V and mean attention")
def p_eta_frames(quick: bool = False):
    """The numbers behind every frame of :func:`p_eta_player`."""
    ps, lrs = (SETTINGS.scrub_ps[:1], SETTINGS.scrub_lrs[:2]) if quick else (SETTINGS.scrub_ps, SETTINGS.scrub_lrs)
    return None, frame_numbers(lambda p, lr: _p_eta_frame(p, lr, 5 if quick else None, (ps, lrs)), ps, lrs,
                               labels=("p", "step size eta"), fmt=("{:.1f}", "{:g}"))


def variations_table() -> list[dict]:
    """:func:`compare` over ``SETTINGS.variations``: one row per variation of the default setting."""
    return compare({name: dict(overrides) for name, overrides in SETTINGS.variations})


def verdict_rows() -> list[dict]:
    """The chapter's verdict row: :func:`onelayer.verdicts.walks_lab.rows` of the default run (mean over the walks,
    step ``eta``) against the same run with the sum over the ``n`` walks and step ``eta / n``."""
    mean_run = lab_run()
    sum_run = lab_run(reduction="sum", lr=mean_run.settings["lr"] / mean_run.settings["n_train"])
    return verdicts.rows(run=mean_run.settings,
                         difference=float(np.abs(mean_run.history["V"] - sum_run.history["V"]).max()))

"""Chapter "Trees lab" (``book/trees/lab.ipynb``): retrain the backward or forward model for any setting and look at
what it learned.

The runs are :func:`onelayer.studies.trees.lab_runs.lab_run` (the task, the architectures, the recorded accuracies and
symmetry-reduced scalars are described there); :func:`onelayer.figures.trees_lab.lab_panels` draws one run.
:func:`lab_figure` trains and draws; :func:`lab_widget` puts ipywidgets controls in front of it
(:func:`onelayer.widgets.slider_app` caches every setting drawn once). The player and the table of variations read the
stored study ``trees-lab-variations`` (:data:`SETTINGS` ``.variations``, one run each), drawn without retraining.

Default (:data:`DEFAULTS`, about one second per retrain on one CPU core,
figure included): forward layout with chain of thought, depth ``m = 2``,
``S = S_for(m) = 2^(m+1) + 9 = 17`` symbols (one-hot embeddings), the
structured two-head model, step size 2, loss = mean over positions of
``(1/2)||y_hat - y||^2``, zero initialisation, 200 steps with batches of 64
trees, records every 10 steps on 128 fixed training trees.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ... import store
from ...figures.trees_lab import lab_panels, shared_limits
from ...registry import register
from ...scrubber import frame_numbers, scrub
from ...studies import registry as studies
from ...studies.trees import lab_runs
from ...studies.trees.lab_runs import ARCHITECTURES, LAYOUTS, LOSS_NORMS, MAX_DEPTH, MAX_STEPS, check_settings, lab_run
from ...validation import check_bool
from ...verdicts import trees_lab as verdicts
from ...widgets import merged_settings, progress_app, selection_slider

__all__ = [
    "Settings",
    "SETTINGS",
    "DEFAULTS",
    "LR_CHOICES",
    "INIT_CHOICES",
    "lab_figure",
    "lab_widget",
    "default_state",
    "variation_records",
    "variations_table",
    "variations_player",
    "variations_frames",
    "verdict_rows",
]

@dataclass(frozen=True)
class Settings:
    """What the chapter shows besides the lab's own controls (:data:`DEFAULTS`)."""

    #: the table of variations of the default setting: (name, overrides of :data:`DEFAULTS`)
    variations: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = (
        ("default: 2 heads", ()),
        ("1 head (swap+stage)", (("heads", "1 head (swap+stage)"),)),
        ("1 full head", (("heads", "1 full head"),)),
        ("2 full heads, zero init", (("heads", "2 full heads"),)),
        ("3 full heads, init 0.01", (("heads", "3 full heads"), ("init_scale", 0.01))),
        ("no chain of thought", (("layout", "forward, no chain of thought"),)),
        ("lr 1, 400 steps", (("lr", 1.0), ("steps", 400))),
        ("m=3, 200 steps", (("m", 3),)),
        ("m=3, 700 steps", (("m", 3), ("steps", 700))),
        ("backward", (("layout", "backward"),)),
        ("backward, no root token", (("layout", "backward, no root token"),)),
    )
    #: SGD steps of the quick default state (for tests)
    quick_steps: int = 20


SETTINGS = Settings()


#: The default setting of the lab (about one second per retrain on one CPU core).
DEFAULTS = {
    "layout": "forward",
    "m": 2,
    "heads": "2 heads (swap, stage)",
    "lr": 2.0,
    "loss_norm": "mean, 1/2",
    "init_scale": 0.0,
    "steps": 200,
}

#: Step sizes offered by the widget.
LR_CHOICES = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
#: Initialisation scales offered by the widget (0 = zero initialisation, the paper's).
INIT_CHOICES = (0.0, 0.01, 0.1)


def lab_figure(layout: str = "forward", m: int = 2, heads: str = "2 heads (swap, stage)", lr: float = 2.0,
               loss_norm: str = "mean, 1/2", init_scale: float = 0.0, steps: int = 200, *, batch_size: int = 64,
               eval_size: int = 128, record_every: int = 10, seed: int = 0, progress: bool = False):
    """Widget callback: train with :func:`~onelayer.studies.trees.lab_runs.lab_run` and draw (a) the loss, (b) the
    accuracy by step type, (c) the node-block scalars and (d) the stage-block scalars (forward) or the attention on
    the correct edge (backward)."""
    return lab_panels(lab_run(layout, m, heads, lr, loss_norm, init_scale, steps, batch_size=batch_size,
                              eval_size=eval_size, record_every=record_every, seed=seed, progress=progress).record())


def lab_widget(**defaults):
    """Controls for every setting of :func:`lab_figure`, a progress bar, and the figure.

    Keyword arguments override :data:`DEFAULTS` (validated). Every setting drawn
    once is cached, so going back is instant; the setting :data:`DEFAULTS` is drawn from its stored run (the default
    variation of the study ``trees-lab-variations``, the same numbers as a retrain). The returned box has ``redraw``,
    ``cache`` (from :func:`onelayer.widgets.slider_app`) and ``controls``.
    """
    import ipywidgets as widgets

    d = merged_settings(DEFAULTS, defaults)
    checked = check_settings(**d, batch_size=1, eval_size=1, record_every=1, seed=0)
    d.update({k: v for k, v in checked.items() if k in DEFAULTS})
    controls = {
        "layout": widgets.Dropdown(options=list(LAYOUTS), value=d["layout"], description="task / layout"),
        "m": widgets.IntSlider(value=d["m"], min=1, max=MAX_DEPTH, description="depth m", continuous_update=False),
        "heads": widgets.Dropdown(options=list(ARCHITECTURES), value=d["heads"], description="heads (forward)"),
        "lr": selection_slider(LR_CHOICES, d["lr"], "step size"),
        "loss_norm": widgets.Dropdown(options=list(LOSS_NORMS), value=d["loss_norm"], description="loss"),
        "init_scale": selection_slider(INIT_CHOICES, d["init_scale"], "init scale"),
        "steps": widgets.IntSlider(value=d["steps"], min=10, max=MAX_STEPS, step=10, description="SGD steps",
                                   continuous_update=False),
    }
    for w in controls.values():
        w.style = {"description_width": "initial"}

    def figure(progress: bool = False, **values):
        if values == DEFAULTS:
            return lab_panels(variation_records()[SETTINGS.variations[0][0]])
        return lab_figure(**values, progress=progress)

    return progress_app(figure, controls)


@register("trees-lab-default", "Trees lab: the default state of the widget (forward task, m = 2, two heads, lr 2, 200 SGD steps)")
def default_state(quick: bool = False):
    """The lab's figure at :data:`DEFAULTS`, the run's summary and its loss and accuracies at every recorded step (the
    stored run of the default variation, the run at :data:`DEFAULTS`; ``quick``: ``quick_steps`` steps, trained here)."""
    rec = lab_run(steps=SETTINGS.quick_steps).record() if quick else variation_records()[SETTINGS.variations[0][0]]
    acc = np.asarray(rec["accuracy"], dtype=float)
    rows = [{"step": int(t), "loss": float(rec["loss"][i]),
             **{f"accuracy {n}": float(acc[i, j]) for j, n in enumerate(rec["accuracy_names"])}}
            for i, t in enumerate(rec["steps"])]
    return lab_panels(rec), {"settings": dict(rec["settings"]), "summary": dict(rec["summary"]), "table": rows}


def variation_records(quick: bool = False) -> dict[str, dict]:
    """name -> the record of the run of every variation of ``SETTINGS.variations``: the stored study
    ``trees-lab-variations`` (refused if it trained other variations), or (``quick``) runs of ``quick_steps`` steps
    trained here; read once per mode."""
    return _variation_records(check_bool("quick", quick))


@functools.lru_cache(maxsize=2)
def _variation_records(quick: bool) -> dict[str, dict]:
    if quick:
        return {name: lab_run(**{**dict(overrides), "steps": SETTINGS.quick_steps}).record()
                for name, overrides in SETTINGS.variations}
    data = studies.load(lab_runs.STUDY.name)
    if data["settings"] != store.to_jsonable({"variations": SETTINGS.variations, "steps": 0}):
        raise ValueError(f"the stored study {lab_runs.STUDY.name} trained other variations than SETTINGS.variations; "
                         f"run python -m onelayer study {lab_runs.STUDY.name}")
    by_name = {m["result"]["name"]: m["result"] for m in data["members"]}
    return {name: by_name[name] for name, _ in SETTINGS.variations}


def variations_table() -> list[dict]:
    """One row per variation of the default setting (``SETTINGS.variations``): its name and its run's summary
    (from the stored runs the player :func:`variations_player` draws)."""
    return [{"name": name, **rec["summary"]} for name, rec in variation_records().items()]


def _variation_draw(quick: bool):
    records = variation_records(quick)
    limits = shared_limits(list(records.values()))
    return lambda name: lab_panels(records[name], limits)


def variations_player():
    """The precomputed player of the HTML book: the lab's figure for each variation of the table, with axis limits
    shared by every frame (the live controls of :func:`lab_widget` need a kernel)."""
    return scrub(_variation_draw(False), [name for name, _ in SETTINGS.variations], label="setting",
                 name="trees-lab-variations", fmt="{}",
                 alt="The trees lab after training the setting {value}: training loss, accuracy by step, "
                     "node-block scalars and stage blocks (or the weight on the correct edge)")


@register("trees-lab-variations-frames", "Trees lab player (frames): loss, accuracy by step and the reduced "
                                         "scalars for each variation of the default setting")
def variations_frames(quick: bool = False):
    """The numbers behind every frame of :func:`variations_player` (``quick``: runs of ``quick_steps`` steps)."""
    return None, frame_numbers(_variation_draw(quick), [name for name, _ in SETTINGS.variations], labels="setting",
                               fmt="{}")


def verdict_rows() -> list[dict]:
    """The chapter's verdict row: :func:`onelayer.verdicts.trees_lab.rows` of the default run (mean loss, step
    ``eta``) against the same run with the sum over the ``2m + 1`` positions and step ``eta / (2m + 1)``."""
    mean_run = lab_run()
    positions = 2 * mean_run.settings["m"] + 1
    sum_run = lab_run(loss_norm="sum, 1/2", lr=mean_run.settings["lr"] / positions)
    return verdicts.rows(run=mean_run.settings,
                         difference=float(np.abs(mean_run.history["scalars"] - sum_run.history["scalars"]).max()))

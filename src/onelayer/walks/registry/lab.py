"""Recipe of the chapter ``lab``: the default state of the widget."""

from __future__ import annotations

from ...registry import register


@register("walks-lab-default", "Walks lab: the default state of the widget (p=0.7, K=6, N=25, 30 GD steps)")
def _lab_default(quick: bool):
    from .. import lab

    return lab.lab_figure(), {"settings": dict(lab.DEFAULTS), "summary": lab.lab_run().summary()}

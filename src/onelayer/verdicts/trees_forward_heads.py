"""The verdicts of the chapter "One head or two" (``book/trees/forward_heads.ipynb``): the reviewers' account of the
authors' claim that one full head stalls where two heads converge, one row per part, edge-stage reading and loss
reduction of the stored 20-seed study, from the numbers :mod:`onelayer.chapters.trees.forward_heads` passes in (see
:mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..studies.trees.forward_edge_flag import MODELS

__all__ = ["edge_flag_class", "edge_flag_verdict", "rows"]


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


def rows(settings, *, parts: list[tuple[dict, list[dict]]]) -> list[dict]:
    """One verdict row per (study part, edge-stage reading, loss reduction) of the stored one-against-two study.

    ``parts``: one ``(sweep, cells)`` pair per part of the stored study
    :mod:`onelayer.studies.trees.forward_edge_flag` as :mod:`onelayer.chapters.trees.forward_heads` reads it: the
    part's settings and its cells (:func:`onelayer.studies.trees.forward_readings.edge_flag_cells` at
    ``settings.converged_below`` and ``settings.solved_at``)."""
    s = settings
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
                    f"path accuracy {by[a]['path goals'].text()}" for a in MODELS if a in by),
                "verdict": edge_flag_verdict(cells, stage, reduction),
                "class": edge_flag_class(cells, stage, reduction),
                "chapter": "forward_heads"})
    return rows

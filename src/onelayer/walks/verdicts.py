"""The walks part's verdict table, assembled from cheap reruns of the deciding experiments.

:func:`verdict_table` returns one row per claim with the keys ``claim``,
``source`` (provenance tag of the claim in the spec: ``[paper]``, ``[review]``
for the OpenReview discussion, ``[ours]``), ``settings`` (the range the
verdict holds for), ``measurement`` (numbers measured now), ``verdict`` and
``chapter`` (the document name of the chapter that shows it, e.g.
``"variations"``). Every number is computed by the call; the full grids live in
:mod:`onelayer.walks.chains` and :mod:`~onelayer.walks.rebuttal`. The verdicts of
the chapters moved to :mod:`onelayer.chapters.walks` are their modules' ``verdict_rows()``
(:func:`onelayer.chapters.walks.theorem31.verdict_rows`, :func:`onelayer.chapters.walks.theorem41.verdict_rows`).
:func:`verdict_markdown` renders the rows as a Markdown table (the walks index page shows it).

Numbers are written with at most 3 significant digits (:func:`onelayer.formatting.number_text`), so that
the text does not depend on the last bits of a machine's arithmetic.
"""

from __future__ import annotations

from ..formatting import number_text
from . import chains, random_init, rebuttal

__all__ = ["verdict_table", "verdict_markdown", "CHAPTER_TITLES", "COLUMNS"]

#: Title of each walks chapter a row can point to (document name -> title).
CHAPTER_TITLES = {
    "ring": "The ring",
    "theorem31": "Theorem 3.1",
    "theorem41": "Theorem 4.1",
    "random_init": "Random initialisation",
    "qa": "Question answering",
    "variations": "Variations",
    "lab": "Lab",
}

#: Columns of :func:`verdict_markdown`: (row key, header).
COLUMNS = (("claim", "claim"), ("source", "source"), ("settings", "settings"), ("measurement", "measurement"),
           ("verdict", "verdict"), ("chapter", "shown in"))


def _f(x: float, digits: int = 3) -> str:
    return number_text(x, digits)


def _variations_rows() -> list[dict]:
    rows = []
    order = random_init.ordering_table(random_init.load())
    settings = sorted({(r["normalize"], r["reduction"], r["lr"]) for r in order})
    hits = sum(bool(r["paper_pattern"]) for r in order)
    rows.append({
        "claim": "Figure 6 (small random init): p=1/2 is learned within 1000 steps and p=1 is not", "source": "[paper]",
        "settings": (f"the stored sweep: unit normalisation none / keys / keys and query (scope unstated: [guess]) x "
                     f"loss mean / sum x step sizes {', '.join(sorted({_f(r[2]) for r in settings}, key=float))}; "
                     f"{len(settings)} settings x {len(order) // len(settings)} seeds"),
        "measurement": f"the paper's pattern in {hits} of {len(order)} runs",
        "verdict": ("not reproduced under any reading tried" if hits == 0
                    else f"reproduced only in {hits} of {len(order)} runs"),
        "chapter": "random_init",
    })
    lin = chains.linear_histogram_accuracy(6, 0.5, 97)
    hb = chains.histogram_bayes_accuracy(6, 0.5, 13)
    rows.append({
        "claim": "without positions no one-layer transformer of this form beats a random guess", "source": "[review]",
        "settings": "p=0.5, K=6: a V fitted on 20000 walks of length 97; exact histogram-Bayes bound at N=13",
        "measurement": (f"fitted V on fresh walks: {_f(lin['test_accuracy'])} vs chance {_f(lin['chance'])}; "
                        f"best function of the histogram at N=13: {_f(hb)}; Bayes 0.5"),
        "verdict": "false as stated, by a small margin; every such model stays far below the Bayes accuracy",
        "chapter": "variations",
    })
    ch = chains.chain_table(8)  # the variations chapter's call
    ok = {k: sum(r["learned"] for r in ch if r["kind"] == k) for k in ("doubly stochastic", "non-uniform")}
    rows.append({
        "claim": "the mechanism needs a uniform stationary law (non-circulant chains)", "source": "[ours]",
        "settings": "8 doubly stochastic and 8 non-uniform-stationary seeded chains, 20 steps (as in the chapter)",
        "measurement": f"learned: doubly stochastic {ok['doubly stochastic']}/8, non-uniform {ok['non-uniform']}/8",
        "verdict": ("supported on every chain tried" if ok["doubly stochastic"] == 8 and ok["non-uniform"] == 0
                    else "not supported on every chain tried"),
        "chapter": "variations",
    })
    qk = rebuttal.separate_qk_run(0.7, sigma=0.0, steps=5)
    rows.append({
        "claim": "separate W_Q, W_K from zero: both gradients stay zero", "source": "[review]",
        "settings": "K=6, N=13, M=100, 300 walks, 5 steps, literal model with autograd",
        "measurement": f"max |grad W_Q| = {number_text(qk['max_grad_WQ'])}, max |grad W_K| = {number_text(qk['max_grad_WK'])}",
        "verdict": "confirmed: the attention stays uniform",
        "chapter": "variations",
    })
    lb = rebuttal.linear_baseline_table(ns=(30,), seeds=(0, 1, 2), steps=50)[0]
    rows.append({
        "claim": "a linear autoregressive model f = V x_(N-1) also solves the task", "source": "[review]",
        "settings": "p=0.7, 30 training walks, 50 steps, 3 seeds (the chapter: 10 to 1000 walks)",
        "measurement": (f"share of optimal predictions: linear {_f(lb['linear_optimal'])}, "
                        f"transformer {_f(lb['transformer_optimal'])}"),
        "verdict": "confirmed, with fewer walks than the transformer needs; both optimal at 1000 walks",
        "chapter": "variations",
    })
    return rows


def verdict_table() -> list[dict]:
    """One dict per claim (see the module docstring), in chapter order. Deterministic (all seeds fixed)."""
    return _variations_rows()


def _cell(text) -> str:
    """Markdown-escaped table cell: ``|`` would end the cell, ``*`` and ``_`` could start emphasis."""
    text = str(text).replace("\n", " ")
    for char in "|*_":
        text = text.replace(char, "\\" + char)
    return text


def verdict_markdown(rows: list[dict]) -> str:
    """``rows`` of :func:`verdict_table` as a Markdown table; the chapter as a relative link ``<doc>.html``."""
    if not rows:
        raise ValueError("rows must not be empty")
    lines = ["| " + " | ".join(h for _, h in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        if r.get("chapter") not in CHAPTER_TITLES:
            raise ValueError(f"row chapter must be one of {sorted(CHAPTER_TITLES)}; got {r.get('chapter')!r}")
        cells = [_cell(r[k]) for k, _ in COLUMNS[:-1]]
        cells.append(f'<a href="{r["chapter"]}.html">{CHAPTER_TITLES[r["chapter"]]}</a>')
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"

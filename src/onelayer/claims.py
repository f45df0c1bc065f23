"""The book's claims as data: one :class:`Claim` per statement a chapter tests, with one :class:`Reading` per way
it was read, and the renderers every page that shows a verdict uses (Findings, the parts' introductions, a chapter's
verdict section).

A claim is the statement (MyST math), the paper it is about, the paper's numbered result or figure it tests (the
rows of a paper's verdict grid), its source tag and its readings. Each reading carries what the chapter measured
(the settings and the measurement, as the chapter module computed them from its stored studies) and a verdict
*class*, which the module derives from its numbers (:func:`rate_class` for a rate of runs, :func:`exact_class` for an
exact check, :func:`combine` over settings): ``holds``, ``most`` (holds in most runs), ``partly``, ``fails``,
``undecided`` or ``exact`` (an exact check that holds). The words a page shows (:data:`WORDS`) and the colour class
of a cell (``verdict-<class>``, styled in ``book/_static/onelayer.css``) are generated from the class; no page types a
verdict and no test parses one back from prose: a sentence that repeats a verdict names the claim with ``<!-- finding: ID -->`` and
``tests/test_reader_claims.py`` checks that the id exists.

The measurements are the stored rows of :mod:`onelayer.findings` (``book/data/findings.json``, collected from the
chapter modules' ``verdict_rows()``); :func:`load` groups the rows of one claim (its readings) into one
:class:`Claim` and adds what the rows do not carry: the paper, the result, the statement in MyST math
(:data:`STATEMENTS`). Every claim links to its evidence: the label ``(claim-<slug>)=`` (:func:`anchor`) on the
section of its chapter that measures it.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from . import findings
from .paths import data_path
from .rates import Rate, rate

__all__ = ["CLASSES", "WORDS", "STATEMENTS", "Reading", "Claim", "rate_class", "exact_class", "reading_class",
           "combine", "rated", "row_rates", "build", "load",
           "anchor", "claim_markdown", "paper_markdown", "chapter_markdown", "grid_html", "grids_html",
           "counts", "counts_line", "PAPER_TITLES", "GRIDS", "write_grids", "COLOURS", "key_rate", "forest_lines",
           "LANDING", "SENTENCES", "landing_markdown", "write_sentences"]

#: The verdict classes, in the order a count line lists them.
CLASSES = ("exact", "holds", "most", "partly", "undecided", "fails")
#: The words a page shows for each class (generated, never typed in a page).
WORDS = {"exact": "holds exactly", "holds": "holds", "most": "holds in most runs", "partly": "partly",
         "undecided": "undecided", "fails": "fails"}
#: One letter per class for a grid cell (besides its colour: colour is never the only cue).
LETTERS = {"exact": "=", "holds": "✓", "most": "~", "partly": "½", "undecided": "?", "fails": "✗"}
#: The colour of each class in a figure: the grid cells' colours (``.onelayer-cell.verdict-<class>`` in
#: ``book/_static/onelayer.css``; ``tests/test_claims.py`` checks that they agree).
COLOURS = {"exact": "#0b6b31", "holds": "#1a7f37", "most": "#5b7f16", "partly": "#9a5b00", "undecided": "#5f6770",
           "fails": "#b3261e"}
#: The papers, as the grids name them.
PAPER_TITLES = {"walks": "Walks (Shi & Cao)", "trees": "Trees (Yang et al.)", "book": "Tools of the book"}


@dataclass(frozen=True)
class Reading:
    """One reading of a claim and what it measured: ``label`` (how the claim was read; ``"-"`` for the only reading),
    ``settings``, ``measurement`` (the numbers, as the chapter states them), ``detail`` (the chapter's one-line
    account of the numbers), ``cls`` (the verdict class), ``id`` (the stored row's stable id) and, where the class
    comes from rates (:func:`rated`), ``rates``: ``(label, Rate)`` for each rate that decides it, and ``checks``: the
    classes of the exact checks it is combined with."""

    label: str
    settings: str
    measurement: str
    detail: str
    cls: str
    id: str
    rates: tuple[tuple[str, Rate], ...] = ()
    checks: tuple[str, ...] = ()

    def __post_init__(self):
        if self.cls not in CLASSES:
            raise ValueError(f"cls must be one of {CLASSES}, got {self.cls!r}")

    @property
    def words(self) -> str:
        """The verdict words of this reading (from its class)."""
        return WORDS[self.cls]


@dataclass(frozen=True)
class Claim:
    """A statement a chapter tests: ``id`` (``<doc>:<slug>``), ``doc`` (the chapter), ``paper`` (``"walks"``,
    ``"trees"`` or ``"book"``), ``result`` (the paper's numbered result or figure, or ``""`` for a statement of
    ours), ``statement`` (MyST), ``source`` (the legend's tag) and its ``readings``."""

    id: str
    doc: str
    paper: str
    result: str
    statement: str
    source: str
    readings: tuple[Reading, ...]

    def __post_init__(self):
        if self.paper not in PAPER_TITLES:
            raise ValueError(f"paper must be one of {tuple(PAPER_TITLES)}, got {self.paper!r}")
        if not self.readings:
            raise ValueError(f"claim {self.id!r} has no reading")

    @property
    def cls(self) -> str:
        """The class of the claim over its readings (:func:`combine`)."""
        return combine(r.cls for r in self.readings)

    @property
    def words(self) -> str:
        return WORDS[self.cls]

    @property
    def anchor(self) -> str:
        return anchor(self.id)


def combine(classes: Iterable[str]) -> str:
    """The class of several readings (or settings): their class if they agree; ``exact`` with ``holds`` is ``holds``,
    and either with ``most`` is ``most``; any other mix (holding and failing, or a decided class with ``undecided``)
    is ``partly``."""
    seen = set(classes)
    for c in seen:
        if c not in CLASSES:
            raise ValueError(f"unknown verdict class {c!r}")
    if not seen:
        raise ValueError("combine needs at least one class")
    if len(seen) == 1:
        return seen.pop()
    if seen <= {"exact", "holds"}:
        return "holds"
    if seen <= {"exact", "holds", "most"}:
        return "most"
    return "partly"


def rate_class(r: Rate) -> str:
    """The class a rate of runs in which a claim holds gives: every run ``holds``; an interval above one half
    ``most``; no run, or an interval below one half, ``fails``; an interval that holds one half ``undecided``."""
    if not isinstance(r, Rate):
        raise TypeError(f"r must be a Rate, not {type(r).__name__}")
    if r.k == r.n:
        return "holds"
    if r.low > 0.5:
        return "most"
    if r.k == 0 or r.high < 0.5:
        return "fails"
    return "undecided"


def rated(rates: Mapping[str, Rate], checks: Iterable[str] = ()) -> dict:
    """The fields of a verdict row whose class comes from rates: ``rates``, each rate that decides the class as
    ``{"label", "k", "n", "low", "high"}`` (``rates`` maps a short label to its :class:`~onelayer.rates.Rate`);
    ``checks``, the classes of exact checks the class is combined with (only when there are some); and ``class``,
    :func:`combine` of :func:`rate_class` of every rate and the checks."""
    if not isinstance(rates, Mapping) or not rates:
        raise ValueError("rates must be a non-empty mapping of labels to Rates")
    for label, r in rates.items():
        if not isinstance(label, str) or not label:
            raise ValueError(f"rates: every label must be a non-empty str, got {label!r}")
        if not isinstance(r, Rate):
            raise TypeError(f"rates[{label!r}] must be a Rate, not {type(r).__name__}")
    checks = list(checks)
    out = {"rates": [{"label": label, "k": r.k, "n": r.n, "low": r.low, "high": r.high} for label, r in rates.items()],
           "class": combine([rate_class(r) for r in rates.values()] + checks)}
    if checks:
        out["checks"] = checks
    return out


def row_rates(row: Mapping) -> tuple[tuple[str, Rate], ...]:
    """The rates of a stored row (:func:`rated`) as ``(label, Rate)``, the interval recomputed from ``k`` and ``n``;
    ``()`` for a row without rates."""
    return tuple((str(d["label"]), rate(d["k"], d["n"])) for d in row.get("rates", ()))


def exact_class(ok: bool) -> str:
    """The class of an exact check (a deterministic computation, no sample): ``exact`` if it holds, else ``fails``."""
    if not isinstance(ok, (bool, np.bool_)):
        raise TypeError(f"ok must be a bool, not {type(ok).__name__}")
    return "exact" if ok else "fails"


def reading_class(row: Mapping) -> str:
    """The class of one stored row: its ``class``, which the chapter module gives from its numbers
    (:func:`rate_class`, :func:`exact_class`, :func:`combine`, or a rule of its own over means and exact checks)."""
    if "class" not in row:
        raise ValueError(f"row {row.get('id')!r} has no class (its chapter module's verdict_rows() must give one)")
    if row["class"] not in CLASSES:
        raise ValueError(f"row {row.get('id')!r}: class must be one of {CLASSES}, got {row['class']!r}")
    return row["class"]


# --- the claims' metadata the rows do not carry: paper, result, statement in MyST -----------------------------------

#: claim id -> (paper, the paper's result or figure ("" for ours), the statement in MyST math). The API page shows
#: no value: its MyST math renders on the pages that render claims, not in reStructuredText.
#:
#: :meta hide-value:
STATEMENTS: dict[str, tuple[str, str, str]] = {
    "selector:softmax-lambda-z-is-within-2": (
        "book", "", r"$\operatorname{softmax}(\lambda z)$ is within $\tfrac{2(n-k)}{k}e^{-\lambda\,\mathrm{gap}}$ of "
                    r"the uniform law on the $k$ maximal logits"),
    "walks/ring:the-transition-matrix-pi-and-every": (
        "walks", "Lemma C.2", r"the transition matrix $\Pi$ and every power $\Pi^R$ are circulant"),
    "walks/ring:the-bayes-rule-predicts-the-next": (
        "walks", "Bayes rule", r"the Bayes rule predicts the next node with probability $\max(p,1-p)$"),
    "walks/theorem31:lemmas-c-1-c-3-v": (
        "walks", "Lemmas C.1-C.3", r"$V^{(1)}$ has the closed form, is circulant and peaks at offset $+1$"),
    "walks/theorem31:lemma-c-5-and-item-1": (
        "walks", "Lemma C.5", r"the parent is selected at step 2, then a constant number of steps to Bayes accuracy "
                              r"(Lemma C.5 and item 1 of Theorem 3.1)"),
    "walks/theorem31:theorem-3-1-item-3-v": (
        "walks", "Theorem 3.1", r"item 3: $V/\|V\|\to\Pi^\top/\|\Pi^\top\|$ at rate $T^{-1/2}$"),
    "walks/theorem31:lemma-c-7-v-beta-pi": (
        "walks", "Lemma C.7", r"$V=\beta\,\Pi^\top$ plus a bounded remainder"),
    "walks/theorem31:theorem-3-1-needs-n-c": (
        "walks", "Theorem 3.1", r"the condition $N\ge C_p\,\mathrm{poly}(K)$: at the paper's size, Bayes accuracy "
                                r"on the parent for $p$ near 1"),
    "walks/theorem31:theorem-3-1-needs-k-4": ("walks", "Theorem 3.1", r"the condition $K>4$"),
    "scaling:theorem-3-1-along-m-omega": (
        "walks", "Theorem 3.1", r"along $M=\Omega(N^{1.5})$, optimal predictions after a constant number of GD steps"),
    "scaling:the-step-2-log-odds-of": (
        "walks", "Theorem 3.1", r"the step-2 log-odds of the parent scale as $M^2/N^2$ (a reading of the proof)"),
    "scaling:m-n-1-5-is-what": (
        "walks", "Theorem 3.1", r"$M=N^{1.5}$ is what the exponentially small leakage costs; 99% attention needs "
                                r"about $M\sim N$"),
    "walks/theorem41:theorem-4-1-for-p-1": (
        "walks", "Theorem 4.1", r"for $p=1$, $N=rK+1$, any loss and step size: attention stays uniform, "
                                r"$V\propto\mathbf{1}\mathbf{1}^\top$, accuracy $1/K$"),
    "walks/theorem41:figures-4-and-5-together-zero": (
        "walks", "Figures 4, 5", r"zero init, 50 steps: $p=1/2$ is learned and $p=1$ stays at $1/6$"),
    "walks/random_init:figure-6-small-random-init-p": (
        "walks", "Figure 6", r"small random init: $p=1/2$ is learned within 1000 steps and $p=1$ is not"),
    "walks/random_init:figure-13-the-authors-table-p": (
        "walks", "Figure 13", r"the authors' table at $p=1$: the weighted token stays near $1/6$ for hundreds of "
                              r"steps while its variance grows"),
    "walks/random_init:figure-11-trained-on-p-1": (
        "walks", "Figure 11", r"trained on $p=1/2$, the attention sits on the parent and $V$ recovers $\Pi^\top$"),
    "walks/qa:the-two-task-2-questions-have": (
        "walks", "Figure 7", r"the two Task-2 questions have the same token average"),
    "walks/qa:task-1-is-learned-to-about": (
        "walks", "Figure 7", r"Task 1 is learned to about 100% within 100 steps"),
    "walks/qa:task-2-stays-at-about-50": ("walks", "Figure 7", r"Task 2 stays at about 50%"),
    "walks/qa:with-a-hidden-relu-layer-task": (
        "walks", "Figure 10", r"with a hidden ReLU layer Task 1 is learned and Task 2 is not"),
    "walks/qa:with-a-bias-term-task-1": (
        "walks", "Rebuttal", r"with a bias term Task 1 is at 100% after 20 steps and Task 2 at about 50%"),
    "walks/variations:a-residual-connection-changes-nothing": (
        "walks", "Variations", r"a residual connection changes nothing"),
    "walks/variations:1-sqrt-d-logit-scaling-gives": (
        "walks", "Variations", r"$1/\sqrt{d}$ logit scaling gives the same conclusions, only more iterations"),
    "walks/variations:with-a-parent-at-lag-2": (
        "walks", "Variations", r"with a parent at lag 2, the first-step $V$ is circulant and the attention selects "
                               r"$x_{N-2}$"),
    "walks/variations:without-positions-no-one-layer-transformer": (
        "walks", "Variations", r"without positions no one-layer transformer of this form beats a random guess"),
    "walks/variations:the-mechanism-needs-a-uniform-stationary": (
        "walks", "Variations", r"the mechanism needs a uniform stationary law (non-circulant chains)"),
    "walks/variations:separate-w-q-w-k-from": (
        "walks", "Variations", r"separate $W_Q$, $W_K$ from zero: both gradients stay zero"),
    "walks/variations:a-linear-autoregressive-model-f-v": (
        "walks", "Variations", r"a linear autoregressive model $f=V x_{N-1}$ also solves the task"),
    "walks/lab:the-mean-over-walks-with-step": (
        "walks", "", r"the mean over walks with step $\eta$ trains the same $V$ as the sum with step $\eta/n$"),
    "trees/backward_data:the-backward-chain-of-thought-encodes": (
        "trees", "", r"the backward chain of thought encodes the goal-to-root path, one edge token per step"),
    "trees/backward_construction:lemma-1-for-linearly-independent-embeddings": (
        "trees", "Lemma 1", r"for linearly independent embeddings some $B$ gives $A^\top B A=I$"),
    "trees/backward_construction:theorem-1-the-attention-of-lambda": (
        "trees", "Theorem 1", r"the attention of $\lambda B$ on the correct edge is "
                              r"$e^\lambda/(e^\lambda+N-1)$ at every query"),
    "trees/backward_construction:theorem-1-the-loss-of-lambda": (
        "trees", "Theorem 1", r"the loss of $\lambda B$ falls like $e^{-2\lambda}$"),
    "trees/backward_construction:theorem-1-as-lambda-grows-greedy": (
        "trees", "Theorem 1", r"as $\lambda$ grows, greedy decoding with $\lambda B$ outputs the goal-to-root path "
                              r"on every tree, of any shape and depth"),
    "trees/backward_training:from-b-0-h-a-t": (
        "trees", "Theorem 3", r"from $B=0$, $H=A^\top B A$ stays in the span of $I$ and "
                              r"$\mathbf{1}\mathbf{1}^\top-I$ (the relabelling symmetry)"),
    "trees/backward_training:theorem-3-the-diagonal-of-h": (
        "trees", "Theorem 3", r"the diagonal of $H$ increases at every step and the training loss tends to zero"),
    "trees/backward_training:theorem-3-proof-outline-phase-i": (
        "trees", "Theorem 3", r"proof outline: phase I, the off-diagonal of $H$ bounded; then phase II, strictly "
                              r"decreasing"),
    "trees/backward_training:after-the-transition-the-loss-decays": (
        "trees", "Theorem 3", r"after the transition the loss decays like $1/t$ (log-log slope $-1$, margin gain "
                              r"$\tfrac12\log 2$ per doubling)"),
    "trees/backward_generalization:theorem-4-trained-on-perfect-binary": (
        "trees", "Theorem 4", r"trained on perfect binary trees, the model solves random trees of any shape, "
                              r"including paths longer than in training"),
    "trees/backward_generalization:the-test-loss-is-at-most": (
        "trees", "Theorem 4", r"the test loss is at most $2\big(\varepsilon/(1+\varepsilon)\big)^2$ per position, "
                              r"$\varepsilon=(N-1)e^{-\delta(H)}$, and tends to zero with training"),
    "trees/backward_generalization:with-linearly-independent-non-orthogonal-embeddings": (
        "trees", "Theorem 4", r"with linearly independent, non-orthogonal embeddings the symmetric picture and exact "
                              r"generalisation at the same training time are lost"),
    "trees/backward_generalization:the-backward-model-reaches-past-the": (
        "trees", "Theorem 4", r"the backward model reaches past the assumptions: deep paths, wide stars, large random "
                              r"trees, and it stops at the root by itself"),
    "trees/backward_generalization:the-backward-model-reaches-past-the-2": (
        "trees", "Theorem 4", r"the backward model reaches past the assumptions, also with non-orthogonal "
                              r"embeddings"),
    "trees/forward_construction:theorem-2-the-constructed-two-heads": (
        "trees", "Theorem 2", r"the constructed two heads put their largest logit on the right token at every step, "
                              r"head 1 by $\min(\lambda,\mu)$ and head 2 by $\kappa$"),
    "trees/forward_construction:as-the-scale-grows-the-construction": (
        "trees", "Theorem 2", r"as the scale grows, the construction decodes the whole chain and the root-to-goal "
                              r"path of any tree, with a squared error that decays like $e^{-2c}$"),
    "trees/forward_construction:one-full-head-with-a-learnable": (
        "trees", "Theorem 2", r"one full head with a learnable value matrix can represent the forward chain (no "
                              r"second head needed)"),
    "trees/forward_construction:our-constructions-need-the-turning-token": (
        "trees", "Theorem 2", r"our constructions need the turning token: without it they get the first forward step "
                              r"wrong on every tree"),
    "trees/forward_training:theorem-5-from-zero-gradient-descent": (
        "trees", "Theorem 5", r"from zero, gradient descent trains the two-head model through phases in which the "
                              r"step types become right one after another, to the construction's sign pattern"),
    "trees/forward_training:the-two-heads-specialize-without-being": (
        "trees", "Theorem 5", r"the two heads specialize without being told to: one walks the path, the other "
                              r"controls the stage"),
    "trees/forward_training:from-zero-the-two-heads-with": (
        "trees", "Theorem 5", r"from zero, the two heads with learned value maps stay identical"),
    "trees/forward_training:with-learned-value-maps-the-heads": (
        "trees", "Theorem 5", r"with learned value maps the heads still divide the work (node blocks to one head, "
                              r"the stage to the other)"),
    "trees/forward_training:the-learning-rate-and-the-loss": (
        "trees", "Theorem 5", r"the learning rate and the loss normalisation only rescale time "
                              r"($\eta_{\mathrm{eff}}\,t$)"),
    "trees/forward_cot:theorem-8-trained-on-perfect-binary": (
        "trees", "Theorem 8", r"trained on perfect binary trees, the two-head model solves any tree (any shape, depth "
                              r"and goal)"),
    "trees/forward_heads:two-heads-are-needed-the-authors": (
        "trees", "Review", r"two heads are needed: the authors' single head with full key-query and value matrices "
                           r"stalls (loss near 10 after 1,500 steps) while two heads converge"),
    "trees/forward_cot:without-the-chain-of-thought-one": (
        "trees", "Abstract", r"without the chain of thought one layer cannot produce the forward path: the chain of "
                             r"thought does the work of depth"),
    "trees/forward_robustness:several-full-heads-fit-the-training": (
        "trees", "Theorem 8", r"several full heads fit the training trees but do not generalize as one full head "
                              r"does"),
    "trees/forward_robustness:the-single-head-outcome-does-not": (
        "trees", "Review", r"the single-head outcome does not depend on the turning token"),
    "trees/forward_robustness:the-forward-model-still-solves-large": (
        "trees", "Theorem 8", r"the forward model still solves large unseen trees with non-orthogonal (Gaussian) "
                              r"embeddings"),
    "trees/lab:the-sum-over-the-2m-1": (
        "trees", "", r"the sum over the $2m+1$ positions with step $\eta/(2m+1)$ trains the same heads as the mean "
                     r"with step $\eta$"),
    "scaling:trees-backward-task-steps-to-converge": (
        "trees", "Theorem 3", r"backward task: steps to converge grow linearly in the number of labels $S$ (the paper "
                              r"states no rate)"),
    "scaling:trees-backward-task-sgd-at-batch": (
        "trees", "Theorem 3", r"backward task: SGD at batch 256 follows the exact population recursion"),
}


def anchor(claim_id: str) -> str:
    """The HTML id of a claim's evidence in its chapter: ``walks/theorem31:lemma-c-7-v-beta-pi`` ->
    ``claim-lemma-c-7-v-beta-pi``."""
    if not isinstance(claim_id, str) or ":" not in claim_id:
        raise ValueError(f"claim_id must be '<doc>:<slug>', got {claim_id!r}")
    return "claim-" + claim_id.split(":", 1)[1]


_NUM = r"(\d+(?:\.\d+)?)(?![\w.])"
_ASCII_MATH = [(re.compile(p), r) for p, r in [
    (r"\|p_i\|\^2", r"$\|p_i\|^2$"), (r"\|p\|\^2", r"$\|p\|^2$"), (r"\bN\(0, 0\.01\^2\)", r"$\mathcal{N}(0, 0.01^2)$"),
    (r"\[a_p; a_c; 0\]", r"$[a_p; a_c; 0]$"), (r"\[a_p; a_c; s_b\]", r"$[a_p; a_c; s_b]$"), (r"\bd = S\b", r"$d=S$"),
    (r"\bsqrt\(Pi\^T\)", r"$\sqrt{\Pi^\top}$"), (r"\|\|V - beta Pi\^T\|\|_F", r"$\|V-\beta\,\Pi^\top\|_F$"),
    (r"\bPi\^T\b", r"$\Pi^\top$"), (r"\bM/2\b", r"$M/2$"), (r"\bV\(1\)", r"$V^{(1)}$"), (r"\bT\^\(-1/2\)", r"$T^{-1/2}$"),
    (r"\bmax\(p, 1-p\)", r"$\max(p,1-p)$"), (r"(?<![\w/.])1/K\b", r"$1/K$"), (r"\bs_b\b", r"$s_b$"),
    (r"\bs_f\b", r"$s_f$"), (r"\bx_\(N-(\d)\)", None),
] + [(rf"(?<![\w/.])({name}) ?= ?{_NUM}", None) for name in ("m", "S", "K", "N", "M", "p")]]


def _myst(text: str) -> str:
    """Row text (a reading, a measurement) as MyST: escaped, with the few ASCII formulas the rows use (``K=6``,
    ``|p_i|^2``, ``x_(N-2)``, ``s_b``...) written as math."""
    out, pos = [], 0
    spans = []
    for pattern, repl in _ASCII_MATH:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e, _ in spans):
                continue
            if repl is None:
                r = (f"$x_{{N-{m.group(1)}}}$" if m.group(0).startswith("x_(") else
                     f"${m.group(1)}={m.group(2)}$")
            else:
                r = repl
            spans.append((m.start(), m.end(), r))
    for s, e, r in sorted(spans):
        out.append(_escape_md(text[pos:s]))
        out.append(r)
        pos = e
    out.append(_escape_md(text[pos:]))
    return "".join(out)


def build(rows: Sequence[Mapping]) -> list[Claim]:
    """The claims of stored rows (:func:`onelayer.findings.load`), in the rows' order: the rows of one chapter with
    the same claim text are the readings of one claim, whose id is the first row's."""
    groups: dict[tuple[str, str], list[Mapping]] = {}
    for row in rows:
        groups.setdefault((row["doc"], row["claim"]), []).append(row)
    out = []
    for (doc, _), members in groups.items():
        first = members[0]
        if first["id"] not in STATEMENTS:
            raise ValueError(f"claim {first['id']!r} has no entry in onelayer.claims.STATEMENTS")
        paper, result, statement = STATEMENTS[first["id"]]
        readings = []
        for row in members:
            readings.append(Reading(label=str(row["reading"]), settings=str(row["settings"]),
                                    measurement=str(row["measurement"]), detail=str(row["verdict"]),
                                    cls=reading_class(row), id=str(row["id"]), rates=row_rates(row),
                                    checks=tuple(row.get("checks", ()))))
        out.append(Claim(id=first["id"], doc=doc, paper=paper, result=result, statement=statement,
                         source=str(first["source"]), readings=tuple(readings)))
    return out


#: The landing page's grids, written with the stored rows (``python -m onelayer findings``) and included by
#: ``book/index.md`` (a markdown page, which cannot run the renderer itself); a test compares it with a fresh render.
GRIDS = "data/claims_grids.html"


def write_grids(path=None) -> str:
    """Write both papers' grids, with links relative to the landing page, to :data:`GRIDS` (or ``path``); return the
    path written."""
    target = data_path(GRIDS) if path is None else path
    with open(target, "w", encoding="utf-8") as f:
        f.write(grids_html(load(), page="index", level=3) + "\n")
    return str(target)


#: The claims the landing page states in words under its grids: (the claims' ids, the subject of the sentence, the
#: chapters it links to, a remark that says how it was measured). No verdict word is typed here: the words and the
#: colour come from the claims' class (:func:`combine` over the ids), the rest of the sentence from the remark, whose
#: ``{settings}`` and ``{share}`` are filled from the claims' rates (how many rates; ``none of n`` or ``at most k of
#: n``, ``k`` the largest count).
#:
#: :meta hide-value:
LANDING = (
    (("walks/theorem41:theorem-4-1-for-p-1",), "Theorem 4.1 of the walks paper", ("walks/theorem41",),
     "tested in exact symmetry, for three losses and four step-size schedules"),
    (("walks/theorem31:theorem-3-1-item-3-v",), "Item 3 of the walks paper's Theorem 3.1", ("walks/theorem31",),
     r"in our reading of its lost display, under the paper's log-loss: for $p\ne\tfrac12$ the value matrix points to "
     r"the entrywise square root of $\Pi^\top$, which has the same largest entries, so the accuracy is unaffected"),
    (("walks/random_init:figure-6-small-random-init-p",), "The walks paper's Figure 6", ("walks/random_init",),
     "in each of the {settings} settings of its unknowns that start in the small-initialisation regime, its ordering "
     "appears in {share} seeds"),
    (("trees/backward_construction:theorem-1-as-lambda-grows-greedy", "trees/backward_training:theorem-3-the-diagonal-of-h",
      "trees/backward_generalization:theorem-4-trained-on-perfect-binary"),
     "Theorems 1, 3 and 4 of the trees paper (the backward task)",
     ("trees/backward_construction", "trees/backward_training", "trees/backward_generalization"),
     "for our reconstruction"),
)

#: The landing page's verdict sentences, written with the stored rows (``python -m onelayer findings``) and included
#: by ``book/index.md``; a test compares it with a fresh render.
SENTENCES = "data/claims_sentences.txt"


def landing_markdown(claims: Sequence[Claim] | None = None) -> str:
    """The sentences of :data:`LANDING` as a MyST list (links relative to the landing page), each with its verdict
    (coloured, lettered) first and its ``<!-- finding: ID -->`` marker last."""
    by_id = {c.id: c for c in (load() if claims is None else claims)}
    lines = []
    for ids, subject, docs, remark in LANDING:
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ValueError(f"LANDING names claims that do not exist: {missing}")
        mine = [by_id[i] for i in ids]
        cls = combine(c.cls for c in mine)
        rates = [x for c in mine for r in c.readings for _, x in r.rates]
        most, n = max((x.k for x in rates), default=0), "/".join(str(n) for n in sorted({x.n for x in rates}))
        filled = remark.format(settings=len(rates), share=f"none of {n}" if most == 0 else f"at most {most} of {n}")
        statement = mine[0].statement if len(mine) == 1 else ""
        links = ", ".join(f"{{doc}}`{d}`" for d in docs)
        lines.append(f'* <span class="onelayer-verdict verdict-{cls}">{LETTERS[cls]} {WORDS[cls]}</span> '
                     f"{subject}" + (f" ({statement})" if statement else "") + f": {filled} ({links})."
                     f" <!-- finding: {', '.join(ids)} -->")
    return "\n".join(lines) + "\n"


def write_sentences(path=None) -> str:
    """Write :func:`landing_markdown` to :data:`SENTENCES` (or ``path``); return the path written."""
    target = data_path(SENTENCES) if path is None else path
    with open(target, "w", encoding="utf-8") as f:
        f.write(landing_markdown())
    return str(target)


def load(paper: str | None = None, path=None) -> list[Claim]:
    """The stored claims (:func:`build` of :func:`onelayer.findings.load`); with ``paper``, that paper's."""
    if paper is not None and paper not in PAPER_TITLES:
        raise ValueError(f"paper must be None or one of {tuple(PAPER_TITLES)}, got {paper!r}")
    out = build(findings.load(path=path))
    return [c for c in out if paper is None or c.paper == paper]


# --- rendering ------------------------------------------------------------------------------------------------------

def key_rate(reading: Reading) -> tuple[str, Rate] | None:
    """The rate a figure shows for a reading: the weakest of the rates that decide its class (the smallest lower end
    of the interval, the first of equals), or None for a reading whose class comes from no rate."""
    if not reading.rates:
        return None
    return min(reading.rates, key=lambda lr: lr[1].low)


def _brief(text: str, limit: int) -> str:
    """``text`` without its parenthesised and bracketed remarks, cut at a word to at most ``limit`` characters."""
    text = re.sub(r"\s*[(\[][^()\[\]]*[)\]]", "", text).strip(" ;,")
    return text if len(text) <= limit else text[:limit - 1].rsplit(" ", 1)[0].rstrip(" ,;") + "…"


def forest_lines(claims: Sequence[Claim], limit: int = 34) -> list[dict]:
    """The lines of a forest plot of ``claims``: one per reading with rates (:func:`key_rate`), in the claims' order:
    ``group`` (the claim's result and the key rate's label when its readings share it, else its statement; at most
    ``limit`` characters), ``label`` (the reading; the group when the claim has one such reading), ``single``,
    ``rate`` (the key rate's label), ``k``, ``n``, ``low``, ``high``, ``cls``, ``colour`` (:data:`COLOURS`) and
    ``letter`` (:data:`LETTERS`)."""
    limit = int(limit)
    if limit < 10:
        raise ValueError(f"limit must be at least 10 characters, got {limit!r}")
    out = []
    for c in claims:
        mine = [(r, key_rate(r)) for r in c.readings if r.rates]
        labels = {label for _, (label, _) in mine}
        group = _brief(f"{_result_label(c)}: {labels.pop() if len(labels) == 1 else _plain(c.statement)}", limit)
        short = [_brief(r.label, limit - 2) for r, _ in mine]
        if len(set(short)) < len(short):  # readings that differ only in their ends: show the ends
            short = ["…" + _brief(r.label, 10 * limit)[-(limit - 3):].split(" ", 1)[-1] for r, _ in mine]
        for (r, (label, x)), text in zip(mine, short):
            out.append({"group": group, "label": group if len(mine) == 1 else text,
                        "single": len(mine) == 1, "rate": label, "k": x.k, "n": x.n, "low": x.low, "high": x.high,
                        "cls": r.cls, "colour": COLOURS[r.cls], "letter": LETTERS[r.cls]})
    return out

def _href(doc: str, page: str, claim_id: str | None = None) -> str:
    if not isinstance(page, str) or not page or page.startswith("/"):
        raise ValueError(f"page must be a document path such as 'findings' or 'walks/index', got {page!r}")
    here = posixpath.dirname(page) or "."
    out = posixpath.relpath(doc, here) + ".html"
    return out + (f"#{anchor(claim_id)}" if claim_id else "")


def _result_label(claim: Claim) -> str:
    return claim.result or "ours"


def _groups(claims: Sequence[Claim]) -> dict[str, list[Claim]]:
    """Claims by the paper's result, in the order of first appearance (a statement of ours under ``ours``)."""
    out: dict[str, list[Claim]] = {}
    for c in claims:
        out.setdefault(_result_label(c), []).append(c)
    return out


def counts(claims: Sequence[Claim]) -> Counter:
    """How many readings of ``claims`` fall in each class."""
    return Counter(r.cls for c in claims for r in c.readings)


def counts_line(claims: Sequence[Claim]) -> str:
    """One line: ``n claims, m readings: a holds exactly, b holds, ...`` (HTML), each class after a square in its
    colour: the count and the legend of the grid above it."""
    n = counts(claims)
    parts = [f'<span class="onelayer-cell verdict-{c}" aria-hidden="true">{LETTERS[c]}</span>&nbsp;{n[c]} {WORDS[c]}'
             for c in CLASSES if n[c]]
    return (f'<p class="onelayer-counts">{len(claims)} claims, {sum(n.values())} readings: ' + ", ".join(parts)
            + "</p>")


def _cell(claim: Claim, reading: Reading, k: int, page: str) -> str:
    title = f"{claim.result or 'ours'}: {reading.words}" + (f" (reading {k})" if len(claim.readings) > 1 else "")
    return (f'<a class="onelayer-cell verdict-{reading.cls}" href="{html.escape(_href(claim.doc, page, claim.id))}" '
            f'title="{html.escape(title)}" aria-label="{html.escape(title)}">{LETTERS[reading.cls]}</a>')


def grid_html(claims: Sequence[Claim], *, page: str = "findings", title: str | None = None, level: int = 3) -> str:
    """A paper's verdict grid: one line per numbered result (statements of ours last), one small cell per reading of
    each claim under it, coloured by class and linking to the claim's evidence in its chapter; the count per class
    under it. ``page``: the document the grid is shown on (links are relative to it); ``title``: a heading of
    ``level`` above the grid."""
    claims = list(claims)
    groups = _groups(claims)
    order = [g for g in groups if g != "ours"] + (["ours"] if "ours" in groups else [])
    out = ['<div class="onelayer-grid">']
    if title:
        out.append(f'<h{level} class="onelayer-grid-title">{html.escape(title)}</h{level}>')
    out.append('<table class="onelayer-verdict-grid"><tbody>')
    for g in order:
        cells = []
        for c in groups[g]:
            inner = "".join(_cell(c, r, k, page) for k, r in enumerate(c.readings, 1))
            cells.append(f'<span class="onelayer-claim-cells" title="{html.escape(_plain(c.statement))}">{inner}</span>')
        label = "statements of ours" if g == "ours" else g
        out.append(f'<tr><th scope="row">{html.escape(label)}</th><td>{"".join(cells)}</td></tr>')
    out.append("</tbody></table>")
    out.append(counts_line(claims))
    out.append("</div>")
    return "\n".join(out)


def grids_html(claims: Sequence[Claim], *, page: str = "findings", level: int = 2) -> str:
    """Both papers' grids (:func:`grid_html`) side by side on a wide screen, one above the other on a narrow one,
    each under a heading of ``level`` (2 right under a page's title, 3 under a section's)."""
    claims = list(claims)
    return ('<div class="onelayer-grids">'
            + "".join(grid_html([c for c in claims if c.paper == p], page=page, title=PAPER_TITLES[p], level=level)
                      for p in ("walks", "trees"))
            + "</div>")


def _plain(myst: str) -> str:
    """A statement without MyST math markers, for a tooltip (``$\\Pi^\\top$`` -> ``Pi^top``)."""
    return re.sub(r"[${}]|\\(?=[a-zA-Z])", "", myst).replace("\\", "")


def _short(measurement: str, limit: int = 160) -> str:
    """The first clause of a measurement, at most ``limit`` characters (the rest is in the dropdown)."""
    first = re.split(r";\s", measurement, maxsplit=1)[0]
    return first if len(first) <= limit else first[:limit].rsplit(" ", 1)[0] + " …"


def _escape_md(text: str) -> str:
    """Plain text from a row, safe inside MyST: no role or substitution syntax, no stray math markers."""
    return text.replace("\\", "\\\\").replace("`", "'").replace("$", "\\$").replace("*", "\\*").replace("|", "\\|") \
        .replace("<", "&lt;").replace("_", "\\_").replace("[", "\\[")


def _terms(text: str, seen: set) -> str:
    """``text`` (MyST) with the first use (per claim: ``seen``) of each glossary term (:data:`TERMS`) linked to its
    entry."""
    for pattern, entry in TERMS:
        if entry in seen:
            continue
        new = pattern.sub(lambda m: f"{{term}}`{m.group(0)} <{entry}>`", text, count=1)
        if new != text:
            seen.add(entry)
            text = new
    return text


#: Words of the measurements that the glossary defines, and the entry each links to.
TERMS = [(re.compile(p), e) for p, e in [
    (r"\bR-F\b", "R-F"), (r"\bR-B\b", "R-B"),
    (r"\bstructured heads?\b", "structured head"), (r"\bfull heads?\b", "full head"),
    (r"\bchain accuracy\b", "chain accuracy"), (r"\bpath accuracy\b", "path accuracy"),
    (r"\bconverged\b", "converged"), (r"\blag\b", "lag"), (r"\bsampling floor\b", "sampling floor"),
]]


def claim_markdown(claim: Claim, *, page: str = "findings", link: bool = True, result: bool = True) -> str:
    """One claim as MyST: its verdict (coloured, with a letter), the result, the statement and the source; one short
    line per reading (its verdict and the first clause of its measurement, glossary terms linked); the full settings
    and measurements in a dropdown (``<details>``). ``link``: end the first line with a reference to the claim's
    section in its chapter (the label ``claim-<slug>``, so the build checks that it exists)."""
    verdict = f'<span class="onelayer-verdict verdict-{claim.cls}">{LETTERS[claim.cls]} {claim.words}</span>'
    head = f"**{claim.result}:** " if claim.result and result else ""
    first = f"{verdict} {head}{claim.statement} {_escape_md(claim.source)}"
    if link:
        first += f" {{ref}}`evidence <{anchor(claim.id)}>`"
    lines = [f'<div class="onelayer-claim" id="find-{anchor(claim.id)}">', "", first, ""]
    seen: set = set()
    several = len(claim.readings) > 1
    for r in claim.readings:
        tag = f'<span class="verdict-{r.cls}">{LETTERS[r.cls]} {r.words}</span> ' if several else ""
        label = "" if r.label == "-" else f"{_terms(_myst(r.label), seen)}: "
        lines.append(f"* {tag}{label}{_terms(_myst(_short(r.measurement)), seen)}")
    lines += ["", "<details><summary>settings and measurements</summary>", ""]
    for r in claim.readings:
        lines.append(f"* {'' if r.label == '-' else _myst(r.label) + '. '}Settings: {_myst(r.settings)}. "
                     f"Measured: {_myst(r.measurement)}. The chapter's account: {_myst(r.detail)}.")
    lines += ["", "</details>", "", "</div>", ""]
    return "\n".join(lines)


def paper_markdown(claims: Sequence[Claim], *, page: str = "findings") -> str:
    """Claims grouped by the paper's result (statements of ours last), each group under a bold line."""
    groups = _groups(list(claims))
    order = [g for g in groups if g != "ours"] + (["ours"] if "ours" in groups else [])
    out = []
    for g in order:
        out.append(f'<p class="onelayer-result">{"Statements of ours" if g == "ours" else html.escape(g)}</p>\n')
        out += [claim_markdown(c, page=page, result=False) for c in groups[g]]
    return "\n".join(out)


def chapter_markdown(doc: str, claims: Sequence[Claim] | None = None) -> str:
    """The claims of one chapter (its verdict section), each under its anchor."""
    claims = load() if claims is None else list(claims)
    mine = [c for c in claims if c.doc == doc]
    if not mine:
        raise ValueError(f"no claim is measured in {doc!r}")
    return "\n".join(claim_markdown(c, page=doc, link=False) for c in mine)

"""The stored seed study of the Theorem 3.1 and 4.1 chapters: claims about one training sample, measured as rates.

Four experiments, each over many training samples (data seeds), each trained with
:func:`onelayer.studies.walks.batched.train_batched`:

* ``"first_steps"``: :func:`onelayer.studies.walks.first_steps.first_steps_samples` at ``p = 0.7`` (how many columns of
  ``V^(1)`` peak at the most frequent training label; whether step 3 is Bayes-optimal);
* ``"edge"``: :func:`onelayer.studies.walks.edge.edge_table` for ``K = 6`` (and ``K = 3, 4``) at ``p`` near 1 (Bayes-optimal
  on the parent, or locked onto another lag);
* ``"figure45"``: :func:`onelayer.studies.walks.sensitivity.figure45_seeds` per positional reading (sinusoidal with the
  seeded Gram error, exactly orthogonal) and squared norm ``||p_i||^2`` (Figures 4 and 5 reproduced or not);
* ``"direction"``: :func:`onelayer.studies.walks.direction.direction_samples` at ``p = 0.7`` (the best power ``(Pi^T)^a``
  of ``V``'s direction under the log-loss and the squared loss; the growth of Lemma C.7's remainder).

``python -m onelayer study walks-seed-rates`` runs the study (:data:`STUDY`, about 15 minutes on one core). A member is
one block of seeds exactly as the first script trained it together (a batch of other seeds moves the last bits): the
400 first-step samples; per ring size ``K`` and ``p`` the 40 edge samples; per positional reading and squared norm
the 40 samples of Figures 4 and 5; the 40 direction samples. :func:`payload` gives the stored study in the first
script's layout (``meta.settings``, ``first_steps``, ``edge``, ``figure45``, ``direction``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import direction, edge, first_steps, sensitivity
from ..runner import Member, Study

__all__ = ["Settings", "QUICK", "STUDY", "payload"]


@dataclass(frozen=True)
class Settings:
    """Walk parameter and samples of the first steps; ``p``, ring sizes and seeds of the edge (the small rings with the
    same seeds); readings, squared norms and seeds of Figures 4 and 5; walk parameter, seeds and steps of the direction
    runs; ``N``, ``M``, ``n`` (training and test walks): ``None`` for each experiment's own defaults (the paper's
    size)."""

    first_p: float = 0.7
    first_seeds: int = 400
    edge_ps: tuple[float, ...] = edge.EDGE_PS
    edge_Ks: tuple[int, ...] = (6, 3, 4)
    edge_seeds: int = 40
    readings: tuple[str, ...] = ("sin", "exact")
    norms: tuple = (20.0, 40.0, "M/16", "M/8", "M/2")
    figure45_seeds: int = 40
    direction_p: float = 0.7
    direction_seeds: int = 40
    direction_steps: int = 300
    remainder_steps: int = 1000
    N: int | None = None
    M: int | None = None
    n: int | None = None


#: The ``--quick`` settings (seconds): the same experiments, few seeds, short walks.
QUICK = Settings(first_seeds=4, edge_ps=(0.9, 0.99), edge_Ks=(6,), edge_seeds=3, norms=(40.0,), figure45_seeds=3,
                 direction_seeds=2, direction_steps=20, remainder_steps=60, N=25, M=100, n=100)


def _norm_label(norm) -> str:
    return str(norm).replace("/", "over")


def members(settings: Settings) -> list[Member]:
    """The blocks: ``first-p0.700``, ``edge-k6-p0.990`` (per ``K`` and ``p``), ``figure45-sin-Mover16`` (per reading and
    norm), ``direction-p0.700``; cost hints in seconds per sample, as the first script measured them (first steps
    47 s for 400 samples, the edge 170 s for 600 runs, Figures 4/5 160 s for 400, the direction 500 s for 40)."""
    c = settings
    return ([Member(f"first-p{c.first_p:.3f}", {"experiment": "first_steps"}, cost=0.12 * c.first_seeds)]
            + [Member(f"edge-k{K}-p{p:.3f}", {"experiment": "edge", "K": K, "p": p}, cost=0.28 * c.edge_seeds)
               for K in c.edge_Ks for p in c.edge_ps]
            + [Member(f"figure45-{reading}-{_norm_label(norm)}", {"experiment": "figure45", "reading": reading,
                                                                  "norm": norm}, cost=0.4 * c.figure45_seeds)
               for reading in c.readings for norm in c.norms]
            + [Member(f"direction-p{c.direction_p:.3f}", {"experiment": "direction"}, cost=12.5 * c.direction_seeds)])


def run_member(settings: Settings, member: Member) -> dict:
    """The rows of one block, ``{"rows": [...]}``, computed as the first script computed them."""
    c, f = settings, member.fields
    size = {} if c.N is None else {"N": c.N, "M": c.M, "n_train": c.n, "n_test": c.n}
    if f["experiment"] == "first_steps":
        rows = first_steps.first_steps_samples(c.first_p, seeds=range(c.first_seeds), **size)
    elif f["experiment"] == "edge":
        rows = edge.edge_table((f["p"],), seeds=range(c.edge_seeds), Ks=(f["K"],), **size)
    elif f["experiment"] == "figure45":
        rows = sensitivity.figure45_seeds(f["norm"], positions=f["reading"], seeds=range(c.figure45_seeds), **size)
    else:
        rows = direction.direction_samples(c.direction_p, seeds=range(c.direction_seeds), direction_steps=c.direction_steps,
                                           remainder_steps=c.remainder_steps,
                                           **({} if c.N is None else {"N": c.N, "M": c.M, "n_train": c.n}))
    return {"rows": rows}


def _grouped(settings: Settings, records: list[dict]) -> dict[str, list[dict]]:
    c, by_key = settings, {r["key"]: r["result"]["rows"] for r in records}
    return {"first_steps": by_key[f"first-p{c.first_p:.3f}"],
            "edge": [row for K in c.edge_Ks for p in c.edge_ps for row in by_key[f"edge-k{K}-p{p:.3f}"]],
            "figure45": [row for reading in c.readings for norm in c.norms
                         for row in by_key[f"figure45-{reading}-{_norm_label(norm)}"]],
            "direction": by_key[f"direction-p{c.direction_p:.3f}"]}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Rows per experiment (the member results hold them): the edge's Bayes-optimal-on-the-parent and other-lag counts
    per ``(K, p)``."""
    rows = _grouped(settings, records)
    return {"rows": {k: len(v) for k, v in rows.items()},
            "edge": [{k: r[k] for k in ("K", "p", "runs")} | {"optimal_parent": r["optimal_parent_rate"].k,
                                                            "other_lag": r["other_lag_rate"].k}
                     for r in edge.edge_rates(rows["edge"])]}


def payload(stored: dict) -> dict:
    """A stored study (:func:`onelayer.studies.registry.load`) in the first script's layout: ``meta`` (``quick``,
    ``settings``), ``first_steps``, ``edge``, ``figure45``, ``direction`` (the rows in the script's order)."""
    raw = stored["settings"]
    settings = Settings(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    return {"meta": {"quick": stored["quick"], "settings": {k: v for k, v in raw.items() if v is not None}},
            **_grouped(settings, stored["members"])}


STUDY = Study(name="walks-seed-rates", stored="walks/data/seed_rates.json", kind="walks-seed-rates", settings=Settings(),
              quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Theorems 3.1 and 4.1: V(1) columns, the edge near p=1, Figures 4/5 and the direction "
                          "of V over many training samples",
              # attention weights lie in [0, 1]; on a run locked onto another lag the parent's weight is about 1e-16,
              # whose relative error is round-off (1e-9 under jitter): floats agree within 1e-12 absolute or 1e-9 relative
              atol=1e-12)

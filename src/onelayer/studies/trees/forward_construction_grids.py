"""The two grids the chapter "Theorem 2: the construction" tabulates, stored: the study
``trees-forward-construction-grids``.

The chapter evaluates the two-head construction on 1,024 random test trees (Gaussian embeddings) at every scale of a
grid (:func:`onelayer.studies.trees.analysis.scale_grid`), and searches the stage-block entries of both constructions
on the layout without a turning token (:func:`onelayer.studies.trees.analysis.stage_entry_search`). Both are fixed
computations that took a third of the chapter's execution, so they are stored here and the chapter loads them.

Members ``scale-grid`` and ``no-turning-search``: the rows of the two functions, in float64.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ... import store
from ...seeding import generator, numpy_rng
from ...trees.forward.layout import random_forward_batch
from ..registry import load
from ..runner import Member, Study
from . import analysis
from .inputs import gaussian_embeddings
from .layout_variants import random_batch
from .stored_study import float64

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "rows"]


@dataclass(frozen=True)
class Settings:
    """The embeddings (``S x d``, seed ``embedding_seed``), the test trees (``test_trees`` of depth at most
    ``test_max_depth``, seed ``test_seed``), the scale grid ``scales`` times ``scale_base``, and the search
    (``no_turning_search_trees`` trees without a turning token, ``large_at``, ``no_turning_multiples``)."""

    S: int = 25
    d: int = 32
    embedding_seed: int = 1
    test_seed: int = 2
    test_trees: int = 1024
    test_max_depth: int = 6
    scales: tuple[float, ...] = (0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 12)
    scale_base: tuple[float, float, float] = (2.0, 1.0, 1.0)
    large_at: tuple[float, float, float] = (20.0, 10.0, 10.0)
    no_turning_multiples: tuple[float, ...] = (-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
    no_turning_search_trees: int = 256


#: ``--quick``: the chapter's quick mode (128 trees, every other scale).
QUICK = Settings(test_trees=128, scales=(0.25, 1, 2, 5, 12), no_turning_search_trees=128)


def members(settings: Settings) -> list[Member]:
    """``scale-grid`` and ``no-turning-search``."""
    return [Member("scale-grid", {}, cost=float(len(settings.scales))),
            Member("no-turning-search", {}, cost=float(len(settings.no_turning_multiples)))]


def run_member(settings: Settings, member: Member) -> dict:
    """The member's rows in float64: ``{"rows": [...]}``."""
    s = settings
    with float64():
        A = gaussian_embeddings(s.S, s.d, generator(s.embedding_seed))
        if member.key == "scale-grid":
            test, _ = random_forward_batch(s.S, s.test_trees, numpy_rng(s.test_seed), max_depth=s.test_max_depth)
            lam, mu, kappa = s.scale_base
            return {"rows": analysis.scale_grid(A, test, [float(c) for c in s.scales], lam=lam, mu=mu, kappa=kappa),
                    "trees": test.size}
        batch, _ = random_batch(s.S, s.no_turning_search_trees, numpy_rng(s.test_seed), max_depth=s.test_max_depth,
                                turning=False)
        lam, mu, kappa = s.large_at
        return {"rows": analysis.stage_entry_search(A, batch, lam=lam, mu=mu, kappa=kappa,
                                                    multiples=s.no_turning_multiples), "trees": batch.size}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Rows per member."""
    return {r["key"]: len(r["result"]["rows"]) for r in records}


STUDY = Study(name="trees-forward-construction-grids", stored="trees/data/forward_construction_grids.json",
              kind="trees-forward-construction-grids", settings=Settings(), quick=QUICK, members=members,
              run_member=run_member, summarize=summarize,
              description="Trees, Theorem 2: the construction's scale grid and the stage-entry search without a "
                          "turning token")


def rows(settings: Settings) -> dict:
    """key -> stored result (``rows``, ``trees``), refused if the study was made with other ``settings``."""
    data = load(STUDY.name)
    if data["settings"] != store.to_jsonable(asdict(settings)):
        raise ValueError(f"the stored study {STUDY.name} has other settings than the chapter's; run "
                         f"python -m onelayer study {STUDY.name}")
    return {m["key"]: m["result"] for m in data["members"]}

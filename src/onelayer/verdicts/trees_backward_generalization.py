"""The verdicts of the chapter "Theorem 4: it generalizes to unseen trees" (``book/trees/backward_generalization.ipynb``):
Theorem 4 on random trees and longer paths, the margin bound, the Gaussian embeddings and the runs past the theorems'
assumptions, from the rates over stored runs that :mod:`onelayer.chapters.trees.backward_generalization` passes in
(see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import rated
from ..formatting import mean_text, number_text
from ..studies.trees import beyond

__all__ = ["rows"]


def _span_text(pair) -> str:
    return f"{pair[0]}" if pair[0] == pair[1] else f"{pair[0]} to {pair[1]}"


def _bins_text(r) -> str:
    return "; ".join(f"length {lo}{'' if lo == hi else f'-{hi}'}: {rt.text(4)}" for lo, hi, _, rt in r["bins"])


def rows(settings, *, seeds: dict[str, dict], bounds: dict, past: dict[str, dict], own: dict) -> list[dict]:
    """The chapter's verdicts: generalisation to random trees and longer paths and the margin bound (stored runs over
    seeds), the Gaussian embeddings (stored runs over embedding draws) and the runs past the assumptions (stored runs,
    20 per embedding family).

    ``seeds``: per embedding family (``"one_hot"``, ``"gaussian"``) the pooled rates of the stored seed study
    (:func:`onelayer.chapters.trees.backward_generalization.seed_rates`); ``bounds``: the margin bound over the
    one-hot runs (:func:`onelayer.studies.trees.backward_seeds.bound_rates`); ``past``: per embedding family the rates
    of the runs past the assumptions (:func:`onelayer.chapters.trees.backward_generalization.beyond_rates`); ``own``:
    the Gaussian draws each on its own test trees
    (:func:`onelayer.chapters.trees.backward_generalization.own_test_rates`)."""
    s = settings
    oh, ga = seeds["one_hot"], seeds["gaussian"]
    first, last = (own["own"][t]["runs_all_right"] for t in (own["readings"][0], own["readings"][-1]))
    base = {"source": "[paper]", "reading": "R-B layout, one-hot embeddings, mean loss with 1/2 (ours)",
            "chapter": "backward_generalization"}
    trained = (f"S = {s.S}, trained on perfect trees of depth {s.m} ({s.steps} SGD steps at lr {s.lr:g}); "
               f"{s.test_trees} random test trees (0-3 children, depth at most {s.test_max_depth})")
    exact_oh = oh["exact"].low >= 0.99 and oh["longer"].low >= 0.99
    learn_g = ga["exact"].low >= 0.9
    t0, t1 = (f"{t:,}" for t in (own["readings"][0], own["readings"][-1]))
    own_text = "; ".join(f"step {t:,}: exact paths {own['own'][t]['exact'].text(4)}, draws with every path right "
                         f"{own['own'][t]['runs_all_right'].text()}" for t in own["readings"])
    rows = [
        {**base, "claim": "Theorem 4: trained on perfect binary trees, the model solves random trees of any shape, "
                          "including paths longer than in training",
         "settings": f"{trained}; {oh['runs']} training seeds (stored study trees-backward-seeds)",
         "measurement": f"{oh['runs']} seeds x {oh['goals']} goals: exact paths {oh['exact'].text(4)}; runs with every "
                        f"test path right at step {oh['steps']}: {oh['runs_all_right'].text()}; paths longer than "
                        f"{oh['m']}: {oh['longer'].text(4)}; by length ({_bins_text(oh)})",
         "verdict": "holds" if exact_oh else ("fails" if oh["exact"].high < 0.99 else "holds on most goals"),
         "class": "holds" if exact_oh else ("fails" if oh["exact"].high < 0.99 else "most")},
        {**base, "claim": "the test loss is at most 2 (eps / (1 + eps))^2 per position, eps = (N - 1) e^-delta(H), and "
                          "tends to zero with training",
         "source": "[ours]",
         "settings": f"{trained}; {bounds['runs']} training seeds (stored study trees-backward-seeds), test loss, "
                     f"margin and bound at each of the {bounds['checkpoints']} checkpoints (every {s.checkpoint_every} steps)",
         "measurement": f"{bounds['runs']} seeds: runs where the bound holds at every checkpoint with a positive margin "
                        f"({_span_text(bounds['positive'])} such checkpoints per run): {bounds['holds'].text()}; bound / test "
                        f"loss there from {number_text(bounds['ratio'][0])} to {number_text(bounds['ratio'][1])}; runs whose "
                        f"test loss falls at every one of them: {bounds['falls'].text()}; "
                        f"at step {bounds['steps']}, test loss mean {mean_text(bounds['final_loss'])}, bound "
                        f"mean {mean_text(bounds['final_bound'])}",
         "verdict": ("holds on every run" if bounds["holds"].k == bounds["runs"] and bounds["falls"].k == bounds["runs"] else
                     "the bound holds on every run; the loss does not fall at every checkpoint on every run"
                     if bounds["holds"].k == bounds["runs"] else "fails on some runs"),
         **rated({"runs where the bound holds": bounds["holds"], "runs whose test loss falls": bounds["falls"]})},
        {**base, "claim": "with linearly independent, non-orthogonal embeddings the symmetric picture and exact "
                          "generalisation at the same training time are lost",
         "source": "[ours]", "reading": "R-B layout, Gaussian embeddings d = S (ours)",
         "settings": f"{trained}; {ga['runs']} embedding draws, each with its own training seed (stored study "
                     f"trees-backward-seeds, one shared test set); the same draws each on its own {own['goals']} random "
                     f"test trees at steps {t0} and {t1} (stored study trees-backward-own-tests)",
         "measurement": f"shared test set: {ga['runs']} draws x {ga['goals']} goals: exact paths {ga['exact'].text(4)}; "
                        f"runs with every test path right at step {ga['steps']}: {ga['runs_all_right'].text()} (lowest run "
                        f"{ga['lowest_run']}/{ga['goals']}); residual of H from the symmetric span, mean "
                        f"{mean_text(ga['residual'])}; by length ({_bins_text(ga)}). Own test set per draw: {own_text}",
         "verdict": ("learning fails on many draws" if not learn_g else
                     "learning works; exact on every draw" if first.k == first.n and last.k == last.n else
                     f"learning works; at {t0} steps exactness depends on the draw, and by {t1} steps every draw is exact "
                     f"on its own test trees: a matter of training time" if last.k == last.n else
                     f"learning works; exact on most draws by {t1} steps, not on every one" if last.low > 0.5 else
                     f"learning works; exactness is lost on many draws, even at {t1} steps"),
         # the claim is that exactness is lost: not at all (every draw exact at both readings) refutes it
         "class": ("holds" if not learn_g else "fails" if first.k == first.n and last.k == last.n else "partly")},
    ]
    for kind, r in past.items():
        paths_ok = all(r["path"][sh].low >= 0.99 for sh in beyond.SHAPES)
        stops_ok = all(r["stop"][sh].low >= 0.99 for sh in beyond.SHAPES)
        rows.append(
            {**base, "claim": "the backward model reaches past the assumptions: deep paths, wide stars, large random "
                              "trees, and it stops at the root by itself" + (", also with non-orthogonal embeddings"
                                                                             if kind == "gaussian" else ""),
             "source": "[ours]", "reading": f"R-B layout, {kind.replace('_', '-')} embeddings (ours)",
             "settings": f"S = {s.beyond_S}, m = {s.beyond_m}, {s.beyond_steps} steps at lr {s.beyond_lr:g}, {r['runs']} "
                         + ("training seeds" if kind == "one_hot" else "embedding draws, each with its own training seed")
                         + f"; {r['goals']['path']} test goals of each shape (trees up to {r['largest_tree']} nodes, goals up "
                           f"to depth {r['deepest_goal']}); stored study trees-backward-beyond",
             "measurement": "exact paths: " + ", ".join(f"{sh} {r['path'][sh].text(4)}" for sh in beyond.SHAPES)
                            + "; stops by itself: " + ", ".join(f"{sh} {r['stop'][sh].text(4)}" for sh in beyond.SHAPES)
                            + f"; runs with every path right and every stop: {r['runs_perfect'].text()}",
             "verdict": ("holds on every run" if r["runs_perfect"].k == r["runs_perfect"].n else
                         "holds on almost every goal, not on every run" if paths_ok and stops_ok else
                         "paths hold, stopping fails on some runs" if paths_ok else "fails on some runs"),
             **rated({"runs with every path and stop right": r["runs_perfect"]})})
    return rows

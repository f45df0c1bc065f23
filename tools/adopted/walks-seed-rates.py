"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep walks-seed-rates`` becomes the
stored study ``walks-seed-rates`` without re-running anything. A member is one block of seeds the old script trained
together (the first steps; the edge per K and p; Figures 4/5 per reading and norm; the direction runs); its result is
that block's rows, cut out of the old lists in the old order (checked by their own fields).
Run once from the repository root: ``.venv/bin/python tools/adopted/walks-seed-rates.py``.
"""

from dataclasses import asdict

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.walks.seed_rates import STUDY, _norm_label

old = store.from_jsonable(store.read_json(data_path(STUDY.stored), kind="walks-seed-rates"))
c = STUDY.settings
assert old["meta"]["settings"] == {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(c).items()
                                   if v is not None}, old["meta"]["settings"]
seeds = lambda n: list(range(n))  # noqa: E731
results = {f"first-p{c.first_p:.3f}": {"rows": old["first_steps"]}}
assert [r["seed"] for r in old["first_steps"]] == seeds(c.first_seeds)
edge_rows = iter(old["edge"])
for K in c.edge_Ks:
    for p in c.edge_ps:
        block = [next(edge_rows) for _ in range(c.edge_seeds)]
        assert all(r["K"] == K and r["p"] == p for r in block) and [r["seed"] for r in block] == seeds(c.edge_seeds)
        results[f"edge-k{K}-p{p:.3f}"] = {"rows": block}
fig_rows = iter(old["figure45"])
for reading in c.readings:
    for norm in c.norms:
        block = [next(fig_rows) for _ in range(c.figure45_seeds)]
        assert all(r["positions"] == reading and r["norm"] == norm for r in block)
        assert [r["seed"] for r in block] == seeds(c.figure45_seeds)
        results[f"figure45-{reading}-{_norm_label(norm)}"] = {"rows": block}
assert next(edge_rows, None) is None and next(fig_rows, None) is None
assert [r["seed"] for r in old["direction"]] == seeds(c.direction_seeds)
results[f"direction-p{c.direction_p:.3f}"] = {"rows": old["direction"]}
print(adopt(STUDY, results, source="book/" + STUDY.stored, command="python -m onelayer sweep walks-seed-rates",
            made=old["meta"]))

"""One-off conversion (kept as the record of it): the stored file of ``python -m onelayer sweep trees-scaling`` becomes
the stored study ``trees-scaling`` (:mod:`onelayer.studies.trees.scaling.stored`), one member per grid and size,
without re-running anything. Each run's wall-clock ``seconds`` and ``seconds_per_step`` move out of the member (a
measurement of the machine that made it, which a recomputation cannot reproduce) into the provenance's ``made``.
Run once from the repository root: ``python tools/adopted/trees-scaling.py``."""

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.trees.scaling.stored import STUDY

SOURCE = "book/trees/data/scaling.json"
old = store.read_json(data_path(STUDY.stored), kind="trees-scaling-sweep")
results, wall = {}, {}
for grid, runs in old["runs"].items():
    for run in runs:
        key = f"{grid}-m{run['m']}-S{run['S']:03d}"
        results[key] = {k: v for k, v in run.items() if k not in ("seconds", "seconds_per_step")}
        wall[key] = {"seconds": run["seconds"], "seconds_per_step": run["seconds_per_step"]}
print(adopt(STUDY, results, source=SOURCE, command=old["command"], made={"command": old["command"], "wall": wall}))

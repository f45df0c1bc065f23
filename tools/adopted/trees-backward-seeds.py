"""One-off conversion (kept as the record of it): the stored file of ``python -m onelayer sweep trees-backward-seeds``
becomes the stored study ``trees-backward-seeds`` (:mod:`onelayer.studies.trees.backward_seeds`), member for member
(run ``i`` of a family: column ``i`` of its ``[step][run]`` lists), without re-running anything. Run once from the
repository root: ``python tools/adopted/trees-backward-seeds.py``."""

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.trees.backward_seeds import STUDY

SOURCE = "book/trees/data/backward_seeds.json"
old = store.read_json(data_path(STUDY.stored), kind="trees-backward-seeds")
results = {}
for kind, run in old["runs"].items():
    for i, seed in enumerate(run["seeds"]):
        draw = run["draws"][i] if kind == "gaussian" else None
        key = f"{kind}-s{seed:03d}" if draw is None else f"{kind}-d{draw:03d}-s{seed:03d}"
        results[key] = {**{name: [row[i] for row in run[name]]
                           for name in ("loss", "h1", "h2", "residual", "exact_paths", "test_loss", "margin", "margin_bound")},
                        "exact_by_length": {k: v[i] for k, v in run["exact_by_length"].items()}}
made = {"command": old["command"], "seconds": {kind: run["seconds"] for kind, run in old["runs"].items()}}
print(adopt(STUDY, results, source=SOURCE, command=old["command"], made=made))

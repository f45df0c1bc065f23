"""One-off conversion (kept as the record of it): the stored file of ``python -m onelayer sweep trees-backward-beyond``
becomes the stored study ``trees-backward-beyond`` (:mod:`onelayer.studies.trees.backward_beyond`), member for member,
without re-running anything. Run once from the repository root: ``python tools/adopted/trees-backward-beyond.py``."""

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.trees.backward_beyond import STUDY
from onelayer.studies.trees.beyond import SHAPES

SOURCE = "book/trees/data/backward_beyond.json"
old = store.read_json(data_path(STUDY.stored), kind="trees-backward-beyond")
results = {}
for kind, f in old["families"].items():
    for i in range(f["runs"]):
        results[f"{kind}-s{i:03d}"] = {"train_loss": f["train_loss"][i], "exact": {sh: f["exact"][sh][i] for sh in SHAPES},
                                       "stops": {sh: f["stops"][sh][i] for sh in SHAPES}, "goals": f["goals"],
                                       "largest_tree": f["largest_tree"], "deepest_goal": f["deepest_goal"]}
made = {"command": old["command"], "seconds": {kind: f["seconds"] for kind, f in old["families"].items()}}
print(adopt(STUDY, results, source=SOURCE, command=old["command"], made=made))

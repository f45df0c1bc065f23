"""One-off conversion (kept as the record of it): the stored file of ``python -m onelayer sweep trees-forward-beyond``
becomes the stored study ``trees-forward-beyond`` (:mod:`onelayer.studies.trees.forward_beyond`), member for member,
without re-running anything. Run once from the repository root: ``python tools/adopted/trees-forward-beyond.py``."""

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.trees.forward_beyond import STUDY

SOURCE = "book/trees/data/forward_beyond.json"
old = store.read_json(data_path(STUDY.stored), kind="trees-forward-beyond")
results = {f"draw{run['seed']:03d}": run for run in old["per_run"]}
print(adopt(STUDY, results, source=SOURCE, command=old["command"], made={"command": old["command"], "minutes": old["minutes"]}))

"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep trees-forward-seeds
--seeds 1 2`` becomes the stored study ``trees-forward-seeds``, member for member, without re-running anything.

The old script ran one process-pool task per (cell, seed), the study's members; each run's wall ``seconds`` goes into
the provenance's ``made``. Run once from the repository root: ``.venv/bin/python tools/adopted/trees-forward-seeds.py``.
"""

import json

from onelayer.paths import data_path
from onelayer.studies import runner
from onelayer.studies.trees.forward_seeds import STUDY, _key

old = json.loads(data_path(STUDY.stored).read_text())
assert old["kind"] == "trees-forward-seeds" and old["quick"] is False and old["seeds"] == list(STUDY.settings.seeds)
results, seconds = {}, {}
for row in old["runs"]:
    row = dict(row)
    key = _key(row["arch"], row["m"], row["seed"])
    seconds[key] = row.pop("seconds")
    results[key] = row
assert len(results) == len(old["runs"])
print(runner.adopt(STUDY, results, source="book/trees/data/forward_seeds.json", command=old["command"],
                   made={"command": old["command"], "seconds": seconds}))

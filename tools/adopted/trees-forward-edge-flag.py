"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep trees-forward-edge-flag``
becomes the stored study ``trees-forward-edge-flag``, member for member, without re-running anything.

The old file held ``runs`` (20 rows per cell, the cells in the order edge stage, reduction, model; a cell's seeds were
trained together, as a member of the study is) and ``extra`` (the step-size check, the same shape). The wall times (a
cell's first row's ``seconds`` and ``train_seconds``, each part's ``minutes``) and the commands go into the
provenance's ``made``. Run once from the repository root: ``.venv/bin/python tools/adopted/trees-forward-edge-flag.py``.
"""

import json

from onelayer.paths import data_path
from onelayer.studies import runner
from onelayer.studies.trees.forward_edge_flag import STUDY, _cells

old = json.loads(data_path(STUDY.stored).read_text())
assert old["kind"] == "trees-forward-edge-flag" and old["quick"] is False
results, seconds = {}, {}
for part, cells, stored in (("main", STUDY.settings.main, old), ("extra", STUDY.settings.extra, old["extra"])):
    assert stored["settings"] == cells.as_dict()
    rows = list(stored["runs"])
    for key, stage, reduction, name in _cells(part, cells):
        block, rows = [dict(r) for r in rows[:cells.seeds]], rows[cells.seeds:]
        assert [(r["edge_stage"], r["reduction"], r["arch"], r["seed"]) for r in block] == \
            [(stage, reduction, name, seed) for seed in range(cells.seeds)]
        seconds[key] = {"seconds": block[0].pop("seconds"), "train_seconds": block[0].pop("train_seconds")}
        results[key] = {"runs": block}
    assert not rows
made = {"command": old["command"], "minutes": old["minutes"],
        "extra": {"command": old["extra"]["command"], "minutes": old["extra"]["minutes"]}, "cell_seconds": seconds}
print(runner.adopt(STUDY, results, source="book/trees/data/forward_edge_flag.json", command=old["command"], made=made))

"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep
trees-forward-rescaling-seeds`` becomes the stored study ``trees-forward-rescaling-seeds``, member for member, without
re-running anything.

The old file held the settings and ``runs``, one per run setting (all 20 seeds of a setting trained together, as a
member of the study is), in the order of the study's settings; its ``seconds`` and ``command`` go into the
provenance's ``made``. Run once from the repository root: ``.venv/bin/python tools/adopted/trees-forward-rescaling-seeds.py``.
"""

import json

from onelayer.paths import data_path
from onelayer.studies import runner
from onelayer.studies.trees.forward_rescaling import STUDY, _key

old = json.loads(data_path(STUDY.stored).read_text())
s = STUDY.settings
assert old["kind"] == "trees-forward-rescaling-seeds" and old["seeds"] == list(range(s.seeds))
assert [old[k] for k in ("m", "S", "batch_size", "eval_size", "eval_seed")] == [s.m, s.S, s.batch_size, s.eval_size,
                                                                                s.eval_seed]
results = {}
for run, stored in zip(s.runs, old["runs"], strict=True):
    assert (stored["reduction"], stored["lr"], stored["steps_run"]) == run[:3]
    results[_key(run)] = stored
print(runner.adopt(STUDY, results, source="book/trees/data/forward_rescaling_seeds.json",
                   command=old["command"], made={"command": old["command"], "seconds": old["seconds"]}))

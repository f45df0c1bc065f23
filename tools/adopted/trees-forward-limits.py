"""One-off conversion (issue 31, item 4): the pre-runner file ``forward_sweep.json`` (made by the limits script's
``main``, later ``python -m onelayer sweep trees-forward-limits``) becomes the stored study ``trees-forward-limits``,
member for member, without re-running anything.

The old file held ``loss_table`` (9 runs), ``heads_depth`` (20 runs) and ``heads_depth_extra`` (the two-head model at
m = 5 with budget 8,000), one training run each, in the order of the study's settings. Each run's wall ``seconds`` and
the file's two commands go into the provenance's ``made``. Run once from the repository root:
``.venv/bin/python tools/adopted/trees-forward-limits.py``.
"""

import json

from onelayer.paths import data_path
from onelayer.studies import runner
from onelayer.studies.trees.forward_limits import STUDY, _keys

old = json.loads(data_path(STUDY.stored).read_text())
s = STUDY.settings
assert old["kind"] == "trees-forward-sweep" and old["quick"] is False
expected = {"loss_table": [(a, 3, n) for n in s.table_norms for a in s.table_models],
            "heads_depth": [(a, m, "mean, 1/2") for m in s.depths for a in s.depth_models],
            "heads_depth_extra": [(a, m, "mean, 1/2") for a, m, _ in s.extra]}
results, seconds = {}, {}
for part, keys in _keys(s).items():
    assert [(r["arch"], r["m"], r["norm"]) for r in old[part]] == expected[part]
    for key, row in zip(keys, old[part], strict=True):
        row = dict(row)
        seconds[key] = row.pop("seconds")
        results[key] = row
assert old["heads_depth_extra"][0]["budget"] == s.extra[0][2]
made = {"command": old["command"], "extra_command": old["extra_command"], "seconds": seconds}
print(runner.adopt(STUDY, results, source="book/trees/data/forward_sweep.json",
                   command="python -m onelayer sweep trees-forward-limits", made=made))

"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep trees-forward-limit-rates``
becomes the stored study ``trees-forward-limit-rates``, member for member, without re-running anything.

The old file held each part's rows (20 seeds per batched call, the calls in the order of the settings; a call is a
member of the study). The ``no_turn`` rows' wall times (a call's first row's ``seconds`` and ``train_seconds``) and
each part's ``minutes`` go into the provenance's ``made``. Run once from the repository root:
``.venv/bin/python tools/adopted/trees-forward-limit-rates.py``.
"""

import json

from onelayer.paths import data_path
from onelayer.studies import runner
from onelayer.studies.trees.forward_limit_rates import SETTINGS, STUDY, _keys

old = json.loads(data_path(STUDY.stored).read_text())
assert old["kind"] == "trees-forward-limit-rates" and old["quick"] is False and old["settings"] == SETTINGS
n = STUDY.settings.seeds
results, seconds = {}, {}
for part, keys in _keys(STUDY.settings).items():
    rows = [dict(r) for r in old[part]]
    assert len(rows) == n * len(keys)
    for i, key in enumerate(keys):
        block = rows[i * n:(i + 1) * n]
        assert [r["seed"] for r in block] == list(range(n)) and len({r.get("arch") for r in block}) == 1
        if part == "no_turn":
            seconds[key] = {"seconds": block[0].pop("seconds"), "train_seconds": block[0].pop("train_seconds")}
        results[key] = {"rows": block}
print(runner.adopt(STUDY, results, source="book/trees/data/forward_limit_rates.json", command=old["command"],
                   made={"command": old["command"], "minutes": old["minutes"], "no_turn_seconds": seconds}))

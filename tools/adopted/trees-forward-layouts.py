"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep trees-forward-layouts``
becomes the stored study ``trees-forward-layouts``, member for member, without re-running anything.

The old file held ``child_first`` (one check per ``(heads, init_scale)``), ``table`` and ``cells`` (pairs of run rows,
with and without the turning token, in the order of the study's settings). Each row's ``seconds`` (wall time, not a
result) moves into the provenance's ``made``. Run once from the repository root: ``.venv/bin/python
tools/adopted/trees-forward-layouts.py``.
"""

import json

from onelayer.paths import data_path
from onelayer.studies import runner
from onelayer.studies.trees.forward_alternative_layouts import STUDY, _name

old_path = data_path(STUDY.stored)
old = json.loads(old_path.read_text())
assert old["kind"] == "trees-forward-layouts" and old["quick"] is False
s = STUDY.settings
results, seconds = {}, {}
for (heads, _), check in zip(s.child_first, old["child_first"], strict=True):
    assert check["heads"] == heads
    results[f"child-first-h{heads}"] = check
pairs = [(f"table-{_name(model)}", model, s.table_m) for model in s.table_models]
pairs += [(f"cell-m{m}-{_name(model)}", model, m) for m in s.cell_depths for model in s.cell_models]
for (prefix, model, m), pair in zip(pairs, old["table"] + old["cells"], strict=True):
    for layout, row in zip(("turn", "noturn"), pair, strict=True):
        assert row["arch"] == model and row["m"] == m and row.get("turning", True) == (layout == "turn")
        row = dict(row)
        seconds[f"{prefix}-{layout}"] = row.pop("seconds")
        results[f"{prefix}-{layout}"] = row
made = {"command": old["command"], "seconds": seconds}
print(runner.adopt(STUDY, results, source="book/trees/data/forward_layouts.json",
                   command="python -m onelayer sweep trees-forward-layouts", made=made))

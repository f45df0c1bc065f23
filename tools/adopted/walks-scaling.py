"""One-off conversion (kept as the record of it): the stored file of the first walks scaling script
(``python -m onelayer.walks.scaling``) becomes the stored study ``walks-scaling``
(:mod:`onelayer.studies.walks.scaling.stored`), one member per row, without re-running anything. Each row's wall-clock
``seconds_per_step`` and ``member_seconds_per_step`` stay with its member as measured fields (stored, never compared).
Run once from the repository root: ``python tools/adopted/walks-scaling.py``."""

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.walks.scaling.stored import (CRITICAL_KEYS, GRIDS, ROW_KEYS, STUDY, _critical_key, _critical_sets,
                                                   _row_key)

SOURCE = "book/walks/data/scaling.json"
old = store.read_json(data_path(STUDY.stored), kind=STUDY.kind)
s = STUDY.settings
defaults = old["meta"]["defaults"]
assert (defaults["seeds"], defaults["n_train"], defaults["n_test"], defaults["steps"], defaults["timing_steps"]) == (
    list(s.seeds), s.n_train, s.n_test, s.steps, s.timing_steps), defaults
results = {}
for p in s.ps:
    for grid, _ in GRIDS:
        for row in old["studies"][f"p={p}"][grid]:
            assert row["p"] == p and row["axis"] == grid, row
            results[_row_key(p, grid, row["N"], row["M"])] = {k: row[k] for k in ROW_KEYS}
for name, criterion, walks in _critical_sets(s):
    for row in old["critical"][name]:
        assert row["criterion"] == criterion, row
        results[_critical_key(criterion, walks, row["N"])] = {k: row[k] for k in CRITICAL_KEYS}
command = "python -m onelayer.walks.scaling --out book/walks/data/scaling.json"
print(adopt(STUDY, results, source=SOURCE, command=command, made={"created_by": old["meta"]["created_by"],
                                                                  "meta": old["meta"]}))

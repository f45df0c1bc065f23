"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep walks-figure45-gram-errors``
becomes the stored study ``walks-figure45-gram-errors`` without re-running anything: a member is one (error, reading,
norm) cell with the block of 40 samples the old script trained together, its result that cell's rows in the old order.
Run once from the repository root: ``.venv/bin/python tools/adopted/walks-figure45-gram-errors.py``.
"""

from dataclasses import asdict

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.walks.gram_errors import STUDY, _key

old = store.from_jsonable(store.read_json(data_path(STUDY.stored), kind="walks-figure45-gram-errors"))
c = STUDY.settings
assert old["meta"]["settings"] == {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(c).items()
                                   if v is not None}, old["meta"]["settings"]
rows, results = iter(old["rows"]), {}
for e in c.errors:
    for r in c.readings:
        for n in c.norms:
            block = [next(rows) for _ in range(c.seeds)]
            assert all((x["relative_gram_error"], x["positions"], x["norm"]) == (e, r, n) for x in block)
            assert [x["seed"] for x in block] == list(range(c.seeds))
            results[_key(e, r, n)] = {"rows": block}
assert next(rows, None) is None
print(adopt(STUDY, results, source="book/" + STUDY.stored, command="python -m onelayer sweep walks-figure45-gram-errors",
            made=old["meta"]))

"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep walks-random-init`` becomes the
stored study ``walks-random-init`` without re-running anything. Every run of the old file is one member (a pure
function of its setting and seed); its result is the old run without its ``seconds`` (the wall time of that run on
the machine that made it, which no recomputation reproduces; it goes into ``made``, with the old ``meta``).
Run once from the repository root: ``.venv/bin/python tools/adopted/walks-random-init.py``.
"""

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.walks.random_init.stored import STUDY, _key, _meta

old = store.read_json(data_path(STUDY.stored), kind=STUDY.kind)
expected = _meta(STUDY.settings)
for key, value in old["meta"].items():
    assert key in ("torch",) or expected[key] == value, key
results, seconds = {}, {}
for run in old["runs"]:
    c = run["config"]
    key = _key(c["normalize"], c["reduction"], c["lr"], c["p"], c["seed"])
    assert key not in results
    seconds[key] = run["seconds"]
    results[key] = {k: v for k, v in run.items() if k != "seconds"}
print(adopt(STUDY, results, source="book/" + STUDY.stored, command="python -m onelayer sweep walks-random-init",
            made={"meta": old["meta"], "seconds_per_run": seconds}))

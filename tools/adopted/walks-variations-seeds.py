"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep walks-variations-seeds``
becomes the stored study ``walks-variations-seeds``, member for member, without re-running anything.

The old file held the rows of both experiments (``logit_scale``, ``lag``), one per walk parameter and seed; a member of
the study is one experiment at one ``p`` with its block of seeds, so its result is those rows, in the old order.
Run once from the repository root: ``.venv/bin/python tools/adopted/walks-variations-seeds.py``.
"""

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.walks.variations.seeds import STUDY

old = store.from_jsonable(store.read_json(data_path(STUDY.stored), kind="walks-variations-seeds"))
settings = STUDY.settings
assert old["meta"]["settings"] == {"scale_ps": list(settings.scale_ps), "scale_steps": settings.scale_steps,
                                   "lag_ps": list(settings.lag_ps), "lag_steps": settings.lag_steps,
                                   "seeds": settings.seeds}, old["meta"]["settings"]
results = {}
for name, rows, ps in (("scale", old["logit_scale"], settings.scale_ps), ("lag", old["lag"], settings.lag_ps)):
    for p in ps:
        block = [r for r in rows if r["p"] == p]
        assert [r["seed"] for r in block] == list(range(settings.seeds)), (name, p)
        results[f"{name}-p{p:.3f}"] = {"rows": block}
    assert sum(len(results[f"{name}-p{p:.3f}"]["rows"]) for p in ps) == len(rows)
print(adopt(STUDY, results, source="book/" + STUDY.stored, command="python -m onelayer sweep walks-variations-seeds",
            made=old["meta"]))

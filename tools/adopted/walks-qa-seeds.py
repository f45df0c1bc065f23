"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep walks-qa-seeds`` becomes the
stored study ``walks-qa-seeds`` without re-running anything. The old file held, per setting, the runs of seeds
0 .. 39 (each a pure function of its setting and seed); a member of the study is one setting and one seed, its result
that run. Run once from the repository root: ``.venv/bin/python tools/adopted/walks-qa-seeds.py``.
"""

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.walks.qa_seeds import STUDY, setting_list

old = store.read_json(data_path(STUDY.stored), kind="walks-qa-seeds")
settings = STUDY.settings
assert old["seeds"] == list(range(settings.seeds)) and old["steps"] == settings.steps
assert old["keep_every"] == settings.keep_every and old["quick"] is False
wanted = setting_list(settings)
assert [{k: v for k, v in s.items() if k not in ("steps", "runs")} for s in old["settings"]] == wanted
members = {tuple(sorted((k, v) for k, v in m.fields.items() if k != "seed")) + (m.fields["seed"],): m.key
           for m in STUDY.member_list(settings)}
results = {}
for entry in old["settings"]:
    setting = tuple(sorted((k, v) for k, v in entry.items() if k not in ("steps", "runs")))
    for run in entry["runs"]:
        results[members[setting + (run["seed"],)]] = run
made = {k: old[k] for k in ("quick", "seeds", "steps", "keep_every", "learned", "near")}
print(adopt(STUDY, results, source="book/" + STUDY.stored, command="python -m onelayer sweep walks-qa-seeds", made=made))

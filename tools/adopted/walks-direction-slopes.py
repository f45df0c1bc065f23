"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep walks-direction-slopes``
becomes the stored study ``walks-direction-slopes`` without re-running anything: its one member is the block of the
40 samples the old script trained together, its result the old ``samples`` rows.
Run once from the repository root: ``.venv/bin/python tools/adopted/walks-direction-slopes.py``.
"""

from dataclasses import asdict

from onelayer import store
from onelayer.paths import data_path
from onelayer.studies.runner import adopt
from onelayer.studies.walks.direction_slopes import STUDY

old = store.from_jsonable(store.read_json(data_path(STUDY.stored), kind="walks-direction-slopes"))
settings = asdict(STUDY.settings)
assert old["meta"]["settings"] == {k: settings[k] for k in ("p", "seeds", "steps", "n_records", "from_record")}
assert [r["seed"] for r in old["samples"]] == list(range(STUDY.settings.seeds))
(member,) = STUDY.member_list(STUDY.settings)
print(adopt(STUDY, {member.key: {"samples": old["samples"]}}, source="book/" + STUDY.stored,
            command="python -m onelayer sweep walks-direction-slopes", made=old["meta"]))

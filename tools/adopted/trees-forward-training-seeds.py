"""One-off conversion (issue 31, item 4): the pre-runner file of ``python -m onelayer sweep
trees-forward-training-seeds`` becomes the stored study ``trees-forward-training-seeds``, member for member, without
re-running anything.

The old file held ``two_head`` (all 20 seeds trained together, the study's member ``two-head``) and
``learned_values`` (one block per initialisation scale, the members ``learned-values-init<scale>``); their wall
``seconds`` and the file's ``seconds`` and ``command`` go into the provenance's ``made``. Run once from the repository
root: ``.venv/bin/python tools/adopted/trees-forward-training-seeds.py``.
"""

import json

from onelayer.paths import data_path
from onelayer.studies import runner
from onelayer.studies.trees.forward_seeded_training import STUDY, _lv_key

old = json.loads(data_path(STUDY.stored).read_text())
s = STUDY.settings
assert old["kind"] == "trees-forward-training-seeds" and old["seeds"] == list(range(s.seeds))
two = dict(old["two_head"])
seconds = {"two-head": two.pop("seconds")}
assert two["steps"] == s.two_head_steps
results = {"two-head": two}
for scale, block in zip(s.lv_scales, old["learned_values"], strict=True):
    block = dict(block)
    assert block["init_scale"] == scale and block["steps"][-1] == s.lv_steps
    seconds[_lv_key(scale)] = block.pop("seconds")
    results[_lv_key(scale)] = block
print(runner.adopt(STUDY, results, source="book/trees/data/forward_training_seeds.json", command=old["command"],
                   made={"command": old["command"], "seconds": old["seconds"], "member_seconds": seconds}))

"""Put each claim's anchor, the MyST label ``(claim-<slug>)=``, before the heading of the chapter section that measures
it (``onelayer.claims.anchor``; the Findings page and the parts' grids link there). Run once per new claim:
``python tools/claim_labels.py``; it only inserts labels that are missing and reports any claim whose section it
cannot find. ``SECTIONS`` maps a claim id to the start of its section's heading."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from onelayer import claims  # noqa: E402

SECTIONS = {
    "selector:softmax-lambda-z-is-within-2": "## Checking the bound",
    "walks/ring:the-transition-matrix-pi-and-every": "## The walk and its transition matrix",
    "walks/ring:the-bayes-rule-predicts-the-next": "## The Bayes rule",
    "walks/theorem31:lemmas-c-1-c-3-v": "## Step 1:",
    "walks/theorem31:lemma-c-5-and-item-1": "## Step 2:",
    "walks/theorem31:theorem-3-1-item-3-v": "## Where does $V$ point?",
    "walks/theorem31:lemma-c-7-v-beta-pi": "### The direction depends on the loss",
    "walks/theorem31:theorem-3-1-needs-n-c": "## The edge of the theorem",
    "walks/theorem31:theorem-3-1-needs-k-4": "## The edge of the theorem",
    "walks/theorem41:theorem-4-1-for-p-1": "## The invariants, checked exactly",
    "walks/theorem41:figures-4-and-5-together-zero": "## Which reconstructed choices decide",
    "walks/random_init:figure-6-small-random-init-p": "## The study:",
    "walks/random_init:figure-13-the-authors-table-p": "## Figure 13:",
    "walks/random_init:figure-11-trained-on-p-1": "## Figures 11 and 12:",
    "walks/qa:the-two-task-2-questions-have": "## The token averages",
    "walks/qa:task-1-is-learned-to-about": "## Over many seeds",
    "walks/qa:task-2-stays-at-about-50": "## Over many seeds",
    "walks/qa:with-a-hidden-relu-layer-task": "## Figure 10:",
    "walks/qa:with-a-bias-term-task-1": "## A bias term",
    "walks/variations:a-residual-connection-changes-nothing": "## A residual connection",
    "walks/variations:1-sqrt-d-logit-scaling-gives": "## The $1/\\sqrt{d}$ scaling",
    "walks/variations:with-a-parent-at-lag-2": "## A parent at lag 2",
    "walks/variations:without-positions-no-one-layer-transformer": "## No positional embedding",
    "walks/variations:the-mechanism-needs-a-uniform-stationary": "## A Markov chain that is not a ring",
    "walks/variations:separate-w-q-w-k-from": "## Two more experiments",
    "walks/variations:a-linear-autoregressive-model-f-v": "## Two more experiments",
    "walks/lab:the-mean-over-walks-with-step": "## The default setting",
    "trees/backward_data:the-backward-chain-of-thought-encodes": "## The worked example",
    "trees/backward_construction:lemma-1-for-linearly-independent-embeddings": "## Lemma 1 for non-orthogonal",
    "trees/backward_construction:theorem-1-the-attention-of-lambda": "## The attention at every step",
    "trees/backward_construction:theorem-1-the-loss-of-lambda": "## Loss and accuracy against the scale",
    "trees/backward_construction:theorem-1-as-lambda-grows-greedy": "## Deeper than anything else",
    "trees/backward_training:from-b-0-h-a-t": "## Mini-batch SGD",
    "trees/backward_training:theorem-3-the-diagonal-of-h": "### Over 20 seeds",
    "trees/backward_training:theorem-3-proof-outline-phase-i": "## Phases",
    "trees/backward_training:after-the-transition-the-loss-decays": "## The loss all the way down",
    "trees/backward_generalization:theorem-4-trained-on-perfect-binary": "### Over 20 seeds",
    "trees/backward_generalization:the-test-loss-is-at-most": "### Over 20 seeds",
    "trees/backward_generalization:with-linearly-independent-non-orthogonal-embeddings": "## Non-orthogonal embeddings",
    "trees/backward_generalization:the-backward-model-reaches-past-the": "## Beyond the assumptions",
    "trees/backward_generalization:the-backward-model-reaches-past-the-2": "## Beyond the assumptions",
    "trees/forward_construction:theorem-2-the-constructed-two-heads": "## The margins, measured",
    "trees/forward_construction:as-the-scale-grows-the-construction": "## Accuracy and loss as the scale grows",
    "trees/forward_construction:one-full-head-with-a-learnable": "## One full head can also represent",
    "trees/forward_construction:our-constructions-need-the-turning-token": "## Without the turning token",
    "trees/forward_training:theorem-5-from-zero-gradient-descent": "## Over 20 seeds",
    "trees/forward_training:the-two-heads-specialize-without-being": "## Which head took which role",
    "trees/forward_training:from-zero-the-two-heads-with": "## Learned value maps",
    "trees/forward_training:with-learned-value-maps-the-heads": "## Learned value maps",
    "trees/forward_training:the-learning-rate-and-the-loss": "## The learning rate only rescales time",
    "trees/forward_cot:theorem-8-trained-on-perfect-binary": "## Theorem 8: any tree",
    "trees/forward_heads:two-heads-are-needed-the-authors": "## The edge flag decides",
    "trees/forward_cot:without-the-chain-of-thought-one": "## Without the chain of thought",
    "trees/forward_robustness:several-full-heads-fit-the-training": "### Twenty seeds at depths 2 and 3",
    "trees/forward_robustness:the-single-head-outcome-does-not": "## Layout sensitivity",
    "trees/forward_robustness:the-forward-model-still-solves-large": "## Beyond the assumptions",
    "trees/lab:the-sum-over-the-2m-1": "## What to try",
    "scaling:theorem-3-1-along-m-omega": "## Walks: a constant number of steps",
    "scaling:the-step-2-log-odds-of": "## Walks: a constant number of steps",
    "scaling:m-n-1-5-is-what": "### Where the $N^{3/2}$ comes from",
    "scaling:trees-backward-task-steps-to-converge": "## Trees: training time against labels and depth",
    "scaling:trees-backward-task-sgd-at-batch": "## Trees: training time against labels and depth",
}


def main() -> int:
    missing = [c.id for c in claims.load() if c.id not in SECTIONS]
    if missing:
        print("no section for:", *missing, sep="\n  ")
        return 1
    by_doc: dict[str, list[str]] = {}
    for claim_id in SECTIONS:
        by_doc.setdefault(claim_id.split(":", 1)[0], []).append(claim_id)
    status = 0
    for doc, ids in by_doc.items():
        path = ROOT / "book" / f"{doc}.ipynb"
        nb = json.loads(path.read_text())
        changed = False
        for claim_id in ids:
            label = f"({claims.anchor(claim_id)})="
            if any(label in "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"):
                continue
            heading = SECTIONS[claim_id]
            for cell in nb["cells"]:
                text = "".join(cell["source"])
                if cell["cell_type"] != "markdown":
                    continue
                m = re.search(r"^(?:\([\w-]+\)=\n)*" + re.escape(heading), text, flags=re.M)
                if m:
                    text = text[:m.start()] + label + "\n" + text[m.start():]
                    cell["source"] = text.splitlines(keepends=True)
                    changed = True
                    break
            else:
                print(f"{doc}: no heading {heading!r} for {claim_id}")
                status = 1
        if changed:
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())

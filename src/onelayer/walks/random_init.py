"""Section 5.2 of the walks paper: small random initialisation, and a sweep over the recipe's unknowns.

The paper's random-initialisation experiment (Figures 6, 11-13): ``K = 6``,
``N = 97``, ``M = 1000``, every entry of ``V`` and ``W`` drawn from
``N(0, sigma^2)`` with ``sigma = 0.01``, step size ``eta = 0.01``,
``epsilon = 0.1``, 1000 training walks, 1000 test walks, 1000 GD steps, and
"each ``x~_i`` normalised to unit length inside the attention". The claimed
outcome: ``p = 0.5`` reaches the optimal accuracy after roughly 400 steps,
while ``p = 1`` does not reach 100 % within 1000 steps.

Three details are not stated, and each is an option here:

* ``normalize``: ``"keys_and_query"``, ``"keys"`` (the query column
  ``x~_N`` left as it is) or ``"none"``;
* ``reduction``: the training loss is the *mean* or the *sum* over the 1000
  walks. The sum is the mean with the step size multiplied by 1000 (plain GD);
* ``lr``: the step size, in case the stated 0.01 belongs to another reduction.

:func:`run_config` runs one setting and returns JSON-able curves (test accuracy,
fraction of Bayes-optimal predictions, KL, attention on the parent and on
``x_{N-2}``), snapshots of ``V``, the final attention profile and, at the
steps of the authors' OpenReview table, the *weighted average token*
``X S`` of one example sequence with its per-coordinate variance over the
training sequences. :func:`sweep` runs the grid; :func:`ordering_table`
reduces it to "which ``p`` is learned first".

The full sweep takes several minutes, so the chapter loads a stored copy::

    OMP_NUM_THREADS=1 .venv/bin/python -m onelayer.walks.random_init --out book/walks/data/random_init_sweep.json

(``--quick`` writes a tiny version in seconds). ``tests/test_walks_random_init.py``
recomputes the first steps of stored runs and compares.

The KL convention is :mod:`onelayer.walks.kl`'s default: negative scores
clipped, ``tau = 1e-6`` added, ``KL(P_true || P_hat)`` averaged over the test
walks.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from ..plots import PALETTE, heatmap, new_figure
from ..validation import check_choice, check_float, check_int, check_int_sequence, check_probability
from ..widgets import slider_app
from . import kl, prediction, ring
from .model import NORMALIZE, REDUCTIONS
from .theorem31 import Experiment, setup_experiment

__all__ = [
    "PAPER",
    "READINGS",
    "TABLE_STEPS",
    "SNAPSHOT_STEPS",
    "AUTHORS_TABLE",
    "RECORD_KEYS",
    "RunConfig",
    "optimal_fraction",
    "walk_records",
    "weighted_token_stats",
    "run_config",
    "sweep",
    "learned_step",
    "ordering_table",
    "table_distance",
    "find_run",
    "save",
    "load",
    "figure_curves",
    "figure_value_snapshots",
    "figure_weighted_token",
    "figure_ordering",
    "sweep_explorer",
    "sweep_widget",
    "main",
]

#: The paper's stated setting of Section 5.2.
PAPER = {"K": 6, "N": 97, "M": 1000, "sigma": 0.01, "lr": 0.01, "epsilon": 0.1, "n_train": 1000, "n_test": 1000,
         "steps": 1000}
#: ``(reduction, lr)`` pairs of the sweep; effective step on the mean loss: 0.01, 0.1, 1, 3, 10, 100.
READINGS = (("mean", 0.01), ("mean", 0.1), ("mean", 1.0), ("mean", 3.0), ("sum", 0.01), ("sum", 0.1))
#: Steps of the authors' weighted-average-token table.
TABLE_STEPS = (100, 300, 500, 700, 900)
#: Steps of the ``V`` snapshots (the paper's Figures 12 and 13).
SNAPSHOT_STEPS = (100, 400, 700, 1000)
#: Order of the quantities in a run's ``"curves"`` entry.
RECORD_KEYS = ("test_accuracy", "optimal_fraction", "kl", "parent_attention", "lag2_attention", "top_attention")

#: The weighted average token reported by the authors in their OpenReview answer (``p = 1``, the run of their
#: Figure 6(c)/(d)): ``step -> (one example sequence, variance of each coordinate over 1000 sequences)``.
AUTHORS_TABLE = {
    100: ((0.1648, 0.1650, 0.1653, 0.1752, 0.1646, 0.1652), (1.50e-5, 1.52e-5, 1.40e-5, 1.53e-5, 1.52e-5, 1.28e-5)),
    300: ((0.1633, 0.1649, 0.1676, 0.1753, 0.1617, 0.1672), (1.91e-5, 2.01e-5, 1.86e-5, 1.97e-5, 2.01e-5, 1.74e-5)),
    500: ((0.1564, 0.1638, 0.1775, 0.1769, 0.1499, 0.1756), (1.12e-4, 1.16e-4, 1.17e-4, 1.17e-4, 1.17e-4, 1.16e-4)),
    700: ((0.1328, 0.1538, 0.2147, 0.1766, 0.1183, 0.2037), (1.22e-3, 1.21e-3, 1.26e-3, 1.25e-3, 1.20e-3, 1.27e-3)),
    900: ((0.0766, 0.1001, 0.3765, 0.1300, 0.0642, 0.2526), (1.28e-2, 1.22e-2, 1.30e-2, 1.29e-2, 1.16e-2, 1.30e-2)),
}


@dataclass(frozen=True)
class RunConfig:
    """One setting of the sweep (the rest is :data:`PAPER`)."""

    p: float
    normalize: str = "keys_and_query"
    reduction: str = "mean"
    lr: float = 0.01
    seed: int = 0

    def __post_init__(self):
        check_probability("p", self.p)
        check_choice("normalize", self.normalize, NORMALIZE)
        check_choice("reduction", self.reduction, REDUCTIONS)
        check_float("lr", self.lr, low=0.0, low_open=True)
        check_int("seed", self.seed, low=0)

    @property
    def effective_lr(self) -> float:
        """The step size on the *mean* loss that gives the same GD trajectory."""
        return self.lr * (PAPER["n_train"] if self.reduction == "sum" else 1)

    def label(self) -> str:
        """Short text label, e.g. ``keys_and_query, mean, lr=0.01``."""
        return f"{self.normalize}, {self.reduction}, lr={self.lr:g}"


def optimal_fraction(pred: torch.Tensor, last: torch.Tensor, Pi, weights=None) -> float:
    """Weighted fraction of predictions that are Bayes-optimal choices, ``Pi[s_{N-1}, y_hat] = max_y Pi[s_{N-1}, y]``.

    For ``p = 1`` this is the accuracy; for ``p = 1/2`` both neighbours of
    ``s_{N-1}`` count. Unlike the test accuracy it has no label noise.
    """
    Pi = torch.as_tensor(np.asarray(Pi, dtype=np.float64))
    rows = Pi[last.long()]
    best = rows.max(dim=1).values
    ok = (rows.gather(1, pred.long()[:, None])[:, 0] >= best - 1e-12).to(torch.float64)
    w = torch.full_like(ok, 1.0 / ok.shape[0]) if weights is None else torch.as_tensor(weights, dtype=torch.float64)
    return float((w * ok).sum())


def walk_records(exp: Experiment, *, kl_method: str = "clip") -> dict:
    """One record ``"stats"``: the :data:`RECORD_KEYS` quantities on the test walks, in that order."""
    m, test = exp.model, exp.test
    Pi = ring.transition_matrix(m.config.K, exp.p)
    truth = kl.walk_truth(test, Pi)
    w = test.weights

    def stats(prm):
        f = m.forward(prm, test)
        S = m.attention(prm, test)
        pred = prediction.predict(f)
        return np.array([
            prediction.accuracy(pred, test.labels, w),
            optimal_fraction(pred, test.last, Pi, w),
            kl.mean_kl(truth, f, w, method=kl_method),
            float((w * S[:, -2]).sum()),
            float((w * S[:, -3]).sum()),
            float((w * S[:, :-1].max(dim=1).values).sum()),
        ])

    return {"stats": stats}


def weighted_token_stats(model, params, data, *, example: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``X S`` of sequence ``example`` and the variance (``ddof = 0``) of each coordinate over all sequences of ``data``."""
    u = model.weighted_token(params, data).numpy()
    example = check_int("example", example, low=0, high=u.shape[0] - 1)
    return u[example].copy(), u.var(axis=0)


def _round(x, digits: int = 10):
    arr = np.asarray(x, dtype=np.float64)
    out = np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[float])(arr) if arr.size else arr
    return out.tolist()


def run_config(cfg: RunConfig, *, steps: int = 1000, record_every: int = 10, table_steps=TABLE_STEPS,
               snapshot_steps=SNAPSHOT_STEPS, K: int = PAPER["K"], N: int = PAPER["N"], M: int = PAPER["M"],
               n_train: int = PAPER["n_train"], n_test: int = PAPER["n_test"], sigma: float = PAPER["sigma"]) -> dict:
    """Train one setting from the Gaussian initialisation and return its JSON-able summary.

    Keys: ``config`` (the :class:`RunConfig` fields), ``steps`` (recorded steps),
    ``curves`` (``name -> list``, see :data:`RECORD_KEYS`), ``V`` (``step -> K x K``
    at ``snapshot_steps``), ``profile`` (final test-mean attention over the ``N``
    positions), ``table`` (``step -> {"example", "variance"}`` of
    :func:`weighted_token_stats` on the training walks at ``table_steps``),
    ``seconds``.
    """
    if not isinstance(cfg, RunConfig):
        raise TypeError("cfg must be a RunConfig")
    steps = check_int("steps", steps, low=1)
    record_every = check_int("record_every", record_every, low=1)
    table_steps = [s for s in check_int_sequence("table_steps", table_steps, low=0) if s <= steps]
    snapshot_steps = [s for s in check_int_sequence("snapshot_steps", snapshot_steps, low=0) if s <= steps]
    start = time.perf_counter()
    exp = setup_experiment(cfg.p, K=K, N=N, M=M, n_train=n_train, n_test=n_test, seed=cfg.seed,
                           normalize=cfg.normalize, reduction=cfg.reduction, epsilon=PAPER["epsilon"])
    m = exp.model
    records = walk_records(exp)
    records["token"] = lambda prm: np.concatenate(weighted_token_stats(m, prm, exp.train))
    wanted = sorted(set(range(0, steps + 1, record_every)) | set(table_steps) | set(snapshot_steps) | {steps})
    hist = m.train(m.init("gaussian", sigma=sigma, seed=cfg.seed), exp.train, steps=steps, lr=cfg.lr,
                   record=records, record_at=wanted, snapshot_at=snapshot_steps)
    on_grid = np.isin(hist.steps, list(range(0, steps + 1, record_every)) + [steps])
    stats = hist["stats"][on_grid]
    profile = (m.attention(hist.params, exp.test) * exp.test.weights[:, None]).sum(0)
    table = {}
    for s in table_steps:
        tok = hist.at("token", s)
        table[str(s)] = {"example": _round(tok[:K]), "variance": _round(tok[K:])}
    return {
        "config": asdict(cfg),
        "steps": hist.steps[on_grid].tolist(),
        "curves": {k: _round(stats[:, i]) for i, k in enumerate(RECORD_KEYS)},
        "V": {str(s): _round(hist.snapshots[s]["V"].numpy()) for s in snapshot_steps},
        "profile": _round(profile.numpy()),
        "table": table,
        "seconds": round(time.perf_counter() - start, 2),
    }


def sweep(*, normalizations=NORMALIZE[::-1], readings=READINGS, ps=(0.5, 1.0), seeds=(0,), steps: int = 1000,
          record_every: int = 10, progress: bool = False, **sizes) -> dict:
    """Run :func:`run_config` for every normalisation x reading x ``p`` x seed.

    ``sizes`` go to :func:`run_config` (``K``, ``N``, ``M``, ``n_train``, ``n_test``, ``sigma``).
    Returns ``{"meta": {...}, "runs": [...]}``.
    """
    runs = []
    for norm in normalizations:
        for reduction, lr in readings:
            for seed in seeds:
                for p in ps:
                    cfg = RunConfig(p=float(p), normalize=norm, reduction=reduction, lr=float(lr), seed=int(seed))
                    runs.append(run_config(cfg, steps=steps, record_every=record_every, **sizes))
                    if progress:
                        print(f"{cfg.label()}, p={p}, seed={seed}: {runs[-1]['seconds']:.1f} s", flush=True)
    meta = {**PAPER, **sizes, "steps": steps, "record_every": record_every, "normalizations": list(normalizations),
            "readings": [list(r) for r in readings], "ps": list(ps), "seeds": list(seeds),
            "kl": "KL(P_true || P_hat), P_hat = (max(f, 0) + 1e-6) / sum, mean over the test walks",
            "torch": torch.__version__}
    return {"meta": meta, "runs": runs}


def find_run(data: dict, *, p: float, normalize: str, reduction: str, lr: float, seed: int = 0) -> dict:
    """The run of a sweep with these settings (``KeyError`` if it is not there)."""
    for r in data["runs"]:
        c = r["config"]
        if (c["p"], c["normalize"], c["reduction"], c["seed"]) == (p, normalize, reduction, seed) and np.isclose(c["lr"], lr):
            return r
    raise KeyError(f"no run with p={p}, normalize={normalize!r}, reduction={reduction!r}, lr={lr}, seed={seed}")


def learned_step(steps, fractions, *, threshold: float = 0.95) -> float:
    """First recorded step from which the optimal-prediction fraction stays ``>= threshold`` (``nan`` if never)."""
    threshold = check_float("threshold", threshold, low=0.0, high=1.0)
    ok = np.asarray(fractions) >= threshold
    steps = np.asarray(steps)
    if ok.size == 0 or not ok[-1]:
        return float("nan")
    bad = np.flatnonzero(~ok)
    return float(steps[0] if bad.size == 0 else steps[bad[-1] + 1])


def ordering_table(data: dict, *, threshold: float = 0.95) -> list[dict]:
    """One row per setting and seed: when ``p = 0.5`` and ``p = 1`` are learned, and which comes first.

    ``T_half`` / ``T_one`` are :func:`learned_step` values (``nan``: not within the
    horizon); ``first`` is ``"p=0.5"``, ``"p=1"``, ``"tie"`` or ``"neither"``;
    ``paper_pattern`` is true when ``p = 0.5`` is learned and ``p = 1`` is not (the
    paper's Figure 6), ``final_*`` are the last optimal fractions and
    ``parent_half`` the final attention on the parent for ``p = 0.5``.
    """
    rows = []
    keyed = {}
    for r in data["runs"]:
        c = r["config"]
        keyed.setdefault((c["normalize"], c["reduction"], c["lr"], c["seed"]), {})[c["p"]] = r
    for (norm, red, lr, seed), by_p in keyed.items():
        if 0.5 not in by_p or 1.0 not in by_p:
            continue
        h, o = by_p[0.5], by_p[1.0]
        Th = learned_step(h["steps"], h["curves"]["optimal_fraction"], threshold=threshold)
        To = learned_step(o["steps"], o["curves"]["optimal_fraction"], threshold=threshold)
        if np.isnan(Th) and np.isnan(To):
            first = "neither"
        elif np.isnan(To) or (not np.isnan(Th) and Th < To):
            first = "p=0.5"
        elif np.isnan(Th) or To < Th:
            first = "p=1"
        else:
            first = "tie"
        rows.append({
            "normalize": norm, "reduction": red, "lr": lr, "effective_lr": lr * (data["meta"]["n_train"] if red == "sum" else 1),
            "seed": seed, "T_half": Th, "T_one": To, "first": first,
            "paper_pattern": bool(not np.isnan(Th) and np.isnan(To)),
            "final_half": h["curves"]["optimal_fraction"][-1], "final_one": o["curves"]["optimal_fraction"][-1],
            "parent_half": h["curves"]["parent_attention"][-1], "lag2_half": h["curves"]["lag2_attention"][-1],
        })
    return rows


def table_distance(run: dict) -> float:
    """How far a ``p = 1`` run's weighted-average-token variances are from the authors' table.

    The mean over the table steps of ``|log10(mean variance ours / mean variance authors)|``
    (0: same size at every step; 1: a factor 10 off on average). ``nan`` if a step is missing.
    """
    gaps = []
    for step, (_, var) in AUTHORS_TABLE.items():
        if str(step) not in run["table"]:
            return float("nan")
        ours = float(np.mean(run["table"][str(step)]["variance"]))
        gaps.append(abs(np.log10(max(ours, 1e-300) / float(np.mean(var)))))
    return float(np.mean(gaps))


def save(data: dict, path) -> Path:
    """Write a sweep as JSON (creating the directory)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, separators=(",", ":")))
    return path


def load(path) -> dict:
    """Read a sweep written by :func:`save`."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; create it with: python -m onelayer.walks.random_init --out {path}")
    return json.loads(path.read_text())


# -- figures ----------------------------------------------------------------------------------------------------------

def figure_curves(runs: dict, *, title: str | None = None):
    """Figure 6 layout for named runs of both ``p``: (a) optimal-prediction fraction, (b) KL, (c) attention on
    ``x_{N-1}`` (solid) and ``x_{N-2}`` (dashed). ``runs`` maps a label to a :func:`run_config` result."""
    fig, axes = new_figure(3, width=11.0, height=3.3)
    for i, (label, r) in enumerate(runs.items()):
        c = PALETTE[i % len(PALETTE)]
        t = np.asarray(r["steps"])
        axes[0].plot(t, r["curves"]["optimal_fraction"], color=c, label=label)
        axes[1].plot(t, r["curves"]["kl"], color=c, label=label)
        axes[2].plot(t, r["curves"]["parent_attention"], color=c, label=label)
        axes[2].plot(t, r["curves"]["lag2_attention"], color=c, linestyle="--")
    axes[0].set_ylabel("fraction of Bayes-optimal predictions")
    axes[0].set_ylim(-0.02, 1.02)
    axes[0].set_title("(a) optimal predictions (test)", fontsize=9)
    axes[1].set_ylabel("mean KL(true || normalised output)")
    axes[1].set_yscale("log")
    axes[1].set_title("(b) KL divergence (test)", fontsize=9)
    axes[2].set_ylabel("mean attention")
    axes[2].set_ylim(-0.02, 1.02)
    axes[2].set_title("(c) on x_{N-1} (solid), x_{N-2} (dashed)", fontsize=9)
    for ax in axes:
        ax.set_xlabel("GD step")
    axes[0].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def figure_value_snapshots(run: dict, *, profile: bool = True):
    """``V`` at the stored snapshot steps (the paper's Figure 12), and the final attention profile (Figure 11)."""
    steps = sorted(run["V"], key=int)
    n = len(steps) + (1 if profile else 0)
    fig, axes = new_figure(n, width=min(3.0 * n, 13.0), height=3.0)
    axes = np.atleast_1d(axes)
    for ax, s in zip(axes, steps):
        heatmap(ax, np.asarray(run["V"][s]), title=f"V at step {s}", fmt="{:.1f}", colorbar=False,
                xlabel="input node", ylabel="output node")
    if profile:
        prof = np.asarray(run["profile"])
        axes[-1].bar(np.arange(1, prof.size + 1), prof, width=1.0, color=PALETTE[0])
        axes[-1].set_ylim(0, 1.05)
        axes[-1].set_xlabel("position j")
        axes[-1].set_title("final mean attention", fontsize=9)
    return fig


def figure_weighted_token(run: dict, *, authors: bool = True):
    """The weighted average token of the example sequence (bars) at each table step, with the authors' values
    (dots) and the per-coordinate standard deviation over the sequences (error bars)."""
    steps = sorted(run["table"], key=int)
    fig, axes = new_figure(len(steps), width=min(2.6 * len(steps), 13.0), height=2.8, sharey=True)
    axes = np.atleast_1d(axes)
    for ax, s in zip(axes, steps):
        ex = np.asarray(run["table"][s]["example"])
        sd = np.sqrt(np.asarray(run["table"][s]["variance"]))
        k = np.arange(1, ex.size + 1)
        ax.bar(k, ex, yerr=sd, color=PALETTE[0], alpha=0.8, label="ours", capsize=2)
        if authors and int(s) in AUTHORS_TABLE:
            ax.plot(k, AUTHORS_TABLE[int(s)][0], "o", color=PALETTE[1], label="authors")
        ax.axhline(1 / ex.size, color="0.5", linestyle=":", linewidth=1)
        ax.set_title(f"step {s}", fontsize=9)
        ax.set_xlabel("coordinate")
    axes[0].set_ylabel("X S (example sequence)")
    axes[0].legend(fontsize=7)
    return fig


def figure_ordering(rows: list[dict]):
    """Heat-map of the sweep: for each normalisation (rows) and reading (columns), the learned steps
    ``T(p=0.5) / T(p=1)`` of the seeds, coloured by (#seeds with ``p = 1`` first - #seeds with ``p = 0.5`` first) / #seeds."""
    norms = list(dict.fromkeys(r["normalize"] for r in rows))
    reads = list(dict.fromkeys((r["reduction"], r["lr"]) for r in rows))
    grid = np.full((len(norms), len(reads)), np.nan)
    text = [["" for _ in reads] for _ in norms]

    def fmt(v):
        return "-" if np.isnan(v) else f"{v:.0f}"

    for i, n in enumerate(norms):
        for j, rd in enumerate(reads):
            cell = [r for r in rows if r["normalize"] == n and (r["reduction"], r["lr"]) == rd]
            if not cell:
                continue
            grid[i, j] = (sum(r["first"] == "p=1" for r in cell) - sum(r["first"] == "p=0.5" for r in cell)) / len(cell)
            text[i][j] = "\n".join(f"{fmt(r['T_half'])}/{fmt(r['T_one'])}" for r in cell)
    fig, ax = new_figure(1, width=8.5, height=3.4)
    ax.imshow(grid, cmap="coolwarm", vmin=-1, vmax=1, aspect="auto")
    ax.grid(False)
    for i in range(len(norms)):
        for j in range(len(reads)):
            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(reads)), [f"{r}, lr={lr:g}" for r, lr in reads], fontsize=8)
    ax.set_yticks(range(len(norms)), norms, fontsize=8)
    ax.set_title("steps to learn p=0.5 / p=1 for each seed ('-': not within the run)\n"
                 "red: p=1 learned first, blue: p=0.5 first, white: neither (or as often one as the other)", fontsize=8)
    return fig


def sweep_explorer(data: dict, normalize: str = "keys_and_query", reading: str = "mean, lr=0.01", seed: int = 0):
    """Widget callback: the stored curves of one setting, both ``p`` (:func:`figure_curves`)."""
    red, lr_text = [s.strip() for s in reading.split(",")]
    lr = float(lr_text.split("=")[1])
    runs = {f"p = {p:g}": find_run(data, p=p, normalize=normalize, reduction=red, lr=lr, seed=seed) for p in data["meta"]["ps"]}
    return figure_curves(runs, title=f"{normalize}, {reading}, seed {seed}")


def sweep_widget(data: dict):
    """Menus for the normalisation, the reading and the seed of a stored sweep, redrawing :func:`sweep_explorer`."""
    import ipywidgets as widgets

    meta = data["meta"]
    readings = [f"{r}, lr={lr:g}" for r, lr in meta["readings"]]
    controls = {
        "normalize": widgets.Dropdown(options=meta["normalizations"], value=meta["normalizations"][0], description="normalize"),
        "reading": widgets.Dropdown(options=readings, value=readings[0], description="loss, step"),
        "seed": widgets.Dropdown(options=meta["seeds"], value=meta["seeds"][0], description="seed"),
    }
    return slider_app(lambda **kw: sweep_explorer(data, **kw), controls)


def main(argv=None) -> int:
    """Command line: run the sweep and write it as JSON (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.walks.random_init", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="output JSON file")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="seeds (default 0 1 2)")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests (seconds)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.quick:
        data = sweep(normalizations=("keys_and_query",), readings=(("mean", 0.01), ("sum", 0.01)), seeds=args.seeds[:1],
                     steps=20, record_every=5, N=13, M=100, n_train=50, n_test=50, table_steps=(5, 10),
                     snapshot_steps=(10, 20), progress=True)
    else:
        data = sweep(seeds=tuple(args.seeds), progress=True)
    save(data, args.out)
    print(f"wrote {args.out} ({len(data['runs'])} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

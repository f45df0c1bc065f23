"""The one runner of every study: members in parallel (local processes or a Dask cluster), resumable, with provenance.

A *study* is one module with

* its settings at the top, a frozen dataclass (``Settings``), and a smaller one for ``--quick``;
* its *members*: independent cells (a seed × a setting), each a :class:`Member` with a stable string key;
* ``run_member(settings, member) -> dict``: pure, every seed derived from the member (its key or fields), no state
  carried from one member to the next;
* ``summarize(settings, records) -> dict``: the summary it stores, from the member records sorted by key;

and one :class:`Study` object named ``STUDY`` that ties them together (name, stored path relative to the data
directory, kind). :mod:`onelayer.studies.registry` lists the study modules.

:func:`run` maps the members that are not done yet through joblib (loky worker processes, one BLAS/OpenMP thread
each) or, with ``dask=ADDRESS`` or ``dask="local"``, through Dask distributed (joblib's dask backend). Each member's
record is written to ``<stored stem>.members/<key>.json`` beside the stored file as soon as it arrives (written to a
temporary file, fsynced, renamed), so a re-run skips finished members; when every member is there, the stored file is
assembled from those records sorted by key: its bytes, except the ``provenance`` field and the members' measured
fields (below), depend neither on the order in which members finished nor on the engine. :func:`verify` recomputes a
seeded sample of the stored members; :func:`verify_cheapest` only the cheapest one (``study verify --all --cheapest``).

**Measured fields.** A study of cost (how long a GD step takes against the size) stores wall-clock readings, which are
a measurement of the machine and not a function of the member. It names them in ``Study(measured=("seconds", ...))``:
``run_member`` returns them with the rest of its result, and the runner moves them out of the member's ``result`` into
its own ``measured`` field (``{"key", "fields", "result", "measured"}``). They are stored with the member (a re-run
keeps the readings of the run that computed it), left out of the byte-identity comparison across engines
(:func:`stored_without_provenance` drops them with the provenance) and never compared by :func:`verify`, which prints
the stored and the fresh reading side by side instead.

Same bits on every engine: each member runs through :func:`compute`, which seeds the global generators from the
member key (so even a study that used them would not carry state between members) and reports the numerics it ran
with (MKL's CNR branch, see :mod:`onelayer.blas`, and the thread counts); the runner refuses a result computed under
other numerics than its own. loky workers inherit the parent's environment when they start, so ``MKL_CBWR`` and
``OMP_NUM_THREADS=1`` are in place before ``torch`` loads there; so do the workers of a Dask ``LocalCluster``. Workers
of a remote Dask cluster must be started with the same variables, one thread each, and without a nanny (a nanny
would start its worker with distributed's ``pre-spawn-environ``, whose ``MALLOC_TRIM_THRESHOLD_=65536`` slows small
torch loops about 1.5 times; :func:`worker_environment` is what a LocalCluster's nannies get instead)::

    dask scheduler                                          # prints its address, tcp://HOST:8786
    export MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
    dask worker tcp://HOST:8786 --nthreads 1 --no-nanny &  # one per core

Dask's nannies start every worker with ``PYTHONHASHSEED=6640`` when it is unset or 0, so a member must not depend on
the order of a set of strings (none should: a member is a pure function of its settings and key).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import hashlib
import json
import math
import os
import platform
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import blas, store
from ..paths import REPOSITORY_DATA, data_path

__all__ = ["Member", "Study", "StudyError", "RunReport", "compute", "settings_hash", "members_dir", "run",
           "verify", "verify_cheapest", "recorded_seconds", "differences", "provenance", "stored_without_provenance", "numerics", "worker_environment", "adopt"]

#: A member key: letters, digits and ``._=+,-``; it names the member's file, so no ``/`` or ``:``.
KEY_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._=+,-]{0,119}")
#: The thread variables every worker gets (one BLAS/OpenMP thread each).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


class StudyError(RuntimeError):
    """A study cannot run or be verified as asked (settings changed under stored members, other numerics, ...)."""


@dataclass(frozen=True)
class Member:
    """One independent cell of a study: ``key`` (stable, unique, sorts the stored file), ``fields`` (plain values the
    member's computation reads, e.g. ``{"seed": 3, "K": 6}``) and ``cost``, a hint of its relative cost (``verify``
    always recomputes the cheapest member)."""

    key: str
    fields: Mapping[str, Any]
    cost: float = 1.0

    def __post_init__(self):
        if not isinstance(self.key, str) or not KEY_PATTERN.fullmatch(self.key):
            raise ValueError(f"key must be 1-120 characters of letters, digits and ._=+,- (starting with a letter or "
                             f"digit), got {self.key!r}")
        if not isinstance(self.fields, Mapping):
            raise TypeError(f"fields must be a mapping, not {type(self.fields).__name__}")
        if isinstance(self.cost, bool) or not isinstance(self.cost, (int, float)) or not self.cost > 0:
            raise ValueError(f"cost must be a positive number, got {self.cost!r}")


@dataclass(frozen=True)
class Study:
    """A study: what :func:`run`, :func:`verify` and ``python -m onelayer study`` need of a study module.

    ``stored`` is the path of its file relative to the data directory (:mod:`onelayer.paths`); ``kind`` is the
    file's kind (:mod:`onelayer.store`); ``settings`` and ``quick`` are instances of the module's frozen settings
    dataclass (full run and ``--quick``); ``members(settings)`` lists the members; ``rtol``/``atol`` are the
    tolerances of :func:`verify` for floats; ``measured`` names the keys of ``run_member``'s result that are
    wall-clock measurements (see "Measured fields" above): stored in each member's ``measured`` (a member may have
    none of them), never compared.
    """

    name: str
    stored: str
    kind: str
    settings: Any
    quick: Any
    members: Callable[[Any], Sequence[Member]]
    run_member: Callable[[Any, Member], Mapping]
    summarize: Callable[[Any, list[dict]], Mapping]
    description: str = ""
    rtol: float = 1e-9
    atol: float = 0.0
    measured: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.name, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", self.name) or self.name == "verify":
            raise ValueError(f"name must be lower-case letters, digits and '-' (not 'verify'), got {self.name!r}")
        data_path(self.stored)  # raises for a path outside the data directory
        if not str(self.stored).endswith(".json"):
            raise ValueError(f"stored must name a .json file, got {self.stored!r}")
        for label in ("settings", "quick"):
            value = getattr(self, label)
            if not dataclasses.is_dataclass(value) or isinstance(value, type) or not value.__dataclass_params__.frozen:
                raise TypeError(f"{label} must be an instance of a frozen dataclass, got {value!r:.80}")
        for label in ("members", "run_member", "summarize"):
            if not callable(getattr(self, label)):
                raise TypeError(f"{label} must be callable")
        for label in ("rtol", "atol"):
            value = getattr(self, label)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"{label} must be a number >= 0, got {value!r}")
        if (not isinstance(self.measured, tuple) or not all(isinstance(k, str) and k for k in self.measured)
                or len(set(self.measured)) != len(self.measured)):
            raise TypeError(f"measured must be a tuple of distinct non-empty key names, got {self.measured!r}")

    def settings_for(self, quick: bool):
        return self.quick if quick else self.settings

    def member_list(self, settings) -> list[Member]:
        """The members for ``settings``, checked (Member instances, unique keys), sorted by key."""
        members = list(self.members(settings))
        if not members or not all(isinstance(m, Member) for m in members):
            raise TypeError(f"study {self.name}: members() must return a non-empty list of Member")
        keys = [m.key for m in members]
        if len(set(keys)) != len(keys):
            raise ValueError(f"study {self.name}: member keys repeat: {sorted({k for k in keys if keys.count(k) > 1})}")
        return sorted(members, key=lambda m: m.key)


# --- one member ----------------------------------------------------------------------------------------------------

def member_seed(study: str, key: str) -> int:
    """A 63-bit seed from the study name and a member key (for the global generators; studies seed their own)."""
    return int.from_bytes(hashlib.sha256(f"{study}\0{key}".encode()).digest()[:8], "big") >> 1


def numerics() -> dict:
    """What decides the last bits of this process's results: MKL's branch (``None`` without MKL) and the threads."""
    import torch

    return {"blas": blas.branch(), "torch_threads": torch.get_num_threads(),
            "omp_threads": os.environ.get("OMP_NUM_THREADS", "")}


def _record(study: Study, member: Member, result: Mapping) -> dict:
    """The stored record of ``member`` (JSON values): ``key``, ``fields``, ``result`` and, for a study with measured
    fields, ``measured`` (those of its keys that ``result`` has, moved out of it; ``{}`` for none)."""
    if not isinstance(result, Mapping):
        raise TypeError(f"study {study.name}: run_member must return a dict, got {type(result).__name__} "
                        f"for member {member.key}")
    result = dict(result)
    measured = {k: result.pop(k) for k in study.measured if k in result}
    record = {"key": member.key, "fields": store.to_jsonable(dict(member.fields)), "result": store.to_jsonable(result)}
    if study.measured:
        record["measured"] = store.to_jsonable(measured)
    return json.loads(json.dumps(record, allow_nan=False))


def compute(study: Study, settings, member: Member) -> tuple[str, dict, dict, float]:
    """Run one member (in a worker or here): ``(key, record, numerics, seconds)``; the record is as stored (JSON
    values), ``seconds`` the member's wall time (kept in the provenance, never in the record)."""
    import numpy as np
    import torch

    seed = member_seed(study.name, member.key)
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)
    start = time.perf_counter()
    result = study.run_member(settings, member)
    seconds = time.perf_counter() - start
    return member.key, _record(study, member, result), numerics(), seconds


# --- files ---------------------------------------------------------------------------------------------------------

def settings_hash(study: Study, settings) -> str:
    """16 hex digits of SHA-256 over the study name and its settings (as stored): what a member file was made with."""
    text = json.dumps({"study": study.name, "settings": store.to_jsonable(dataclasses.asdict(settings))},
                      sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def stored_path(study: Study, quick: bool) -> Path:
    """The stored file: ``stored`` in the data directory; a quick run's beside it as ``NAME.quick.json``."""
    path = data_path(study.stored)
    return path.with_name(path.stem + ".quick.json") if quick else path


def members_dir(out: Path) -> Path:
    """The folder of member records beside the stored file ``out``: ``<stem>.members/``."""
    return out.with_name(out.stem + ".members")


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder: fsynced, then renamed over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    with contextlib.suppress(OSError):  # the rename itself, where directories can be fsynced
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _member_kind(study: Study) -> str:
    return f"{study.kind} member"


def _write_member(folder: Path, study: Study, digest: str, record: dict) -> None:
    body = {"schema_version": store.SCHEMA_VERSION, "kind": _member_kind(study), "settings_hash": digest, **record}
    _write_atomically(folder / f"{record['key']}.json", json.dumps(body, indent=1, allow_nan=False) + "\n")


def _read_members(folder: Path, study: Study, digest: str,
                  keys: set[str]) -> tuple[dict[str, dict], list[str], dict[str, float]]:
    """Records in ``folder`` for ``keys``: ``({key: record}, [files made with other settings], {key: wall seconds})``."""
    done, stale, walls = {}, [], {}
    if not folder.is_dir():
        return done, stale, walls
    for path in sorted(folder.glob("*.json")):
        if path.stem not in keys:
            continue
        content = store.read_json(path, kind=_member_kind(study))
        if content.get("settings_hash") != digest:
            stale.append(path.name)
            continue
        done[path.stem] = {k: content[k] for k in ("key", "fields", "result", "measured") if k in content}
        if isinstance(content.get("seconds"), (int, float)):
            walls[path.stem] = float(content["seconds"])
    return done, stale, walls


def stored_without_provenance(path: str | os.PathLike) -> bytes:
    """The bytes of a stored study without its ``provenance`` field and its members' ``measured`` fields (as
    :func:`run` writes the rest): what must be the same on every engine."""
    record = json.loads(Path(path).read_text())
    record.pop("provenance", None)
    for member in record.get("members", ()):
        member.pop("measured", None)
    return (json.dumps(record, indent=1, allow_nan=False) + "\n").encode()


# --- provenance ----------------------------------------------------------------------------------------------------

def _git(*args: str) -> str | None:
    root = REPOSITORY_DATA.parent
    if shutil.which("git") is None or not (root / ".git").exists():
        return None
    try:
        res = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def provenance(*, argv: Sequence[str] | None, jobs: int, engine: str, seconds: float, computed: int, reused: int,
               total: int, quick: bool, ran_with: Mapping, member_seconds: Mapping[str, float] | None = None) -> dict:
    """Where a stored study comes from (kept in its own field: results compare byte for byte without it).
    ``ran_with``: the :func:`numerics` every member was computed with (the runner checks each worker's);
    ``member_seconds``: each member's wall seconds where this run computed it (``verify --cheapest`` selects by them)."""
    import numpy
    import torch

    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    command = "python -m onelayer " + shlex.join(argv) if argv is not None else shlex.join(sys.argv)
    return {
        "command": command,
        "commit": commit or "unknown",
        "dirty": (bool(status) if status is not None else "unknown"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "cpu": _cpu_model(),
        "blas": ran_with["blas"],
        "mkl_cbwr": os.environ.get(blas.ENV, ""),
        "threads": {"torch": ran_with["torch_threads"], "OMP_NUM_THREADS": ran_with["omp_threads"]},
        "jobs": jobs,
        "engine": engine,
        "quick": quick,
        "wall_seconds": round(seconds, 3),
        "members": {"total": total, "computed": computed, "reused": reused},
        "member_seconds": {k: round(v, 3) for k, v in sorted((member_seconds or {}).items())},
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


# --- engines -------------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _worker_environment() -> Iterator[None]:
    """One BLAS/OpenMP thread and MKL's branch in this process's environment while workers start (they inherit it);
    one torch thread for members computed here. Restored afterwards."""
    import torch

    saved = {v: os.environ.get(v) for v in (*THREAD_VARIABLES, blas.ENV)}
    threads = torch.get_num_threads()
    try:
        for v in THREAD_VARIABLES:
            os.environ[v] = "1"
        blas.request()
        torch.set_num_threads(1)
        yield
    finally:
        torch.set_num_threads(threads)
        for v, value in saved.items():
            if value is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = value


def _in_process(study, settings, todo):
    for member in todo:
        yield compute(study, settings, member)


def _joblib(study, settings, todo, jobs):
    import joblib

    with joblib.parallel_config(backend="loky", inner_max_num_threads=1):
        tasks = (joblib.delayed(compute)(study, settings, m) for m in todo)
        yield from joblib.Parallel(n_jobs=jobs, batch_size=1, return_as="generator_unordered")(tasks)


def worker_environment() -> dict[str, str]:
    """The variables a Dask worker must have before it starts (``distributed.nanny.pre-spawn-environ``): one BLAS/OpenMP
    thread, this process's ``MKL_CBWR``; and no ``MALLOC_TRIM_THRESHOLD_=65536``, distributed's default, with which
    glibc gives memory back after nearly every small torch tensor (measured: a member's GD loop 1.5 times slower)."""
    env = {v: "1" for v in THREAD_VARIABLES}
    if os.environ.get(blas.ENV):
        env[blas.ENV] = os.environ[blas.ENV]
    return env


@contextlib.contextmanager
def _restored_environ() -> Iterator[None]:
    """Give back this process's environment as it was: a LocalCluster's nannies, which run here, write their
    workers' variables into it (distributed's ``Nanny`` updates ``os.environ`` before it spawns a worker)."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for key in set(os.environ) - set(saved):
            del os.environ[key]
        os.environ.update(saved)


@contextlib.contextmanager
def _dask_client(address: str, jobs: int):
    """A ``distributed.Client`` on the scheduler at ``address``, or, for ``address == "local"``, on a LocalCluster of
    ``jobs`` worker processes (loopback, one thread each, no dashboard, :func:`worker_environment`)."""
    import dask.config
    from distributed import Client, LocalCluster

    if address == "local":
        with _restored_environ(), dask.config.set({"distributed.nanny.pre-spawn-environ": worker_environment()}), \
                LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                             dashboard_address=None) as cluster, Client(cluster) as client:
            yield client
    else:
        with Client(address) as client:
            yield client


def _check_cluster_imports(client, study: Study) -> None:
    """Ask the scheduler and every worker to import the study's modules: joblib's dask backend waits for ever when
    the scheduler cannot unpickle a task, so a cluster started from another checkout is refused here, by name."""
    import importlib

    modules = sorted({f.__module__ for f in (study.members, study.run_member, study.summarize)} | {__name__})
    probe = lambda names: [importlib.import_module(n).__name__ for n in names]  # noqa: E731 (a lambda: sent by value)
    try:
        client.run_on_scheduler(probe, modules)
        client.run(probe, modules)
    except Exception as exc:
        raise StudyError(f"the Dask cluster at {client.scheduler.address} cannot import {', '.join(modules)} "
                         f"({type(exc).__name__}: {exc}); start its scheduler and workers from a make setup of this "
                         f"commit (see onelayer.studies.runner)") from exc


def _dask(study, settings, todo, client):
    import joblib

    with joblib.parallel_config(backend="dask", wait_for_workers_timeout=60):
        tasks = (joblib.delayed(compute)(study, settings, m) for m in todo)
        yield from joblib.Parallel(n_jobs=-1, batch_size=1, return_as="generator_unordered")(tasks)


def _progress(total: int, initial: int, name: str):
    from tqdm.auto import tqdm

    quiet = (os.environ.get("TQDM_DISABLE", "").strip().lower() in ("1", "true", "yes")
             or bool(os.environ.get("CI", "").strip()) or not sys.stderr.isatty())
    return tqdm(total=total, initial=initial, desc=name, unit="member", disable=quiet, file=sys.stderr,
                dynamic_ncols=True)


# --- run -----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunReport:
    """What :func:`run` did: the stored file (``None`` while members are missing), members computed now, reused from
    an earlier run, and in all, and the wall seconds."""

    path: Path | None
    members_dir: Path
    computed: int
    reused: int
    total: int
    missing: int
    seconds: float


def _check_jobs(jobs) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    return jobs


def run(study: Study, *, jobs: int = 1, quick: bool = False, only: Sequence[str] = (), dask: str | None = None,
        out: str | os.PathLike | None = None, restart: bool = False, argv: Sequence[str] | None = None) -> RunReport:
    """Run the members of ``study`` that are not done yet; assemble the stored file once all are done.

    ``jobs``: worker processes (1: in this process); ``dask``: a scheduler address or ``"local"`` (a LocalCluster of
    ``jobs`` worker processes); ``only``: run only the members whose key starts with one of these prefixes; ``out``:
    the stored file (default: the study's file in the data directory, ``NAME.quick.json`` beside it with ``quick``);
    ``restart``: delete the member records first. Member records made with other settings are refused
    (:class:`StudyError` naming them), unless ``restart``.
    """
    if not isinstance(study, Study):
        raise TypeError(f"study must be a Study, not {type(study).__name__}")
    jobs = _check_jobs(jobs)
    if dask is not None and (not isinstance(dask, str) or not dask.strip()):
        raise ValueError(f"dask must be a scheduler address or 'local', got {dask!r}")
    if isinstance(only, str) or not all(isinstance(p, str) and p for p in only):
        raise TypeError(f"only must be a list of non-empty key prefixes, got {only!r}")
    settings = study.settings_for(quick)
    members = study.member_list(settings)
    selected = [m for m in members if not only or any(m.key.startswith(p) for p in only)]
    if not selected:
        raise ValueError(f"only={list(only)!r} selects none of the {len(members)} members of {study.name} "
                         f"(keys like {members[0].key!r})")
    path = Path(out) if out is not None else stored_path(study, quick)
    folder = members_dir(path)
    if restart and folder.exists():
        shutil.rmtree(folder)
    digest = settings_hash(study, settings)
    done, stale, member_walls = _read_members(folder, study, digest, {m.key for m in members})
    if stale:
        raise StudyError(f"{folder} holds {len(stale)} member record(s) made with other settings than {study.name}'s "
                         f"now (settings hash {digest}), e.g. {stale[0]}; rerun with --restart to recompute them "
                         f"(or move the folder away)")
    todo = [m for m in selected if m.key not in done]
    reused = len(selected) - len(todo)
    engine = "in-process" if dask is None and jobs == 1 else "joblib-loky" if dask is None else f"dask {dask}"

    walls = {k: v for k, v in member_walls.items() if k in done}
    start = time.perf_counter()
    with _worker_environment(), contextlib.ExitStack() as stack:
        expected = numerics()
        bar = stack.enter_context(_progress(len(selected), reused, study.name))
        if not todo:
            results = iter(())
        elif dask is not None:
            client = stack.enter_context(_dask_client(dask, jobs))
            if dask != "local":
                _check_cluster_imports(client, study)
                jobs = sum(client.nthreads().values())
            engine = f"dask {client.scheduler.address}" if dask != "local" else "dask LocalCluster"
            results = _dask(study, settings, todo, client)
        elif jobs > 1:
            results = _joblib(study, settings, todo, jobs)
        else:
            results = _in_process(study, settings, todo)
        for key, record, seen, member_wall in results:
            if seen != expected:
                raise StudyError(f"member {key} ran under other numerics ({seen}) than this process ({expected}): "
                                 f"start the workers with {blas.ENV}={os.environ.get(blas.ENV, '')} "
                                 f"OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 (see onelayer.studies.runner)")
            _write_member(folder, study, digest, {**record, "seconds": round(member_wall, 3)})
            done[key] = record
            walls[key] = member_wall
            bar.update(1)
    seconds = time.perf_counter() - start

    missing = [m.key for m in members if m.key not in done]
    if missing:
        return RunReport(None, folder, len(todo), reused, len(members), len(missing), seconds)
    records = [done[m.key] for m in members]  # sorted by key; every one read back from JSON (as when resumed)
    content = {
        "study": study.name,
        "settings": dataclasses.asdict(settings),
        "settings_hash": digest,
        "quick": quick,
        "members": records,
        "summary": dict(study.summarize(settings, [store.from_jsonable(r) for r in records])),
        "provenance": provenance(argv=argv, jobs=jobs, engine=engine, seconds=seconds, computed=len(todo),
                                 reused=len(members) - len(todo), total=len(members), quick=quick, ran_with=expected,
                                 member_seconds=walls),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    store.write_json(tmp, content, kind=study.kind)
    os.replace(tmp, path)
    return RunReport(path, folder, len(todo), len(members) - len(todo), len(members), 0, seconds)


# --- adopt: results computed before the runner existed ---------------------------------------------------------

def adopt(study: Study, results: Mapping[str, Mapping], *, source: str, command: str, made: Mapping | None = None,
          out: str | os.PathLike | None = None) -> Path:
    """Write the stored file of ``study`` from member results that a pre-runner script computed, unchanged.

    The stored studies of this book were first made by one script each (before this runner), with
    every seed derived from its cell; porting such a script to a study keeps its numbers member for member. ``results``
    maps every member key of ``study.settings`` to its result (as ``run_member`` would return it), read out of the old
    file ``source`` (a path relative to the repository); ``command`` is the command that made that file and ``made``
    whatever the old file said about how it was made (its ``command``/``meta``/``seconds``, if any). The file is then
    exactly what :func:`run` would write, except its provenance, which says that the members were adopted and leaves
    what is unknown (commit, versions, CPU) as ``"unknown"``. :func:`verify` recomputes a sample of them with today's
    code.
    """
    if not isinstance(study, Study):
        raise TypeError(f"study must be a Study, not {type(study).__name__}")
    if not isinstance(results, Mapping):
        raise TypeError(f"results must map member keys to results, not {type(results).__name__}")
    for label, value in (("source", source), ("command", command)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{label} must be a non-empty string, got {value!r}")
    settings = study.settings
    members = study.member_list(settings)
    keys = {m.key for m in members}
    if set(results) != keys:
        extra, missing = sorted(set(results) - keys), sorted(keys - set(results))
        raise ValueError(f"results must hold exactly the {len(keys)} members of {study.name}: "
                         f"missing {missing[:3]}, not members {extra[:3]}")
    records = [_record(study, m, results[m.key]) for m in members]
    unknown = "unknown"
    content = {
        "study": study.name,
        "settings": dataclasses.asdict(settings),
        "settings_hash": settings_hash(study, settings),
        "quick": False,
        "members": records,
        "summary": dict(study.summarize(settings, [store.from_jsonable(r) for r in records])),
        "provenance": {
            "command": command, "commit": unknown, "dirty": unknown, "python": unknown, "torch": unknown,
            "numpy": unknown, "cpu": unknown, "blas": unknown, "mkl_cbwr": unknown, "threads": unknown, "jobs": 1,
            "engine": "pre-runner script (members adopted)", "quick": False, "wall_seconds": None,
            "members": {"total": len(members), "computed": 0, "reused": len(members)},
            "adopted": {"from": source, "made": store.to_jsonable(dict(made or {})),
                        "commit": _git("rev-parse", "HEAD") or unknown,
                        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")},
        },
    }
    path = Path(out) if out is not None else stored_path(study, False)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    store.write_json(tmp, content, kind=study.kind)
    os.replace(tmp, path)
    return path


# --- verify --------------------------------------------------------------------------------------------------------

def differences(stored, fresh, *, rtol: float, atol: float = 0.0, where: str = "result") -> tuple[list[str], float]:
    """Where ``fresh`` differs from ``stored`` (JSON values): integers, booleans, strings and ``None`` exactly, floats
    within ``atol + rtol * |stored|`` (NaN equals NaN, infinities exactly). Returns ``(differences, largest relative
    difference of the floats)``."""
    stored, fresh = store.from_jsonable(stored), store.from_jsonable(fresh)
    found: list[str] = []
    worst = 0.0

    def walk(a, b, at):
        nonlocal worst
        if isinstance(a, dict) and isinstance(b, dict):
            if list(a) != list(b):
                found.append(f"{at}: keys {sorted(a)} stored, {sorted(b)} recomputed")
                return
            for k in a:
                walk(a[k], b[k], f"{at}.{k}")
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                found.append(f"{at}: {len(a)} items stored, {len(b)} recomputed")
                return
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{at}[{i}]")
        elif isinstance(a, float) and isinstance(b, float):
            if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
                if not (math.isnan(a) and math.isnan(b)) and a != b:  # exact: non-finite values are compared as such
                    found.append(f"{at}: stored {a!r}, recomputed {b!r}")
                return
            gap = abs(a - b)
            rel = gap / abs(a) if a else (0.0 if not gap else math.inf)
            worst = max(worst, rel)
            if gap > atol + rtol * abs(a):
                found.append(f"{at}: stored {a!r}, recomputed {b!r} (relative {rel:.1e} > {rtol:g})")
        elif type(a) is not type(b) or a != b:
            found.append(f"{at}: stored {a!r}, recomputed {b!r}")

    walk(stored, fresh, where)
    return found, worst


def _open_stored(study: Study, path, quick: bool) -> tuple[Path, dict, Any, dict[str, Member], dict[str, dict], str | None]:
    """The stored file of ``study`` and its members: ``(path, content, settings, members, stored records, problem)``;
    ``problem`` says why it cannot be verified (other settings, other members), else ``None``."""
    path = Path(path) if path is not None else stored_path(study, quick)
    content = store.read_json(path, kind=study.kind)
    settings = study.settings_for(bool(content.get("quick")))
    digest = settings_hash(study, settings)
    if content.get("settings_hash") != digest:
        return path, content, settings, {}, {}, (f"{path} was made with settings hash {content.get('settings_hash')}, "
                                                 f"the study's settings now hash to {digest}: run the study again")
    members = {m.key: m for m in study.member_list(settings)}
    stored = {r["key"]: r for r in content["members"]}
    absent = sorted(set(members) ^ set(stored))
    if absent:
        return path, content, settings, members, stored, (f"stored and current members differ ({len(absent)} keys, "
                                                          f"e.g. {absent[0]})")
    return path, content, settings, members, stored, None


def _check_member(study: Study, settings, member: Member, stored: dict) -> tuple[list[str], float, str]:
    """Recompute ``member`` here: ``(differences, largest relative float difference, measured side by side)``; the
    measured fields are shown (``name stored X, now Y``), never compared."""
    with _worker_environment():
        _, fresh, _, _ = compute(study, settings, member)
    compared = {k: stored[k] for k in ("key", "fields", "result") if k in stored}
    found, worst = differences(compared, {k: fresh[k] for k in compared}, rtol=study.rtol, atol=study.atol,
                               where=member.key)
    then, now = stored.get("measured", {}), fresh.get("measured", {})
    shown = "; ".join(f"{k} stored {then.get(k)!r:.10}, now {now.get(k)!r:.10}" for k in study.measured
                      if k in then or k in now)
    return found, worst, (f"; measured, not compared: {shown}" if shown else "")


def verify(study: Study, *, sample: int = 3, seed: int = 0, path: str | os.PathLike | None = None,
           quick: bool = False, echo: Callable[[str], None] | None = print) -> bool:
    """Recompute ``sample`` stored members of ``study`` (always its cheapest, by cost hint then key; the others drawn
    with ``random.Random(seed)``) in this process and compare them with the stored records (:func:`differences`,
    tolerances ``study.rtol``/``study.atol`` for floats; the measured fields are printed beside each other, never
    compared). Prints one line per member; returns whether all agree."""
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise ValueError(f"sample must be an integer >= 1, got {sample!r}")
    say = echo or (lambda line: None)
    path, _, settings, members, stored, problem = _open_stored(study, path, quick)
    if problem:
        say(f"FAIL {study.name}: {problem}")
        return False
    cheapest = min(members.values(), key=lambda m: (m.cost, m.key))
    others = sorted(k for k in members if k != cheapest.key)
    picked = [cheapest.key] + sorted(random.Random(seed).sample(others, min(sample - 1, len(others))))
    say(f"{study.name}: recomputing {len(picked)} of {len(members)} members from {path} "
        f"(floats within rtol={study.rtol:g}, atol={study.atol:g}; integers, booleans and strings exactly)")
    ok = True
    for key in picked:
        found, worst, shown = _check_member(study, settings, members[key], stored[key])
        if found:
            ok = False
            say(f"FAIL {key}: {len(found)} difference(s); {found[0]}{shown}")
        else:
            say(f"ok   {key} (largest relative difference {worst:.1e}){shown}")
    return ok


def _per_member(value, keys: set[str]) -> dict[str, float] | None:
    """``{key: seconds}`` if ``value`` maps every member key to seconds (a number, or a dict with ``seconds``)."""
    if not isinstance(value, Mapping) or not keys <= set(value):
        return None
    out = {}
    for k in keys:
        v = value[k]
        v = v.get("seconds") if isinstance(v, Mapping) else v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        out[k] = float(v)
    return out


def _total_seconds(made: Mapping) -> float | None:
    """The whole run's seconds an adopted file recorded: ``seconds`` (a number, or a dict with ``total`` or of
    parts), else ``minutes`` (a number or a dict of parts) times 60."""
    for label, scale in (("seconds", 1.0), ("minutes", 60.0)):
        v = made.get(label)
        if isinstance(v, Mapping):
            v = v.get("total", sum(x for x in v.values() if isinstance(x, (int, float)) and not isinstance(x, bool)))
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v) * scale
    return None


def recorded_seconds(study: Study, content: Mapping, members: Mapping[str, Member]) -> tuple[dict[str, float] | None, str]:
    """Each member's wall seconds as the stored file records them, and where from: the runner's
    ``provenance.member_seconds``; an adopted file's per-member timings (any mapping of every member key to seconds
    in what the first script wrote, e.g. ``wall``, ``seconds``, ``cell_seconds``); else the recorded total (the
    runner's wall seconds times its jobs, scaled from the members it computed to all of them, or the first script's
    ``seconds``/``minutes``) shared out in proportion to the members' cost hints: an estimate, as good as the hints. ``(None, "none recorded")`` when the file has no time at all."""
    prov = content.get("provenance", {})
    keys = set(members)
    found = _per_member(prov.get("member_seconds"), keys)
    if found:
        return found, "member seconds"
    made = prov.get("adopted", {}).get("made", {}) if isinstance(prov.get("adopted"), Mapping) else {}
    for value in made.values() if isinstance(made, Mapping) else ():
        found = _per_member(value, keys)
        if found:
            return found, "member seconds (first script)"
    total, counts = None, prov.get("members", {})
    if isinstance(prov.get("wall_seconds"), (int, float)) and counts.get("computed"):
        # the members this run computed, scaled to all of them (a resumed run reused the others)
        total = float(prov["wall_seconds"]) * int(prov.get("jobs") or 1) * counts["total"] / counts["computed"]
    elif isinstance(made, Mapping):
        total = _total_seconds(made)
    if total is None:
        return None, "none recorded"
    costs = sum(m.cost for m in members.values())
    return {k: total * m.cost / costs for k, m in members.items()}, "total seconds shared out by cost"


def verify_cheapest(study: Study, *, max_seconds: float | None = None, path: str | os.PathLike | None = None,
                    quick: bool = False) -> tuple[str, str]:
    """Recompute the cheapest member of ``study`` and compare it (as :func:`verify`): the member with the fewest
    recorded seconds (:func:`recorded_seconds`), else the lowest cost hint. With ``max_seconds``, a study whose
    cheapest member is recorded above it is skipped, not run (selected by the stored seconds, never by a clock).
    Returns ``(status, line)``: status ``"ok"``, ``"skipped"`` or ``"FAILED"``."""
    if max_seconds is not None and (isinstance(max_seconds, bool) or not isinstance(max_seconds, (int, float))
                                    or not max_seconds > 0):
        raise ValueError(f"max_seconds must be a number > 0, got {max_seconds!r}")
    path, content, settings, members, stored, problem = _open_stored(study, path, quick)
    if problem:
        return "FAILED", f"FAILED  {study.name}: {problem}"
    seconds, source = recorded_seconds(study, content, members)
    if seconds:
        key = min(members, key=lambda k: (seconds[k], members[k].cost, k))
        when = f"recorded {seconds[key]:.1f} s ({source})"
    else:
        key = min(members, key=lambda k: (members[k].cost, k))
        when = "no recorded seconds: lowest cost"
    if max_seconds is not None and seconds and seconds[key] > max_seconds:
        return "skipped", f"skipped {study.name}: cheapest member {key} {when} > {max_seconds:g} s"
    found, worst, shown = _check_member(study, settings, members[key], stored[key])
    if found:
        return "FAILED", (f"FAILED  {study.name} [{key}]: {len(found)} difference(s), largest relative difference "
                          f"{worst:.1e}; first: {found[0]}{shown}")
    return "ok", f"ok      {study.name} [{key}, {when}]: largest relative difference {worst:.1e}{shown}"

"""One file format for every number the package writes: JSON and CSV with a schema version.

Every JSON file that :mod:`onelayer` writes (a figure's numbers from
``python -m onelayer make``, a stored study from ``python -m onelayer study``)
is one object whose first two keys are

* ``"schema_version"``: :data:`SCHEMA_VERSION`, raised whenever the layout of
  any file changes, so a reader can refuse files it does not understand;
* ``"kind"``: what the file holds (a figure's name, or a study's kind).

The rest of the object is the kind's own content. A CSV file (a figure's
table) starts with one comment line ``# schema_version: 1, kind: NAME`` and then
a header row; ``pandas.read_csv(path, comment="#")`` reads it.

:func:`to_jsonable` turns NumPy and torch scalars and arrays into plain Python
and non-finite floats into the strings ``"nan"``, ``"inf"``, ``"-inf"``; :func:`from_jsonable` turns those strings
back into floats.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

__all__ = ["SCHEMA_VERSION", "SchemaError", "to_jsonable", "from_jsonable", "write_json", "read_json", "write_csv", "read_csv"]

#: Version of the layout of every file written through this module.
SCHEMA_VERSION = 1


class SchemaError(ValueError):
    """A stored file has no, or another, schema version, or is of another kind than expected."""


def to_jsonable(value):
    """``value`` with NumPy/torch types turned into Python ones and non-finite floats into strings."""
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if hasattr(value, "detach") and hasattr(value, "tolist"):  # a torch tensor, without importing torch
        return to_jsonable(value.detach().cpu().tolist())
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store a {type(value).__name__} in a JSON file: {value!r}")


def from_jsonable(value):
    """``value`` (read from a JSON file) with the strings ``"nan"``, ``"inf"``, ``"-inf"`` that :func:`to_jsonable`
    wrote turned back into floats, inside any nesting of dicts and lists; every other value unchanged."""
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return float(value)
    if isinstance(value, dict):
        return {k: from_jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_jsonable(v) for v in value]
    return value


def _check_kind(kind) -> str:
    if not isinstance(kind, str) or not kind.strip():
        raise ValueError(f"kind must be a non-empty string naming what the file holds, got {kind!r}")
    return kind


def write_json(path: str | os.PathLike, content: Mapping, *, kind: str, indent: int | None = 1) -> Path:
    """Write ``content`` (a mapping without the keys ``schema_version``/``kind``) as a versioned JSON file.

    Parent directories are created. Returns the path written.
    """
    kind = _check_kind(kind)
    if not isinstance(content, Mapping):
        raise TypeError(f"content must be a mapping (dict), not {type(content).__name__}")
    clash = {"schema_version", "kind"} & set(content)
    if clash:
        raise ValueError(f"content must not contain the reserved keys {sorted(clash)}")
    record = {"schema_version": SCHEMA_VERSION, "kind": kind, **to_jsonable(dict(content))}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=indent, allow_nan=False) + "\n")
    return path


def read_json(path: str | os.PathLike, *, kind: str | None = None) -> dict:
    """Read a file written by :func:`write_json`; check its schema version (and ``kind`` if given).

    Returns the content without the ``schema_version`` and ``kind`` keys.
    Raises :class:`SchemaError` for a file of another version or kind, and
    ``FileNotFoundError`` for a missing file.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no stored file at {path}")
    record = json.loads(path.read_text())
    if not isinstance(record, dict) or record.get("schema_version") != SCHEMA_VERSION:
        found = record.get("schema_version") if isinstance(record, dict) else None
        raise SchemaError(f"{path}: schema_version {found!r}, this onelayer reads {SCHEMA_VERSION}; regenerate the file")
    if kind is not None and record.get("kind") != _check_kind(kind):
        raise SchemaError(f"{path}: holds {record.get('kind')!r}, expected {kind!r}")
    return {k: v for k, v in record.items() if k not in ("schema_version", "kind")}


def write_csv(path: str | os.PathLike, rows: Sequence[Mapping], *, kind: str) -> Path:
    """Write ``rows`` (dicts with the same keys, in the same order) as a CSV with a schema comment line."""
    kind = _check_kind(kind)
    if not isinstance(rows, Sequence) or not rows or not all(isinstance(r, Mapping) for r in rows):
        raise TypeError("rows must be a non-empty list of dicts")
    columns = list(rows[0])
    for row in rows:
        if list(row) != columns:
            raise ValueError(f"every row must have the columns {columns}, got {list(row)}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        fh.write(f"# schema_version: {SCHEMA_VERSION}, kind: {kind}\n")
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(to_jsonable([dict(r) for r in rows]))
    return path


def read_csv(path: str | os.PathLike, *, kind: str | None = None) -> list[dict]:
    """Rows (dicts of strings) of a file written by :func:`write_csv`, after checking its comment line."""
    path = Path(path)
    with path.open(newline="") as fh:
        first = fh.readline().strip()
        expected = f"# schema_version: {SCHEMA_VERSION}, kind: "
        if not first.startswith(expected):
            raise SchemaError(f"{path}: first line {first!r} is not '{expected}NAME'")
        if kind is not None and first[len(expected):] != kind:
            raise SchemaError(f"{path}: holds {first[len(expected):]!r}, expected {kind!r}")
        return list(csv.DictReader(fh))

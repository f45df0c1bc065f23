"""Where the package finds its stored data: one data directory for every part.

The stored sweeps and study results that chapters load (``walks/...json``,
``trees/...json``) live under one *data directory*. By default it is the
repository's ``book/`` folder, where the chapters sit; set the environment
variable ``ONELAYER_DATA`` (or pass ``--data-dir`` to ``python -m onelayer``) to
use another one, for instance when the package is installed elsewhere or a
sweep should not overwrite the committed results.

Every file inside it is named by a path relative to it, e.g.
``data_path("walks/data/scaling.json")``; no module computes its own location
from ``__file__``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV_VAR", "REPOSITORY_DATA", "data_dir", "data_path", "resolve"]

#: Environment variable that overrides the data directory.
ENV_VAR = "ONELAYER_DATA"
#: The repository's data directory (the ``book`` folder beside ``src``), used when ``ONELAYER_DATA`` is not set.
REPOSITORY_DATA = Path(__file__).resolve().parents[2] / "book"


def data_dir() -> Path:
    """The data directory: ``$ONELAYER_DATA`` if set and non-empty, else :data:`REPOSITORY_DATA`."""
    value = os.environ.get(ENV_VAR, "").strip()
    return Path(value).expanduser().resolve() if value else REPOSITORY_DATA


def data_path(relative: str | os.PathLike) -> Path:
    """The file ``relative`` inside :func:`data_dir` (read at call time, so the variable can change)."""
    if not isinstance(relative, (str, os.PathLike)):
        raise TypeError(f"relative must be a str or path, not {type(relative).__name__}")
    rel = Path(relative)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ValueError(f"relative must be a non-empty path inside the data directory, got {str(relative)!r}")
    return data_dir() / rel


def resolve(path: str | os.PathLike) -> Path:
    """A path given by a user: absolute, or existing relative to the working directory, else inside :func:`data_dir`."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path, not {type(path).__name__}")
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return data_dir() / p

"""Where the package finds its stored data: one data directory for every part.

The stored studies that chapters load (``walks/...json``,
``trees/...json``) live under one *data directory*. By default it is the
repository's ``book/`` folder, where the chapters sit; set the environment
variable ``ONELAYER_DATA`` (or pass ``--data-dir`` to ``python -m onelayer``) to
use another one, for instance when the package is installed elsewhere or a
study should not overwrite the committed results.

Every file inside it is named by a path relative to it, e.g.
``data_path("walks/data/scaling.json")``; no module computes its own location
from ``__file__``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV_VAR", "REPOSITORY_DATA", "OutputFolderError", "data_dir", "data_path", "resolve", "writable_folder"]

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


class OutputFolderError(OSError):
    """An output folder that cannot be created or written; its message is one line naming the path and the reason."""


def writable_folder(path: str | os.PathLike) -> Path:
    """The folder ``path``, created if needed, once a file could be written in it; else :class:`OutputFolderError`.

    Every command that writes checks its output folder with this before it runs anything, so a bad folder costs
    one line (the path and the reason) and no work. A probe file is written and removed: permissions alone do not
    tell (root may write anywhere but on a read-only file system).
    """
    import tempfile

    folder = Path(path).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(f"cannot create the output folder {folder}: {exc.strerror or exc}") from None
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".onelayer-probe-"):
            pass
    except OSError as exc:
        raise OutputFolderError(f"cannot write in the output folder {folder}: {exc.strerror or exc}") from None
    return folder


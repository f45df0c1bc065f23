"""Render the players whose chapters show stored frames, and check that the stored frames are current.

A player (:mod:`onelayer.scrubber`) whose frames a chapter shows from a file (:func:`onelayer.scrubber.load_frames`)
is drawn here, once, with the chapter's own ``live=True`` path; the file keeps the digest of the numbers the frames
plot, i.e. of the committed ``book/numbers/NAME.json`` of the player's registered frames figure, which
``tests/test_book_numbers.py`` keeps current. ``tests/test_player_frames.py`` checks that every stored file still
carries the digest of those numbers, so a change of what a frame plots fails until the frames are rendered again:

    python -m tools.book_numbers --update NAME   # the numbers first
    python -m tools.player_frames NAME           # then the frames
"""

from __future__ import annotations

import argparse
import importlib
import json

from onelayer.paths import data_path
from onelayer.scrubber import numbers_digest, save_frames

from tools.book_numbers import numbers_path

#: registered frames figure -> (chapter module, player function, the module's attribute naming its stored file)
PLAYERS = {
    "walks-random-init-sweep-frames": ("onelayer.chapters.walks.random_init", "study_player", "PLAYER_FRAMES"),
    "walks-lab-p-eta-frames": ("onelayer.chapters.walks.lab", "p_eta_player", "PLAYER_FRAMES"),
    "selector-scale-frames": ("onelayer.chapters.selector", "scale_player", "PLAYER_FRAMES"),
    "walks-t31-steps-frames": ("onelayer.chapters.walks.theorem31", "steps_player", "PLAYER_FRAMES"),
    "walks-t41-escape-frames": ("onelayer.chapters.walks.theorem41", "escape_player", "PLAYER_FRAMES"),
    "walks-ring-explorer-frames": ("onelayer.chapters.walks.ring", "explorer_player", "PLAYER_FRAMES"),
}


def committed_digest(name: str) -> str:
    """:func:`onelayer.scrubber.numbers_digest` of the committed numbers of the frames figure ``name``."""
    return numbers_digest(json.loads(numbers_path(name).read_text())["numbers"])


def frames_file(name: str):
    """The stored frames file of the player whose frames figure is ``name``."""
    module, _, attribute = PLAYERS[name]
    return data_path(getattr(importlib.import_module(module), attribute))


def render(name: str):
    """Draw the player of ``name`` live as its chapter does (after :func:`onelayer.chapter.start`: the book's plot
    style, every generator seeded with 0, float64; as ``python -m onelayer make`` draws its numbers) and store its
    frames with the digest of the committed numbers."""
    from onelayer.plots import book_style
    from onelayer.seeding import setup

    module, function, _ = PLAYERS[name]
    with book_style():
        setup(0)
        player = getattr(importlib.import_module(module), function)(live=True)
    return save_frames(player, frames_file(name), digest=committed_digest(name))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"frames figures (default: all of {', '.join(PLAYERS)})")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(PLAYERS))
    if unknown:
        parser.error(f"unknown players {unknown}; known: {', '.join(PLAYERS)}")
    for name in args.names or PLAYERS:
        print(f"{name}: {render(name)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

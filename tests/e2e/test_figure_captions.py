"""The built book's figure captions: each links to its numbers, shipped in the build, and names its command.

Reads the HTML of a built book (``ONELAYER_E2E_HTML``, default ``_build/html``) without a browser. For every
chapter cell with a caption (``mystnb.figure``, written by tools/figure_captions.py), the page has a
``<figure id="fig-NAME">`` whose image keeps the cell's alt text and whose caption links to ``NAME.json``
(and ``NAME.csv`` for a table) under ``_downloads/``; the linked files are in the build, the JSON parses with a
``schema_version`` and is the numbers of ``NAME``, and the caption names ``python -m onelayer make NAME``.
Every scrubber (a precomputed-frames player, an HTML output) is followed by its caption container
``<div class="onelayer-scrubber-caption" id="player-NAME">`` with the same links and command for the numbers of
its frames, ``NAME-frames``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from e2e_support import HTML_DIR, ROOT

sys.path.insert(0, str(ROOT))
from tools import book_numbers, figure_captions  # noqa: E402

bs4 = pytest.importorskip("bs4", reason="BeautifulSoup (a dependency of the book's theme) is missing")


def captioned_cells(rel: str) -> list[tuple[str, dict]]:
    """``(figure name, cell metadata)`` of the cells of notebook ``rel`` that carry a caption."""
    nb = json.loads((ROOT / rel).read_text())
    found = []
    for _, cell in figure_captions.figure_cells(nb):
        figure = cell["metadata"].get("mystnb", {}).get("figure")
        if figure:
            found.append((figure["name"].removeprefix("fig-"), cell["metadata"]))
    return found


@pytest.mark.parametrize("rel", list(figure_captions.FIGURES))
def test_figure_captions_link_numbers_that_are_in_the_build(rel):
    page = HTML_DIR / Path(rel).with_suffix(".html")
    if not page.exists():
        pytest.skip(f"no built page {page}")
    cells = captioned_cells(rel)
    if not cells:
        pytest.skip(f"{rel} has no captions yet (tests/test_hygiene.py CAPTIONS_PENDING)")
    soup = bs4.BeautifulSoup(page.read_text(), "html.parser")
    wrong = []
    for name, metadata in cells:
        figure = soup.find("figure", id=figure_captions.figure_label(name))
        if figure is None:
            wrong.append(f"{name}: no <figure id={figure_captions.figure_label(name)}>")
            continue
        img, caption = figure.find("img"), figure.find("figcaption")
        if img is None or img.get("alt") != metadata["mystnb"]["image"]["alt"]:
            wrong.append(f"{name}: the figure's image lost its alt text")
        if caption is None:
            wrong.append(f"{name}: no caption")
            continue
        if f"python -m onelayer make {name} --out DIR" not in " ".join(caption.get_text().split()):
            wrong.append(f"{name}: the caption does not name its command")
        hrefs = {Path(unquote(a["href"])).name: unquote(a["href"]) for a in caption.find_all("a", href=True)
                 if "_downloads/" in a["href"]}
        wanted = [f"{name}.json"] + ([f"{name}.csv"] if book_numbers.numbers_path(name, ".csv").exists() else [])
        for file_name in wanted:
            if file_name not in hrefs:
                wrong.append(f"{name}: the caption has no download link to {file_name}")
                continue
            target = (page.parent / hrefs[file_name]).resolve()
            if not target.is_file():
                wrong.append(f"{name}: {hrefs[file_name]} is not in the build")
            elif file_name.endswith(".json"):
                record = json.loads(target.read_text())
                if "schema_version" not in record or record.get("name") != name or record.get("quick") is not False:
                    wrong.append(f"{name}: {hrefs[file_name]} is not the full-mode numbers of {name}")
            elif not target.read_text().startswith("# schema_version: "):
                wrong.append(f"{name}: {hrefs[file_name]} is not a CSV written by onelayer.store")
    assert not wrong, f"{page.relative_to(HTML_DIR)}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("rel", list(figure_captions.SCRUBBERS))
def test_scrubber_captions_follow_their_player_and_link_numbers_that_are_in_the_build(rel):
    """Each scrubber (an HTML output, not a figure) is followed by its caption container ``player-NAME`` (written by
    tools/figure_captions.py as a markdown cell): it names ``python -m onelayer make NAME`` and links to ``NAME.json``
    under ``_downloads/``, the full-mode numbers of every frame, whose sliders are the player's."""
    page = HTML_DIR / Path(rel).with_suffix(".html")
    if not page.exists():
        pytest.skip(f"no built page {page}")
    soup = bs4.BeautifulSoup(page.read_text(), "html.parser")
    wrong = []
    for name in figure_captions.SCRUBBERS[rel].values():
        box = soup.find("div", id=figure_captions.player_label(name))
        if box is None or figure_captions.SCRUBBER_CAPTION_CLASS not in box.get("class", []):
            wrong.append(f"{name}: no <div class={figure_captions.SCRUBBER_CAPTION_CLASS} id={figure_captions.player_label(name)}>")
            continue
        player = box.find_previous("div", class_="onelayer-scrubber")
        if player is None or f"{player.get('data-scrubber')}-frames" != name:
            wrong.append(f"{name}: the caption does not follow the player {name.removesuffix('-frames')}")
        if f"python -m onelayer make {name} --out DIR" not in " ".join(box.get_text().split()):
            wrong.append(f"{name}: the caption does not name its command")
        hrefs = [unquote(a["href"]) for a in box.find_all("a", href=True) if "_downloads/" in a["href"]]
        if [Path(h).name for h in hrefs] != [f"{name}.json"]:
            wrong.append(f"{name}: the caption links {hrefs}, not one download of {name}.json")
            continue
        target = (page.parent / hrefs[0]).resolve()
        if not target.is_file():
            wrong.append(f"{name}: {hrefs[0]} is not in the build")
            continue
        record = json.loads(target.read_text())
        if "schema_version" not in record or record.get("name") != name or record.get("quick") is not False:
            wrong.append(f"{name}: {hrefs[0]} is not the full-mode numbers of {name}")
        elif player is not None:
            shown = json.loads(player.find("script", type="application/json").string)
            if shown["texts"] != [k["texts"] for k in record["numbers"]["knobs"]]:
                wrong.append(f"{name}: the numbers' slider texts are not those of the player")
    assert not wrong, f"{page.relative_to(HTML_DIR)}:\n" + "\n".join(wrong)

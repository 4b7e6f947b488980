"""Every relative link of the committed Markdown a reader opens (the README, each profile's results) resolves in the
repository: a generated page that links a file the profile does not commit is caught here, not by a reader."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "results").glob("**/README.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def relative_links(text: str) -> list[str]:
    targets = [a or b for a, b in LINK.findall(text)]
    return [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:|#", t) and t.split("#", 1)[0]]


def test_the_pattern_finds_relative_links_only():
    text = "[a](tables/x.md) ![f](figures/y.png) [w](https://x.org) [s](#top) [b](browse.html#k) `[c](no)`"
    assert relative_links(text) == ["tables/x.md", "figures/y.png", "browse.html", "no"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = [t for t in relative_links(page.read_text(encoding="utf-8")) if not (page.parent / t).exists()]
    assert not broken, f"{page.relative_to(ROOT)} links what the repository does not hold: {broken}"

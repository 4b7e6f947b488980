"""browse.html in a real headless browser (Debian's Chromium, installed by `make setup` where it can be):
it opens from file://, shows every sentence, sorts by the difference of two systems, filters by a word."""

import re
import shutil
import subprocess

import numpy as np
import pytest

from naus.report.browse import write_browser

BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)),
               None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (make setup installs Debian's "
                                                        "where apt-get can run as root)")


def rendered(page, view: str = "") -> tuple[list[int], str]:
    """The sentence numbers of the rows the page shows at `page#view`, in order, and the whole DOM."""
    dom = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                          f"{page.as_uri()}{'#' + view if view else ''}"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return [int(i) for i in re.findall(r'class="row" data-index="(\d+)"', dom)], dom


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 40
    sources = [f"source {i} about {'trade' if i % 4 == 0 else 'sport'} news" for i in range(n)]
    sources[7] = "a source with </script> <b>markup</b> in it"
    sources[9] = "a source opening a comment <!--<script> that would hide the rows after it"
    systems = {name: ([f"{name} says {i}" for i in range(n)], rng.uniform(0, 80, n).round(1).tolist())
               for name in ("teacher", "truncate", "length control")}
    out = tmp_path_factory.mktemp("browse") / "browse.html"
    write_browser(out, "fixture", "a note", sources, [f"ref {i}" for i in range(n)], systems)
    return out, sources, systems


def test_every_sentence_is_shown_from_file_in_test_set_order(page):
    out, sources, _ = page
    rows, dom = rendered(out)
    assert rows == list(range(1, len(sources) + 1))
    assert "&lt;/script&gt; &lt;b&gt;markup&lt;/b&gt;" in dom  # text is text, not markup
    assert "comment &lt;!--&lt;script&gt; that" in dom
    assert f"{len(sources)} of {len(sources)} sentences" in dom


def test_sorting_by_the_difference_of_two_systems_puts_the_largest_first(page):
    out, _, systems = page
    a, b = np.array(systems["length control"][1]), np.array(systems["teacher"][1])
    rows, _ = rendered(out, "a=2&b=0&sort=diff&q=")
    assert rows[0] == int(np.argmax(a - b)) + 1
    diffs = [a[i - 1] - b[i - 1] for i in rows]
    assert diffs == sorted(diffs, reverse=True)


def test_a_word_filter_narrows_the_rows(page):
    out, sources, _ = page
    rows, dom = rendered(out, "a=0&b=1&sort=index&q=trade")
    assert rows == [i + 1 for i, s in enumerate(sources) if "trade" in s.split()] and len(rows) == 10
    assert "10 of 40 sentences" in dom

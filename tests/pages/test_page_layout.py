"""Issue 34: the report page of a 3 x 5 comparison (intervals, segments, paired tests) laid out
in a real headless chromium (Debian's).

* At 1280 px wide, every table (the results, each segment's, each pair table opened) fits its
  column: the table is no wider than the block that holds it, so nothing scrolls sideways;
  and no cell wraps: every cell's text (a value and its CI bracket) lies on one line.
* At 390 px wide (a phone), every figure is scaled to the width of the page (never wider than
  its column, no sideways scrolling) and its smallest text still reads at :data:`MIN_TEXT_PX`
  CSS pixels or more: the figure's smallest font (``data-text-px``, its size in image pixels,
  :func:`receval.page.smallest_text_px`) times the scale the page draws the image at.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

#: the smallest text a figure may show on a 390 px screen, in CSS pixels
MIN_TEXT_PX = 10.0


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    from glance_data import METRICS, files

    from receval.cli import main

    tmp = tmp_path_factory.mktemp("layout")
    truth, named, train = files(tmp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["runs", truth, *named, *(x for m in METRICS for x in ("-m", m)), "--rel", "4", "--resamples", "200",
                     "--train", train, "--segments", "activity", "--report", str(tmp / "rep"), "--format", "csv"]) == 0
    return tmp / "rep" / "index.html"


def test_every_figure_says_its_smallest_text(page):
    """``data-text-px`` is the figure's smallest font at the page's resolution: 7 pt (the paper
    style's smallest) at 150 dpi."""
    sizes = [float(x) for x in re.findall(r'data-text-px="([0-9.]+)"', page.read_text(encoding="utf-8"))]
    assert len(sizes) == 4 and all(abs(s - 7 * 150 / 72) < 0.01 for s in sizes), sizes


def test_smallest_text_px_reads_the_drawn_figure():
    import matplotlib.figure

    from receval.page import figure_png, smallest_text_px

    fig = matplotlib.figure.Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.set_title("t", fontsize=12)
    ax.tick_params(labelsize=5)
    figure_png(fig)
    assert smallest_text_px(fig) == pytest.approx(5 * 150 / 72)


def _open(tab, page: Path, width: int):
    tab.set_viewport_size({"width": width, "height": 900})
    tab.goto(page.as_uri(), wait_until="load")
    tab.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")


@pytest.mark.browser
@pytest.mark.xdist_group("browser")
def test_at_1280_tables_fit_and_no_cell_wraps(page):
    from playwright.sync_api import sync_playwright
    from test_report_page import _browser_or_skip

    chromium = _browser_or_skip()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page()
            _open(tab, page, 1280)
            tables = tab.evaluate("""() => [...document.querySelectorAll('table')].map(t => ({
                width: t.getBoundingClientRect().width, room: t.parentElement.clientWidth,
                text: t.textContent.slice(0, 40), cis: t.querySelectorAll('.ci').length}))""")
            assert len(tables) >= 10 and sum(t["cis"] for t in tables) >= 75  # 5 results tables of 15 intervals
            too_wide = [t for t in tables if t["width"] > t["room"] + 0.5]
            assert not too_wide, too_wide
            wrapped = tab.evaluate("""() => [...document.querySelectorAll('td, th')].filter(td => {
                const r = document.createRange(); r.selectNodeContents(td);
                const rects = [...r.getClientRects()].filter(x => x.width > 0);  // one per line and element
                // on one line every piece (a superscript, the smaller bracket) overlaps every other
                return rects.length > 1 && !td.closest('table.protocol') &&
                    Math.max(...rects.map(x => x.top)) >= Math.min(...rects.map(x => x.bottom)) - 1;
            }).map(td => td.textContent)""")
            assert not wrapped, wrapped[:5]
            assert tab.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.xdist_group("browser")
def test_at_390_figures_scale_to_the_screen_and_their_text_stays_legible(page):
    from playwright.sync_api import sync_playwright
    from test_report_page import _browser_or_skip

    chromium = _browser_or_skip()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page()
            _open(tab, page, 390)
            figs = tab.evaluate("""() => [...document.querySelectorAll('figure')].map(f => {
                const img = f.querySelector('img');
                return {name: f.dataset.figure, text: parseFloat(f.dataset.textPx), natural: img.naturalWidth,
                        shown: img.getBoundingClientRect().width, right: img.getBoundingClientRect().right,
                        room: f.parentElement.clientWidth, screen: document.documentElement.clientWidth};
            })""")
            assert len(figs) == 4
            for f in figs:
                assert f["natural"] > 0 and f["shown"] <= f["room"] + 0.5 and f["right"] <= f["screen"] + 0.5, f
                assert f["text"] * f["shown"] / f["natural"] >= MIN_TEXT_PX, f
            assert tab.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        finally:
            browser.close()

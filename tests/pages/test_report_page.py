"""The report page (``receval runs ... --report DIR``, ``receval reproduce --out DIR``): one
self-contained index.html with the tables, figures, signatures, protocol and segments, nothing
loaded from the network, never written over a file the user did not name; and, in a real
headless chromium (Debian's), a page that loads without a console error and shows its table and
figures."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest


#: a reference to anything outside the page (a data: URL is inside it)
EXTERNAL = re.compile(r"""(?:\b(?:src|href|action|poster|srcset)\s*=\s*["']?(?!data:|#)[^"'\s>]+|url\(\s*["']?(?!data:)[^)"']+|@import)""", re.I)


def _runs_files(tmp_path: Path) -> list[str]:
    from test_segments import _files

    named = _files(tmp_path, 40, seed=2)
    return ["runs", str(tmp_path / "truth.csv"), *named, "-m", "ndcg@[5,10]", "-m", "recall@10", "--resamples", "200"]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    from receval.cli import main

    tmp = tmp_path_factory.mktemp("page")
    args = _runs_files(tmp)
    assert main([*args, "--segments", "activity:2", "--train", str(tmp / "train.csv"), "--report", str(tmp / "report"),
                 "--format", "csv"]) == 0
    return tmp / "report" / "index.html"


def test_page_is_self_contained_and_complete(page):
    text = page.read_text(encoding="utf-8")
    assert sorted(p.name for p in page.parent.iterdir()) == ["index.html"]  # nothing else written
    assert not EXTERNAL.findall(text), EXTERNAL.findall(text)[:5]
    assert not re.search(r"https?://", text), "no URL at all: nothing to fetch, nothing to follow offline"
    assert "<script" not in text
    for section in ("results", "figures", "segments", "protocol", "signatures"):
        assert f'id="{section}"' in text
    assert text.count("<table") >= 6  # all users and 2 segments: values and paired tests each
    figures = re.findall(r'data-figure="([^"]+)"><img alt="[^"]*" src="data:image/png;base64,', text)
    assert figures == ["at-k", "differences", "users", "segments"]
    assert "segments:activity:2|segment:activity_1/2" in text and "Holm correction over 27 comparisons" in text  # 3 metrics x 3 pairs x 3 tables
    assert "ndcg@10|gain:binary" in text  # the signatures


def test_page_never_overwritten_unasked(page, tmp_path, capsys):
    from receval.cli import main

    args = _runs_files(tmp_path)
    (tmp_path / "report").mkdir()
    mine = tmp_path / "report" / "index.html"
    mine.write_text("mine")
    assert main([*args, "--report", str(tmp_path / "report")]) == 2
    assert "already exists" in capsys.readouterr().err and mine.read_text() == "mine"
    assert main([*args, "--report", str(tmp_path / "report"), "--force"]) == 0
    assert mine.read_text().startswith("<!DOCTYPE html>")
    (tmp_path / "afile").write_text("x")
    assert main([*args, "--report", str(tmp_path / "afile")]) == 2
    assert "is a file" in capsys.readouterr().err


def _reproduction():
    from receval.reproduce import Reproduction

    cols = ["hitrate@20", "map@20"]
    return Reproduction({"standard": {"hitrate@20": 0.26, "map@20": 0.0139},
                         "recbole@1.2.0": {"hitrate@20": 0.26, "map@20": None},
                         "elliot@0.3.1": {"hitrate@20": 0.25, "map@20": None}},
                        {"standard": {"map@20": "map@20|rel:4|dialect:standard"}},
                        {"data": "bundled ml-latest-small", "n_test_users": 12}, cols,
                        errors={"recbole@1.2.0": {"map@20": "refuses <repeated> items"}})


def test_reproduction_page(tmp_path):
    from receval.page import render_reproduction_page
    from receval.reproduce import write_report

    rep = _reproduction()
    text = render_reproduction_page(rep, legend="legend: '–' = not offered", published=[["recbole", 0.5, None]])
    assert not EXTERNAL.findall(text) and not re.search(r"https?://", text)
    assert '<td class="error" title="refuses &lt;repeated&gt; items">error</td>' in text
    assert '<td class="missing" title="not offered by the library">–</td>' in text
    assert 'data-figure="spread"' in text and "map@20|rel:4|dialect:standard" in text
    assert 'id="study"' in text and "<td>0.5000</td>" in text and "legend: " in text
    files = write_report(rep, tmp_path)
    assert tmp_path / "index.html" in files


# ---- in a real browser ---------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path
    return None


def _browser_or_skip() -> str:
    path = _chromium()
    in_ci = os.environ.get("CI") == "true"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if in_ci:
            pytest.fail("CI: the browser test needs playwright (pip install -e '.[dev]')")
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    if path is None:
        if in_ci:
            pytest.fail("CI: the browser test needs Debian's chromium (.ci/run installs it: apt-get install chromium)")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    return path


def _variance(png: bytes) -> float:
    import io

    import numpy as np
    from PIL import Image

    return float(np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float).std())


def _check_in_chromium(page: Path, figures: int, shot: Path) -> None:
    """Load ``page`` in headless chromium: no console error, no request outside the file, the
    first table and every figure laid out with visible content (pixel variance)."""
    from playwright.sync_api import sync_playwright

    chromium = _browser_or_skip()
    messages, failed, requests = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            tab.on("console", lambda m: messages.append((m.type, m.text)))
            tab.on("pageerror", lambda e: messages.append(("pageerror", str(e))))
            tab.on("requestfailed", lambda r: failed.append(r.url))
            tab.on("request", lambda r: requests.append(r.url))
            tab.goto(page.as_uri(), wait_until="load")
            full = tab.screenshot(full_page=True)
            table = tab.locator("#results table").first
            box = table.bounding_box()
            assert box and box["width"] > 200 and box["height"] > 50
            assert _variance(table.screenshot()) > 10  # text on a white ground, not a blank box
            images = tab.locator("#figures figure img")
            assert images.count() == figures
            for i in range(images.count()):
                img = images.nth(i)
                img.scroll_into_view_if_needed()
                assert img.evaluate("el => el.complete && el.naturalWidth > 0"), "the figure is decoded"
                box = img.bounding_box()
                assert box and box["width"] > 100 and box["height"] > 100
                assert _variance(img.screenshot()) > 10
        finally:
            browser.close()
    errors = [m for m in messages if m[0] in ("error", "pageerror")]
    assert not errors, errors
    assert not failed, failed
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    assert _variance(full) > 10
    shot.write_bytes(full)


@pytest.mark.browser
@pytest.mark.xdist_group("browser")
def test_page_in_headless_chromium(page, tmp_path):
    _check_in_chromium(page, 4, tmp_path / "page.png")


@pytest.mark.browser
@pytest.mark.xdist_group("browser")
def test_reproduction_page_in_headless_chromium(tmp_path):
    from receval.page import write_reproduction_page

    _browser_or_skip()
    write_reproduction_page(_reproduction(), tmp_path, legend="legend", published=[["recbole", 0.5, None]])
    _check_in_chromium(tmp_path / "index.html", 1, tmp_path / "page.png")


@pytest.mark.browser
@pytest.mark.xdist_group("browser")
def test_docs_formulas_render_offline_in_chromium(tmp_path):
    """The docs site's formulas typeset by the KaTeX it ships, with the network cut off."""
    import subprocess
    import sys

    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    chromium = _browser_or_skip()
    from playwright.sync_api import sync_playwright

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(root / "src"))
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(tmp_path / "site")], cwd=root, env=env,
                   check=True, capture_output=True, timeout=600)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context(offline=True)
            tab = context.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.goto((tmp_path / "site" / "metrics" / "index.html").as_uri(), wait_until="load")
            tab.wait_for_function("document.querySelectorAll('.arithmatex .katex').length > 0", timeout=20_000)
            assert tab.locator(".katex-error").count() == 0
            assert tab.locator(".arithmatex:not(:has(.katex))").count() == 0, "every formula typeset"
            assert not errors, errors
        finally:
            browser.close()


class _Visible(__import__("html.parser").parser.HTMLParser):
    """The text a reader sees without unfolding anything: outside <head>, <style>, and the body
    of a closed <details> (its <summary> is seen); ``sig``: the part inside class="sig"."""

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, hidden, sig)
        self.text, self.sig = 0, 0

    def _state(self):
        return self.stack[-1][1:] if self.stack else (False, False)

    def handle_starttag(self, tag, attrs):
        if tag in ("img", "meta", "link", "br", "hr", "input"):
            return
        hidden, sig = self._state()
        a = dict(attrs)
        if tag in ("head", "style", "title", "script"):
            hidden = True
        if tag == "summary" and self.stack and self.stack[-1][0] == "details" and "open" not in self._open:
            hidden = self._outer_hidden
        if tag == "details":
            self._open = a
            self._outer_hidden = hidden
            hidden = hidden or "open" not in a
        if "sig" in (a.get("class") or "").split():
            sig = True
        self.stack.append((tag, hidden, sig))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        hidden, sig = self._state()
        n = len(data.strip())
        if not hidden and n:
            self.text += n
            self.sig += n if sig else 0


def test_signatures_are_folded_under_15_percent_of_the_visible_text(page):
    text = page.read_text(encoding="utf-8")
    v = _Visible()
    v.feed(text)
    assert v.text > 0 and v.sig / v.text < 0.15, (v.sig, v.text)
    assert text.count('<details class="sigs">') >= 4  # each table's signatures, and all of them, folded
    assert 'title="ndcg@10|gain:binary' in text  # each whole one as the tooltip


def test_protocol_is_a_table_of_fields_and_the_path_is_said(tmp_path, capsys):
    from receval.cli import main

    args = _runs_files(tmp_path)
    assert main([*args, "--report", str(tmp_path / "rep"), "--ci", "none"]) == 0
    err = capsys.readouterr().err
    page = tmp_path / "rep" / "index.html"
    assert f"report: {page}" in err
    text = page.read_text(encoding="utf-8")
    proto = text.split('id="protocol"')[1].split("</section>")[0]
    assert '<table class="protocol">' in proto and "{" not in proto  # no raw JSON
    assert "<td>runs: " in proto

"""The docs site works offline: formulas are rendered by the KaTeX copy it ships
(docs/assets/katex, refreshed by tools/vendor_katex.py), and no page loads a script, a
stylesheet or a font from another host."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REMOTE = re.compile(r"^(https?:)?//", re.I)


def _config() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_config_names_only_local_scripts_and_stylesheets():
    cfg = _config()
    assets = [*cfg.get("extra_javascript", []), *cfg.get("extra_css", [])]
    assert any("katex.min.js" in str(a) for a in assets) and any("katex.min.css" in str(a) for a in assets)
    for a in assets:
        path = a if isinstance(a, str) else a["path"]
        assert not REMOTE.match(path), f"mkdocs.yml loads {path} from the network"
        assert (ROOT / "docs" / path).is_file(), f"mkdocs.yml names {path}, missing from docs/"
    assert cfg["theme"].get("font") is False, "theme.font must be false: Material would load Google Fonts"
    arith = next(e["pymdownx.arithmatex"] for e in cfg["markdown_extensions"] if isinstance(e, dict) and "pymdownx.arithmatex" in e)
    assert arith.get("generic") is True


def test_katex_copy_is_whole():
    d = ROOT / "docs" / "assets" / "katex"
    css = (d / "katex.min.css").read_text(encoding="utf-8")
    fonts = re.findall(r"url\(([^)]+)\)", css)
    assert fonts and all(f.endswith(".woff2") and (d / f).is_file() for f in fonts), "every font the CSS names is shipped"
    assert (d / "VERSION").read_text().strip() and (d / "LICENSE").is_file()
    assert "renderMathInElement" in (d / "auto-render.min.js").read_text(encoding="utf-8")


def test_built_site_loads_nothing_from_the_network(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT / "src"))
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                   cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)
    pages = list((tmp_path / "site").rglob("*.html"))
    assert pages
    tag = re.compile(r"<(script|link|img|iframe)\b[^>]*>", re.I)
    attr = re.compile(r"\b(src|href)\s*=\s*[\"']([^\"']+)", re.I)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for m in tag.finditer(text):
            element = m.group(0)
            if m.group(1).lower() == "link" and not re.search(r"rel=[\"']?(stylesheet|preload|preconnect|icon|modulepreload)", element, re.I):
                continue  # canonical / alternate links are not loaded
            for _, url in attr.findall(element):
                assert not REMOTE.match(url), f"{page.relative_to(tmp_path)} loads {url}"
    metrics = (tmp_path / "site" / "metrics" / "index.html").read_text(encoding="utf-8")
    assert "katex.min.js" in metrics and 'class="arithmatex"' in metrics
    for css in (tmp_path / "site").rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", css.read_text(encoding="utf-8", errors="replace")):
            assert not REMOTE.match(url), f"{css.name} loads {url}"

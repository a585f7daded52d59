"""Refresh the KaTeX copy the docs site ships (docs/assets/katex/), from npm.

    python tools/vendor_katex.py            # the version in docs/assets/katex/VERSION
    python tools/vendor_katex.py 0.16.22    # another version

Downloads the ``katex`` package with ``npm pack`` (npm's registry, nothing else), and copies
its ``dist`` files the site needs: ``katex.min.js``, ``contrib/auto-render.min.js``,
``katex.min.css`` and the WOFF2 fonts (every browser that runs KaTeX reads WOFF2; the CSS is
rewritten to name only those, so no font the site lacks is ever requested), plus KaTeX's
licence. The site then renders formulas without network access (``mkdocs.yml``:
``extra_javascript`` / ``extra_css``; ``docs/javascripts/katex.js`` calls auto-render on the
``arithmatex`` elements).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

DEST = Path(__file__).resolve().parents[1] / "docs" / "assets" / "katex"


def css_woff2_only(css: str) -> str:
    """Each ``@font-face`` ``src`` reduced to its WOFF2 ``url(...)``."""
    return re.sub(r'src:url\((fonts/[^)]+\.woff2)\) format\("woff2"\)(?:,url\([^)]+\) format\("[^"]+"\))*',
                  r'src:url(\1) format("woff2")', css)


def main(argv: list[str]) -> int:
    version = argv[1] if len(argv) > 1 else (DEST / "VERSION").read_text().strip()
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(["npm", "pack", f"katex@{version}", "--silent"], cwd=tmp, check=True,
                             capture_output=True, text=True).stdout.strip().splitlines()[-1]
        with tarfile.open(Path(tmp) / out) as tar:
            tar.extractall(tmp, filter="data")
        dist = Path(tmp) / "package" / "dist"
        if DEST.exists():
            shutil.rmtree(DEST)
        (DEST / "fonts").mkdir(parents=True)
        shutil.copy(dist / "katex.min.js", DEST)
        shutil.copy(dist / "contrib" / "auto-render.min.js", DEST)
        css = css_woff2_only((dist / "katex.min.css").read_text(encoding="utf-8"))
        if re.search(r"\.(woff|ttf)\)", css):
            raise SystemExit("katex.min.css still names WOFF/TTF fonts: update css_woff2_only")
        (DEST / "katex.min.css").write_text(css, encoding="utf-8")
        for font in sorted((dist / "fonts").glob("*.woff2")):
            shutil.copy(font, DEST / "fonts")
        shutil.copy(Path(tmp) / "package" / "LICENSE", DEST / "LICENSE")
        (DEST / "VERSION").write_text(version + "\n")
    print(f"KaTeX {version} -> {DEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

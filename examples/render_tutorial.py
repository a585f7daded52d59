"""Write docs/tutorial.md from the example scripts and their real output.

    python examples/render_tutorial.py            # rewrites docs/tutorial.md

Every number in the tutorial is printed by running the scripts; tests/test_examples.py runs
them again and fails when the page is stale.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAD = """# Tutorial

The scripts in `examples/` of the repository, run on
the data that ships with receval. The code is the script as it is in the repository and the
output is what it printed when this page was generated
(`python examples/render_tutorial.py`; a test regenerates the page and fails when it differs).
"""


def scripts() -> list[Path]:
    return sorted((ROOT / "examples").glob("[0-9][0-9]_*.py"))


def run(script: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} failed:\n{done.stderr}")
    return done.stdout


def section(script: Path, output: str) -> str:
    text = script.read_text(encoding="utf-8")
    tree = ast.parse(text)
    doc = ast.get_docstring(tree) or ""
    title, _, rest = doc.partition("\n")
    body = text.split('"""', 2)[2].lstrip("\n") if text.startswith('"""') else text
    return (
        f"## {title.strip()}\n\n{rest.strip()}\n\n`examples/{script.name}`:\n\n```python\n{body.rstrip()}\n```\n\n"
        f"Output:\n\n```text\n{output.rstrip()}\n```\n"
    )


def render(outputs: dict[str, str] | None = None) -> str:
    parts = [HEAD]
    for script in scripts():
        out = outputs[script.name] if outputs is not None else run(script)
        parts.append(section(script, out))
    return "\n".join(parts)


if __name__ == "__main__":
    path = ROOT / "docs" / "tutorial.md"
    path.write_text(render(), encoding="utf-8")
    print(path)

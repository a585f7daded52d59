"""Run several peer-runner jobs in one process (the driver of receval.adapters).

    <env python> _batch.py JOBS_JSON

JOBS_JSON is a list of ``{"runner": "<name>", "in": IN_DIR, "out": OUT_JSON}``: each job runs
``<name>.py IN_DIR OUT_JSON`` (see _common.py for the formats) in this process, so the peer
library is imported once for all the jobs. A job that raises writes ``{"error": "<one line>"}``
to its OUT_JSON instead, and the next job runs. Never imports receval.
"""
import json
import runpy
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: _batch.py JOBS_JSON")
    jobs = json.loads(Path(sys.argv[1]).read_text())
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import _common  # noqa: F401  (first: it drops this folder from sys.path again, see _common.py)

    for job in jobs:
        out = Path(job["out"])
        sys.argv = [str(HERE / f"{job['runner']}.py"), job["in"], str(out)]
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except BaseException as exc:  # noqa: BLE001  (the library's own exception, reported per job)
            if isinstance(exc, KeyboardInterrupt):
                raise
            lines = [ln for ln in f"{type(exc).__name__}: {exc}".splitlines() if ln.strip()]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"error": lines[0] if lines else type(exc).__name__,
                                       "traceback": traceback.format_exc()[-3000:]}))
        sys.argv = [sys.argv[0]]


if __name__ == "__main__":
    main()

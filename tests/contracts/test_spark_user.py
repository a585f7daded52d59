"""Spark as a user meets it (issue 10): a session receval builds runs its workers on the
driver's Python, sizes its shuffle to the data on a local master, and never deletes a
directory it did not write."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from receval.backends.spark import local_session

    session = local_session(partitions=200)  # the Spark default: receval must not use 200 on tiny data
    yield session
    session.stop()


def _data(tmp_path: Path) -> tuple[str, str]:
    recs = pl.DataFrame({"user_id": [1, 1, 1, 2, 2, 3], "item_id": [10, 20, 30, 10, 40, 50],
                         "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]})
    truth = pl.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [20, 30, 40, 60], "rating": [5.0, 4.0, 3.0, 5.0]})
    recs.write_csv(tmp_path / "r.csv")
    truth.write_csv(tmp_path / "t.csv")
    return str(tmp_path / "r.csv"), str(tmp_path / "t.csv")


def test_workers_run_on_the_drivers_python(tmp_path):
    """A `python3` on PATH that is not the driver's (an unactivated venv, pipx, a notebook
    kernel) must not be the workers' Python: here it refuses to run at all."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    recs, truth = _data(tmp_path)
    shim = tmp_path / "bin"
    shim.mkdir()
    for name in ("python", "python3"):
        (shim / name).write_text("#!/bin/sh\necho 'not the driver python' >&2\nexit 3\n")
        (shim / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{shim}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(SRC)
    code = textwrap.dedent("""
        import sys
        from receval.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code, "evaluate", recs, truth, "-m", "precision@2", "--engine", "spark", "--format", "csv"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # precision@2: user 1 (20 at 2) 1/2, user 2 (40 at 2) 1/2, user 3 0 -> 1/3
    row = [line for line in proc.stdout.splitlines() if line.startswith("precision@2")][0]
    assert float(row.split(",")[1]) == pytest.approx((0.5 + 0.5 + 0.0) / 3, abs=1e-12)


def test_worker_python_is_this_interpreter(monkeypatch):
    pytest.importorskip("pyspark")
    from receval.backends.spark import worker_python

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert worker_python() == sys.executable
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python")
    assert worker_python() == "/opt/py/bin/python"


def test_partitions_sized_to_the_data_on_local(spark):
    from receval.backends.spark import partitions_for

    small = spark.createDataFrame([(1, 2)], "u long, i long").coalesce(1)
    cores = spark.sparkContext.defaultParallelism
    assert spark.conf.get("spark.sql.shuffle.partitions") == "200"
    assert partitions_for(spark, [small, small]) == max(cores, 2)
    big = spark.range(0, 1000, numPartitions=30)
    assert partitions_for(spark, [big, small]) == 31
    assert partitions_for(spark, [small], configured=7) == 7


def test_per_user_directory_is_never_deleted(spark, tmp_path):
    from receval import evaluate
    from receval.errors import DataError

    recs, truth = _data(tmp_path)
    rs, ts = spark.read.csv(recs, header=True, inferSchema=True), spark.read.csv(truth, header=True, inferSchema=True)
    res = evaluate(rs, ts, ["ndcg@2"])
    mine = tmp_path / "mine.csv"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    for overwrite in (False, True):
        with pytest.raises(DataError):
            res.write_per_user(str(mine), overwrite=overwrite)
    assert (mine / "notes.txt").read_text() == "keep me"
    out = tmp_path / "pu.json"
    res.write_per_user(str(out))
    with pytest.raises(DataError, match="already exists"):
        res.write_per_user(str(out))
    res.write_per_user(str(out), overwrite=True)  # an earlier Spark output: replaced on request
    rows = pl.concat([pl.read_ndjson(p) for p in sorted(out.glob("part-*.json"))]).sort("user_id")
    assert rows["user_id"].to_list() == [1, 2, 3]
    with pytest.raises(DataError, match="extension"):
        res.write_per_user(str(tmp_path / "pu.txt"))

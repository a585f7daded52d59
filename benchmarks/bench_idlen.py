"""Benchmark: the realistic 1M x 100 shape (:mod:`bench_core`) with ids of a chosen length,
CPU time of one ``receval.evaluate`` call (the 18 core values) in a fresh process.

``--id-len 0`` keeps the realistic shape's own ids (``u0001000``, ``i5251``: at most 12 bytes,
inline in their Arrow string views); ``--id-len 17`` pads both id columns to 17 bytes
(``u0000000000001000``, ``i0000000000005251``). The kernels are loaded (from numba's cache)
before the timed call; the CPU time is ``resource.getrusage`` (user + system, every thread) of
the call alone, so a shared machine's load does not count.

    python benchmarks/bench_idlen.py --id-len 17 --src src            # one run, JSON on stdout
    python benchmarks/bench_idlen.py --id-len 17 --src ../base/src --no-jit   # the numpy path
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "out" / "data"


def data_dir(users: int, k: int, id_len: int, seed: int = 0) -> Path:
    """Write (once) and return the Parquet directory of the realistic shape with ``id_len``-byte ids."""
    import polars as pl

    sys.path.insert(0, str(HERE))
    import bench_core as B

    d = DATA / f"{users}x{k}-s{seed}-realistic-id{id_len}"
    if (d / "truth.parquet").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    r, t = B.realistic(*B.make_data(users, k, seed), seed)
    if id_len:
        def pad(df: pl.DataFrame) -> pl.DataFrame:
            return df.with_columns(*(pl.col(c).str.slice(0, 1) + pl.col(c).str.slice(1).str.zfill(id_len - 1)
                                     for c in ("user_id", "item_id")))
        r, t = pad(r), pad(t)
        assert (r["user_id"].str.len_bytes() == id_len).all() and (r["item_id"].str.len_bytes() == id_len).all()
    r.write_parquet(d / "recs.parquet", statistics=False)
    t.write_parquet(d / "truth.parquet", statistics=False)
    return d


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--id-len", type=int, default=0, help="bytes of every id (0: the realistic shape's own)")
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--src", help="the receval source to time (put first on the path)")
    ap.add_argument("--no-jit", action="store_true", help="the numpy path (RECEVAL_NO_JIT=1)")
    a = ap.parse_args(argv)
    if a.no_jit:
        os.environ["RECEVAL_NO_JIT"] = "1"
    if a.src:
        sys.path.insert(0, str(Path(a.src).resolve()))
    import resource

    import polars as pl

    import receval
    import bench_core as B  # noqa: F401  (on the path from data_dir)

    d = data_dir(a.users, a.k, a.id_len)
    recs = pl.read_parquet(d / "recs.parquet", columns=["user_id", "item_id", "score"])
    truth = pl.read_parquet(d / "truth.parquet")
    if not a.no_jit:
        from receval import kernels

        kernels._jit()  # loaded (or compiled) before the timed call
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    res = receval.evaluate(recs, truth, B.METRICS)
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    print(json.dumps({"src": receval.__file__, "id_len": a.id_len, "no_jit": a.no_jit, "cpu_s": round(cpu, 2),
                      "wall_s": round(wall, 2), "load": os.getloadavg(),
                      "values": {k: float(v).hex() for k, v in res.values.items()}}))


if __name__ == "__main__":
    main()

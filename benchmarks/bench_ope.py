"""Benchmark: offline A/B tests (``receval.ope``): the Open Bandit Dataset table, and logs of 10M rounds.

1. **The Open Bandit Dataset table** (the example ``examples/06_offline_ab.py``): the Bernoulli-TS
   policy's click rate estimated from the uniform-random policy's log (10,000 rounds of the sample
   bundled with receval), each estimator's relative error against the TS policy's own logged click
   rate, beside obp 0.4.1's numbers on the same arrays; ``evaluate`` timed (median of ``--repeat``).
2. **Scale**: a seeded synthetic log of ``--rounds`` rounds (one context per round, 100 items logged
   uniformly, a 0/1 reward) and a stochastic target (three items per context: 0.6, 0.2, 0.2) written
   to Parquet; ``receval.ope.evaluate(log, target, [naive, ips, snips, ips(cap=10)])`` from the
   Parquet paths in a fresh subprocess (wall time; peak RSS = the process's VmHWM, which includes
   the Python interpreter and the libraries), and the same through the CLI (``receval ope``, peak RSS
   from ``/usr/bin/time -v``); with the default batches and with one batch (the values compared).

    python benchmarks/bench_ope.py                      # the table + 10M rounds; writes the section
    python benchmarks/bench_ope.py --rounds 1000000     # a smaller log

Writes ``benchmarks/out/ope.json`` and the ``ope`` section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
DATA = OUT / "data"
ESTIMATORS = ["naive", "ips", "snips", "ips(cap=10)"]
OBD = ["naive", "ips", "snips", "dm", "dr", "sndr", "switch_dr(tau=1)", "switch_dr(tau=10)"]
OBP_NAMES = {"ips": "ipw", "snips": "snipw", "dm": "dm", "dr": "dr", "sndr": "sndr",
             "switch_dr(tau=1)": "switch-dr(tau=1)", "switch_dr(tau=10)": "switch-dr(tau=10)"}


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def obd_table(repeat: int) -> dict:
    from receval.data.obd import load_obd, obd_inputs
    from receval.ope import evaluate

    arrays, obp = load_obd()
    log, target, rewards = obd_inputs(arrays)
    times, res = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        res = evaluate(log, target, OBD, rewards=rewards)
        times.append(time.perf_counter() - t)
    assert res is not None
    truth = obp["ground_truth"]
    rows = []
    for name in OBD:
        e = res.entry(name)
        theirs = obp["estimates"].get(OBP_NAMES.get(name, ""))
        rows.append({"estimator": name, "value": e.value, "low": e.low, "high": e.high,
                     "relative_error": abs(e.value - truth) / truth, "obp": theirs,
                     "obp_relative_error": None if theirs is None else abs(theirs - truth) / truth})
    return {"rounds": len(log["reward"]), "ground_truth": truth, "seconds": statistics.median(times), "rows": rows}


def make_log(n: int, folder: Path, seed: int = 0) -> dict:
    import polars as pl

    folder.mkdir(parents=True, exist_ok=True)
    log_path, target_path = folder / f"ope_log_{n}.parquet", folder / f"ope_target_{n}.parquet"
    if not (log_path.exists() and target_path.exists()):
        rng = np.random.default_rng(seed)
        items = 100
        ctx = np.arange(n, dtype=np.int64)
        item = rng.integers(0, items, n)
        reward = (rng.random(n) < 0.05 + 0.001 * (item % 10)).astype(np.float64)
        pl.DataFrame({"context_id": ctx, "item_id": item, "reward": reward,
                      "propensity": np.full(n, 1.0 / items)}).write_parquet(log_path)
        del item, reward
        t1 = rng.integers(0, items, n)
        t2 = (t1 + 1 + rng.integers(0, items - 2, n)) % items  # never t1
        t3 = np.where((t1 + 50) % items == t2, (t1 + 51) % items, (t1 + 50) % items)
        t3 = np.where(t3 == t1, (t3 + 1) % items, t3)
        pl.DataFrame({"context_id": np.concatenate([ctx, ctx, ctx]), "item_id": np.concatenate([t1, t2, t3]),
                      "propensity": np.concatenate([np.full(n, 0.6), np.full(n, 0.2), np.full(n, 0.2)])}).write_parquet(target_path)
    memory = sum(pl.read_parquet(p).estimated_size() for p in (log_path, target_path))
    return {"log": str(log_path), "target": str(target_path), "parquet_bytes": log_path.stat().st_size + target_path.stat().st_size,
            "input_bytes": memory}


def child(log: str, target: str, batches: int | None) -> None:
    """One evaluate call in this fresh process: prints its seconds, values and VmHWM as JSON."""
    from receval.ope import evaluate

    t = time.perf_counter()
    res = evaluate(log, target, ESTIMATORS, batches=batches)
    seconds = time.perf_counter() - t
    hwm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM"))
    print(json.dumps({"seconds": seconds, "peak_rss_bytes": hwm, "values": {e.estimator: e.value for e in res.entries},
                      "intervals": {e.estimator: [e.low, e.high] for e in res.entries}}))


def api_run(data: dict, batches: int | None) -> dict:
    cmd = [sys.executable, __file__, "--child", data["log"], data["target"], str(batches or 0)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def baseline() -> int:
    """VmHWM of a fresh process that imported receval.ope and polars and read nothing."""
    code = ("import receval.ope, polars, numpy; "
            "print(next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), check=True).stdout)


def cli_run(data: dict) -> dict:
    cmd = ["/usr/bin/time", "-v", sys.executable, "-c", "import sys; from receval.cli import main; sys.exit(main())", "ope",
           data["log"], data["target"], "--format", "json"]
    for e in ESTIMATORS:
        cmd += ["-e", e]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), check=True)
    seconds = time.perf_counter() - t
    rss = next(int(line.split()[-1]) * 1024 for line in done.stderr.splitlines() if "Maximum resident set size" in line)
    values = {r["metric"]: r["value"] for r in json.loads(done.stdout)["results"]}
    return {"seconds": seconds, "peak_rss_bytes": rss, "values": values}


def _gb(b: float | None) -> str:
    return "-" if b is None else f"{b / 1e9:.2f} GB"


def render(out: dict) -> str:
    o = out["obd"]
    lines = ["## Offline A/B tests (`benchmarks/bench_ope.py`)", "",
             f"**The Open Bandit Dataset table** (`examples/06_offline_ab.py`): the Bernoulli-TS policy's click rate estimated "
             f"from the uniform-random policy's log ({o['rounds']:,} rounds of the bundled sample), relative error "
             f"|estimate − truth| / truth against the TS policy's own logged click rate ({o['ground_truth']}), beside "
             f"obp 0.4.1 on the same arrays. One `receval.ope.evaluate` call with the {len(o['rows'])} estimators: "
             f"{o['seconds']:.2f} s (median).", "",
             "| estimator | estimate | 95% interval | relative error | obp 0.4.1 | obp relative error |", "|---|---|---|---|---|---|"]
    for r in o["rows"]:
        obp = "-" if r["obp"] is None else f"{r['obp']:.6f}"
        obp_re = "-" if r["obp_relative_error"] is None else f"{r['obp_relative_error']:.4f}"
        lines.append(f"| {r['estimator']} | {r['value']:.6f} | [{r['low']:.5f}, {r['high']:.5f}] | {r['relative_error']:.4f} | {obp} | {obp_re} |")
    s = out.get("scale")
    if s:
        lines += ["", f"**Scale**: {s['rounds']:,} rounds (log) and {3 * s['rounds']:,} target rows from Parquet "
                  f"({s['parquet_bytes'] / 1e6:.0f} MB on disk, {_gb(s['input_bytes'])} as frames in memory), "
                  f"`{', '.join(ESTIMATORS)}` with normal intervals, each run in a fresh process; peak RSS includes the "
                  f"interpreter and the libraries ({_gb(s['baseline_bytes'])} after `import receval.ope`, before reading).", "",
                  "| run | batches | wall | peak RSS | peak / input in memory | (peak − imports) / input | values equal (API: to the one-batch run; CLI: to the API's) |",
                  "|---|---|---|---|---|---|---|"]
        for r in s["runs"]:
            lines.append(f"| {r['what']} | {r['batches']} | {r['seconds']:.1f} s | {_gb(r['peak_rss_bytes'])} | "
                         f"{r['peak_rss_bytes'] / s['input_bytes']:.2f}× | {(r['peak_rss_bytes'] - s['baseline_bytes']) / s['input_bytes']:.2f}× | "
                         f"{r.get('same_values', '-')} |")
        ref = s["runs"][0].get("same_as_reference")
        if ref is not None:
            lines += ["", f"Values and intervals of the default run equal, bit for bit, to those of the code before the inputs were "
                          f"read batch by batch (its `ope.json`): {ref}; that code's peak RSS on the same files: "
                          f"{_gb(s['runs'][0].get('reference_peak_rss_bytes'))} "
                          f"({s['runs'][0].get('reference_peak_rss_bytes', 0) / s['input_bytes']:.2f}× the input)."]
        if s.get("load"):
            lines += ["", f"Load average during the runs: {s['load']} on {os.cpu_count()} cores (other work): the wall times "
                          "are not comparable across sections."]
    m = out["machine"]
    lines += ["", f"Machine: {m['cores']} cores shared with other work (timings noisy), Python {m['python']}, receval {m['receval']}."]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-scale", action="store_true", help="the OBD table only")
    ap.add_argument("--no-one-batch", action="store_true", help="skip the one-batch run of the scale log")
    ap.add_argument("--reference", metavar="JSON", help="an earlier ope.json (e.g. of the previous code) whose scale values "
                    "and intervals the default run must equal")
    ap.add_argument("--render", metavar="JSON", help="only render (and write the section of) an earlier ope.json")
    ap.add_argument("--child", nargs=3, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child[0], a.child[1], int(a.child[2]) or None)
        return
    sys.path.insert(0, str(ROOT / "src"))
    if a.render:
        text = render(json.loads(Path(a.render).read_text()))
        print(text)
        sys.path.insert(0, str(HERE))
        from bench_core import write_section

        write_section("ope", text)
        return
    import receval

    out: dict = {"machine": {"cores": os.cpu_count(), "python": platform.python_version(), "receval": receval.__version__}}
    out["obd"] = obd_table(a.repeat)
    if not a.no_scale:
        data = make_log(a.rounds, DATA)
        runs = []
        default = api_run(data, None)
        runs.append({"what": "API `receval.ope.evaluate`", "batches": f"default ({-(-a.rounds // 1_000_000)})", **default})
        cli = cli_run(data)
        runs.append({"what": "CLI `receval ope`", "batches": "default", **cli, "same_values": cli["values"] == default["values"]})
        if not a.no_one_batch:
            one = api_run(data, 1)
            runs.append({"what": "API `receval.ope.evaluate`", "batches": "1", **one})
            runs[0]["same_values"] = default["values"] == one["values"] and default["intervals"] == one["intervals"]
        if a.reference:
            ref = json.loads(Path(a.reference).read_text())["scale"]["runs"][0]
            runs[0]["same_as_reference"] = (ref["values"] == default["values"] and ref["intervals"] == default["intervals"])
            runs[0]["reference_peak_rss_bytes"] = ref["peak_rss_bytes"]
        out["scale"] = {"load": f"{os.getloadavg()[0]:.1f}", "rounds": a.rounds, "parquet_bytes": data["parquet_bytes"], "input_bytes": data["input_bytes"], "runs": runs,
                        "baseline_bytes": baseline()}
    OUT.mkdir(exist_ok=True)
    (OUT / "ope.json").write_text(json.dumps(out, indent=1))
    text = render(out)
    print(text)
    sys.path.insert(0, str(HERE))
    from bench_core import write_section

    write_section("ope", text)


if __name__ == "__main__":
    main()

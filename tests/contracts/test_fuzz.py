"""Hypothesis fuzzing of the entry points (issue: adversarial inputs): ``receval runs`` and
:func:`receval.stats.compare` with the tables they render, :func:`receval.sampled.sampled_evaluate`,
and the TREC readers on random bytes and lines. Whatever the input, the outcome is a value or a
:class:`receval.errors.RecevalError` (the command line: exit status 2 and one ``receval: error:``
line), never another exception, never a traceback.

Derandomized and modest (``max_examples``) so the file runs in well under a minute.

Hypothesis fuzzing of the input step (issue 10): arbitrary frames of mixed types give a
value or a RecevalError, never another exception; equal inputs under any id relabelling, id
type or row order give equal values.
"""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import receval
from receval import RecevalError
from receval.cli import main

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# names with every special of the formats a name reaches: Markdown, LaTeX, HTML, rich markup,
# matplotlib mathtext, line breaks, quotes
SPECIAL = "$|\n\r&%_#<>[]/`*{}~^\\\"' \t"
TOKENS = ["[/b]", "[bold]", "$x$", "$_$", "\\frac", "<i>", "&amp;", "\r\n", "``"]
name_text = st.lists(st.sampled_from(list(SPECIAL) + list("abcxyz019αé—") + TOKENS), min_size=1, max_size=6).map("".join)


def mostly(valid, invalid, odds: int = 4):
    """``valid`` ``odds`` times as often as ``invalid``: most examples get past the checks to the work."""
    return st.sampled_from([True] * odds + [False]).flatmap(lambda ok: valid if ok else invalid)


def _one_line_error(exc: BaseException) -> None:
    """A RecevalError with a message: one line but for the user's own text it echoes (a run
    named "a\\nb"); the command line prints any of them on one line (receval.cli.one_line)."""
    from receval.cli import one_line

    assert isinstance(exc, RecevalError), f"{type(exc).__name__}: {exc}"
    msg = str(exc)
    assert msg.strip() and "\n" not in one_line(msg), msg


# ---- receval runs (the command line) ----------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("runs")
    (d / "truth.csv").write_text("user_id,item_id,rating\n1,20,5\n1,30,3\n2,40,4\n3,10,5\n4,50,1\n")
    (d / "a.csv").write_text("user_id,item_id,score\n1,10,0.9\n1,20,0.8\n1,30,0.7\n2,10,0.5\n2,40,0.4\n3,10,0.3\n4,50,0.2\n")
    (d / "b.csv").write_text("user_id,item_id,score\n1,20,0.9\n1,10,0.8\n1,30,0.7\n2,40,0.5\n2,10,0.4\n3,20,0.3\n4,60,0.1\n")
    (d / "bad.csv").write_text("user_id;item_id;score\n1;10;0.9\n")
    return d


GOOD_METRICS = ["ndcg@2", "ndcg@[1,2]", "precision@1", "recall@[1,3]", "mrr@2", "map(denominator=k)@2",
                "ndcg(gain=linear)@2", "hitrate@1", "ndcg(ties=item)@[1,3]"]
BAD_METRICS = ["ndcg@0", "ndgc@2", "ndcg@[1,1]", "auc", "", "ndcg@", "ndcg@[2", "x" * 500, "ndcg@2\n"]


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # only --help / --version exit this way
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@FUZZ
@given(names=st.lists(name_text, min_size=1, max_size=3, unique_by=str.strip),
       metrics=st.lists(mostly(st.sampled_from(GOOD_METRICS), st.sampled_from(BAD_METRICS)), min_size=1, max_size=2),
       fmt=mostly(st.sampled_from(["table", "markdown", "latex", "html", "csv", "json"]), st.just("bogus")),
       test=mostly(st.sampled_from(["t", "wilcoxon", "permutation", "bootstrap", "tukey"]), st.just("z")),
       ci=mostly(st.sampled_from(["t", "none", "percentile", "poisson", "bca"]), st.just("xx")),
       extra=mostly(st.sampled_from([[], ["--rel", "4"], ["--ties", "item"], ["--alpha", "0.1"], ["--correction", "bh"],
                                     ["--level", "0.9"], ["--figure", "at-k={dir}/k.png", "--force"],
                                     ["--figure", "differences={dir}/d.svg", "--force"], ["--out", "{dir}/t.md", "--force"]]),
                    st.sampled_from([["--level", "1.5"], ["--level", "x"], ["--alpha", "0"], ["--baseline", "nobody"],
                                     ["--resamples", "5"], ["--seed", "-1"], ["--bogus"], ["--figure", "at-k=x.gif"]])),
       files_of=st.lists(mostly(st.sampled_from(["a.csv", "b.csv"]), st.sampled_from(["bad.csv", "missing.csv"])),
                         min_size=3, max_size=3))
def test_runs_cli_exits_0_or_one_line_2(files, names, metrics, fmt, test, ci, extra, files_of):
    argv = ["runs", str(files / "truth.csv")]
    argv += [f"{n}={files / f}" for n, f in zip(names, files_of)]
    for m in metrics:
        argv += ["-m", m]
    argv += ["--format", fmt, "--test", test, "--ci", ci, "--resamples", "200", *(x.format(dir=files) for x in extra)]
    code, out, err = _run_cli(argv)
    assert code in (0, 2), (code, err)
    event(f"exit {code}")
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("receval: error: ") and err.count("\n") == 1, err
    else:
        assert out


# ---- receval.stats.compare and its tables -------------------------------------------------------


values = mostly(st.floats(0, 1), st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(0.0)))


@settings(FUZZ, max_examples=150)  # cheap examples: more of them (markup such as "[/b]" in a name, rendered)
@given(runs=st.lists(mostly(name_text, st.sampled_from(["", " a ", "a"])), min_size=1, max_size=3),
       metrics=st.lists(st.one_of(name_text, st.sampled_from(["ndcg@5", "ndcg@10", "m$x$@3", "a|b@2"])), min_size=0, max_size=3,
                        unique=True),
       n=st.integers(0, 6), lengths_equal=mostly(st.just(True), st.just(False)), data=st.data(),
       test=mostly(st.sampled_from(["t", "wilcoxon", "permutation", "bootstrap", "tukey"]), st.just("z")),
       correction=mostly(st.sampled_from(["holm", "bonferroni", "bh", "none"]), st.just("x")),
       ci=st.sampled_from(["bca", "percentile", "t", "poisson", "none"]),
       level=mostly(st.sampled_from([0.95, 0.5]), st.sampled_from([1.0, 0.0, float("nan"), 95])),
       baseline=mostly(st.sampled_from([None, "a"]), st.just("zz")))
def test_stats_compare_gives_a_comparison_or_a_recevalerror(runs, metrics, n, lengths_equal, data, test, correction, ci,
                                                             level, baseline):
    from receval.stats import compare
    from receval.tables import FORMATS, render_pairs, render_table

    per_user = {}
    for r in runs:
        per_user[r] = {m: np.array(data.draw(st.lists(values, min_size=n if lengths_equal else 0, max_size=n)), dtype=float)
                       for m in metrics}
    ids = np.arange(n) if ci == "poisson" else None
    try:
        cmp = compare(per_user, test=test, correction=correction, ci=ci, level=level, resamples=100, seed=0,
                      baseline=baseline, user_ids=ids, progress=False)
    except RecevalError as exc:
        _one_line_error(exc)
        event("refused")
        return
    except Exception as exc:  # noqa: BLE001 - the assertion names it
        pytest.fail(f"stats.compare raised {type(exc).__name__}: {exc}")
    event("compared")
    for fmt in FORMATS:
        for render in (render_table, render_pairs):
            try:
                text = render(cmp, fmt)
            except RecevalError as exc:
                _one_line_error(exc)
                continue
            assert isinstance(text, str)


# ---- sampled_evaluate -----------------------------------------------------------------------


ids = mostly(st.integers(1, 5), st.one_of(st.integers(-2, 7), st.sampled_from(["1", "a", "", "007"]), st.floats(allow_nan=True),
                                        st.none(), st.booleans()))


@FUZZ
@given(truth_users=st.lists(ids, min_size=1, max_size=5), truth_items=st.lists(ids, min_size=1, max_size=5),
       catalog=mostly(st.just([1, 2, 3, 4, 5, 6, 7]), st.one_of(st.lists(ids, max_size=6), st.just({1, 2}), st.none(), st.just(3))),
       metrics=st.lists(mostly(st.sampled_from(["hitrate@1", "ndcg@3", "mrr", "mrr@2"]),
                               st.sampled_from(["precision@1", "ndcg@0", "x", ""])), min_size=1, max_size=2),
       n=mostly(st.sampled_from([1, 3, 100]), st.sampled_from([0, -1, 2.5, True])),
       seed=mostly(st.integers(0, 2**32), st.sampled_from([-1, 2**70, "s"])),
       estimators=mostly(st.sampled_from([("uncorrected", "bv", "full"), ("full",), ("bv",)]), st.sampled_from([(), ("nope",), "bv"])),
       gamma=mostly(st.sampled_from([0.01, 0.0, 1.0]), st.sampled_from([-1.0, float("nan")])),
       ties=mostly(st.sampled_from(["pessimistic", "optimistic"]), st.just("x")),
       score=mostly(st.just("ok"), st.sampled_from(["short", "nan", "text", "raise", "frame"])),
       rel=mostly(st.sampled_from([None, 3]), st.just("x")))
def test_sampled_evaluate_gives_a_value_or_a_recevalerror(truth_users, truth_items, catalog, metrics, n, seed, estimators,
                                                         gamma, ties, score, rel):
    from receval.sampled import sampled_evaluate

    k = min(len(truth_users), len(truth_items))
    truth = {"user_id": truth_users[:k], "item_id": truth_items[:k], "rating": [4.0] * k}
    size = len(catalog) if isinstance(catalog, (list, set)) else 5

    def scores(user):
        if score == "short":
            return np.zeros(max(size - 1, 0))
        if score == "nan":
            return np.full(size, np.nan)
        if score == "text":
            return ["a"] * size
        if score == "raise":
            raise KeyError(user)  # the caller's own error: passed through, not hidden
        return np.linspace(1, 0, size)

    src: object = scores
    if score == "frame":
        src = {"user_id": [1, 1], "item_id": [1, 2], "score": [0.5, 0.4]}
    try:
        res = sampled_evaluate(src, truth, metrics, catalog=catalog, n=n, seed=seed, estimators=estimators, gamma=gamma,
                               ties=ties, rel=rel)
    except RecevalError as exc:
        _one_line_error(exc)
        event("refused")
        return
    except KeyError:
        assert score == "raise"  # an exception of the score source itself propagates unchanged
        return
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"sampled_evaluate raised {type(exc).__name__}: {exc}")
    event("evaluated")
    for v in res.values.values():
        assert v is None or isinstance(v, float) and (math.isnan(v) or math.isfinite(v))


# ---- TREC readers -----------------------------------------------------------------------------


run_line = st.builds(lambda q, d, r, sc: f"{q} Q0 {d} {r} {sc} tag",
                    mostly(st.sampled_from(["1", "2", "q7"]), st.sampled_from(["", "1 1"]), 12),
                    mostly(st.sampled_from(["d1", "d2", "d3"]), st.just(""), 12),
                    mostly(st.sampled_from(["1", "2"]), st.sampled_from(["x", "-1"]), 12),
                    mostly(st.sampled_from(["0.5", "1", "-2e3"]), st.sampled_from(["nan", "inf", "x", "1e400", ""]), 12))
qrels_line = st.builds(lambda q, d, r: f"{q} 0 {d} {r}", st.sampled_from(["1", "2", "q"]), st.sampled_from(["d1", "d2", "d3"]),
                       mostly(st.sampled_from(["1", "0", "2"]), st.sampled_from(["-1", "2.5", "x", "99999999999999999999"]), 12))
noise = st.text(alphabet=st.sampled_from(list("q1 Q0d.5e-\t\r\x00xé\ufeff#")), max_size=30)
line = st.one_of(run_line, qrels_line, noise)


def content_for(reader: str):
    """Bytes for ``reader``: mostly its own lines, with noise lines among them, or random bytes."""
    good = run_line if reader == "read_run" else qrels_line
    text = st.lists(mostly(good, line, 12), min_size=1, max_size=6).map(lambda ls: "\n".join(ls).encode("utf-8"))
    return mostly(text, st.one_of(st.binary(max_size=200), st.lists(line, max_size=6).map(lambda ls: "\n".join(ls).encode())))


@FUZZ
@given(reader=st.sampled_from(["read_run", "read_qrels"]), suffix=st.sampled_from([".run", ".qrels", ".trec", ".run.gz", ".txt"]),
       gz=mostly(st.just(True), st.just(False)), data=st.data())
def test_trec_readers_give_a_frame_or_a_recevalerror(tmp_path_factory, reader, suffix, gz, data):
    import gzip

    import receval.trec as trec

    content = data.draw(content_for(reader))
    path = tmp_path_factory.mktemp("trec") / f"f{suffix}"
    path.write_bytes(gzip.compress(content) if gz and suffix.endswith(".gz") else content)
    try:
        frame = getattr(trec, reader)(path)
    except RecevalError as exc:
        _one_line_error(exc)
        event("refused")
        return
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"{reader} raised {type(exc).__name__}: {exc}")
    event("read")
    assert frame.width == 3


SPECS = ["precision@3", "recall@3", "ndcg@3", "map@3", "mrr@3"]

cell = st.one_of(
    st.integers(-3, 5), st.integers(2**62, 2**64 - 1), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4), st.none(), st.booleans(), st.sampled_from(["007", "7", "nan", "inf", "", " 1", "1.0"]),
)


@st.composite
def mixed_frame(draw, cols):
    n = draw(st.integers(0, 6))
    kind = draw(st.sampled_from(["uniform", "mixed"]))
    out = {}
    for c in cols:
        if kind == "uniform":
            base = draw(st.sampled_from([st.integers(0, 4), st.text(alphabet="ab0", min_size=1, max_size=2),
                                         st.floats(-2, 6, allow_nan=False), st.booleans()]))
            out[c] = draw(st.lists(base, min_size=n, max_size=n))
        else:
            out[c] = draw(st.lists(cell, min_size=n, max_size=n))
    return out


def _frame(cols: dict, how: str):
    if how == "pandas":
        return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in cols.items()})
    return cols  # a dict of lists: polars infers (or refuses) the types


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=mixed_frame(["user_id", "item_id", "score"]), truth=mixed_frame(["user_id", "item_id", "rating"]),
       how=st.sampled_from(["dict", "pandas"]), rel=st.sampled_from([None, 1, ">0", "all"]))
def test_mixed_frames_give_a_value_or_a_one_line_error(recs, truth, how, rel):
    kw = {} if rel is None else {"rel": rel}
    try:
        res = receval.evaluate(_frame(recs, how), _frame(truth, how), SPECS, **kw)
    except RecevalError as exc:
        assert "\n" not in str(exc).strip() and str(exc)
        return
    for spec in SPECS:
        v = res[spec]
        assert math.isfinite(v) and 0.0 <= v <= 1.0 + 1e-12, (spec, v)
        receval.parse_signature(res.signature(spec))


@st.composite
def dataset(draw):
    n_users = draw(st.integers(1, 5))
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": [], "rating": []}
    score = 1000.0
    for u in range(n_users):
        items = draw(st.lists(st.integers(0, 8), unique=True, max_size=5))
        for i in items:
            score -= draw(st.floats(0.5, 3.0))  # distinct scores: no tie rule reads an id
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(score)
        rel = draw(st.lists(st.integers(0, 8), unique=True, min_size=1, max_size=4))
        for i in rel:
            truth["user_id"].append(u)
            truth["item_id"].append(i)
            truth["rating"].append(draw(st.sampled_from([1.0, 3.0, 4.5, 5.0])))
    return recs, truth


def _relabel(data: dict, users: dict, items: dict) -> dict:
    return {**data, "user_id": [users[u] for u in data["user_id"]], "item_id": [items[i] for i in data["item_id"]]}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=dataset(), seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["int", "str", "big", "padded"]),
       rel=st.sampled_from([None, 4.5]))
def test_values_do_not_depend_on_labels_types_or_row_order(data, seed, kind, rel):
    recs, truth = data
    rng = np.random.default_rng(seed)
    perm_u, perm_i = rng.permutation(10), rng.permutation(20)
    label = {
        "int": lambda p, x: int(p[x]) * 7 - 30,
        "str": lambda p, x: f"id-{p[x]}",
        "big": lambda p, x: 2**63 + int(p[x]),
        "padded": lambda p, x: f"{p[x]:03d}",
    }[kind]
    users = {u: label(perm_u, u) for u in range(10)}
    items = {i: label(perm_i, i) for i in range(20)}
    r2, t2 = _relabel(recs, users, items), _relabel(truth, users, items)
    order_r, order_t = rng.permutation(len(recs["user_id"])), rng.permutation(len(truth["user_id"]))
    r2 = {k: [v[j] for j in order_r] for k, v in r2.items()}
    t2 = {k: [v[j] for j in order_t] for k, v in t2.items()}
    if kind == "big":
        r2 = pl.DataFrame(r2, schema_overrides={"user_id": pl.UInt64, "item_id": pl.UInt64})
        t2 = pl.DataFrame(t2, schema_overrides={"user_id": pl.UInt64, "item_id": pl.UInt64})
    kw = {"rel": rel} if rel is not None else {}
    try:
        a = receval.evaluate(recs, truth, SPECS, **kw)
    except RecevalError as exc:
        with pytest.raises(RecevalError) as again:
            receval.evaluate(r2, t2, SPECS, **kw)
        assert type(again.value) is type(exc)
        return
    b = receval.evaluate(r2, t2, SPECS, **kw)
    for spec in SPECS:
        assert b[spec] == pytest.approx(a[spec], abs=1e-12), spec

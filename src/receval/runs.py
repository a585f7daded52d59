"""Several runs against one ground truth: evaluated on the same users, compared with paired statistics.

:func:`evaluate_runs` reads the ground truth once (:func:`receval.inputs.read_truth`) and
evaluates every run on it with the same metrics and options. **The user set** is declared and
recorded in every comparison signature (``userset:truth``): the users of the ground truth, under
the context policies (``empty``: a user without a relevant item is skipped for every run
alike; ``norecs``: a truth user a run has no recommendation for scores 0 under the default
``norecs=zero``, is skipped under ``norecs=skip``, which :func:`evaluate_runs` refuses because
the runs would then be compared on different users). :meth:`Runs.compare` compares the runs on
the *paired* users, those on which every run has a value on every metric: a user some run or
metric leaves out (``empty=skip``, ``insufficient=exclude``, ...) is dropped from every run and
metric alike, and the signature says how many were dropped and why
(``userset:truth|paired:594/608|dropped:norel``: ``norel`` when every value left out is a user
without a relevant item skipped by ``empty=skip``, ``novalue`` otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from .api import evaluate
from .comparison import Comparison
from .errors import DataError, SpecError
from .inputs import read_truth
from .io import Columns, id_columns, parse_sep
from .metrics import registered
from .report import (fmt_num, html_display, html_fingerprint, html_fingerprints, html_signature, html_signatures,
                     shared_fields, text_table)
from .resampling import StatsOptions
from .results import Results
from .stats import check_run_names, compare, paired_users
from .tables import partial_runs

if TYPE_CHECKING:  # pragma: no cover
    from .types import Frame, Metrics

@dataclass
class Runs:
    """The results of several runs on one ground truth, aligned by user."""

    results: dict[str, Results]
    user_ids: np.ndarray
    users: str = "truth"

    @property
    def names(self) -> list[str]:
        return list(self.results)

    @property
    def metrics(self) -> list[str]:
        first = next(iter(self.results.values()))
        return [e.metric for e in first.entries if e.per_user is not None]

    def per_user(self, run: str | None = None) -> pl.DataFrame:
        """The per-user values as a polars frame, in the layout of
        :meth:`receval.Results.per_user`: one row per run and truth user (``run``, ``user_id``
        with the ids as given, then one column per per-user metric, null where a user has no
        value), the runs in their order and the same users in the same order for every run;
        ``.to_pandas()`` gives a pandas frame. ``run``: that run's rows only, without the
        ``run`` column (equal to ``runs.results[run].per_user()``).

        >>> truth = {"user_id": ["u1", "u2"], "item_id": [10, 20]}
        >>> a = {"user_id": ["u1", "u2"], "item_id": [10, 30], "score": [1.0, 1.0]}
        >>> r = evaluate_runs({"a": a, "b": a}, truth, ["hitrate@1"])
        >>> r.per_user().rows()
        [('a', 'u1', 1.0), ('a', 'u2', 0.0), ('b', 'u1', 1.0), ('b', 'u2', 0.0)]
        >>> r.per_user("b").columns
        ['user_id', 'hitrate@1']
        """
        if run is not None:
            if run not in self.results:
                raise SpecError(f"no run {run!r}; the runs are {', '.join(self.names)}")
            return self.results[run].per_user()
        frames = [self.results[name].per_user().select(["user_id", *self.metrics]) for name in self.names]
        return pl.concat([f.insert_column(0, pl.Series("run", [name] * f.height, dtype=pl.String))
                          for name, f in zip(self.names, frames)], how="vertical_relaxed")

    def arrays(self) -> dict[str, dict[str, np.ndarray]]:
        """``{run: {metric: per-user values}}`` as float arrays (NaN: no value), the same users
        in the same order for every run: the input of :func:`receval.stats.compare`."""
        return {
            name: {e.metric: np.asarray(e.per_user, dtype=np.float64) for e in res.entries if e.per_user is not None}
            for name, res in self.results.items()
        }

    def __repr__(self) -> str:
        head = f"Runs: {len(self.names)} runs x {len(self.metrics)} metrics on {self._users_text()}"
        keys = [e.metric for e in next(iter(self.results.values())).entries] if self.results else []
        rows = [[name, *(_fmt(res.values.get(k), 4) for k in keys)] for name, res in self.results.items()]
        partial = partial_runs(self.with_recs())
        return "\n".join([head, *text_table(["run", *keys], rows), *([partial] if partial else [])])

    def _repr_html_(self) -> str:
        """The notebook display: each run's value on each metric, the signatures as the headers'
        tooltips (and whole in a ``<details>`` element), each run's data fingerprint."""
        import html

        esc = html.escape
        first = next(iter(self.results.values()))
        entries = first.entries
        sigs = [e.signature for e in entries]
        _, shared = shared_fields(sigs)
        fps = {name: dict(res.fingerprints) for name, res in self.results.items()}
        has_fp = all(fp.get("recs") for fp in fps.values())
        heads = "".join(f'<th title="{esc(e.signature)}">{esc(e.metric)}</th>' for e in entries)
        body = ["<table>",
                f"<caption>{len(self.names)} runs on {esc(self._users_text())}</caption>",
                "<thead><tr><th>run</th>" + heads + ('<th class="l">recs</th>' if has_fp else "") + "</tr></thead>", "<tbody>"]
        for name, res in self.results.items():
            cells = "".join(f"<td>{_fmt(res.values.get(e.metric), 4)}</td>" for e in entries)
            fp = f'<td class="l">{html_fingerprint(fps[name]["recs"])}</td>' if has_fp else ""
            body.append(f"<tr><td>{esc(name)}</td>{cells}{fp}</tr>")
        body += ["</tbody>", "</table>"]
        body.append('<p class="note">signatures: ' + ", ".join(html_signature(s, shared) for s in sigs) + "</p>")
        rest = {k: v for k, v in dict(first.fingerprints).items() if k != "recs"}
        if rest:
            body.append(html_fingerprints(rest))
        body.append(html_signatures(sigs))
        return html_display(body)

    def paired(self) -> int:
        """The users the comparison's values use: those with a value in every run on every metric."""
        return int(paired_users(self.arrays()).sum()) if self.metrics else len(self.user_ids)

    def _users_text(self) -> str:
        n, total = self.paired(), len(self.user_ids)
        dropped = f"; {total - n} of {total} dropped ({self.dropped_why()})" if n < total else ""
        return f"{n} users (user set: {self.users}{dropped})"

    def table(self) -> dict[str, dict[str, float]]:
        """``{run: {metric: value}}``."""
        return {name: dict(res.values) for name, res in self.results.items()}

    def compare(self, options: StatsOptions | None = None, **given: Any    ) -> Comparison:
        """Paired tests, corrections and intervals (:func:`receval.stats.compare`) on the paired
        users: those on which every run has a value on every metric. The statistics' options:
        :class:`receval.resampling.StatsOptions` as ``options`` and/or keywords (``test``,
        ``correction``, ``ci``, ``level``, ``resamples``, ``seed``, ``baseline``)."""
        first = next(iter(self.results.values()))
        sigs = {e.metric: e.signature for e in first.entries}
        hib = {m: _higher_is_better(m) for m in self.metrics}
        per_user = self.arrays()
        c = compare(
            per_user, higher_is_better=hib, signatures=sigs, users=self.users, user_ids=self.user_ids,
            dropped_why=self.dropped_why(), options=StatsOptions.of(options, given),
        )
        # the per-user values the figures draw: those of the paired users, like every number of c
        keep = pl.Series(paired_users(per_user))
        c.per_user = {name: res.per_user().filter(keep) for name, res in self.results.items()}
        c.with_recs = self.with_recs()
        return c

    def dropped_why(self) -> str:
        """Why users lack a value: ``norel`` when every missing value of every run and metric is
        a user skipped for having no relevant item (``empty=skip``), ``novalue`` otherwise."""
        for res in self.results.values():
            for e in res.entries:
                if e.per_user is not None and int(np.isnan(np.asarray(e.per_user, dtype=np.float64)).sum()) != e.skipped:
                    return "novalue"
        return "norel"

    def with_recs(self) -> dict[str, tuple[int, int]]:
        """Per run, (truth users with recommendations, truth users): a run that covers part of
        the users scores 0 for the others (``norecs=zero``)."""
        return {name: (int(res.info.get("users_in_both", 0)), int(res.info.get("users", 0)))
                for name, res in self.results.items()}


def _fmt(v: float | None, digits: int) -> str:
    """``digits`` significant digits (:func:`receval.report.fmt_num`), the rule of every table."""
    return fmt_num(v, digits)


def _higher_is_better(key: str) -> bool:
    """The declared direction of the metric of a result key (``ndcg(ideal=hits)@10``)."""
    metric = registered().get(key.split("@")[0].split("(")[0])
    return True if metric is None else metric.higher_is_better


def evaluate_runs(runs: Mapping[str, Frame], truth: Frame, metrics: Metrics, **options: Any) -> Runs:
    """Evaluate several named runs (``{"ease": recs_a, "pop": recs_b}``) against one ground
    truth, read once; ``options`` are those of :func:`receval.evaluate`.

    >>> truth = {"user_id": [1, 2], "item_id": [10, 20]}
    >>> a = {"user_id": [1, 2], "item_id": [10, 30], "score": [1.0, 1.0]}
    >>> b = {"user_id": [1], "item_id": [30], "score": [1.0]}   # nothing for user 2: scores 0 there
    >>> r = evaluate_runs({"a": a, "b": b}, truth, ["hitrate@1"])
    >>> b_values = r.per_user("b")
    >>> r.table(), b_values["hitrate@1"].to_list()
    ({'a': {'hitrate@1': 0.5}, 'b': {'hitrate@1': 0.0}}, [0.0, 0.0])
    """
    if not isinstance(runs, Mapping) or not runs:
        raise SpecError("runs must be a non-empty mapping of names to recommendations, e.g. {'ease': recs_a, 'pop': recs_b}")
    check_run_names(list(runs))
    if str(options.get("norecs", "")) == "skip":
        raise SpecError("norecs=skip would compare the runs on different users; keep norecs=zero (a missing list scores 0)")
    if options.get("engine") == "spark":
        raise SpecError("evaluate_runs runs in memory; evaluate each run on Spark with receval.evaluate")
    ids = id_columns(options.get("user_col", "user_id"), options.get("item_col", "item_id"),
                     options.get("truth_user_col"), options.get("truth_item_col"))
    cols = Columns(score=options.get("score_col", "score"), rank=options.get("rank_col", "rank"),
                   rating=options.get("rating_col", "rating"), sep=parse_sep(options.get("sep")), **ids)
    shared = read_truth(truth, cols) if not hasattr(truth, "collect") else truth
    results: dict[str, Results] = {}
    users: np.ndarray | None = None
    for name, recs in runs.items():
        res = evaluate(recs, shared, metrics, **options)
        if users is None:
            users = np.asarray(res.user_ids)
        elif len(res.user_ids) != len(users) or not np.array_equal(np.asarray(res.user_ids), users):
            raise DataError(
                f"run {name!r} was evaluated on other users than {next(iter(runs))!r}; "
                "check that the runs use the same id type and that norecs is zero"
            )
        results[name] = res
    assert users is not None
    return Runs(results, users)


__all__ = ["Runs", "evaluate_runs"]

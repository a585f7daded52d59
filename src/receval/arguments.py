"""The arguments several commands share: the input column names and the context options.

Each command's builder (``build(parser)`` adds its arguments and returns its runner) adds them
with :func:`add_column_args` / :func:`add_context_args` and reads them back as keyword
arguments of :func:`receval.evaluate` with :func:`column_kwargs` / :func:`context_kwargs`.
:mod:`receval.cli` registers the builders; no builder imports :mod:`receval.cli`.
"""

from __future__ import annotations

import argparse


def add_column_args(p: argparse.ArgumentParser) -> None:
    """The ``column names`` group: ``--user-col`` ... ``--rating-col``, ``--truth-user-col``, ``--truth-item-col``."""
    g = p.add_argument_group("column names")
    g.add_argument("--user-col", default="user_id", help="the user column of the recommendations and side inputs (and of the ground truth)")
    g.add_argument("--item-col", default="item_id", help="the item column of the recommendations and side inputs (and of the ground truth)")
    g.add_argument("--score-col", default="score", help="the recommendations' score column")
    g.add_argument("--rank-col", default="rank", help="the recommendations' rank column")
    g.add_argument("--rating-col", default="rating", help="the ground truth's rating column")
    g.add_argument("--truth-user-col", metavar="NAME", help="the ground truth's user column (default: --user-col)")
    g.add_argument("--truth-item-col", metavar="NAME", help="the ground truth's item column (default: --item-col)")


def column_kwargs(a: argparse.Namespace) -> dict:
    """The column names given, as keyword arguments of :func:`receval.evaluate`."""
    return dict(user_col=a.user_col, item_col=a.item_col, score_col=a.score_col, rank_col=a.rank_col, rating_col=a.rating_col,
                truth_user_col=a.truth_user_col, truth_item_col=a.truth_item_col)


def add_context_args(p: argparse.ArgumentParser) -> None:
    """One ``--NAME`` per context option (:data:`receval.options.CONTEXT_AXES`)."""
    g = p.add_argument_group("options for every metric (a spec's own option wins)")
    g.add_argument("--rel", help="relevance: a threshold like '>=4.5' or '4.5', or 'all' (every truth row)")
    from .options import CONTEXT_AXES  # lazy: cost: dataclasses, inspect (options), +18 modules, ~6 ms on receval --version (the command line imports arguments)

    for name, ax in CONTEXT_AXES.items():
        if name != "rel":
            g.add_argument(f"--{name}", metavar=name.upper(), help=axis_help(ax))


def axis_help(ax) -> str:  # noqa: ANN001
    """A context option's ``--help`` text: its doc, its values and default (from its Axis), and
    where each value is described (``receval explain NAME``)."""
    default = ax.render(ax.default)
    values = " | ".join(ax.values) if ax.values else "a number"
    text = f"{ax.doc}: {values} (default {default}); `receval explain {ax.name}` describes each value"
    return text.replace("%", "%%")


def context_kwargs(a: argparse.Namespace) -> dict:
    """The context options given (those left out are not passed)."""
    from .options import CONTEXT_AXES  # lazy: cost: dataclasses, inspect (options)

    out = {}
    for name in CONTEXT_AXES:
        v = getattr(a, name, None)
        if v is not None:
            out[name] = v
    return out


__all__ = ["add_column_args", "column_kwargs", "add_context_args", "context_kwargs", "axis_help"]

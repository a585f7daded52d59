"""A call frees what it made when it returns: nothing is left to Python's cyclic collector.

A form and its list layer once referred to each other (``Hits.lists`` held the layer, the layer
held the form). Such a cycle is freed only when the cyclic collector runs, and a call of
receval allocates few Python objects, so the collector rarely ran: every call of a list metric
left its form's arrays behind (about 80 MB a call at 100k users x 20; memory grew call by call,
and every call wrote to fresh pages). These tests run calls with the collector off and ask it
afterwards what it would have to free.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

import receval.engine as E
from receval import evaluate
from receval.metrics import all_metrics

from test_backends import _specs_for, full_side, make_data


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()  # (everything made before the test: out of the youngest generation)
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _cyclic_garbage() -> list[str]:
    """The receval objects the cyclic collector finds unreachable among those made since the last
    collection (their type names). With the collector off, every object made since is in the
    youngest generation, so collecting that one alone sees them all, and costs little however
    many objects the test process holds."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect(0)
        found = [f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage
                 if type(o).__module__.startswith("receval")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


def test_a_list_metrics_form_is_freed_when_the_call_returns(monkeypatch, collector_off):
    recs, truth, cats, train, catalog = make_data()
    forms: list[weakref.ref] = []
    real = E.form

    def kept(*a, **k):
        h = real(*a, **k)
        forms.append(weakref.ref(h))
        return h

    monkeypatch.setattr(E, "form", kept)
    got = evaluate(recs, truth, ["ab_ndcg@10", "coverage@10", "ild@10", "ndcg@10"], categories=cats, rel=3, ties="item")
    assert got["ab_ndcg@10"] >= 0
    assert forms and all(ref() is None for ref in forms)  # freed by reference counting alone
    assert _cyclic_garbage() == []


def test_no_metric_leaves_a_cycle_behind(collector_off):
    data = make_data()
    recs, truth = data[:2]
    side = full_side(*data)
    specs = [s for m in all_metrics() for s in _specs_for(m)[:1]]
    ran = 0
    for spec in specs:
        try:  # (ties=item and rel=3: every metric runs on this data but the few that need more options)
            evaluate(recs, truth, [spec], **side, ties="item", rel=3)
        except Exception:  # (a metric this data refuses: its refusal is tested elsewhere)
            gc.collect(0)  # what a refusal leaves (its traceback's frames) is not this test's question
            continue
        ran += 1
        assert _cyclic_garbage() == [], spec
    assert ran >= 0.9 * len(specs)

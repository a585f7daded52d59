"""The generated reference docs are in sync with the registry and the dialect files."""

from pathlib import Path

import pytest

from receval.docs import GENERATED

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name,make", sorted(GENERATED.items()))
def test_generated_docs_are_current(name, make):
    committed = (DOCS / name).read_text(encoding="utf-8")
    assert committed == make(), f"docs/{name} is stale: run `python -m receval.docs docs/`"


def test_every_metric_has_formula_and_example():
    from receval.metrics import all_metrics

    for m in all_metrics():
        assert m.formula(), f"{m.name} has no Formula section"
        assert ">>>" in m.doc, f"{m.name} has no worked example"


# ---- the declared traits of the metrics: one source, read by resolution, runs and the docs ------


def test_every_metric_declares_its_traits():
    from receval.metrics import all_metrics
    from receval.registry import TIES

    for m in all_metrics():
        assert type(m.higher_is_better) is bool, f"{m.name} has no declared direction"
        if "ties" in m.context:
            assert m.ties in TIES, f"{m.name} reads `ties` but does not declare how it meets ties=average"
        else:
            assert m.ties is None and not m.ties_settled, m.name
        assert m.bounds is None or (len(m.bounds) == 2 and m.bounds[0] < m.bounds[1]), m.name
        assert set(m.ties_settled) <= set(m.axes), f"{m.name}: ties_settled names an option it does not have"
        assert set(m.f1_of_means) <= set(m.axes), f"{m.name}: f1_of_means names an option it does not have"


def test_a_metric_reading_ties_must_declare_how():
    from receval.registry import register, registered

    with pytest.raises(ValueError, match="declare ties="):
        register("undeclared_ties_demo")(lambda h, ks, o: None)
    with pytest.raises(ValueError, match="declare ties="):
        register("wrong_ties_demo", ties="sometimes")(lambda h, ks, o: None)
    assert "undeclared_ties_demo" not in registered() and "wrong_ties_demo" not in registered()


def _ties_table() -> dict[str, str]:
    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    section = text.split("## Ties by metric", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| `")]
    return {r[0].strip("| `"): r[1] for r in rows}


def test_generated_ties_list_agrees_with_the_registry():
    """docs/metrics.md lists every registered metric once, with the ties=average it declares."""
    from receval.metrics import all_metrics

    table = _ties_table()
    assert sorted(table) == sorted(m.name for m in all_metrics())
    for m in all_metrics():
        assert table[m.name] == m.ties_label().replace("|", "\\|"), m.name


def test_resolution_settles_ties_as_declared():
    """ties=average is computed only where the data settle the order exactly for the metrics
    and variants declared "settled"; every other metric has a value (closed form or top-k set)."""
    from receval.metrics import all_metrics
    from receval.resolve import resolve
    from test_invariance import TABLE

    variants = {"auc": "auc(form=users,{})", "gauc": "gauc({})", "ndcg": "ndcg({})@3", "mad": "mad({})@3", "map": "map({},gamma=0.5)@3"}
    assert sorted(variants) == sorted(m.name for m in all_metrics() if m.ties_settled)
    for m in all_metrics():
        r = resolve(TABLE[m.name].spec)
        variant_settled = any(r.options.get(a) == v for a, v in m.ties_settled.items())  # mad: of=ndcg by default
        assert r.settle == (m.ties == "settled" or variant_settled), m.name
        for axis, value in m.ties_settled.items():
            variant = variants[m.name].format(f"{axis}={value}")
            assert resolve(variant).settle, variant
            assert not resolve(variant, overrides={"ties": "item"}).settle, variant


def test_runs_read_the_declared_direction():
    from receval.runs import evaluate_runs
    from receval.metrics import get_metric

    truth = {"user_id": [1, 2], "item_id": [10, 20]}
    a = {"user_id": [1, 1, 2, 2], "item_id": [10, 30, 20, 30], "score": [1.0, 0.5, 1.0, 0.5]}
    b = {"user_id": [1, 1, 2, 2], "item_id": [30, 10, 30, 20], "score": [1.0, 0.5, 1.0, 0.5]}
    specs = ["ndcg@2", "miscalibration@2"]
    cats = {"item_id": [10, 20, 30], "category": ["x", "y", "x"]}
    train = {"user_id": [1, 2], "item_id": [20, 10]}
    cmp = evaluate_runs({"a": a, "b": b}, truth, specs, categories=cats, train=train).compare(resamples=100)
    assert cmp.higher_is_better == {s: get_metric(s.split("@")[0]).higher_is_better for s in specs}
    assert cmp.higher_is_better == {"ndcg@2": True, "miscalibration@2": False}

"""A dialect name without a version means the library's newest verified version; the study
(`receval reproduce`) keeps the versions it ran, named explicitly."""

from __future__ import annotations

import contextlib
import io

from receval.cli import main
from receval.compare import select_dialects
from receval.dialects import all_dialects, load_dialect
from receval.docs import dialects_markdown
from receval.study import STUDY_DIALECTS, STUDY_VERSIONS


def test_unversioned_names_mean_the_newest_verified_version():
    assert load_dialect("recbole").label == "recbole@1.2.1"
    assert load_dialect("replay").label == "replay@0.22.0"
    assert load_dialect("rs_metrics").label == "rs_metrics@0.6.0"
    # the study's versions stay reachable by their version
    assert load_dialect("recbole@0.2.1").study and load_dialect("replay@0.4").study


def test_one_default_per_library():
    by_name: dict[str, list[str]] = {}
    for d in all_dialects():
        if d.default:
            by_name.setdefault(d.name, []).append(d.version)
    assert all(len(v) == 1 for v in by_name.values()), by_name
    assert set(by_name) == {d.name for d in all_dialects()}


def test_the_study_pins_its_versions():
    assert list(STUDY_VERSIONS) == STUDY_DIALECTS
    for name, pinned in STUDY_VERSIONS.items():
        d = load_dialect(pinned)
        assert d.name == name and d.study, pinned
        assert d.label == pinned
    assert STUDY_VERSIONS["recbole"] == "recbole@0.2.1" and STUDY_VERSIONS["replay"] == "replay@0.4.0"
    # every study-marked file is a pinned version, and nothing else is
    assert {d.label for d in all_dialects() if d.study} == set(STUDY_VERSIONS.values())


def test_defaults_selection_takes_the_newest():
    labels = {d.label for d in select_dialects("defaults") if d is not None}
    assert {"recbole@1.2.1", "replay@0.22.0"} <= labels
    assert not {"recbole@0.2.1", "replay@0.4.0"} & labels


def test_dialects_command_and_docs_say_it():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["dialects"]) == 0
    text = " ".join(out.getvalue().split())
    assert "1.2.1 (default)" in text and "0.2.1 (study)" in text
    assert "--dialect recbole is recbole@1.2.1" in text and "receval reproduce" in text
    md = dialects_markdown()
    assert "`--dialect recbole` is `recbole@1.2.1`" in md and "(default version)" in md and "(study version)" in md

"""The test suite in tiers (CONTRIBUTING.md, "Tests in tiers").

The tests live in folders by layer: ``unit`` (the grammar, encoding, signatures, messages,
layering), ``metrics`` (each family against goldens and slow references, dialects, statistics,
OPE), ``contracts`` (invariance, engines and batches, fingerprints, conformance, bad inputs,
notes), ``cli`` (commands, files, reproduce, adapters), ``pages`` (tables, figures, the report
page, docs) and ``parity`` (real peer libraries). The shared helpers (``invariance_data``,
``comparison_data``, ``reference_ope``) stay in ``tests/``, which is put on ``sys.path`` here.

Tiers are markers. ``sweep``: a registry-wide or property sweep (every metric x option against a
slow reference, or hypothesis against an oracle); ``slow``: a test that takes seconds on its own.
Both are given here, by name, so no test file needs to know its tier. The default ``pytest``
leaves out ``sweep``, ``slow``, ``spark``, ``browser`` and ``parity`` (pyproject's addopts);
``.ci/run`` runs every tier. A parametrized sweep keeps every tenth case in the default tier (a
sampled smoke test of each guarantee), chosen by the case's position, not by chance.

Every test renders as if no terminal width were set: a ``COLUMNS`` of the shell or of CI would
make the terminal tables narrower (:func:`receval.report.terminal_width`). The tests of the
narrow layouts set it themselves.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# the shared helpers, and the test modules other folders import (test_reference's datasets,
# test_invariance's TABLE, test_segments' files): importable from any folder, in any run
for folder in (HERE, *(HERE / f for f in ("unit", "metrics", "contracts", "cli", "pages"))):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

#: whole files that are sweeps (every registered metric or option value against a reference)
SWEEP_FILES = {"test_reference.py", "test_invariance.py", "test_invariance_entry_points.py", "test_properties.py"}
#: test functions that are sweeps wherever they are (hypothesis against a slow reference / oracle)
SWEEP_TESTS = {"test_popularity_metrics_match_reference", "test_ir_metrics_match_reference", "test_match_oracle",
               "test_match_reference", "test_equals_mean_over_all_orderings",
               # every altered implementation through the audit, every AUC form over every ordering, every
               # metric and option on every batched or distributed path, every global metric in many batches:
               # one tenth stays in the default tier (the engine sweeps are ordered path by path, so each path
               # keeps a smoke case there)
               "test_the_inference_recovers_the_options", "test_auc_equals_mean_over_all_orderings",
               "test_every_batched_path_equals_one_batch", "test_global_metrics_combine_bit_for_bit_in_many_batches",
               "test_the_suite_tells_every_two_option_settings_apart"}
#: tests that take seconds on their own (measured on 2 cores: `pytest --durations=30 -m slow`)
SLOW_TESTS = {
    "test_file_too_large_for_every_writer_keeps_the_previous_file", "test_error_and_not_offered_told_apart_in_every_file",
    "test_compare_page_is_fresh", "test_full_equals_brute_force_full_ranking_in_any_catalogue_order",
    "test_cli_report_folder_rules", "test_small_sample_caveat_and_legend",
    "test_every_estimator_is_the_same_in_any_catalogue_order", "test_one_block_is_bit_identical_to_the_dense_formula",
    "test_corrected_estimator_memory_does_not_follow_the_catalogue", "test_file_too_large_on_the_command_line_is_one_line_exit_2",
    "test_files_read_lazily_in_user_batches", "test_page_is_self_contained_and_complete",
    "test_every_figure_says_its_smallest_text",
    "test_one_signature_one_value_whatever_side_inputs_are_given", "test_arbitrary_frames_never_raise_anything_but_a_user_error",
    "test_axiom_satisfied", "test_fuzz_segments_and_groups_files", "test_fuzz_parquet_part_folders",
    "test_values_at_a_huge_cut_off", "test_ope_page_holds_the_offline_ab_table", "test_every_example_runs_and_prints",
    "test_linear_topk_metrics_equal_mean_over_all_orderings", "test_built_site_loads_nothing_from_the_network",
    "test_many_blocks_equal_the_dense_formula", "test_mirrored_half_with_or_without_the_table_within_1e12_of_the_dense_formula",
    "test_receval_ope_reproduces_obps_obd_table", "test_every_figure_in_every_format", "test_output_on_a_non_utf8_stdout",
    "test_cli_writes_the_report", "test_position_terms_equal_mean_over_all_orderings",
    "test_valid_ids_with_arbitrary_values_never_crash", "test_matches_roc_walk", "test_bad_mplbackend_still_writes_figures",
    "test_reproduce_prints_the_headline_first", "test_tutorial_page_is_fresh", "test_png_has_the_asked_size",
    "test_bundled_ease_dual_matches_primal", "test_report_figure_and_out_files",
    # audits over the whole suite (11,374 cases): seconds each (`pytest --durations=30`)
    "test_the_inference_recovers_the_options[arp_train_rows]", "test_closest_definitions_are_ordered_by_inputs_matched",
    "test_no_match_names_the_closest_and_the_case_that_rules_it_out", "test_cli_audits_an_exported_folder",
    "test_the_audit_page_quotes_the_example_and_its_verdict", "test_the_audit_keeps_its_values_in_an_object",
    "test_a_dialect_is_named_when_it_is_the_definition", "test_a_user_set_only_difference_without_an_option_is_named",
    "test_a_declared_precision_is_the_tolerance_and_no_looser",
    # the audit helpers and findings of issue 35: a whole audit each (tests/cli/test_audit_helpers.py)
    "test_per_user_names_the_notebook_ndcg", "test_per_user_with_ratings_names_the_threshold_the_function_keeps",
    "test_per_user_empty_skip_changes_the_verdict", "test_from_dicts_names_the_dict_hit_rate",
    "test_an_unwritten_rel_reads_as_evaluate_decides_it", "test_the_report_says_values_are_rounded",
    "test_the_report_says_values_are_in_percent", "test_no_rounding_finding_for_a_wrong_definition",
    "test_a_named_cell_is_kept_by_every_candidate_and_the_combination_is_named", "test_cli_audits_a_named_cell",
    # on the 21,009-case suite these take 5-9 s each (`pytest --durations=25`): the fast tier keeps
    # test_inputs_not_compared_are_listed_with_the_reason and test_the_inputs_it_raised_on_are_named_by_case_id
    "test_every_refusal_case_is_refused_with_its_class", "test_every_value_case_runs_through_receval",
    "test_cli_audits_a_function_in_a_file", "test_cli_audits_module_function", "test_the_report_is_a_dict_and_text",
    "test_the_formula_header_says_at_k_for_an_audit_of_several_cut_offs",
    "test_ordering_ties_and_duplicate_rules_are_found_together",
    "test_mrr_without_cutoff_is_ruled_out_by_a_list_longer_than_k", "test_a_value_outside_the_metric_bounds_is_flagged_first",
    "test_prints_and_sys_exit_cannot_end_the_command_or_reach_json",
    "test_the_inference_recovers_the_options[map_divided_by_k]", "test_the_inference_recovers_the_options[recall_standard]",
    "test_the_inference_recovers_the_options[ndcg_standard]", "test_a_match_outside_the_standard_bounds_is_not_flagged",
}
#: every n-th case of a parametrized sweep stays in the default tier
SAMPLE_EVERY = 10


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for item in items:
        path = Path(str(item.fspath))
        name = getattr(item, "originalname", item.name)
        if "parity" in path.parts:
            item.add_marker(pytest.mark.parity)
        if name in SLOW_TESTS or item.name in SLOW_TESTS:  # a whole test, or one case of it by its id
            item.add_marker(pytest.mark.slow)
        if path.name in SWEEP_FILES or name in SWEEP_TESTS:
            key = (str(path), name)
            index = seen[key]
            seen[key] += 1
            if not (hasattr(item, "callspec") and index % SAMPLE_EVERY == 0):
                item.add_marker(pytest.mark.sweep)


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)

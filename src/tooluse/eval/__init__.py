"""Measuring tool-call quality: BFCL data, an AST checker and a harness to run a backend.

``tooluse eval bfcl`` is the command-line face of this package; the pieces are usable on
their own, e.g. to grade calls from another system with :func:`check_calls`.
"""

from __future__ import annotations

from .bfcl import (
    CATEGORIES,
    BfclCase,
    BfclDataError,
    available_categories,
    build_request,
    build_toolset,
    default_data_dir,
    grading_rule,
    load_category,
)
from .checker import Call, CheckResult, check_call, check_calls, normalize_string, values_match
from .ground_truth import GroundTruth, ground_truth_input
from .harness import CaseResult, CategorySummary, run_case, run_cases, summarize
from .report import format_table, write_json

__all__ = [
    "CATEGORIES",
    "BfclCase",
    "BfclDataError",
    "Call",
    "CaseResult",
    "CategorySummary",
    "CheckResult",
    "GroundTruth",
    "available_categories",
    "build_request",
    "build_toolset",
    "check_call",
    "check_calls",
    "default_data_dir",
    "format_table",
    "grading_rule",
    "ground_truth_input",
    "load_category",
    "normalize_string",
    "run_case",
    "run_cases",
    "summarize",
    "values_match",
    "write_json",
]

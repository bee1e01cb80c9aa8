"""Tools: definitions from Python functions, pydantic models or raw JSON Schema; the name
rule and its opt-in mapping; schema checking and BFCL normalisation; input validation with
messages a model can act on; sync and async calling; which calls need the user's approval."""

from __future__ import annotations

from .bfcl import bfcl_tool, bfcl_toolset
from .names import NAME_PATTERN, check_name, is_valid_name, map_name, map_names
from .schema import BFCL_TYPE_ALIASES, check_schema, normalize_schema, tidy_schema
from .signature import read_docstring, read_function
from .source import ToolSource, expand_sources
from .tool import ApprovalRule, Tool, tool
from .toolset import ToolSet, as_tool
from .validation import compile_validator, input_path, input_problems

__all__ = [
    "BFCL_TYPE_ALIASES",
    "NAME_PATTERN",
    "ApprovalRule",
    "Tool",
    "ToolSet",
    "ToolSource",
    "as_tool",
    "bfcl_tool",
    "bfcl_toolset",
    "check_name",
    "check_schema",
    "compile_validator",
    "expand_sources",
    "input_path",
    "input_problems",
    "is_valid_name",
    "map_name",
    "map_names",
    "normalize_schema",
    "read_docstring",
    "read_function",
    "tidy_schema",
    "tool",
]

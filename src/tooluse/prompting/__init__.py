"""Prompt-based tool use for any text model: prompt building, grammar, parsing back.

- :class:`PromptToolsBackend` — the neutral ``Backend`` over a :class:`TextBackend`.
- :func:`tool_call_grammar` — the grammar of valid tool calls for a tool set and choice
  (:class:`ToolGrammar`, with ``.gbnf`` for llama.cpp).
- :class:`Matcher` — incremental byte-level recogniser of those grammars (constrained
  decoding without checking the whole vocabulary).
"""

from ..grammar.ir import sample as sample_grammar
from ..grammar.ir import to_gbnf
from ..grammar.matcher import Matcher
from ..grammar.tool_calls import GrammarLimits, ToolGrammar, tool_call_grammar, value_grammar
from .assist import Assist
from .hints import ToolNaming, ValueFocus
from .text_model import Generation, GenerationOptions, TextBackend, TextEnd, TextMessage
from .tool_use import PromptToolsBackend, build_text_prompt

__all__ = [
    "Assist",
    "Generation",
    "GenerationOptions",
    "GrammarLimits",
    "Matcher",
    "PromptToolsBackend",
    "TextBackend",
    "TextEnd",
    "TextMessage",
    "ToolGrammar",
    "ToolNaming",
    "ValueFocus",
    "build_text_prompt",
    "sample_grammar",
    "to_gbnf",
    "tool_call_grammar",
    "value_grammar",
]

"""Prompt-based tool use for any text model: the prompt, the prefill, the calls parsed back.

- :class:`PromptToolsBackend` (:mod:`.tool_use`) — the neutral ``Backend`` over a
  :class:`TextBackend` (:mod:`.text_model`: the small interface a text model implements);
- :mod:`.text_prompt`, :mod:`.emitter`, :mod:`.thinking` — the prompt, the answer's events,
  a ``<think>`` section; :mod:`.assist`, :mod:`.hints` — the hooks a preset implements and
  the hints it gives the text model; :mod:`.per_context` — state kept per caller.

The grammar of the calls is :mod:`tooluse.grammar`; its public names (:func:`tool_call_grammar`,
:class:`ToolGrammar`, :class:`Matcher`...) are re-exported here, where they were first.
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

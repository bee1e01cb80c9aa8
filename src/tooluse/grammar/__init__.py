"""The grammar of prompt-based tool calls: from tool schemas to a grammar that decoding
enforces.

- :mod:`.ir`: the grammar's nodes (literals, characters, repeats, rules), rendered as GBNF;
- :mod:`.tool_calls`: the grammar of a model's answer to a request (its calls, each value as
  its schema allows; :class:`~.tool_calls.ToolGrammar`);
- :mod:`.lark`: the same grammar in llguidance's Lark dialect, for the schemas only llguidance
  enforces, and a string's own Lark grammar (``x-lark``);
- :mod:`.matcher`: our own incremental matcher over the nodes (what may come next).

Used by the prompting layer (the prompt and the parse), the local engine (decoding) and the
openai-prompt backend (a client-side grammar).
"""

from .ir import to_gbnf
from .matcher import Matcher
from .tool_calls import GrammarLimits, ToolGrammar, tool_call_grammar, value_grammar

__all__ = ["GrammarLimits", "Matcher", "ToolGrammar", "to_gbnf", "tool_call_grammar",
           "value_grammar"]

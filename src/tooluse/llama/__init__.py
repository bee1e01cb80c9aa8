"""The local inference engine: a GGUF model run in process through llama-cpp-python, with
grammar-constrained decoding of prompt-based tool calls.

- :mod:`.model`: the model and its context, loaded once per settings (:class:`LoadedModel`);
- :mod:`.seq`: one sequence of a context, the unit a turn decodes in;
- :mod:`.slots`: N sequences of one context decoded together, each slot in an explicit state;
- :mod:`.cache`: prompt states kept on disk, and the prompt evaluation that reuses them;
- :mod:`.text`: the text backend (:class:`~.text.LlamaTextBackend`): the prompt, its
  tokens, the choice of each token;
- :mod:`.decode`: one turn decoded token by token (:class:`~.decode.TurnDecoder`);
- :mod:`.llguidance`: the llguidance engine, for the schemas only it enforces;
- :mod:`.turn`: the start and the bookkeeping of one decoded turn;
- :mod:`.token_choice`, :mod:`.copy_values`, :mod:`.no_repeat`: what steers a token's
  choice (longer tokens, values copied from the conversation, calls not repeated).

The ``local`` backend (:mod:`tooluse.backends.local`) is the thin adapter that builds it.
"""

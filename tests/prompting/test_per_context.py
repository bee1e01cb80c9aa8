"""``last_end`` and ``last_left_out`` belong to the caller's context, not to the backend
instance the gateway serves every request through: two requests
run side by side on one backend, their turns interleaved by a barrier, each see their own."""

from __future__ import annotations

import contextvars
import gc
import json
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx2

from tooluse.backends.openai_prompt import OpenAIChatTextBackend
from tooluse.backends.options import RetryPolicy
from tooluse.messages import Message, Request, ToolSpec
from tooluse.prompting import Assist, PromptToolsBackend, TextEnd, ToolGrammar
from tooluse.prompting.per_context import PerContext

SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
TOOLS = [ToolSpec(name=name, description=f"The {name} tool.", input_schema=SCHEMA)
         for name in ("alpha", "beta", "gamma")]
#: What each request's scripted turn says it read: told apart in the counts it reports.
PROMPT_TOKENS = {"alpha": 111, "beta": 222}


class Holder:
    value: PerContext[int | None] = PerContext(lambda: None)
    names: PerContext[list[str]] = PerContext(list)


def in_threads(*jobs: Callable[[], Any]) -> list[Any]:
    """Each job in its own thread, in a copy of this context (as the gateway's workers
    run requests); their results, or the first error raised."""
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []

    def run(i: int, job: Callable[[], Any], context: contextvars.Context) -> None:
        try:
            results[i] = context.run(job)
        except BaseException as exc:  # noqa: BLE001 - raised again in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, job, contextvars.copy_context()))
               for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    if errors:
        raise errors[0]
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return results


# -- PerContext itself ---------------------------------------------------------------------------


def test_a_value_belongs_to_its_context_and_its_instance() -> None:
    one, two = Holder(), Holder()
    assert one.value is None and one.names == [] and one.names is not two.names
    one.value, two.value = 1, 2
    assert (one.value, two.value) == (1, 2)
    barrier = threading.Barrier(2)

    def job(mine: int) -> tuple[int | None, int | None, int | None]:
        seen = one.value  # the copied context starts with the parent's value
        barrier.wait()
        one.value = mine
        barrier.wait()  # both have written: each still reads its own
        return seen, one.value, two.value

    assert in_threads(lambda: job(10), lambda: job(20)) == [(1, 10, 2), (1, 20, 2)]
    assert one.value == 1  # nothing written in a copy comes back to the parent
    fresh: list[int | None] = []
    thread = threading.Thread(target=lambda: fresh.append(one.value))  # a new, empty context
    thread.start()
    thread.join()
    assert fresh == [None]


def test_a_dead_instance_is_not_kept_alive_nor_read_by_a_new_one() -> None:
    holder = Holder()
    holder.value = 7
    ref = weakref.ref(holder)
    del holder
    gc.collect()
    assert ref() is None
    assert Holder().value is None  # even if the new instance got the dead one's id
    assert isinstance(Holder.value, PerContext)


# -- PromptToolsBackend over a text backend whose turns interleave ------------------------------


class ByQuestion(Assist):
    """Offers only the tool the question names; the others are left out."""

    def select_tools(self, request: Request) -> tuple[Request, list[str]]:
        wanted = request.messages[-1].text()
        kept = [t for t in request.tools if t.name == wanted]
        left = [t.name for t in request.tools if t.name != wanted]
        return request.model_copy(update={"tools": kept}), left


class Interleaved:
    """A text backend whose concurrent turns take turns chunk by chunk (a barrier), and
    which keeps how each ended in ``last_end`` as the real ones do, then waits until the
    other turn has kept its own before going on."""

    model = "interleaved"
    last_end: PerContext[TextEnd | None] = PerContext(lambda: None)

    def __init__(self, text: str) -> None:
        self.text = text
        self.barrier = threading.Barrier(2, timeout=10)

    def generate_text(self, messages: Sequence[dict[str, str]], *, prefill: str = "",
                      stop: Sequence[str] = (), max_tokens: int = 1024,
                      temperature: float = 0.0, top_p: float | None = None,
                      top_k: int | None = None,
                      grammar: ToolGrammar | None = None) -> Iterator[str | TextEnd]:
        name = messages[-1]["content"].strip()
        end = TextEnd(reason="end", input_tokens=PROMPT_TOKENS[name], output_tokens=3,
                      timings={"prompt_tokens_seen": float(PROMPT_TOKENS[name])})
        try:
            for i in range(0, len(self.text), 7):
                self.barrier.wait()
                yield self.text[i:i + 7]
        finally:  # also when the caller stops early (closes this generator)
            self.last_end = end
            self.barrier.wait()
        yield end


def ask(backend: PromptToolsBackend, name: str,
        together: threading.Barrier | None = None) -> tuple[Any, TextEnd | None, list[str]]:
    """``backend``'s answer to a question naming a tool, and its ``last_end`` and
    ``last_left_out`` read once ``together`` says every request has finished."""
    response = backend.complete(Request(messages=[Message(role="user", content=name)],
                                        tools=TOOLS))
    if together is not None:
        together.wait()
    return response, backend.last_end, backend.last_left_out


def test_two_requests_at_once_each_see_their_own_last_end_and_left_out() -> None:
    backend = PromptToolsBackend(Interleaved("A plain answer, in several chunks."),
                                 grammar=False, assist=ByQuestion())
    done = threading.Barrier(2, timeout=10)
    results = in_threads(lambda: ask(backend, "alpha", done), lambda: ask(backend, "beta", done))
    for (response, end, left_out), name, others in zip(
            results, ("alpha", "beta"), (["beta", "gamma"], ["alpha", "gamma"])):
        assert response.text() == "A plain answer, in several chunks."
        assert end is not None and end.input_tokens == PROMPT_TOKENS[name]
        assert response.usage.input_tokens == PROMPT_TOKENS[name]
        assert left_out == others and end.timings["tools_left_out"] == 2.0
    assert backend.last_end is None and backend.last_left_out == []  # none ran here


#: Without a grammar the model starts a call it cannot finish: the turn stops early and the
#: prompting backend reads how it ended from the text backend's ``last_end``.
MALFORMED = ("<function_calls>\n<invoke>\n<tool_name>alpha</tool_name>\n<parameters>\n"
             "<parameter>\n<name>x</name>\n</parameter>\n<parameter>\n<name>x</name>\n"
             + "</tool_description>\n" * 10)


def test_a_turn_stopped_early_reads_its_own_end_from_the_text_backend() -> None:
    text = Interleaved(MALFORMED)
    backend = PromptToolsBackend(text, grammar=False)
    results = in_threads(lambda: ask(backend, "alpha"), lambda: ask(backend, "beta"))
    for (response, end, _), name in zip(results, ("alpha", "beta")):
        assert end is not None and end.timings["stopped_at_malformed_call"] == 1.0
        assert end.timings["prompt_tokens_seen"] == PROMPT_TOKENS[name]
        assert response.usage.input_tokens == PROMPT_TOKENS[name]
        assert not response.tool_uses
    assert text.last_end is None


def test_a_text_backend_keeping_no_end_does_not_hand_over_an_earlier_one() -> None:
    class Forgetful(Interleaved):
        last_end: PerContext[TextEnd | None] = PerContext(lambda: None)

        def generate_text(self, messages: Sequence[dict[str, str]],
                          **options: Any) -> Iterator[str | TextEnd]:
            yield from self.text.splitlines(keepends=True)
            yield TextEnd(reason="end")

    text = Forgetful(MALFORMED)
    earlier = TextEnd(reason="stop", input_tokens=5)
    text.last_end = earlier  # a turn before, in this context, that set it
    backend = PromptToolsBackend(text, grammar=False)
    response, end, _ = ask(backend, "alpha")
    assert end is not None and end is not earlier and end.input_tokens == 0
    assert response.usage.input_tokens == 0 and earlier.reason == "stop"


# -- a real text backend: OpenAIChatTextBackend ---------------------------------------------------


def test_the_openai_prompt_backend_keeps_each_request_its_own_last_end() -> None:
    barrier = threading.Barrier(2, timeout=10)

    def handle(request: httpx2.Request) -> httpx2.Response:
        name = json.loads(request.content)["messages"][-1]["content"]
        barrier.wait()  # both requests are in flight
        chunks = [{"choices": [{"index": 0, "delta": {"content": name}}]},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                  {"choices": [], "usage": {"prompt_tokens": PROMPT_TOKENS[name],
                                            "completion_tokens": 1}}]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=body.encode())

    backend = OpenAIChatTextBackend("m", base_url="http://127.0.0.1:9/v1",
                                    transport=httpx2.MockTransport(handle),
                                    retry=RetryPolicy(max_retries=0))

    def generate(name: str) -> tuple[str, TextEnd | None]:
        items = list(backend.generate_text([{"role": "user", "content": name}]))
        barrier.wait()  # both turns have ended and kept their end
        return "".join(i for i in items if isinstance(i, str)), backend.last_end

    results = in_threads(lambda: generate("alpha"), lambda: generate("beta"))
    for (text, end), name in zip(results, ("alpha", "beta")):
        assert text == name
        assert end is not None and end.input_tokens == PROMPT_TOKENS[name]

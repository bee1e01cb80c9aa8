"""The no-repeat guard of the local decoder, without a model: held bytes, rollback of a
repeated call to its least sure value, and further calls kept only when they bring a value
of the conversation no earlier call used."""

from __future__ import annotations

from tooluse.llama.no_repeat import Checkpoint, NoRepeat

PREFILL = b"<function_calls>\n<invoke>\n<tool_name>"
CALL = b"w</tool_name>\n<parameters>\n<city>"


def point(guard: NoRepeat, token: int, gap: float) -> Checkpoint:
    return Checkpoint(len(guard.written), n_tokens=len(guard.written), produced=0,
                      state=None, token=token, gap=gap)


def test_calls_are_held_until_they_close_and_a_repeat_rolls_back() -> None:
    guard = NoRepeat(PREFILL)
    assert guard.push(CALL) == b""
    assert guard.push(b"Paris", point(guard, 7, 0.5)) == b""
    first = guard.push(b"</city>\n</parameters>\n</invoke>\n")
    assert first == CALL + b"Paris</city>\n</parameters>\n</invoke>\n"
    assert guard.push(b"<") == b""  # may open another call: held
    guard.push(b"invoke>\n<tool_name>" + CALL)
    at = len(guard.written)
    guard.push(b"Par", point(guard, 9, 3.0))
    resume = guard.push(b"is</city>\n</parameters>\n</invoke>\n")
    assert isinstance(resume, Checkpoint) and resume.token == 9 and resume.position == at
    assert guard.banned_here() == {9} and len(guard.written) == at
    guard.push(b"London", point(guard, 11, 1.0))
    second = guard.push(b"</city>\n</parameters>\n</invoke>\n")
    assert second.endswith(b"London</city>\n</parameters>\n</invoke>\n")
    assert second.startswith(b"<invoke>")
    assert guard.push(b"</function_calls>") == b"" and guard.release(final=True) == \
        b"</function_calls>"


def test_further_calls_must_bring_a_new_value_of_the_conversation() -> None:
    guard = NoRepeat(PREFILL, conversation="Weather in Paris and London?")
    guard.push(CALL + b"Paris</city>\n</parameters>\n</invoke>\n")
    assert guard.mode_here() == "more"
    choice = point(guard, 5, 0.1)
    guard.push(b"<", choice)
    guard.push(b"invoke>\n<tool_name>" + CALL)
    guard.push(b"Rome", point(guard, 6, 0.2))  # not in the conversation
    back = guard.push(b"</city>\n</parameters>\n</invoke>\n")
    assert back == choice and guard.mode_here() == "close"
    # text answers without calls pass straight through
    plain = NoRepeat(b"", conversation="hi")
    assert plain.push(b"Hello there") == b"Hello there"


def test_a_tried_call_cut_by_the_token_limit_is_dropped() -> None:
    guard = NoRepeat(PREFILL, conversation="Weather in Paris and London?")
    first = guard.push(CALL + b"Paris</city>\n</parameters>\n</invoke>\n")
    assert guard.mode_here() == "more"
    guard.push(b"<", point(guard, 5, 0.1))
    guard.push(b"invoke>\n<tool_name>" + CALL + b"Lon")
    assert guard.abandon() and guard.release(final=True) == b""
    assert first.endswith(b"</invoke>\n") and not NoRepeat(b"").abandon()


def test_a_call_the_prefill_holds_counts_and_a_copied_value_rolls_back_whole() -> None:
    # A call block reopened after the model's call: the prefill holds that call whole.
    done = PREFILL + CALL + b"Paris</city>\n</parameters>\n</invoke>\n<invoke>\n<tool_name>"
    guard = NoRepeat(done)
    assert guard.reopened and not NoRepeat(PREFILL).reopened
    guard.push(CALL)
    at = len(guard.written)
    copied = Checkpoint(at, n_tokens=at, produced=0, state=None, token=-1, gap=0.2,
                        value=b"Paris</city>")
    guard.push(b"Paris</city>", copied)
    resume = guard.push(b"\n</parameters>\n</invoke>\n")
    # The repeat of the prefill's call goes back to the copied value, banned whole there.
    assert resume == copied and len(guard.written) == at
    assert guard.banned_values_here() == {b"Paris</city>"} and guard.banned_here() == set()
    guard.push(b"London</city>", Checkpoint(at, n_tokens=at, produced=0, state=None,
                                            token=-1, gap=0.1, value=b"London</city>"))
    kept = guard.push(b"\n</parameters>\n</invoke>\n")
    assert kept.endswith(b"London</city>\n</parameters>\n</invoke>\n")

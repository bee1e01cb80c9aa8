"""TraceStore: bounded by count and size (oldest first out), text search, id prefixes, the
writer thread, a file that outlives the process's store object."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from tooluse.messages import Message, Request, Response, TextBlock
from tooluse.trace import Trace
from tooluse.trace.store import TraceStore, open_store


def _trace(text: str, answer: str = "ok") -> Trace:
    trace = Trace(source="runner", api="test")
    turn = trace.begin_turn(Request(messages=[Message(role="user", content=text)]))
    turn.finish(Response(content=[TextBlock(text=answer)], stop_reason="end_turn"))
    trace.sent(None)
    return trace


def test_count_bound_drops_the_oldest_first() -> None:
    store = TraceStore(max_traces=3)
    ids = [store.add(_trace(f"question {i}"))["id"] for i in range(5)]
    assert len(store) == 3
    assert [item["id"] for item in store.list()] == ids[:1:-1]  # newest first
    assert store.get(ids[0]) is None and store.get(ids[4]) is not None


def test_size_bound_drops_the_oldest_but_never_the_newest() -> None:
    one = len(TraceStore().add(_trace("x" * 1000))["turns"][0]["request"]["messages"][0]
              ["content"][0]["text"])
    assert one == 1000
    store = TraceStore(max_bytes=5000)
    ids = [store.add(_trace(str(i) * 1000))["id"] for i in range(6)]
    kept = [item["id"] for item in store.list()]
    sizes = sum(item["size"] for item in store.list())
    assert sizes <= 5000 and kept and kept[0] == ids[-1]
    assert kept == ids[::-1][:len(kept)]  # what is left is the newest, in order
    huge = TraceStore(max_bytes=100)
    only = huge.add(_trace("y" * 500))["id"]
    assert [item["id"] for item in huge.list()] == [only]


def test_search_finds_text_as_written_quotes_and_newlines_included() -> None:
    store = TraceStore()
    store.add(_trace("plain question"))
    wanted = store.add(_trace('say "hi"\nthen stop', answer="Bonjour"))["id"]
    assert [i["id"] for i in store.list(search='"hi"\nthen')] == [wanted]
    assert [i["id"] for i in store.list(search="bonjour")] == [wanted]  # any case
    assert store.list(search="absent words") == []


def test_get_takes_a_unique_prefix_and_before_pages() -> None:
    store = TraceStore()
    first = store.add(_trace("a"))
    second = store.add(_trace("b"))
    assert store.get(first["id"][:6]) == first
    newest = store.list(1)
    assert [i["id"] for i in newest] == [second["id"]]
    assert [i["id"] for i in store.list(1, before=newest[0]["seq"])] == [first["id"]]
    assert store.get("") is None  # names every trace: not one
    assert store.get("zz-not-an-id") is None


def test_a_file_store_persists_and_a_bad_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "traces.db"
    store = TraceStore(path)
    trace_id = store.add(_trace("kept"))["id"]
    store.close()
    again = open_store(path)
    assert again is not None and again.get(trace_id) is not None
    again.close()
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ValueError, match="cannot use .* as a trace database"):
        TraceStore(bad)
    assert open_store(None) is None
    with pytest.raises(ValueError):
        TraceStore(max_traces=0)


def test_submit_stores_from_the_writer_thread_and_close_drains(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "t.db")
    traces = [_trace(f"q{i}") for i in range(20)]
    threads = [threading.Thread(target=store.submit, args=(t,)) for t in traces]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.flush(10)
    assert len(store) == 20
    store.submit(_trace("last"))
    store.close()  # stores what is pending first
    with sqlite3.connect(tmp_path / "t.db") as db:
        assert db.execute("select count(*) from traces").fetchone() == (21,)

"""tooluse._bounded_table: the newest rows kept, by a count the triggers keep, exactly as a
count of the rows would say: after replaced ids, explicit deletes (gaps in seq), another
connection's writes, and a reopen of a store a writer without the triggers changed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tooluse.server.stores.responses import SqliteResponseStore
from tooluse.trace.store import TraceStore


def _count(path: Path, table: str) -> tuple[int, int]:
    with sqlite3.connect(path) as db:
        return db.execute(f"SELECT rows, bytes FROM {table}_bound").fetchone()


def test_the_responses_store_keeps_exactly_the_newest_rows_through_gaps(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = SqliteResponseStore(path, max_responses=5)
    for k in range(8):
        store.put(f"r{k}", {"k": k}, [], {})
    assert len(store) == 5 and store.get("r2") is None and store.get("r3") is not None
    store.put("r7", {"k": "again"}, [], {})  # the same id replaced: still 5
    assert len(store) == 5 and _count(path, "responses")[0] == 5
    assert store.delete("r5") and store.delete("r6")  # gaps in seq
    store.put("r8", {}, [], {})
    store.put("r9", {}, [], {})
    # 5 kept, none of the older ones dropped early for the gaps
    assert len(store) == 5 and store.get("r3") is not None and store.get("r4") is not None
    store.put("r10", {}, [], {})
    assert store.get("r3") is None and len(store) == 5
    store.close()
    # a writer that knows nothing of the count (an older version, a person with sqlite3)
    with sqlite3.connect(path) as db:
        db.execute("DROP TRIGGER responses_bound_delete")
        db.execute("DELETE FROM responses WHERE id = 'r4'")
    again = SqliteResponseStore(path, max_responses=5)  # re-counted on opening
    assert _count(path, "responses")[0] == len(again) == 4
    again.put("r11", {}, [], {})
    again.put("r12", {}, [], {})
    assert len(again) == 5 and again.get("r7") is None and again.get("r8") is not None
    again.close()


def test_the_trace_store_keeps_its_count_and_bytes_through_replaced_ids(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = TraceStore(path, max_traces=3)
    base = {"time": 0.0, "source": "s", "api": "a", "status": 200, "duration_ms": 1.0,
            "summary": {"model": "m", "tools": [], "calls": 0, "status": "ok",
                        "input_tokens": 1, "output_tokens": 1}}
    for k in range(4):
        store.add_dict({**base, "id": f"t{k}"})
    store.add_dict({**base, "id": "t3", "source": "replaced"})  # INSERT OR REPLACE
    with sqlite3.connect(path) as db:
        rows, total = db.execute("SELECT count(*), sum(size) FROM traces").fetchone()
    assert (rows, total) == _count(path, "traces") and rows == 3
    store.close()

"""The ConverseStream frame work of one proxied stream, in process: the fake upstream's 14
frames (canned_converse.py) read as the Bedrock backend reads them, their payloads decoded
to neutral events, encoded back to ConverseStream frames as the gateway writes them; no
HTTP. Thread CPU time, best of 7 rounds.

    python bench/gateway/converse_frames.py
    PYTHONPATH=OTHER_TREE/src python bench/gateway/converse_frames.py   # another version

A tooluse from before the backend read frames itself is measured with botocore's
``EventStreamBuffer``, as it read them.
"""

from __future__ import annotations

import json
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import canned_converse

from tooluse.codecs.bedrock import stream as converse_stream
try:
    from tooluse.server.apis.converse import _encode_frames
except ImportError:  # before the server's sub-packages
    from tooluse.server.converse_api import _encode_frames  # type: ignore[no-redef]

DATA = b"".join(canned_converse.converse_stream_frames("bench-model"))


def _reader() -> Callable[[], list[tuple[dict[str, Any], bytes]]]:
    try:
        from tooluse.backends._eventstream_frames import FrameBuffer
    except ImportError:  # before: botocore's buffer
        from botocore.eventstream import EventStreamBuffer

        def botocore_frames() -> list[tuple[dict[str, Any], bytes]]:
            buffer = EventStreamBuffer()
            buffer.add_data(DATA)
            return [(m.headers, m.payload) for m in buffer]

        return botocore_frames

    def frames() -> list[tuple[dict[str, Any], bytes]]:
        buffer = FrameBuffer()
        buffer.add_data(DATA)
        return list(buffer)

    return frames


def main() -> int:
    frames = _reader()

    def one() -> bytes:
        payloads = [{headers[":event-type"]: json.loads(payload)} for headers, payload in frames()]
        return b"".join(_encode_frames(converse_stream.decode_events(payloads), None))  # type: ignore[arg-type]

    one()
    n = 300
    best = min(timeit.Timer(one, timer=time.thread_time).repeat(number=n, repeat=7)) / n
    print(f"{len(frames())} frames in and out: {best * 1e6:.0f} µs CPU per stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())

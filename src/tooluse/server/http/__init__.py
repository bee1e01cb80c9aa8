"""The gateway's HTTP plumbing: request bodies, SSE and AWS event-stream framing, JSON
encoding, client disconnects, streamed responses and authentication (no API's facts)."""

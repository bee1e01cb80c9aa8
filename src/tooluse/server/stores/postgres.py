"""What the gateway's PostgreSQL stores share (the Responses store and the usage store)."""

from __future__ import annotations

import re

__all__ = ["redacted"]


def redacted(url: str) -> str:
    """The URL without its password (``user:secret@`` -> ``user:***@``), for messages."""
    return re.sub(r"(//[^/:@]*:)[^@/]*@", r"\1***@", url)

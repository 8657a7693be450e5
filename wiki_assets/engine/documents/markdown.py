"""What the engine reads of a document's Markdown structure, defined once for every reader (the
link candidates' one-line summary, the compact request's citable lines, extractive pages)."""

from __future__ import annotations

import re

HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
"""The start of an ATX heading line (``## Setup``), indented at most three spaces (CommonMark)."""

SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
"""The space after a sentence's closing mark, Latin or CJK: split prose on it for sentences."""

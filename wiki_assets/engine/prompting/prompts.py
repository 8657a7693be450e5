"""Prompts, in one place. Bump PROMPT_VERSION whenever a prompt changes: every page records the
version it was written with, and a different version marks the page for re-summary."""

PROMPT_VERSION = "2026-12-01.2"

LIBRARIAN_SYSTEM = (
    "You are the librarian of a company's internal documents. For the one document you are given, "
    "write its catalogue entry as a JSON object with these fields: title (the document's title), "
    "description (one line: what it is and who needs it), summary (two to four sentences: what it "
    "says and what it is for), key_points (up to 4 facts, each with text: the fact in a short "
    "sentence, quote: the document's words that state it, copied exactly, and lines: the first "
    "and last number of the lines it stands on), topics (up to 5 short tags), and "
    "related (documents from the candidate list that a reader of this one should also see, each "
    "with its path exactly as given and a one-sentence reason; an empty list if none fits). "
    "Do not invent facts. Do not copy the document's first lines. Answer with the JSON object only."
)

# The document's lines come numbered ("12| text", blank lines left out), so that a key point can
# cite the lines it stands on; a document summarized in parts keeps the whole document's numbers.
# The language comes last: the instruction a small model read most recently is the one it keeps.
PAGE_USER = (
    "Document: {path}\nTitle: {title}\n{parts_note}\n"
    "<document>\n{text}\n</document>\n\n"
    "Candidates for related:\n{candidates}\n\n"
    "Write every field in {language}."
)

NO_CANDIDATES = "(none: leave related empty)"

PARTS_NOTE = (
    "The document was long; below are notes on each of its {parts} parts, in order, each with "
    "the number of the line it quotes."
)

CHUNK_SYSTEM = (
    "You take notes on one part of a longer internal document for a librarian. List the facts, "
    "decisions, names and numbers in this part, one a line, each as the line number it stands on "
    "and the document's words copied exactly, like 12| words. No preamble."
)

CHUNK_USER = "Document: {path} (part {part} of {parts})\n\n<part>\n{text}\n</part>"

REPAIR_USER = (
    "Your answer was not a valid catalogue entry: {problem}. Answer again with only the JSON "
    "object, with the fields title, description, summary, key_points, topics and related."
)

# The compact request (engine/llm/compact.py), for a very small model: the numbered document, then
# what to answer, one field a line in the schema's order; no system prompt.
COMPACT_PROSE_USER = (
    "{text}\n\n"
    "Describe the document above in {language}, for colleagues who have not read it: what it "
    "is for, who needs it, and what it says."
)

COMPACT_PICKS_USER = (
    "{text}\n\n"
    "Which three lines of this document matter most to a reader?\n"
    "points: the numbers of those lines."
)

"""Prompts, in one place. Bump PROMPT_VERSION whenever a prompt changes: every page records the
version it was written with, and a different version marks the page for re-summary."""

PROMPT_VERSION = "2026-11-30.1"

LIBRARIAN_SYSTEM = (
    "You are the librarian of a company's internal documents. For the one document you are given, "
    "write its catalogue entry: two to four sentences saying what the document is, what it is for, "
    "and who would need it. Write in the same language as the document. Do not invent facts, "
    "do not copy the document's first lines, and do not add a heading."
)

LIBRARIAN_USER = "Document: {path}\nTitle: {title}\n\n<document>\n{text}\n</document>"

TRUNCATION_NOTE = "\n\n[The document continues; only its beginning is shown.]"

"""The compact page request, for a very small model (``page_shape: compact``).

Asked for the full page, the embedded SmolLM2-135M ran out of ``max_tokens`` on most pages, echoed
the prompt's instructions and invented its key points. What such a model does well is read a
document and point at its lines. So the compact request shows the document's lines numbered and
asks for the numbers of the key lines (a JSON-schema ``enum`` of the citable lines: the grammar
of a constraining server cannot produce any other number), plus a short description, summary and
topics where the model writes the document's language. The key points are then the document's
own lines, quoted by the engine, so each is verified by construction of its evidence (and still
checked like any other point). Related documents are the closest candidates of the related
index, with the candidate's own line as the reason: a small model picks them no better.

Where the model does not write the document's language (``Endpoint.prose_languages``) the request
asks for the numbers only, and the page is labelled as not summarized: the lines the model picked
are worth a reader's time; prose in a language the model cannot write is not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from wiki_assets.engine.documents.language import LANGUAGES, detect_language
from wiki_assets.engine.documents.lines import document_lines
from wiki_assets.engine.documents.markdown import HEADING_LINE, row_said
from wiki_assets.engine.prompting.candidate import Candidate
from wiki_assets.engine.prompting.page import (
    DraftError,
    PageDraft,
    RelatedLink,
    close_truncated_json,
)
from wiki_assets.engine.prompting.prompts import COMPACT_PICKS_USER, COMPACT_PROSE_USER
from wiki_assets.engine.text.scripts import HANGUL, HANGUL_SYLLABLES
from wiki_assets.engine.text.sentences import SENTENCE_END, finished_sentences

__all__ = ["citable_lines", "compact_messages", "compact_schema", "parse_compact"]

MAX_PICKS = 3  # key lines asked for
COMPACT_RELATED = 3  # closest candidates linked
# (page's language, linked document's language) -> the reason shown, in the page's language (the
# link's text is the document's title already).
OTHER_LANGUAGE_REASON = {
    ("Korean", "English"): "관련된 영어 문서",
    ("English", "Korean"): "A related document in Korean",
}
MAX_POINT_CHARS = 240  # a key line longer than this is cut at a word (a paragraph is one line)
# A line worth citing says something: a few words, or (Korean has fewer, longer words) enough
# Hangul; not a heading (the page lists headings), not a code fence, not the title.
_MIN_WORDS = 4
_MIN_HANGUL = 8
_MARKER = re.compile(r"^\s*(?:[-*+>]\s*|\d+[.)]\s+|\[[ xX]\]\s*)+")
_LEADING_JUNK = re.compile(r"^[^\w\"'(]+")
_EMPHASIS = re.compile(r"\*\*|__|`")
_NUMBERED = re.compile(r"^(\d+)\| ", re.MULTILINE)
# Bounds per field, in characters. Korean costs about three times the tokens of English per
# character in this tokenizer, so its bounds are a third: a bounded answer always fits max_tokens.
_SUMMARY_CHARS = 400
_DENSE_LANGUAGES = frozenset({"korean", "ko", "japanese", "ja", "chinese", "zh"})
# Topics: a few words of letters (Latin, Greek, Cyrillic, Hangul, kana, CJK). The pattern keeps a
# small model from filling a topic with digits, brackets or the next field's JSON; it is spelt
# in ranges because llama.cpp's schema-to-grammar converter knows no ``\\W`` classes (a server
# given one dropped the connection).
_LETTERS = (
    f"A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u3040-\u30ff\u4e00-\u9fff{HANGUL_SYLLABLES}"
)
_TOPIC = {"type": "string", "pattern": f"^[{_LETTERS}][{_LETTERS} -]{{1,23}}$"}
# The script of a language's prose, where a small model drifts out of it (SmolLM2-135M wrote
# Korean-looking syllables on English pages): printable Latin, without the quote and backslash
# a JSON string would need escaped.
_LATIN = " !#-Z\\[\\]^-~\u00a0-\u024f\u2010-\u2027"  # brackets escaped: this is a regex class
_SCRIPTS = {"english": _LATIN, "en": _LATIN}
_LATIN_TOPIC = {"type": "string", "pattern": "^[A-Za-z\u00c0-\u024f][A-Za-z\u00c0-\u024f -]{1,23}$"}


def citable_lines(text: str, title: str) -> dict[int, str]:
    """The document's lines a key point may stand on, by their numbers (the document's own, as
    :func:`~wiki_assets.engine.quality.number_lines` shows them), cleaned of list markup; a
    table row as :func:`~wiki_assets.engine.documents.markdown.row_said` says it."""
    citable: dict[int, str] = {}
    in_code = False
    previous = ""
    for number, line in enumerate(document_lines(text), start=1):
        previous, row = line, row_said(line, previous)
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code or HEADING_LINE.match(line) or line.strip() == title.strip() or row == "":
            continue  # (a table's header row says nothing on its own)
        line = row or line
        said = " ".join(_EMPHASIS.sub("", _MARKER.sub("", line)).split())
        if len(said.split()) >= _MIN_WORDS or len(HANGUL.findall(said)) >= _MIN_HANGUL:
            if len(said) > MAX_POINT_CHARS:
                said = said[:MAX_POINT_CHARS].rsplit(" ", 1)[0] + " …"
            citable[number] = said
    return citable


def shown_lines(body: str) -> set[int]:
    """The line numbers the model was shown (the whole document, or notes on its parts)."""
    return {int(found) for found in _NUMBERED.findall(body)}


def compact_schema(numbers: Sequence[int], *, prose: bool, language: str) -> dict[str, Any]:
    """The answer's schema: the key lines first (read while the document is the last thing the
    model saw), then, where it writes the language, a summary (its first sentence becomes the
    description) and topics."""
    # No citable line (a document of headings only): an empty list is the only answer.
    points: dict[str, Any] = {"type": "array", "maxItems": MAX_PICKS if numbers else 0}
    points["items"] = {"type": "integer", "enum": sorted(numbers) or [1]}
    properties: dict[str, Any] = {"points": points}
    if prose:
        chars = _summary_chars(language)
        script = _SCRIPTS.get(language.strip().lower())
        properties["summary"] = (
            {"type": "string", "pattern": f"^[{script}]{{1,{chars}}}$"}
            if script
            else {"type": "string", "minLength": 1, "maxLength": chars}
        )
        topic = _LATIN_TOPIC if script else _TOPIC
        properties["topics"] = {"type": "array", "items": topic, "maxItems": 3}
    return {"type": "object", "properties": properties, "required": list(properties)}


def _summary_chars(language: str) -> int:
    """The most characters the schema lets a summary in ``language`` have."""
    scale = 3 if language.strip().lower() in _DENSE_LANGUAGES else 1
    return _SUMMARY_CHARS // scale


def compact_messages(body: str, *, prose: bool, language: str) -> list[dict[str, str]]:
    """One user message, no system prompt: every instruction a small model is given is one it
    may repeat, and the fewer prompt tokens, the sooner it answers."""
    template = COMPACT_PROSE_USER if prose else COMPACT_PICKS_USER
    return [{"role": "user", "content": template.format(text=body, language=language)}]


def parse_compact(
    content: str,
    *,
    truncated: bool,
    citable: dict[int, str],
    title: str,
    path: str,
    candidates: Sequence[Candidate],
    prose: bool,
    language: str,
) -> PageDraft:
    """The page of a compact answer: the picked lines quoted as key points (in the document's
    order), the prose fields where asked for, and the closest candidates as related links (their
    reasons in the page's ``language``, a name such as 'Korean': :func:`link_reason`)."""
    body = content.strip()
    start = body.find("{")
    if start < 0:
        raise DraftError("the answer contains no JSON object")
    body = body[start:]
    if truncated and body.count("{") > body.count("}"):
        body = close_truncated_json(body) or body
    try:
        data = json.loads(body[: body.rfind("}") + 1], strict=False)
    except json.JSONDecodeError as error:
        raise DraftError(f"invalid JSON: {error}") from error
    if not isinstance(data, dict):
        raise DraftError("the answer is not a JSON object")
    picked = data.get("points")
    numbers = (
        sorted({n for n in picked if type(n) is int and n in citable})
        if isinstance(picked, list)
        else []
    )
    points = [{"text": citable[n], "quote": citable[n], "lines": [n]} for n in numbers]
    related = [
        RelatedLink(path=candidate.path, reason=link_reason(candidate, language))
        for candidate in candidates
        if candidate.path != path
    ][:COMPACT_RELATED]
    fields: dict[str, Any] = {"title": title, "key_points": points, "related": related}
    if prose:
        summary = data.get("summary")
        said = summary if isinstance(summary, str) else ""
        if len(said) >= _summary_chars(language):
            # Stopped at the schema's length (the grammar ends the string there): the sentence
            # it was writing is unsaid. (One cut by max_tokens was closed at its last already.)
            said = finished_sentences(said)
        fields["description"], fields["summary"] = _description_and_summary(said)
        topics = data.get("topics")
        fields["topics"] = (
            [t for t in topics if isinstance(t, str)] if isinstance(topics, list) else []
        )
    else:
        fields.update(description="-", summary="-", topics=[])
    return PageDraft.model_validate(fields)


def link_reason(candidate: Candidate, language: str) -> str:
    """Why a compact page links ``candidate``: its own line, which is in its own language; for a
    document in another language than the page's, a phrase in the page's language saying so."""
    theirs = LANGUAGES[detect_language(f"{candidate.title}\n{candidate.line}")]
    return OTHER_LANGUAGE_REASON.get((language, theirs)) or candidate.line or candidate.title


def _description_and_summary(said: str) -> tuple[str, str]:
    """The description is the summary's first sentence; the summary, the sentences after it
    (all of it if it has one). Asked for a description field, a small model copies the title
    into it; asked for one text, it writes about the document."""
    # A grammar lets a small model open the string with the JSON it was writing (",. }").
    said = _LEADING_JUNK.sub("", " ".join(said.split()))
    sentences = SENTENCE_END.split(said)
    first = sentences[0] if sentences and sentences[0] else "-"
    rest = " ".join(sentences[1:]) or first
    return first, rest

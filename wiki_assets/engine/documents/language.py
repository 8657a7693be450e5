"""Which language a text is in, and the codes a page's language goes by.

The run writes each page in its document's language (the ``language`` dial's ``auto``); the
catalog and the digest give each page's language as a code, so that a tool (a bot posting to a
Korean and an English channel) need not guess.
"""

from __future__ import annotations

import re

from wiki_assets.engine.text.scripts import hangul_letters

# What is not a letter: what is left once it is taken out is counted (no list of one-letter
# matches is built).
_NOT_LETTER = re.compile(r"[\W\d_]+")
LANGUAGES = {"ko": "Korean", "en": "English"}


def language_code(language: str) -> str:
    """The code of a page language as a run names it ("Korean" or "ko": "ko"); a language
    :data:`LANGUAGES` does not know, as it was given, lower case; "" for none."""
    name = language.strip().lower()
    return next((code for code, known in LANGUAGES.items() if name in (code, known.lower())), name)


def detect_language(text: str) -> str:
    """'ko' when Hangul letters, jamo included
    (:func:`~wiki_assets.engine.text.scripts.hangul_letters`), make up a fifth of the letters
    (Korean documents quote English terms), else 'en'. Enough to keep a Korean document's page
    in Korean; other scripts fall back to asking the model to use the document's own language."""
    sample = text[:4000]
    letters = len(_NOT_LETTER.sub("", sample))
    if not letters:
        return "en"
    return "ko" if hangul_letters(sample) / letters >= 0.2 else "en"

"""A text file's bytes as text, in whatever encoding it was saved: UTF-8 (with or without its
mark), UTF-16 with or without a byte order mark, and the legacy encodings of Windows PCs (CP949
and EUC-KR for Korean, Shift-JIS, the Western code pages…), told apart by charset-normalizer.

An encoding never fails a document: bytes that are not UTF-8 are read in the encoding that
fits them best. Only bytes that are no text in any encoding (a binary file saved as ``.md``)
are refused, with the reason.
"""

from __future__ import annotations

import codecs

import charset_normalizer

from wiki_assets.engine.errors import DocumentError

# Byte order marks, longest first (UTF-32's begins like UTF-16's).
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# The most bytes a character takes in the encodings read here (GB18030's and UTF-8's: four).
_LONGEST_CHARACTER = 4
# Encodings whose text holds NUL bytes: any other file with one is binary.
_WIDE = ("utf_16", "utf_32")


def decode(data: bytes) -> str:
    """``data`` as text (see the module docstring), or :class:`DocumentError` when it is none."""
    for mark, encoding in _MARKS:
        if data.startswith(mark):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError as error:
                if error.reason == "truncated data":  # its last character cut short
                    return data.decode(encoding, errors="replace")
                raise DocumentError(f"invalid {encoding.upper()} text") from error
    if b"\x00" not in data:  # (NUL is valid UTF-8, and UTF-16's ASCII is full of them)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            if error.reason == "unexpected end of data":  # its last character cut short
                return data.decode("utf-8", errors="replace")
    best, cut = _best(data)
    if best is None:
        raise DocumentError("binary file (contains NUL bytes)" if b"\x00" in data else
                            "binary file (no text encoding fits its bytes)")  # fmt: skip
    return str(best) + "\ufffd" * bool(cut)  # (a character cut short: shown as lost)


def encoding_of(head: bytes) -> str | None:
    """The encoding the first bytes of a file read in (``utf_8``, ``cp949``, ``utf_16_le``…),
    or None when they are not text. A multi-byte character cut at the end is forgiven."""
    if head.startswith(tuple(mark for mark, _ in _MARKS)):
        return "bom"
    if b"\x00" not in head:
        try:
            head.decode("utf-8")
            return "utf_8"
        except UnicodeDecodeError as error:
            if error.start >= len(head) - 3:
                return "utf_8"  # a character cut by the end of the sample
    best, _ = _best(head)
    return best.encoding if best is not None else None


def _best(data: bytes) -> tuple[charset_normalizer.models.CharsetMatch | None, int]:
    """charset-normalizer's best reading of ``data``, and how many bytes of a character cut
    short at its end it leaves out (a file cut in the middle of a Hangul character, a sample of
    its first bytes: no encoding decodes that character, and the rest is still text); None when
    no encoding makes text of it, or when only a narrow encoding does and the bytes hold a NUL
    (a binary file)."""
    cut_short = data[-1:] >= b"\x80" or b"\x00" in data and len(data) % 2  # (UTF-16's, odd)
    # Every cut is read and the least chaotic reading wins (the shorter cut on a tie): a
    # single-byte code page reads a CP949 text cut in a Hangul character whole, as Cyrillic.
    readings = []
    for cut in range(_LONGEST_CHARACTER if cut_short else 1):
        match = charset_normalizer.from_bytes(data[: len(data) - cut]).best()
        if match is not None:
            readings.append((match.chaos, cut, match))
            if not match.chaos:  # (none reads better: a text whole, or cut where it was)
                break
    if not readings:
        return None, 0
    _, cut, best = min(readings, key=lambda reading: reading[:2])
    if b"\x00" in data and not (best.encoding.startswith(_WIDE) and _wide_text(data)):
        return None, 0
    return best, cut


def _wide_text(data: bytes) -> bool:
    """Whether ``data``'s NUL bytes are those of UTF-16 text without its mark: the high bytes
    of its spaces, digits and Latin letters, so many of them and all in even or all in odd
    places (a binary file's few NULs make a "UTF-16" reading of nonsense)."""
    even, odd = data[0::2].count(0), data[1::2].count(0)
    most, fewest = max(even, odd), min(even, odd)
    return most >= max(2, len(data) // _WIDE_NUL_SHARE) and fewest <= most // 20


# In UTF-16 text without its mark, at least one byte in this many is NUL: the ASCII a text holds
# (spaces, line ends, digits) even when it is Korean, Chinese or Japanese.
_WIDE_NUL_SHARE = 20


__all__ = ["decode", "encoding_of"]

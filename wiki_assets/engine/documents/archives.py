"""Archives are folders: each document inside a ``.zip``, ``.tar``, ``.tar.gz``/``.tgz`` or a
``.gz`` of one file is a document of its own, under the archive's path
(``drive/회의자료.zip/agenda.docx``), with the hash of its own bytes, so that a member is redone
only when it changes. An archive inside an archive is opened too, one level deep.

What an archive holds is read by Python's own ``zipfile``, ``tarfile`` and ``gzip``, within
limits: an archive whose members would expand past :data:`MAX_EXPANDED_BYTES`, or a member that
expands more than :data:`MAX_RATIO` times, is refused (a zip bomb); an encrypted or broken one
holds no text that can be read. Either is :class:`~wiki_assets.engine.errors.NoText` with the
reason, listed at the archive's own path. A tar cut short still gives the members before the
cut; the member cut, and the tar itself, are listed with the reason.

A zip written by Windows Explorer on a Korean PC stores its member names in CP949 without the
UTF-8 flag; ``zipfile`` reads those as CP437, and the name's bytes are decoded again here.
"""

from __future__ import annotations

import functools
import io
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from wiki_assets.engine.errors import NoText

# An archive's kind by how its name ends (longest first: ".tar.gz" before ".gz").
KINDS = ((".tar.gz", "tar"), (".tgz", "tar"), (".tar", "tar"), (".zip", "zip"), (".gz", "gz"),
         (".msg", "msg"))  # fmt: skip
# Containers that are documents themselves: an Outlook mail is its body (extract.py), and its
# attachments are documents under it (``mail.msg/report.pdf``, a mail attached to it too).
WITH_BODY = frozenset({"msg"})
MAX_EXPANDED_BYTES = 200_000_000  # what one archive's members may expand to, in all
MAX_RATIO = 100  # how many times its compressed size a member may expand to…
RATIO_FROM_BYTES = 1_000_000  # …once it is this large (a small file of spaces compresses well)
MAX_DEPTH = 1  # archives inside archives opened (a zip in a zip: 1)
_UTF8_FLAG = 0x800  # a zip member's general-purpose bit 11: its name is UTF-8
_ENCRYPTED_FLAG = 0x1
_GZIP_MAGIC = b"\x1f\x8b"
_TAR_BLOCK = 512
_AFTER_THE_CUT = "any files it held after the cut are lost"
# Names a member's bytes may be in, when its zip says nothing: UTF-8 (macOS, Linux), then the
# code page of a Korean Windows PC.
_NAME_ENCODINGS = ("utf-8", "cp949")
# What an archive's own library raises for a broken one (or a compression it lacks; extract-msg's
# errors derive from Exception, and what it cannot read it says so).
_BROKEN = (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, zlib.error,
           NotImplementedError, RuntimeError, ValueError, Exception)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Member:
    """A file inside an archive: its path inside it, and its bytes (or why it holds no text:
    an archive nested too deep, a member that cannot be read)."""

    name: str
    data: bytes
    no_text: str | None = None


# A member as an archive lists it: its name, and how to read its bytes (only when asked: a
# reader looking for one member reads no other).
_Listed = tuple[str, Callable[[], bytes]]


def kind_of(path: str) -> str | None:
    """``zip``, ``tar`` or ``gz`` when ``path`` names an archive opened as a folder."""
    lowered = path.lower()
    return next((kind for ending, kind in KINDS if lowered.endswith(ending)), None)


def members(source: Path | bytes, name: str, depth: int = 0) -> Iterator[Member]:
    """The files inside the archive ``source`` (named ``name``), one at a time, those inside
    an archive it holds under that archive's name (``첨부.zip/deck.pptx``); or :class:`NoText`
    with the reason the archive cannot be opened (before any member), or is cut short (after
    the members before the cut)."""
    for inside, read in _listing(source, name):
        try:
            data = read()
        except NoText as error:
            yield Member(inside, b"", str(error))
            continue
        kind = kind_of(inside)
        if kind is None or kind in WITH_BODY:
            yield Member(inside, data)
        if kind is None or kind in WITH_BODY and depth >= MAX_DEPTH:
            continue
        if depth >= MAX_DEPTH:
            yield Member(inside, data, "an archive inside an archive inside an archive")
        else:
            nested: list[Member] = []
            failed: NoText | None = None
            try:
                nested.extend(members(data, inside, depth + 1))
            except NoText as error:
                failed = error
            for found in nested:
                yield Member(f"{inside}/{found.name}", found.data, found.no_text)
            if failed is not None and kind not in WITH_BODY:  # (a mail's reader says why)
                yield Member(inside, b"", str(failed))


def source(path: Path) -> Path | bytes:
    """The document at ``path``: the file, or the bytes of a file inside an archive
    (``…/drive/회의자료.zip/안건.docx``, ``…/회의자료.zip/첨부.zip/deck.pptx``), reading no
    other member. :class:`FileNotFoundError` when there is none."""
    if path.is_file():
        return path
    for archive in path.parents:
        if archive.is_file():
            if kind_of(archive.name) is not None:
                inside = path.relative_to(archive).parts
                found = _find(archive.read_bytes(), archive.name, list(inside), 0)
                if found is not None:
                    return found
            break
    raise FileNotFoundError(f"no file {str(path)!r}")


def holder(path: str) -> str:
    """The file ``path`` is in: the outermost archive, for a file inside one
    (``drive/회의자료.zip`` for ``drive/회의자료.zip/첨부.zip/deck.pptx``); else ``path``. By its
    name alone: a file's page links the archive, which a person can open."""
    parts = path.split("/")
    for end, part in enumerate(parts[:-1], start=1):
        if kind_of(part) is not None:
            return "/".join(parts[:end])
    return path


def read_bytes(path: Path) -> bytes:
    """The bytes of the document at ``path``, a file or a file inside an archive."""
    try:  # most documents are files: read at once, without asking first (a stat each)
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        found = source(path)  # a member of an archive, or no file at all
    return found.read_bytes() if isinstance(found, Path) else found


def _find(data: bytes, name: str, inside: list[str], depth: int) -> bytes | None:
    """The bytes of the member at the path ``inside`` of the archive ``data``, or None."""
    wanted = "/".join(inside)
    try:
        for listed, read in _listing(data, name):
            if listed == wanted:
                return read()
            if depth < MAX_DEPTH and kind_of(listed) and wanted.startswith(f"{listed}/"):
                rest = wanted.removeprefix(f"{listed}/").split("/")
                return _find(read(), listed, rest, depth + 1)
    except NoText:
        return None
    return None


def _listing(source: Path | bytes, name: str) -> Iterator[_Listed]:
    """The archive's files as it lists them, safe names only (no ``..``, no absolute path, no
    hidden file or folder); :class:`NoText` when it cannot be opened, or is refused."""
    kind = kind_of(name)
    assert kind is not None, name
    data = source.read_bytes() if isinstance(source, Path) else source
    try:
        listed = _READERS[kind](data, name)
        for inside, read in listed:
            parts = [part for part in inside.replace("\\", "/").split("/") if part not in ("", ".")]
            if not parts or any(part == ".." or part.startswith(".") for part in parts):
                continue
            if parts[0] == "__MACOSX":  # (a Mac's resource forks, not documents)
                continue
            yield "/".join(parts), _guarded(read)
    except NoText:
        raise
    except _BROKEN as error:
        raise NoText(f"unreadable archive: {_reason(error)}") from None


def _guarded(read: Callable[[], bytes]) -> Callable[[], bytes]:
    """``read``, its archive's errors as :class:`NoText` (a member whose bytes are broken)."""

    def guarded() -> bytes:
        try:
            return read()
        except _BROKEN as error:
            raise NoText(f"unreadable: {_reason(error)}") from None

    return guarded


def _zip(data: bytes, name: str) -> Iterator[_Listed]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    infos = [info for info in archive.infolist() if not info.is_dir()]
    if any(info.flag_bits & _ENCRYPTED_FLAG for info in infos):
        raise NoText("password-protected")
    _within_limits([(info.file_size, info.compress_size) for info in infos])

    def reader(info: zipfile.ZipInfo) -> Callable[[], bytes]:
        def read() -> bytes:
            with archive.open(info) as stream:
                content = stream.read(info.file_size + 1)
            if len(content) > info.file_size:  # (its header lied about its size)
                raise NoText("refused: larger than its archive says (a zip bomb?)")
            return content

        return read

    for info in infos:
        yield _member_name(info), reader(info)


def _tar(data: bytes, name: str) -> Iterator[_Listed]:
    """A ``.tar``, or a ``.tar.gz``/``.tgz`` (its tar unpacked first, within the limits). One cut
    short gives the members before the cut (the one cut says so when its bytes are read), then
    :class:`NoText` saying that it was cut: what it held after the cut is lost with the bytes
    that held it, and no name of it is left to list."""
    tar = _gunzipped(data, whole=False) if data.startswith(_GZIP_MAGIC) else data
    archive = tarfile.open(fileobj=io.BytesIO(tar), mode="r:")
    files, end = [], 0
    try:
        while (info := archive.next()) is not None:
            end = info.offset_data + -(-info.size // _TAR_BLOCK) * _TAR_BLOCK
            if info.isfile():
                files.append(info)
    except tarfile.ReadError:  # (cut inside a member: those listed before the cut)
        end = len(tar)
    # A whole tar ends with a block of zeros (tarfile, like tar, stops at one, and stops
    # silently at a header cut short too).
    cut = tar[end : end + _TAR_BLOCK] != bytes(_TAR_BLOCK)
    _within_limits([(sum(info.size for info in files), len(data))])

    def reader(info: tarfile.TarInfo) -> Callable[[], bytes]:
        def read() -> bytes:
            stream = archive.extractfile(info)
            return stream.read() if stream is not None else b""

        return read

    for info in files:
        yield info.name, reader(info)
    if cut:
        raise NoText(f"cut short (its end is missing): {_AFTER_THE_CUT}")


def _gz(data: bytes, name: str) -> Iterator[_Listed]:
    """A ``.gz`` of one file: that file, named as the archive without ``.gz``."""
    content = _gunzipped(data, whole=True)
    inner = PurePosixPath(name).name
    yield inner[: -len(".gz")] if inner.lower().endswith(".gz") else inner, lambda: content


def _gunzipped(data: bytes, *, whole: bool) -> bytes:
    """What gzip's ``data`` holds, inflated in pieces and refused once it expands past the
    limits. Cut short, it is what precedes the cut (a tar's members before it), or EOFError when
    ``whole`` (a file of its own, cut, is no document)."""
    pieces, size, rest = [], 0, data
    while rest:
        inflater = zlib.decompressobj(wbits=31)  # (one gzip member: its header, then deflate)
        pending = rest
        while not inflater.eof:
            piece = inflater.decompress(pending, 1 << 20)
            pending = inflater.unconsumed_tail
            if not piece and not pending:
                break  # every byte read, and the stream not ended: cut short
            size += len(piece)
            _within_limits([(size, len(data))])
            pieces.append(piece)
        if not inflater.eof:
            if whole:
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            break
        rest = inflater.unused_data.lstrip(b"\0")  # (another member, or the padding after)
    return b"".join(pieces)


def _within_limits(sizes: list[tuple[int, int]]) -> None:
    """Refuse an archive whose members (their expanded and compressed sizes) would expand past
    the limits: a zip bomb."""
    total = 0
    for expanded, compressed in sizes:
        total += expanded
        if total > MAX_EXPANDED_BYTES:
            raise NoText(
                f"refused: expands to over {MAX_EXPANDED_BYTES:,} bytes (a zip bomb?)"
            )
        ratio = expanded / max(compressed, 1)
        if expanded >= RATIO_FROM_BYTES and ratio > MAX_RATIO:
            raise NoText(
                f"refused: a member expands {ratio:,.0f} times (the limit is {MAX_RATIO}; "
                "a zip bomb?)"
            )


def _member_name(info: zipfile.ZipInfo) -> str:
    """A zip member's name, its bytes decoded again when the zip did not mark them UTF-8."""
    if info.flag_bits & _UTF8_FLAG:
        return info.filename
    try:
        raw = info.orig_filename.encode("cp437")
    except UnicodeEncodeError:
        return info.filename
    for encoding in _NAME_ENCODINGS:
        try:
            return raw.decode(encoding).replace("\\", "/")
        except UnicodeDecodeError:
            continue
    return info.filename


def _msg(data: bytes, name: str) -> Iterator[_Listed]:
    """An Outlook mail's attachments, by their file names (extract-msg); a mail attached to it
    (a forwarded message, kept inside the outer one rather than as a file) as an Outlook file of
    its own, named by its subject (``Test Attachment.msg``), so that it is a mail under it."""
    import extract_msg

    message = extract_msg.openMsg(data)
    try:
        attached: list[tuple[str, bytes | Exception]] = []
        for item in message.attachments:
            if isinstance(item.data, extract_msg.MSGFile):
                inner = str(item.name or "attached mail.msg").replace("/", "-").replace("\\", "-")
                try:
                    attached.append((inner, item.data.exportBytes()))
                except Exception as error:  # (one it cannot write out: listed with why, alone)
                    attached.append((inner, error))
            elif isinstance(item.data, bytes) and (item.longFilename or item.shortFilename):
                attached.append((str(item.longFilename or item.shortFilename), item.data))
    finally:
        message.close()
    sizes = [len(content) for _, content in attached if isinstance(content, bytes)]
    _within_limits([(sum(sizes), MAX_EXPANDED_BYTES)])
    for inside, content in attached:
        if isinstance(content, bytes):
            yield inside, functools.partial(bytes, content)
        else:
            yield inside, functools.partial(_raise, content)


def _raise(error: Exception) -> bytes:
    raise error


def _reason(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


_READERS = {"zip": _zip, "tar": _tar, "gz": _gz, "msg": _msg}

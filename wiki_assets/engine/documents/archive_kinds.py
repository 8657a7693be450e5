"""How each kind of archive is opened: Python's own ``zipfile``, ``tarfile`` and ``gzip``, and
extract-msg for an Outlook mail's attachments, within limits.

An archive whose members would expand past :data:`MAX_EXPANDED_BYTES`, or a member that expands
more than :data:`MAX_RATIO` times, is refused (a zip bomb); an encrypted or broken one holds no
text that can be read. Either is :class:`~wiki_assets.engine.errors.NoText` with the reason,
listed at the archive's own path. A tar cut short still gives the members before the cut; the
member cut, and the tar itself, are listed with the reason.

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
from pathlib import Path, PurePosixPath

from wiki_assets.engine.errors import NoText

__all__ = ["KINDS", "MAX_EXPANDED_BYTES", "WITH_BODY", "Listed", "kind_of", "listing"]

# An archive's kind by how its name ends (longest first: ".tar.gz" before ".gz").
KINDS = ((".tar.gz", "tar"), (".tgz", "tar"), (".tar", "tar"), (".zip", "zip"), (".gz", "gz"),
         (".msg", "msg"))  # fmt: skip
# Containers that are documents themselves: an Outlook mail is its body (extract.py), and its
# attachments are documents under it (``mail.msg/report.pdf``, a mail attached to it too).
WITH_BODY = frozenset({"msg"})
MAX_EXPANDED_BYTES = 200_000_000  # what one archive's members may expand to, in all
MAX_RATIO = 100  # how many times its compressed size a member may expand to…
RATIO_FROM_BYTES = 1_000_000  # …once it is this large (a small file of spaces compresses well)
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

# A member as an archive lists it: its name, and how to read its bytes (only when asked: a
# reader looking for one member reads no other).
Listed = tuple[str, Callable[[], bytes]]


def kind_of(path: str) -> str | None:
    """``zip``, ``tar`` or ``gz`` when ``path`` names an archive opened as a folder."""
    lowered = path.lower()
    return next((kind for ending, kind in KINDS if lowered.endswith(ending)), None)


def listing(source: Path | bytes, name: str) -> Iterator[Listed]:
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


def _zip(data: bytes, name: str) -> Iterator[Listed]:
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


def _tar(data: bytes, name: str) -> Iterator[Listed]:
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


def _gz(data: bytes, name: str) -> Iterator[Listed]:
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
            raise NoText(f"refused: expands to over {MAX_EXPANDED_BYTES:,} bytes (a zip bomb?)")
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


def _msg(data: bytes, name: str) -> Iterator[Listed]:
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

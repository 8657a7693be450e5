"""Archives are folders: a zip written the way Windows Explorer writes one on a Korean PC (member
names in CP949 without the UTF-8 flag) gives its members under their Korean names, a zip inside
it is opened one level deep and the one inside that is not; a tar.gz and a .gz of one file give
theirs; an Outlook mail's attachments are documents under it; an encrypted zip and a zip bomb
are refused with the reason; and a member's bytes are found again from its path alone, reading
no other member.

Fixtures: tests/data/formats, made by scripts/make-documents with Info-ZIP's zip, tar and gzip.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import zlib
from pathlib import Path

import pytest

from wiki_assets.engine.documents import archives
from wiki_assets.engine.documents.corpus import scan
from wiki_assets.engine.documents.extract import extract
from wiki_assets.engine.errors import NoText

FORMATS = Path(__file__).parent / "data" / "formats"
MEETING = "회의자료.zip"


def test_a_korean_windows_zip_gives_its_members_under_their_korean_names() -> None:
    found = {m.name: m for m in archives.members(FORMATS / MEETING, MEETING)}
    assert set(found) == {"안건.docx", "참고/예산.xlsx", "회의록.txt",
                          "첨부.zip/office-move-en.pptx", "첨부.zip/더깊이.zip"}  # fmt: skip
    assert found["안건.docx"].data == (FORMATS / "password-mfa-ko.docx").read_bytes()
    assert found["첨부.zip/office-move-en.pptx"].no_text is None
    assert found["첨부.zip/더깊이.zip"].no_text == "an archive inside an archive inside an archive"


@pytest.mark.parametrize(
    ("name", "inside"),
    [("reports.tar.gz", ["data-retention-en.csv", "expense-claims-en.pdf"]),
     ("okr-planning-ko.eml.gz", ["okr-planning-ko.eml"])],
)  # fmt: skip
def test_a_tar_gz_and_a_gz_give_their_files(name: str, inside: list[str]) -> None:
    found = {m.name: m.data for m in archives.members(FORMATS / name, name)}
    assert sorted(found) == inside
    for member, data in found.items():
        assert data == (FORMATS / member).read_bytes()


@pytest.mark.parametrize(
    ("name", "reason"),
    [("locked.zip", "password-protected"),
     ("bomb.zip", "refused: a member expands 1,030 times (the limit is 100; a zip bomb?)")],
)  # fmt: skip
def test_an_encrypted_zip_and_a_zip_bomb_are_refused_with_the_reason(
    name: str, reason: str
) -> None:
    with pytest.raises(NoText) as raised:
        list(archives.members(FORMATS / name, name))
    assert str(raised.value) == reason


@pytest.mark.parametrize(
    ("name", "reason"),
    [("회의자료.zip", "unreadable archive: File is not a zip file"),
     ("okr-planning-ko.eml.gz", "unreadable archive: Compressed file ended before the "
      "end-of-stream marker was reached")],
)  # fmt: skip
def test_a_zip_or_a_gz_cut_short_is_refused_with_the_reason(name: str, reason: str) -> None:
    data = (FORMATS / name).read_bytes()
    with pytest.raises(NoText) as raised:
        list(archives.members(data[: len(data) * 9 // 10], name))
    assert str(raised.value) == reason


@pytest.mark.parametrize("name", ["reports.tar", "reports.tar.gz", "reports.tgz"])
def test_a_tar_cut_short_gives_the_members_before_the_cut(name: str) -> None:
    """Cut in its second member: the first is read whole, the second says why it is not (with
    the tar gzipped, the cut is the same bytes of the tar, gzipped)."""
    tar = gzip.decompress((FORMATS / "reports.tar.gz").read_bytes())
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        cut = archive.getmember("data-retention-en.csv").offset_data + 100
    data = tar[:cut] if name == "reports.tar" else _gzipped_then_cut(tar, cut)
    found = {}
    with pytest.raises(NoText) as raised:  # (once the members before the cut are given)
        found.update((m.name, m) for m in archives.members(data, name))
    assert str(raised.value) == (
        "cut short (its end is missing): any files it held after the cut are lost"
    )
    assert sorted(found) == ["data-retention-en.csv", "expense-claims-en.pdf"]
    assert found["expense-claims-en.pdf"].data == (FORMATS / "expense-claims-en.pdf").read_bytes()
    assert found["expense-claims-en.pdf"].no_text is None
    assert found["data-retention-en.csv"].no_text == "unreadable: unexpected end of data"


def test_a_tar_cut_between_its_members_says_so_after_them() -> None:
    """Cut where its second member's header begins: tarfile ends there without a word, as if
    that were the end; the missing end of archive tells the cut."""
    tar = gzip.decompress((FORMATS / "reports.tar.gz").read_bytes())
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        cut = archive.getmember("data-retention-en.csv").offset
    found = []
    with pytest.raises(NoText, match=r"^cut short \(its end is missing\)"):
        found.extend(m.name for m in archives.members(tar[:cut], "reports.tar"))
    assert found == ["expense-claims-en.pdf"]
    assert [m.name for m in archives.members(tar, "reports.tar")] == [
        "expense-claims-en.pdf", "data-retention-en.csv"]  # fmt: skip


def _gzipped_then_cut(tar: bytes, cut: int) -> bytes:
    """``tar`` gzipped (as GNU tar's -z does), cut where its first ``cut`` bytes are whole."""
    squeezer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return squeezer.compress(tar[:cut]) + squeezer.flush(zlib.Z_FULL_FLUSH)


def test_a_mail_attached_to_a_mail_is_a_mail_under_it() -> None:
    """An Outlook mail holding a mail (kept as a message, not as a file): the inner mail is an
    Outlook file under the outer one's path, named by its subject, its body read as a mail's."""
    found = {m.name: m for m in archives.members(FORMATS / "poi-attachment.msg", "poi.msg")}
    assert sorted(found) == ["Test Attachment.msg", "smbprn.00009008.KdcPjl.pdf"]
    inner = extract(found["Test Attachment.msg"].data, "msg", 2_000_000)
    assert inner.title == "Test Attachment" and "Blah blah blah" in inner.text
    outer = extract(FORMATS / "poi-attachment.msg", "msg", 2_000_000)
    assert "Blah blah blah" not in outer.text  # (its page is its own)


def test_a_scan_lists_members_by_their_own_hash_and_finds_their_bytes_again() -> None:
    docs = {doc.path: doc for doc in scan(FORMATS.parent, collections=["formats"])}
    deck = f"formats/{MEETING}/첨부.zip/office-move-en.pptx"
    data = (FORMATS / "office-move-en.pptx").read_bytes()
    assert docs[deck].content_hash == hashlib.sha256(data).hexdigest()
    assert docs[deck].format.name == "pptx" and docs[deck].collection == "formats"
    assert archives.read_bytes(FORMATS.parent / deck) == data
    assert archives.holder(deck) == f"formats/{MEETING}"
    assert docs["formats/locked.zip"].format.no_text == "password-protected"
    assert f"formats/{MEETING}" not in docs  # a folder now, not a document
    with pytest.raises(FileNotFoundError):
        archives.source(FORMATS / MEETING / "없는파일.docx")
    # An Outlook mail is a document, and its attached PDF one under it.
    assert docs["formats/poi-attachment.msg"].format.name == "msg"
    attached = docs["formats/poi-attachment.msg/smbprn.00009008.KdcPjl.pdf"]
    assert attached.format.name == "pdf" and attached.size == 13539
    inner = "formats/poi-attachment.msg/Test Attachment.msg"  # a mail attached to it
    assert docs[inner].format.name == "msg"
    assert hashlib.sha256(archives.read_bytes(FORMATS.parent / inner)).hexdigest() == (
        docs[inner].content_hash
    )  # (the same bytes each time it is read: redone only when it changes)

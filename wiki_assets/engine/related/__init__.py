"""Related-document candidates from an on-disk character n-gram index.

Before a model summarizes a document it is shown the top-K most similar *other* documents of the
whole corpus (title and one line each) and may only link to those. Similarity has to work for
Korean as well as English without a language-specific tokenizer, so documents are compared by
character 2- and 3-grams of their normalized text (:mod:`.grams`). The corpus may hold a million
documents, so everything lives in SQLite on disk (:mod:`.storage` describes the tables), the
Python side holds nothing per document, and the index is updated a chunk of documents at a time
(new, changed or removed), never rebuilt.

* :mod:`.grams`: a document's grams, of its text normalized by
  :func:`~wiki_assets.engine.text.normalize.normalize`.
* :mod:`.summary`: :func:`summary_line`, the one line shown for a candidate.
* :mod:`.features`: which grams a document posts, chosen when it is indexed.
* :mod:`.indexing`: writing a chunk of documents (features, ``df`` counts, norms).
* :mod:`.segments`: the posting lists as blobs, written a batch of documents at a time.
* :mod:`.query`: scoring, the cosine of tf-idf vectors.
* :mod:`.stored_answers`: the answers the index stores for a re-run, as candidates.
* :mod:`.index`: :class:`RelatedIndex`, which ties them together.

Approximations, on purpose:

* ``seen`` is cumulative: a removed document's grams are not subtracted (its text is gone) and a
  changed document is not counted again. It is a streaming estimate of how common a gram is and
  only steers feature choice, which is fixed when a document is indexed; a document indexed before
  any other document shared one of its rare grams will not have chosen that gram.
* ``docs.norm`` uses the idf of the moment the document's chunk was indexed, and a query divides
  by the stored norms: returned scores are cosines up to that drift, computed in one pass.
* Only the first ``max_chars`` characters of a document are indexed.
"""

from wiki_assets.engine.related.features import HEURISTIC_BELOW
from wiki_assets.engine.related.grams import GRAM_SIZES, MAX_CHARS, grams
from wiki_assets.engine.related.index import CHUNK, IndexStats, RelatedIndex
from wiki_assets.engine.related.query import COMMON_FRACTION, COMMON_MIN_DOCS, QUERY_POSTINGS
from wiki_assets.engine.related.storage import SCHEMA_VERSION
from wiki_assets.engine.related.summary import LINE_MAX, LINE_MIN, summary_line

__all__ = [
    "CHUNK",
    "COMMON_FRACTION",
    "COMMON_MIN_DOCS",
    "GRAM_SIZES",
    "HEURISTIC_BELOW",
    "LINE_MAX",
    "LINE_MIN",
    "MAX_CHARS",
    "QUERY_POSTINGS",
    "SCHEMA_VERSION",
    "IndexStats",
    "RelatedIndex",
    "grams",
    "summary_line",
]

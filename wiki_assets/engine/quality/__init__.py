"""Pages a reader can trust: every key point's evidence verified against its document, and
checks on every page that need no strong model. No Dagster here.

- :mod:`.units`: content units of normalised text (normalisation itself, the Hangul classes
  and sentence ends are :mod:`wiki_assets.engine.text`'s; a document's numbered lines are
  :mod:`~wiki_assets.engine.documents.lines`).
- :mod:`.evidence`: a point's quote and line range checked against the document
  (:class:`~.evidence.PointCheck`, :class:`~.evidence.Status`).
- :mod:`.prose`: whether a description says anything, and whether the prose is grounded in
  its document.
- :mod:`.topics`: which topics name a subject; the others (placeholders, fragments, field names)
  are left out of pages and the index.
- :mod:`.sentences`: the prose as sentences, each with its status (supported, contradicted,
  unsupported, unchecked); :mod:`.claims` checks each by rule (:mod:`.quantities`: numbers
  and amounts in English and Korean, :mod:`.dates`: dates and times of day, :mod:`.names`:
  names of people and teams, :mod:`.polarity`: a "not", :mod:`.stated`: a sentence's claim);
  a judge from the fleet settles what they leave unchecked (:mod:`wiki_assets.engine.verification`).
- :mod:`.checks`: the page checks, each named by a :class:`~.verdict.Reason`.
- :mod:`.verdict`: the reasons (stable names) and a page's :class:`~.verdict.Verdict`.
- :mod:`.assess`: :func:`~.assess.assess`, the one call a run makes per page.
- :mod:`.extractive_page`: the extractive page (the document's own title, headings and opening
  sentences) that replaces a flagged answer when the ``flagged_pages`` dial is ``extract``.
"""

from wiki_assets.engine.quality.assess import Assessment, assess
from wiki_assets.engine.quality.evidence import PointCheck, Status, verify_points
from wiki_assets.engine.quality.verdict import Reason, Verdict

__all__ = [
    "Assessment",
    "PointCheck",
    "Reason",
    "Status",
    "Verdict",
    "assess",
    "verify_points",
]

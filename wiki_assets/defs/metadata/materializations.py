"""The metadata of the other materializations and of the asset checks, one definition per key (as
:mod:`.run_figures` has a ``wiki_pages`` run's): :data:`PARTITION`, each ``wiki_pages``
partition's own counts; :data:`INDEX`, ``wiki_index``'s figures; :data:`SYNCED`,
``synced_documents``' per collection; :data:`SYNC`, a ``sync_job`` run's plan; :data:`CHECK`, an
asset check's result; :data:`DIGEST` and :data:`DELIVERY`, ``wiki_digest``'s."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath, PurePosixPath
from typing import NamedTuple

import dagster as dg

from wiki_assets.defs.metadata.recording import Key, Markdown, build
from wiki_assets.engine import CollectionState
from wiki_assets.engine.digest import DigestFiles
from wiki_assets.engine.documents.corpus import collection_of
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.verification.report import VerificationReport
from wiki_assets.engine.wiki.audit import SHOWN_FINDINGS, Outcome
from wiki_assets.engine.wiki.index import IndexReport

# --------------------------------------------------------------------------------------------------
# Each wiki_pages partition's own counts (its materialization)


class PartitionRun(NamedTuple):
    state: CollectionState  # the collection before the run (the same rule the run applies)
    failed: int  # its documents that failed in the run
    no_text: int  # its files that hold no text

    @property
    def summarized(self) -> int:
        state = self.state
        return state.documents - state.skipped - state.recovered - self.failed - self.no_text


PARTITION = (
    Key[PartitionRun]("documents", int, lambda p: p.state.documents),
    Key[PartitionRun]("summarized", int, lambda p: p.summarized),
    Key[PartitionRun]("skipped", int, lambda p: p.state.skipped),
    Key[PartitionRun]("recovered", int, lambda p: p.state.recovered),
    Key[PartitionRun]("failed", int, lambda p: p.failed),
    Key[PartitionRun]("no_text", int, lambda p: p.no_text),
    Key[PartitionRun]("removed", int, lambda p: p.state.removed),
)


def partition_metadata(
    report: IngestReport, before: Sequence[CollectionState], depth: int
) -> dict[str, dict[str, dg.MetadataValue]]:
    """Each collection's own counts. Every document of a collection is skipped, recovered (its
    page written from an answer already journaled), failed, holds no text or is summarized: the
    survey before the run tells the first two apart with the rule the run applies, the report
    names the failures and the files with no text."""

    def by_collection(listed: list[dict[str, str]]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for item in listed:
            name = collection_of(PurePosixPath(item["path"]), depth)
            counts[name] = counts.get(name, 0) + 1
        return counts

    failed, no_text = by_collection(report.failed), by_collection(report.no_text)
    states = {state.name: state for state in before}
    return {
        name: build(
            PARTITION,
            PartitionRun(
                states.get(name, CollectionState(name, "", documents=0, pending=0)),
                failed.get(name, 0) if name in states else 0,
                no_text.get(name, 0) if name in states else 0,
            ),
        )
        for name in report.collections
    }


# --------------------------------------------------------------------------------------------------
# wiki_index and synced_documents


class IndexRun(NamedTuple):
    report: IndexReport
    dangling_links: int


INDEX = (
    Key[IndexRun]("pages", int, lambda i: i.report.pages),
    Key[IndexRun]("collections", int, lambda i: i.report.collections),
    Key[IndexRun]("topics", int, lambda i: i.report.topics),
    Key[IndexRun]("rewritten", int, lambda i: i.report.rewritten),
    Key[IndexRun]("dangling_links", int, lambda i: i.dangling_links),
)

# A verification pass: what it found, judged and left, and the prose's statuses after it.
VERIFICATION = (
    Key[VerificationReport]("pages", int, lambda v: v.pages),
    Key[VerificationReport]("pages_waiting", int, lambda v: v.waiting),
    Key[VerificationReport]("pages_judged", int, lambda v: v.judged),
    Key[VerificationReport]("sentences_settled", int, lambda v: v.settled),
    Key[VerificationReport]("sentences_unchecked", int, lambda v: v.unchecked),
    Key[VerificationReport]("sentences", int, lambda v: v.sentences),
    Key[VerificationReport](
        "supported_share",
        float,
        lambda v: None if v.supported_share is None else round(v.supported_share, 3),
    ),
    Key[VerificationReport]("budget_pages", int, lambda v: v.budget),
    Key[VerificationReport]("pages_flagged", int, lambda v: v.flagged),
    Key[VerificationReport]("pages_skipped", str, lambda v: v.skipped_said()),
    Key[VerificationReport]("judges", str, lambda v: "; ".join(
        f"{j.name}: {j.requests} requests, controls {j.controls_right}/{j.controls}, "
        f"{j.settled} settled, {'holding' if j.holding else 'not holding'}"
        for j in v.judges if j.requests) or "none"),
    Key[VerificationReport]("duration_s", float, lambda v: round(v.seconds, 2)),
)  # fmt: skip

# Each collection's documents, on every observation (and materialization) of synced_documents.
SYNCED = (Key[CollectionState]("documents", int, lambda state: state.documents),)


class SyncRun(NamedTuple):
    """A sync_job run's plan (from its :class:`~wiki_assets.defs.sync.SyncPlan`)."""

    collections: int
    documents: int
    added: int  # collections registered by this sync
    to_summarize: int
    pending: list[str]  # the collections whose pages need work, in partition order
    repair: list[str]  # what an earlier run left that only the index build finishes


# A sync_job run's plan, on its op's output: what the sensor ingest_after_sync requests runs for.
COLLECTIONS = Key[SyncRun]("collections", int, lambda run: run.collections)
PENDING = Key[SyncRun]("pending", list, lambda run: run.pending)
REPAIR = Key[SyncRun]("repair", list, lambda run: run.repair)
SYNC = (
    COLLECTIONS,
    Key[SyncRun]("documents", int, lambda run: run.documents),
    Key[SyncRun]("added", int, lambda run: run.added),
    Key[SyncRun]("to_summarize", int, lambda run: run.to_summarize),
    PENDING,
    REPAIR,
)


# --------------------------------------------------------------------------------------------------
# An asset check's result (wiki_assets.engine.wiki.audit's outcome of one check)


def _found(outcome: Outcome) -> str:
    shown = "\n".join(f"- {finding}" for finding in outcome.findings[:SHOWN_FINDINGS])
    more = len(outcome.findings) - SHOWN_FINDINGS
    if more > 0:
        shown += f"\n- … and {more} more (`wiki-assets check` lists all)"
    return shown or "nothing"


CHECKED = Key[Outcome]("checked", int, lambda o: o.checked)
PROBLEMS = Key[Outcome]("problems", int, lambda o: len(o.findings))
FOUND = Key[Outcome]("found", Markdown, _found)  # the first findings; `problems` counts all
SHARE = Key[Outcome]("share", float, lambda o: o.share)  # what a share check measured
CHECK = (CHECKED, PROBLEMS, FOUND, SHARE)


# --------------------------------------------------------------------------------------------------
# wiki_digest: the day's files, and their delivery to the chat webhook


class DigestRun(NamedTuple):
    files: DigestFiles
    timezone: str


class Delivered(NamedTuple):
    """Whether the day's digest has been posted: by this materialization or an earlier one of the
    same day (``posted_in_run``: the run that posted it), so that it is posted once."""

    delivered: bool
    attempts: int | None = None  # the posts this materialization made
    posted_in_run: str | None = None


def _count(kind: str) -> Key[DigestRun]:
    return Key[DigestRun](kind, int, lambda d: d.files.digest.counts()[kind])


DIGEST = (
    *(_count(kind) for kind in ("added", "changed", "removed", "flagged")),
    Key[DigestRun]("path", PurePath, lambda d: d.files.markdown),
    Key[DigestRun]("json_path", PurePath, lambda d: d.files.json),
    Key[DigestRun]("timezone", str, lambda d: d.timezone),
)
DELIVERED = Key[Delivered]("delivered", bool, lambda d: d.delivered)
DELIVERY_ATTEMPTS = Key[Delivered]("delivery_attempts", int, lambda d: d.attempts)
POSTED_IN_RUN = Key[Delivered]("posted_in_run", str, lambda d: d.posted_in_run)
DELIVERY = (DELIVERED, DELIVERY_ATTEMPTS, POSTED_IN_RUN)

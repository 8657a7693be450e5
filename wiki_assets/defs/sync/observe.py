"""The sync itself, as the sync job's op and the CLI run it: the mirror command, every collection
observed on ``synced_documents``, new collections registered as partitions, and the plan (the
collections whose pages need work)."""

import logging
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from wiki_assets.defs.metadata.materializations import SYNCED, SyncRun
from wiki_assets.defs.metadata.recording import build
from wiki_assets.defs.names import (
    INGEST_JOB,
    SYNCED_DOCUMENTS,
    WIKI_INDEX,
    WIKI_PAGES,
    collections_partitions,
)
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.defs.tags import run_tags
from wiki_assets.defs.wiki_pages.config import IngestConfig, run_config
from wiki_assets.engine import CollectionState, survey
from wiki_assets.engine.errors import WikiAssetsError
from wiki_assets.engine.wiki.index import unfinished
from wiki_assets.engine.wiki.render import LAYOUT_VERSION

# Where sync's events on synced_documents go: a run's log_event, or the instance's runless events.
Record = Callable[[dg.AssetObservation | dg.AssetMaterialization], Any]

PARTITION_RANGE_START = "dagster/asset_partition_range_start"
PARTITION_RANGE_END = "dagster/asset_partition_range_end"


@dataclass(frozen=True)
class SyncPlan:
    states: list[CollectionState]
    added: list[str]  # collections that became partitions in this sync
    # Collections whose pages need work, in partition order: documents to summarize, pages to
    # remove, or pages to write from answers an earlier run journaled but did not write.
    pending: list[str]
    # Why the index must be built though no collection may need work: what an earlier run left
    # undone that only wiki_index finishes (unfinished_index). Empty: nothing.
    repair: list[str] = field(default_factory=list)

    @property
    def documents(self) -> int:
        return sum(state.documents for state in self.states)

    def to_run(self) -> SyncRun:
        """The plan as a sync_job run records it."""
        to_summarize = sum(state.to_summarize for state in self.states)
        return SyncRun(
            len(self.states),
            self.documents,
            len(self.added),
            to_summarize,
            self.pending,
            self.repair,
        )

    def run_tags(self) -> dict[str, str]:
        """One run over the contiguous partition range that holds every pending collection: up to
        date collections inside the range cost a hash check per document, far less than the fixed
        cost of a run per collection."""
        return {PARTITION_RANGE_START: self.pending[0], PARTITION_RANGE_END: self.pending[-1]}

    def run_requests(
        self,
        per_run: int | None,
        dials: IngestConfig | None = None,
        source: str = "schedule",
        run_key: str | None = None,
    ) -> list[dg.RunRequest]:
        """One run for everything (``per_run`` None), or runs of at most ``per_run`` pending
        collections each, which Dagster's run queue executes in parallel up to its limit;
        ``run_key`` (the sync run's id) makes them requested once."""
        if per_run is None:
            groups = [self.pending]
        else:
            groups = [self.pending[i : i + per_run] for i in range(0, len(self.pending), per_run)]
        return [
            dg.RunRequest(
                run_key=None if run_key is None else f"{run_key}/{index}",
                tags={
                    PARTITION_RANGE_START: group[0],
                    PARTITION_RANGE_END: group[-1],
                    **run_tags(source, dials or IngestConfig()),
                },
                run_config=run_config(dials or IngestConfig()),
            )
            for index, group in enumerate(groups)
        ]

    def index_request(self, dials: IngestConfig | None = None) -> dg.RunRequest:
        """A run of ``wiki_index`` alone, to finish what an earlier run left (:attr:`repair`)
        when no collection needs work: it builds the index and the catalog, and writes missing
        pages again from their journaled answers."""
        return dg.RunRequest(
            run_key=None,
            asset_selection=[WIKI_INDEX],
            tags=run_tags("schedule", dials or IngestConfig()),
            run_config=run_config(dials or IngestConfig()),
        )


class SyncFailed(WikiAssetsError):
    """The configured mirror command failed; the message says how."""


def run_sync_command(corpus: CorpusResource, log: Any) -> None:
    """Run the configured mirror command; its output goes to the log, a failure raises."""
    command = corpus.sync_command
    if not command:
        return
    log.info(f"sync command: {command}")
    try:
        done = subprocess.run(
            shlex.split(command),
            capture_output=True,
            text=True,
            timeout=corpus.sync_timeout_s,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SyncFailed(f"sync command could not run: {error}") from error
    output = (done.stdout + done.stderr).strip().splitlines()
    for line in output[-50:]:
        log.info(f"sync | {line}")
    if done.returncode != 0:
        last = output[-1] if output else "no output"
        raise SyncFailed(
            f"sync command failed with exit code {done.returncode} ({last}); nothing was ingested"
        )


def sync(
    instance: dg.DagsterInstance,
    corpus: CorpusResource,
    summarizer: SummarizerResource,
    log: Any = None,
    dials: IngestConfig | None = None,
    record: Record | None = None,
    *,
    after_pages: bool = True,
) -> SyncPlan:
    """Run the sync command (if any), observe every collection and register new ones as
    partitions; plan with the fleet and dials the run will use (``force`` makes every collection
    pending), and say what an earlier run left for the index build (``after_pages``: see
    :func:`unfinished_index`). Idempotent. The events on ``synced_documents`` go to ``record``:
    the run's own in ``sync_job``, events of no run by default (the CLI's sync before its run)."""
    run_sync_command(corpus, log or logging.getLogger("wiki_assets"))
    states = survey(
        corpus.synced_path,
        corpus.wiki_path,
        summarizer.planned_endpoints(),
        (dials or IngestConfig()).to_dials(),
        corpus.collection_depth,
        corpus.state_store(),
    )
    name = collections_partitions.name
    assert name is not None
    known = set(instance.get_dynamic_partitions(name))
    added = [state.name for state in states if state.name not in known]
    if added:
        instance.add_dynamic_partitions(name, added)
    # A partition that names no collection (no folder, no pages: one added by hand with a typo,
    # or a collection whose last pages a run removed) goes, so that it is not offered again.
    for stray in sorted(known - {state.name for state in states}):
        instance.delete_dynamic_partition(name, stray)
        (log or logging.getLogger("wiki_assets")).info(
            f"partition {stray!r} names no collection in {corpus.synced_path}: removed"
        )
    report_collections(instance, states, record or instance.report_runless_asset_event)
    order = {key: index for index, key in enumerate(instance.get_dynamic_partitions(name))}
    # A page to write from a journaled answer is work as much as a document to summarize: the
    # run writes it without asking a model (engine/ingestion/fingerprints.py's "recover").
    work = [s.name for s in states if s.pending or s.recovered]
    pending = sorted(work, key=lambda key: order[key])
    return SyncPlan(
        states=states,
        added=added,
        pending=pending,
        repair=unfinished_index(instance, corpus, after_pages=after_pages),
    )


_UNFINISHED = [dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]
_RECENT_FAILURES = 20  # failed runs looked at, newest first, for one that wrote pages


def unfinished_index(
    instance: dg.DagsterInstance, corpus: CorpusResource, *, after_pages: bool = True
) -> list[str]:
    """Why the wiki's index must be built again, though no document may need a model, in words:

    * its files, as the state store knows they should be: ``index.md``, ``catalog.jsonl`` or
      written pages missing (the build writes pages again from their journaled answers);
    * a run that wrote pages and failed or was cancelled after the last index was built (its
      index step failed on a full disk, or it never got there);
    * the last index built with another layout of the wiki's files (:data:`LAYOUT_VERSION`: this
      version of wiki_assets shows the same answers otherwise);
    * with ``after_pages``, pages materialized after the last index (a run killed in its index
      step, still "started" to Dagster). The schedule leaves this one out: the automation sensor
      builds the index after a UI materialization of ``wiki_pages`` alone, and a tick must not
      race it.

    Empty while the state store has no written page (a new wiki: its first run builds all)."""
    found = unfinished(corpus.wiki_path, corpus.state_store())
    if found is None:
        return []
    index = instance.get_latest_materialization_event(WIKI_INDEX)
    built = index.timestamp if index is not None else 0.0
    materialized = index.asset_materialization if index is not None else None
    if materialized is not None:
        # (Dagster records a run's id as the code version of an asset that declares none.)
        if (materialized.tags or {}).get(CODE_VERSION_TAG) != LAYOUT_VERSION:
            found.append(f"the pages have another layout than this version's ({LAYOUT_VERSION})")
    pages = instance.get_latest_materialization_event(WIKI_PAGES)
    if after_pages and pages is not None and pages.timestamp > built:
        found.append("the index was not built after the pages' last run")
        return found
    records = instance.get_run_records(dg.RunsFilter(statuses=_UNFINISHED), limit=_RECENT_FAILURES)
    for record in records:
        run = record.dagster_run
        if record.end_time is None or record.end_time <= built:
            break  # newest first: the rest ended before the last index too
        wrote = run.job_name == INGEST_JOB or bool(
            run.asset_selection and {WIKI_PAGES, WIKI_INDEX} & run.asset_selection
        )
        if wrote:
            status = run.status.value.lower()
            found.append(f"run {run.run_id[:8]} ended {status} after the last index was built")
            break
    return found


DATA_VERSION_TAG = "dagster/data_version"
CODE_VERSION_TAG = "dagster/code_version"  # on a materialization, its asset's code version then


def report_collections(
    instance: dg.DagsterInstance, states: list[CollectionState], record: Record
) -> None:
    """Record every collection's data version on ``synced_documents``: an observation per sync,
    and a materialization when the mirror holds a new version of it (a new or changed
    collection), so a re-sync with no change adds no materialization."""
    # The version each collection was last materialized with, in one query.
    materialized = instance.event_log_storage.get_latest_tags_by_partition(
        SYNCED_DOCUMENTS,
        dg.DagsterEventType.ASSET_MATERIALIZATION,
        [DATA_VERSION_TAG],
        asset_partitions=[state.name for state in states],
    )
    for state in states:
        tags = {DATA_VERSION_TAG: state.version}
        metadata = build(SYNCED, state)
        # Staleness: for a partition of an external asset, Dagster compares the latest
        # observation with the last one before the storage id a wiki_pages run recorded for
        # synced_documents, and shows the wiki_pages partition as stale when their versions
        # differ. Only observations count there, so every sync observes every collection.
        record(
            dg.AssetObservation(
                asset_key=SYNCED_DOCUMENTS, partition=state.name, tags=tags, metadata=metadata
            )
        )
        # Presence: the UI's partition status (partitionStats, assetPartitionStatuses) counts
        # only materializations, so a collection that was only observed shows as missing. The
        # storage id a run records is the asset's latest materialization when there is one, so
        # the materialization comes after the observation of the same version: a run that
        # follows sees that observation at or before its recorded id, not after it.
        if materialized.get(state.name, {}).get(DATA_VERSION_TAG) != state.version:
            record(
                dg.AssetMaterialization(
                    asset_key=SYNCED_DOCUMENTS, partition=state.name, tags=tags, metadata=metadata
                )
            )

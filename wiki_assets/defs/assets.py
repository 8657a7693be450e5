"""The two assets: the synced documents (a source) and the wiki pages summarized from them."""

import contextlib
import copy
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, cast

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations
from pydantic import create_model

from wiki_assets.defs import handoff
from wiki_assets.defs.asset_metadata import INDEX, IndexRun, partition_metadata
from wiki_assets.defs.checks import wiki_check_results, wiki_check_specs
from wiki_assets.defs.derived import fields_from
from wiki_assets.defs.metadata import run_metadata
from wiki_assets.defs.metadata_keys import build
from wiki_assets.defs.names import SYNCED_DOCUMENTS, WIKI_INDEX, WIKI_PAGES, node
from wiki_assets.defs.partitions import collections_partitions
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.engine import Dials, environment, ingest, survey
from wiki_assets.engine.answers.prompts import PROMPT_VERSION
from wiki_assets.engine.errors import DiskFull, no_space_message
from wiki_assets.engine.wiki.audit import NO_DANGLING_LINKS, audit_wiki
from wiki_assets.engine.wiki.index import index_wiki

# Backfill policies are what this asset is built on; the beta notice only adds noise to logs.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)

synced_documents = dg.AssetSpec(
    SYNCED_DOCUMENTS,
    partitions_def=collections_partitions,
    group_name="wiki",
    description=(
        "Documents mirrored from Confluence, Notion and drives into the synced root, one partition "
        "per collection. The sync step observes every collection with a data version derived "
        "from every document's path and content hash, so a changed collection shows its wiki "
        "pages as stale, and records a materialization of a collection when it is new or its "
        "version changed, so every synced collection counts as present."
    ),
)


# give_up_after_s is the engine's (simulations and tests shorten it), not a run config key.
@fields_from(Dials, exclude={"give_up_after_s"})
class IngestConfig(dg.Config):
    """The dials of one ingest. They live in run config because hardware and models change."""

    def to_dials(self) -> Dials:
        return Dials(**self.model_dump())


def dials_with_defaults(dials: IngestConfig) -> type[IngestConfig]:
    """``IngestConfig`` whose defaults are ``dials`` (the project file's): what the launchpad
    pre-fills and what a UI materialization runs with when nothing is changed."""
    fields: dict[str, Any] = {}
    for name, info in IngestConfig.model_fields.items():
        value = getattr(dials, name)
        if value == info.default:
            continue
        overridden = copy.copy(info)
        overridden.default = value
        fields[name] = (info.annotation, overridden)
    if not fields:
        return IngestConfig
    return create_model("IngestConfig", __base__=IngestConfig, **fields)


# The aligned console logger, in a run's config (Dagster only uses a job's loggers when the run
# config names them).
LOGGERS: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


def run_config(dials: IngestConfig) -> dict[str, Any]:
    """Run config for the ingest job: the dials, and the aligned console logger."""
    return {"ops": {node(WIKI_PAGES): {"config": dials.model_dump()}}, **LOGGERS}


@contextlib.contextmanager
def naming_a_full_disk(corpus: CorpusResource) -> Iterator[None]:
    """A full disk, however deep its error is (a task group's, under a failed rollback), fails
    the step as ``no space left on device: <the wiki's folder>``
    (:func:`~wiki_assets.engine.errors.no_space_message`); other errors go as they are."""
    try:
        yield
    except Exception as error:
        message = no_space_message(error, corpus.wiki_path)
        if message is None:
            raise
        raise DiskFull(message) from error


def no_collection(keys: list[str], corpus: CorpusResource) -> str:
    """Why a run of partitions that name no collection fails: which, where, and what is there."""
    states = survey(
        corpus.synced_path, corpus.wiki_path, [], Dials(), corpus.collection_depth,
        corpus.state_store(),
    )  # fmt: skip
    there = [state.name for state in states]
    return (
        f"partition {', '.join(map(repr, keys))} names no collection in {corpus.synced_path} "
        f"(a folder there, or pages of one in the wiki); its collections: "
        f"{', '.join(there) or 'none'}. Partitions come from the sync (sync_job, the daily "
        "schedule or `wiki-assets ingest`), which also drops one that names no collection."
    )


TAG_PREFIX = "wiki_assets/"
SOURCE_TAG = f"{TAG_PREFIX}source"  # cli, schedule, backfill, sensor, ui: where a run was started
CONFIG_TAG = f"{TAG_PREFIX}config"  # the config files it was configured from
WIKI_TAG = f"{TAG_PREFIX}wiki"  # the wiki root an ingest wrote (absolute)
BACKFILL_TAG = "dagster/backfill"  # Dagster's own tags on the runs it launches
SCHEDULE_TAG = "dagster/schedule_name"
SENSOR_TAG = "dagster/sensor_name"


def dial_tags(dials: IngestConfig) -> dict[str, str]:
    """A tag per dial (``wiki_assets/claim_size: 32``), so that the Runs list filters on any of
    them; a dial with no value (an empty ``redo_models``) has none."""
    tags = {}
    for key, value in dials.model_dump().items():
        if value in ([], None, ""):
            continue
        if isinstance(value, list):
            text = ",".join(str(item) for item in value)
        elif isinstance(value, bool):
            text = str(value).lower()
        else:
            text = str(value)
        tags[f"{TAG_PREFIX}{key}"] = text
    return tags


def run_tags(source: str, dials: IngestConfig, config_source: str = "") -> dict[str, str]:
    """Tags that say where a run came from and what it was tuned with, shown in the Runs list."""
    tags = {SOURCE_TAG: source, **dial_tags(dials)}
    if config_source:
        tags[CONFIG_TAG] = config_source
    return tags


def launched_by(tags: Mapping[str, str]) -> str:
    """Where a run was started, from its tags: ours when it has them (the CLI, the schedule),
    else Dagster's; a run with none was launched from the UI (or Dagster's own CLI)."""
    if SOURCE_TAG in tags:
        return tags[SOURCE_TAG]
    for tag, source in (
        (BACKFILL_TAG, "backfill"),
        (SCHEDULE_TAG, "schedule"),
        (SENSOR_TAG, "sensor"),
    ):
        if tag in tags:
            return source
    return "ui"


def tag_source(context: dg.OpExecutionContext | dg.AssetExecutionContext) -> None:
    """Give the run its source tag if whoever launched it did not (the launchpad, a backfill, a
    sensor or the automation add only Dagster's): every run the project's definitions run says
    where it came from."""
    tags = context.run.tags
    if SOURCE_TAG not in tags:
        context.instance.add_run_tags(context.run_id, {SOURCE_TAG: launched_by(tags)})


def tag_run(context: dg.AssetExecutionContext, dials: IngestConfig, corpus: CorpusResource) -> None:
    """Give the run our tags, whoever launched it (the launchpad and backfills add only
    Dagster's): where it came from, its dials as it runs with them and the wiki it writes."""
    tags = context.run.tags
    wanted = {**run_tags(launched_by(tags), dials), WIKI_TAG: str(corpus.wiki_path.resolve())}
    missing = {key: value for key, value in wanted.items() if tags.get(key) != value}
    if missing:
        context.instance.add_run_tags(context.run_id, missing)


def backfill_policy() -> dg.BackfillPolicy:
    # By default a backfill of many collections is one run: one fleet, one queue, one set of
    # figures, no per-run start-up. Past one machine, runs of a few collections each go through
    # Dagster's run queue in parallel (its concurrency limit), sharing each model's in-flight limit
    # through the state store.
    per_run = environment.collections_per_run()
    if per_run is None:
        return dg.BackfillPolicy.single_run()
    return dg.BackfillPolicy.multi_run(max_partitions_per_run=per_run)


def build_wiki_pages(dials: type[IngestConfig] = IngestConfig) -> dg.AssetsDefinition:
    """The ``wiki_pages`` asset, its dials' defaults taken from ``dials`` (the project file's)."""

    @dg.asset(
        key=WIKI_PAGES,
        partitions_def=collections_partitions,
        deps=[synced_documents],
        group_name="wiki",
        code_version=PROMPT_VERSION,
        backfill_policy=backfill_policy(),
        kinds={"openai", "markdown"},
    )
    def wiki_pages(
        context: dg.AssetExecutionContext,
        config: dials,  # type: ignore[valid-type]
        corpus: CorpusResource,
        summarizer: SummarizerResource,
    ) -> dg.MaterializeResult:
        """Librarian-style markdown pages, one per synced document, mirroring the collection's
        folders.

        A partition per collection of the synced root: the sensor register_collections adds them
        while the daemon runs, and every sync (sync_job, the daily schedule, `wiki-assets
        ingest`) does too. No partitions yet? Run sync_job.

        Materializing a partition summarizes its new and changed documents on every configured
        model at once and removes the pages of deleted documents. Each partition records its own
        counts; the run's figures (duration, docs/s, per model, dials) are one observation of this
        asset per run, so tuning runs can be compared one point each.
        """
        collections = list(context.partition_keys)
        tag_run(context, cast(IngestConfig, config), corpus)
        run_dials = cast(IngestConfig, config).to_dials()  # a subclass with the file's defaults
        store = corpus.state_store()
        # What each collection holds before the run (the same rule the run applies), so that
        # every partition can record its own counts; the fleet as planned is the one that runs.
        before = survey(
            corpus.synced_path,
            corpus.wiki_path,
            summarizer.planned_endpoints(),
            run_dials,
            corpus.collection_depth,
            store,
            collections,
        )
        unknown = sorted(set(collections) - {state.name for state in before})
        if unknown:
            # A partition added by hand (a typo) would otherwise materialize green, empty.
            raise dg.Failure(description=no_collection(unknown, corpus))
        with summarizer.live(context.log) as fleet, naming_a_full_disk(corpus):
            report = ingest(
                synced_root=corpus.synced_path,
                wiki_root=corpus.wiki_path,
                collections=collections,
                endpoints=fleet.endpoints,
                dials=run_dials,
                depth=corpus.collection_depth,
                max_bytes=corpus.max_bytes,
                max_file_bytes=corpus.max_file_bytes,
                log=context.log,
                store=store,
                embeddings=fleet.embeddings,
                servers=fleet.servers,
            )
        # The whole report, for the CLI that executes this run in its own process.
        handoff.publish(context.run_id, report)
        figures = run_metadata(report)
        # Once per run, stopped early or not: `wiki-assets runs` lists both.
        context.log_event(dg.AssetObservation(asset_key=context.asset_key, metadata=figures))
        if report.tally.stopped:
            # Finished pages are on disk and journaled; the rest is left for the next run, so the
            # partitions must not look materialized. A signal that stopped it is in the figures
            # (stopped_by, above); a run terminated from the UI is marked canceled by Dagster.
            raise dg.Failure(
                description=f"{report.tally.stopped}; {report.unfinished} documents left for "
                "the next run",
            )
        for key, counts in partition_metadata(report, before, corpus.collection_depth).items():
            context.add_asset_metadata(counts, partition_key=key)
        return dg.MaterializeResult()

    return wiki_pages


@dg.asset(
    key=WIKI_INDEX,
    deps=[WIKI_PAGES],
    group_name="wiki",
    kinds={"markdown"},
    # Rebuilt whenever pages change, by the ingest job itself or, for runs that only select
    # wiki_pages (a UI backfill), by Dagster's automation when it is on.
    automation_condition=dg.AutomationCondition.eager(),
    # The wiki's checks are evaluated by the build itself: one pass over the pages serves both
    # the index's figures and the checks.
    check_specs=wiki_check_specs(WIKI_INDEX),
)
def wiki_index(context: dg.AssetExecutionContext, corpus: CorpusResource) -> dg.MaterializeResult:
    """``index.md``: every page by collection and by shared topic. Building it also re-renders any
    page whose related links or backlinks are out of date, so no link in the wiki dangles; then the
    wiki's checks run over the files as readers see them."""
    tag_source(context)
    with naming_a_full_disk(corpus):
        report = index_wiki(corpus.wiki_path, corpus.state_store())
    audit = audit_wiki(corpus.wiki_path, corpus.synced_path)
    dangling = audit.outcome(NO_DANGLING_LINKS).findings
    for finding in dangling[:20]:
        context.log.warning(f"dangling link in {finding}")
    context.log.info(
        f"index: {report.pages} pages · {report.collections} collections · "
        f"{report.topics} shared topics · {report.rewritten} pages rewritten (links or missing)"
    )
    return dg.MaterializeResult(
        metadata=build(INDEX, IndexRun(report, len(dangling))),
        check_results=wiki_check_results(audit),
    )

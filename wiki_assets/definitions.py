"""Assembles the Dagster definitions; ``defs`` is what ``dagster dev -w workspace.yaml`` and
``dg dev`` load.

``defs`` is a ``@dg.definitions`` function: importing this module reads nothing, and the code
location's load calls it. The resources and the dials' defaults come from the project file
(``wiki_assets.yaml`` or ``$WIKI_ASSETS_CONFIG``, see :mod:`wiki_assets.defs.settings`), so the
schedule, the launchpad, backfills and re-executions all run on the configured fleet. A bad file
fails the load with one line that names the file and the key.
"""

from __future__ import annotations

import dagster as dg

from wiki_assets.defs.digest import (
    DigestResource,
    build_digest_job,
    build_digest_sensor,
    build_wiki_digest,
)
from wiki_assets.defs.index import build_automation_sensor, wiki_index
from wiki_assets.defs.loggers import aligned_console_logger
from wiki_assets.defs.resources import CorpusResource, SummarizerResource, with_defaults
from wiki_assets.defs.settings import Settings, load_settings
from wiki_assets.defs.sync import (
    build_ingest_sensor,
    build_register_sensor,
    build_schedule,
    build_sync_job,
    synced_documents,
)
from wiki_assets.defs.verification import VerifyConfig, build_wiki_verification
from wiki_assets.defs.wiki_pages import (
    IngestConfig,
    build_ingest_job,
    build_page_checks,
    build_wiki_pages,
)


def build_defs(
    corpus: CorpusResource | None = None,
    summarizer: SummarizerResource | None = None,
    dials: IngestConfig | None = None,
    digest: DigestResource | None = None,
    verification: VerifyConfig | None = None,
) -> dg.Definitions:
    """The definitions of one deployment, a domain at a time (each a folder of
    :mod:`wiki_assets.defs`): the synced documents and their daily sync, the wiki pages, the link
    index, the verification pass and the digest."""
    dials = dials or IngestConfig()
    digest = digest or DigestResource()
    wiki_pages = build_wiki_pages(with_defaults(dials))
    wiki_verification = build_wiki_verification(with_defaults(verification or VerifyConfig()))
    ingest_job = build_ingest_job(wiki_pages, wiki_index, wiki_verification)
    sync_job = build_sync_job(dials)
    partitions = digest.partitions()
    wiki_digest = build_wiki_digest(partitions)
    digest_job = build_digest_job(wiki_digest, partitions)
    return dg.Definitions(
        assets=[synced_documents, wiki_pages, wiki_index, wiki_verification, wiki_digest],
        asset_checks=build_page_checks(wiki_pages),
        jobs=[ingest_job, sync_job, digest_job],
        schedules=[build_schedule(sync_job)],
        sensors=[
            build_automation_sensor(wiki_index),
            build_ingest_sensor(sync_job, ingest_job, dials),
            build_register_sensor(),
            build_digest_sensor(ingest_job, digest_job, digest.timezone),
        ],
        resources={
            "corpus": corpus or CorpusResource(),
            "summarizer": summarizer or SummarizerResource(),
            "digest": digest,
        },
        loggers={"console": aligned_console_logger},
        # Steps run in the run's own process, one after the other (wiki_index needs the pages):
        # the engine is concurrent itself, a step subprocess would only add its start-up, and a
        # run terminated from the UI reaches the engine as a signal it stops cleanly on.
        executor=dg.in_process_executor,
    )


def project_defs(settings: Settings | None = None) -> dg.Definitions:
    """The definitions of the project file's deployment."""
    settings = settings or load_settings()
    return build_defs(
        settings.corpus, settings.summarizer, settings.dials, settings.digest, settings.verification
    )


@dg.definitions
def defs() -> dg.Definitions:
    """The code location: the project file's deployment, read when the location loads."""
    return project_defs()

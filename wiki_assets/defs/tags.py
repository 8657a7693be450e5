"""The tags every run of the definitions carries, shown and filtered on in the Runs list: where it
was started (``wiki_assets/source``: cli, schedule, backfill, sensor, ui), the config files it was
configured from, its dials (``wiki_assets/<dial>``) and the wiki it wrote. The CLI and the schedule
give them when they launch a run; the assets give those a run launched by Dagster lacks."""

from collections.abc import Mapping

import dagster as dg

from wiki_assets.defs.resources import CorpusResource
from wiki_assets.engine.ingestion.figures import MODELS_OUT
from wiki_assets.engine.ingestion.report import IngestReport

TAG_PREFIX = "wiki_assets/"
SOURCE_TAG = f"{TAG_PREFIX}source"  # cli, schedule, backfill, sensor, ui: where a run was started
CONFIG_TAG = f"{TAG_PREFIX}config"  # the config files it was configured from
WIKI_TAG = f"{TAG_PREFIX}wiki"  # the wiki root an ingest wrote (absolute)
# On a run one of whose models did not serve it to the end: each such model and why in a word
# ("gateway (taken out)"), so that a run whose other models did the work is not just green.
MODELS_OUT_TAG = f"{TAG_PREFIX}{MODELS_OUT.name}"
BACKFILL_TAG = "dagster/backfill"  # Dagster's own tags on the runs it launches
SCHEDULE_TAG = "dagster/schedule_name"
SENSOR_TAG = "dagster/sensor_name"


def dial_tags(dials: dg.Config) -> dict[str, str]:
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


def run_tags(source: str, dials: dg.Config, config_source: str = "") -> dict[str, str]:
    """Tags that say where a run came from and what it was tuned with (its dials, an
    :class:`~wiki_assets.defs.wiki_pages.config.IngestConfig`), shown in the Runs list."""
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


def tag_run(context: dg.AssetExecutionContext, dials: dg.Config, corpus: CorpusResource) -> None:
    """Give an ingest run our tags, whoever launched it (the launchpad and backfills add only
    Dagster's): where it came from, its dials as it runs with them and the wiki it writes."""
    tags = context.run.tags
    wanted = {**run_tags(launched_by(tags), dials), WIKI_TAG: str(corpus.wiki_path.resolve())}
    missing = {key: value for key, value in wanted.items() if tags.get(key) != value}
    if missing:
        context.instance.add_run_tags(context.run_id, missing)


def tag_models_out(context: dg.AssetExecutionContext, report: IngestReport) -> None:
    """Tag the run with the models that did not serve it to the end, if any (the Runs list
    shows the tag; the check models_in_service warns, and the run's models_out says more)."""
    out = [f"{m.name} ({m.service})" for m in report.models if not m.in_service]
    if out:
        context.instance.add_run_tags(context.run_id, {MODELS_OUT_TAG: ", ".join(out)})

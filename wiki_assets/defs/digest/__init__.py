"""The daily digest: ``wiki_digest``, one partition per calendar day, and what starts it.

The asset writes ``wiki/digest/YYYY-MM-DD.md`` and ``.json`` from the pages' history in the state
store, so any past day can be materialized again (a backfill from the UI), and then, when a
webhook is configured, posts the day's top changes to it, once a day: a later run of the same day
rewrites the files and leaves the message posted. The files are written before the post: a
webhook that stays down fails the step and loses nothing.

By kind: the resource (:mod:`.resources`), the asset and its run config (:mod:`.assets`), its job
(:mod:`.jobs`), the sensor that starts it after a run that wrote pages (:mod:`.sensors`). Below,
what the rest of the project uses.
"""

from wiki_assets.defs.digest.assets import DigestConfig, build_wiki_digest
from wiki_assets.defs.digest.jobs import build_digest_job
from wiki_assets.defs.digest.resources import DigestResource
from wiki_assets.defs.digest.sensors import build_digest_sensor
from wiki_assets.defs.names import DIGEST_JOB, DIGEST_SENSOR

__all__ = [
    "DIGEST_JOB",
    "DIGEST_SENSOR",
    "DigestConfig",
    "DigestResource",
    "build_digest_job",
    "build_digest_sensor",
    "build_wiki_digest",
]

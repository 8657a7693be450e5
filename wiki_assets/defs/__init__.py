"""The Dagster layer, a thin adapter over the engine (:mod:`wiki_assets.engine`), assembled in
:mod:`wiki_assets.definitions`. A folder per domain, each with its assets, checks, jobs, sensors
and schedules:

- :mod:`.sync`: ``synced_documents`` (the mirrored documents, a source), the sync that observes
  them and registers collections as partitions, ``sync_job``, the daily schedule and its sensors;
- :mod:`.wiki_pages`: ``wiki_pages`` (the pages summarized from the documents) with its run config
  (the dials), its per-partition checks, ``ingest_job`` and its backfill policy;
- :mod:`.index`: ``wiki_index`` (``index.md`` and the links), the whole wiki's checks its build
  evaluates, and the automation sensor that rebuilds it after pages written outside the job;
- :mod:`.digest`: ``wiki_digest``, the daily digest, with its resource, job and sensor.

What they share, at the root: the fixed names and the collections' partitions (:mod:`.names`),
the corpus and summarizer resources, whose config classes take their fields from the engine's
(:mod:`.resources`), the run tags (:mod:`.tags`), the console logger (:mod:`.loggers`) and the
project file the definitions are built from (:mod:`.settings`); the metadata the assets record,
and how they record it, in :mod:`.metadata`.

The command line and what only it uses (the in-process runner, the dry run, past runs) are in
:mod:`wiki_assets.cli`.
"""

"""The Dagster layer, a thin adapter over the engine (:mod:`wiki_assets.engine`), and what the CLI
runs through it.

The definitions, assembled in :mod:`wiki_assets.definitions`: the assets ``synced_documents``,
``wiki_pages`` and ``wiki_index`` with the ingest's run config (:mod:`.assets`), their checks
(:mod:`.checks`) and the collections' partitions (:mod:`.partitions`); the corpus and summarizer
resources (:mod:`.resources`), whose config classes take their fields from the engine's
(:mod:`.derived`); the daily sync with its job, schedule and sensor (:mod:`.sync`); the daily
digest (:mod:`.digest`); the console logger (:mod:`.loggers`). Their names are in :mod:`.names`,
the metadata they record in :mod:`.metadata`, and the project file they are built from in
:mod:`.settings`.

For the CLI: a run of the code location's job in its own process (:mod:`.runner`, the engine's
report handed over by :mod:`.handoff`), the dry run (:mod:`.plan`) and past runs (:mod:`.history`).
"""

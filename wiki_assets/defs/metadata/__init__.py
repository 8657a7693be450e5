"""The metadata the definitions record, and how they record and read it back.

- :mod:`.recording`: the machinery, which declares no key: a key (:class:`~.recording.Key`: its
  name, its type and how it is built from what the engine reports), a key holding a table of keys
  (:class:`~.recording.Table`), :func:`~.recording.build` (a report into Dagster metadata);
- :mod:`.run_figures`: the keys of a ``wiki_pages`` run's figures (one observation per run, with
  a table of its models) and :func:`~.run_figures.plain`, through which every reader reads
  recorded metadata;
- :mod:`.materializations`: the keys of the other events: each ``wiki_pages`` partition's counts,
  ``wiki_index``'s figures, ``synced_documents``' collections, a ``sync_job`` run's plan, an asset
  check's result, ``wiki_digest``'s files and delivery.

A key's name is what the UI shows and what ``wiki-assets runs`` and the plan's estimate read back:
renaming one loses the history recorded under it.
"""

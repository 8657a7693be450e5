"""The wiki on disk: its pages, ``index.md`` and ``catalog.jsonl``, how they are written, and the
wiki's checks of the files as readers see them.

- :mod:`.record`: the typed page record (:class:`~.record.Page`), read once from a journal entry,
  and :class:`~.record.Link`.
- :mod:`.render`: the page and ``index.md`` templates and the one escaping function both use.
- :mod:`.links`: related links and backlinks from the journal, relinking, the dangling-link check.
- :mod:`.index`: ``index.md`` (and ``catalog.jsonl`` with it), every page that differs from what
  the journal says rendered again, and what an unfinished run left for the index build.
- :mod:`.catalog`: ``catalog.jsonl``, the wiki for machines, one JSON record per page.
- :mod:`.audit`: the wiki's checks (Dagster's asset checks and ``wiki-assets check``).
- :mod:`.files`: page names and atomic writes that never leave the wiki root.
- :mod:`.writer`: the page writer process that a flush hands its rendered pages to.
"""

"""The wiki on disk, in small parts.

- :mod:`.record`: the typed page record (:class:`~.record.Page`) and :class:`~.record.Link`.
- :mod:`.render`: the page and ``index.md`` templates and the one escaping function both use.
- :mod:`.links`: related links and backlinks from the journal, relinking, the dangling-link check.
- :mod:`.index`: ``index.md`` and the check that every page's links are current.
- :mod:`.files`: page names and atomic writes that never leave the wiki root.
- :mod:`.writer`: the page writer process that a flush hands its rendered pages to.
"""

"""The command line, ``wiki-assets`` (:func:`main`; ``python -m wiki_assets.cli`` too), and what
only it uses of the Dagster definitions.

- :mod:`.arguments`: the commands, their flags and help; :func:`main`;
- :mod:`.commands`: what each command does (``ingest``, ``plan``, ``runs``, ``check``, ``digest``),
  importing Dagster and the engine only when it runs, so that ``--help`` stays fast;
- :mod:`.runner`: ``ingest``'s sync-then-ingest, a run of the code location's ``ingest_job`` in
  this process, and its JSON;
- :mod:`.plan`: ``plan``'s dry run beyond the sync's own plan lines
  (:mod:`wiki_assets.defs.sync.plan`);
- :mod:`.history`: ``runs``' rows, read from the Dagster instance;
- :mod:`.text`: the tables ``runs`` and ``check`` print.
"""

from wiki_assets.cli.arguments import main

__all__ = ["main"]

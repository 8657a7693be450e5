"""Entry point of ``python -m wiki_assets.simulator``: :func:`.cli.main`."""

from wiki_assets.simulator.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

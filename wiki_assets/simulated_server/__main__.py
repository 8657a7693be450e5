"""Entry point of ``python -m wiki_assets.simulated_server``: :func:`.cli.main`."""

from wiki_assets.simulated_server.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

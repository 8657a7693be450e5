"""``python -m wiki_assets.cli``: the ``wiki-assets`` command."""

import sys

from wiki_assets.cli.arguments import main

sys.exit(main())

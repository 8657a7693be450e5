"""What in a mirror is not a document: furniture every export and drive carries (a default list),
and what a team names in a ``.wikiignore`` at the synced root, in gitignore syntax (read by
pathspec, the library pip and black use for it; ``!pattern`` takes a default back).

An ignored file is not a document: no page, no failure, not counted; ``wiki-assets plan`` lists
each with the rule that ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pathspec

from wiki_assets.engine.errors import ConfigurationError

WIKIIGNORE = ".wikiignore"

# What no team means as a document, whatever its mirror. Images, archives and the like are not
# here: they are listed as holding no text, so that a team sees them (formats.py).
DEFAULT_RULES = (
    # Office and LibreOffice lock files, editor backups and temporaries
    "~$*",
    ".~lock.*#",
    "*~",
    "*.bak",
    "*.tmp",
    "*.swp",
    # Operating systems' folder files
    "Thumbs.db",
    "desktop.ini",
    "Icon\r",
    # A web export's stylesheets, scripts and fonts
    "*.css",
    "*.js",
    "*.map",
    "*.woff",
    "*.woff2",
    "*.ttf",
    "*.otf",
    "*.eot",
    # A Confluence space export's furniture: its styles, icons and the space's page list
    # (index.html; its pages are the other HTML files)
    "styles/",
    "**/images/icons/",
    "index.html",
)


@dataclass(frozen=True, slots=True)
class Ignored:
    """A file of the synced tree that is not a document, and the rule that says so."""

    path: str
    rule: str  # "default: *.css", or ".wikiignore:3: drafts/"


class IgnoreRules:
    """The default rules, then the synced root's ``.wikiignore`` (a later rule wins)."""

    def __init__(self, own: list[str] | None = None) -> None:
        self._own = own or []
        lines = [*DEFAULT_RULES, *self._own]
        try:
            self._spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except ValueError as error:  # a pattern pathspec cannot compile
            raise ConfigurationError(f"{WIKIIGNORE}: {error}") from None

    @classmethod
    def of(cls, synced_root: Path) -> IgnoreRules:
        """The rules for the tree at ``synced_root``."""
        path = synced_root / WIKIIGNORE
        try:
            own = path.read_text(encoding="utf-8-sig").splitlines()
        except FileNotFoundError:
            own = []
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigurationError(f"{path}: cannot be read: {error}") from None
        return cls(own)

    def rule_for(self, path: str) -> str | None:
        """The rule that ignores ``path`` (relative, POSIX), or None when it is a document."""
        found = self._spec.check_file(path)
        if not found.include or found.index is None:
            return None
        if found.index < len(DEFAULT_RULES):
            return f"default: {DEFAULT_RULES[found.index]}"
        line = found.index - len(DEFAULT_RULES)
        return f"{WIKIIGNORE}:{line + 1}: {self._own[line].strip()}"


__all__ = ["DEFAULT_RULES", "WIKIIGNORE", "IgnoreRules", "Ignored"]

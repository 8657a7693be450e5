"""wiki_assets: mirrored documents in, a librarian's wiki out, on several LLMs at once."""

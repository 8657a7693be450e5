"""Prompting a model: what it is asked and what it answers, the types every layer shares: the
prompts (:mod:`.prompts`), the page schema with its key points (:mod:`.page`), what a request
gives back
(:mod:`.results`: a page's summary, a part's notes, a judge's verdicts), a link candidate
(:mod:`.candidate`) and token budgets (:mod:`.budget`).

It imports nothing of the engine above it (only :mod:`~wiki_assets.engine.config`,
:mod:`~wiki_assets.engine.errors` and the text helpers), so the dispatcher, the quality checks
and the virtual-time simulation read these types without the LLM client's room
(:mod:`wiki_assets.engine.llm`).
"""

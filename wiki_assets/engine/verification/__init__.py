"""The judge: a model of the fleet that checks the sentences of a page's prose the rules left
unchecked, against the page's document.

What a judge is asked and answers (:mod:`.prompt`), the request on a page's sentences with its
controls (:mod:`.request`), its verdicts applied to the page (:mod:`.verdicts`), how far a judge
holds (:mod:`.standing`), and the verification pass after a run (:mod:`.verify`; its figures:
:mod:`.report`). The model client sends the request (:mod:`wiki_assets.engine.llm`); the
dispatcher schedules the run's judges on idle workers
(:mod:`wiki_assets.engine.dispatch.judges`); ``wiki_verification``
(``wiki_assets/defs/verification/``) runs the pass. No HTTP and no Dagster here, and nothing is
imported with the package: the model client and the dispatcher import its request and answer
without the pass.
"""

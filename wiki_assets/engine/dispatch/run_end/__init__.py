"""The end of a run: who starts the last documents, which late request an idle model races, and
when the run is done.

Early in a run every model works: the others could never do everything left before a slow model
finished one document. At the end it is different. A slow model that starts the last long
document can finish it long after a fast model would have done it and everything else, and then
the whole run waits for it. So a model leaves a document to the others when both hold:

* another model would finish *this very document* sooner (its own expected time for it, plus the
  wait for one of its workers to come free), and
* the others together would do everything else nobody has started before this model finished it.

The comparison is like with like (every model's time for the same document, from its measured
pace) and totally ordered (expected finish, then the model's place in the fleet), so for any
document one model is first, and the first model never leaves a document: a document cannot be
left by every model. What a model would finish first it starts.

Once nothing is left unstarted, an idle model may *hedge* ("The Tail at Scale", Dean and Barroso):
take a document whose request on another model has run past that model's 95th-percentile time
for it. The first answer wins and the other request is cancelled. A document gets another
request only while every request for it is late (so a hedge that hangs is raced in turn), each
model races a document at most once, and a model whose last request failed races nothing: the
extra load is bounded by the tail itself.

Once every document has its first answer (or failed), the run ends at once, whoever notices: the
second opinions not worth waiting for (:mod:`~wiki_assets.engine.dispatch.opinions`) are given
up, those still out cancelled (their first answers stand) and those waiting dropped. Until then, a
model whose answers are superseded takes no new documents, and an idle worker gives up the hung
second opinions it sees.

Its modules: ``pace`` (how fast each model answers, learned from its answers), ``leave_rule``
(the rule above: start a document, or leave it to a model that would finish it first),
``who_starts`` (the rule as a free worker applies it, and when to look again), ``late_requests``
(which late request an idle worker races, and which hung second opinion it gives up),
``hedge_thresholds`` (when a request counts as late enough to race, all in one place) and
``when_done`` (whether the run may end, and the second opinions it waits for).
"""

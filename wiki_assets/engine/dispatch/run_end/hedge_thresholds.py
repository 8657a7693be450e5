"""When a request counts as late enough for an idle model to race it (a hedge, see
:mod:`~wiki_assets.engine.dispatch.run_end`): every threshold of the hedging rule, in one place."""

LATENCY_SAMPLES = 64  # recent answers a model's latency percentile is taken over
HEDGE_PERCENTILE = 0.95
MIN_HEDGE_SAMPLES = 4  # fewer answers say too little about a model's tail
HEDGE_WITHOUT_PERCENTILE = 2.0  # no tail known for the slow model: hedge at twice my own time
HEDGE_BLIND_S = 2.0  # neither model has answered yet: race a request once it has run this long

# Or hedge when I would finish in 3/4 of the time it still needs. At 1/2, a model twice as fast
# never took over a long document the slow one had started first: the run waited for it.
HEDGE_CLEARLY_SOONER = 0.75
# ...and only when that saves at least this long: between models of about the same speed, the
# noise in their paces on short requests would otherwise send duplicates that save nothing.
HEDGE_MIN_SAVING_S = 1.0
# A second opinion nobody may race (the idle model gave the first answer) is given up once it runs
# this many times past when it would have been raced: its document's first answer is journaled.
SECOND_OPINION_PATIENCE = 3.0

"""How a backfill of ``wiki_pages`` runs: one run of every collection, or runs of a few."""

import warnings

import dagster as dg

from wiki_assets.engine import environment

# Backfill policies are what this asset is built on; the beta notice only adds noise to logs.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)


def backfill_policy() -> dg.BackfillPolicy:
    # By default a backfill of many collections is one run: one fleet, one queue, one set of
    # figures, no per-run start-up. Past one machine, runs of a few collections each go through
    # Dagster's run queue in parallel (its concurrency limit), sharing each model's in-flight limit
    # through the state store.
    per_run = environment.collections_per_run()
    if per_run is None:
        return dg.BackfillPolicy.single_run()
    return dg.BackfillPolicy.multi_run(max_partitions_per_run=per_run)

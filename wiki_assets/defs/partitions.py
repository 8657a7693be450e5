import dagster as dg

# One partition per collection (a folder level of the synced root), never one per document: Dagster
# spends ~25 ms of bookkeeping per partition per run, as much as a fast fleet spends summarizing.
collections_partitions = dg.DynamicPartitionsDefinition(name="collections")

"""One ingest from start to end: the plan (what is current, what the run does with each
synced file), the run's lifecycle around the dispatcher, the pages and their flush, the log lines
and the run's figures.
"""

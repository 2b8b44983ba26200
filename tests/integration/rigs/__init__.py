"""Rigs for the integration suite: real OpenAI-compatible servers built on this machine.

``venvs`` creates and caches the per-server virtualenvs (vLLM and SGLang pin conflicting
versions of the same packages, so each gets its own), ``hf_models`` writes the weightless
Hugging Face model folders they serve, ``scenarios`` holds the backend-neutral model texts and
expected results, and one sub-package per server starts it with a scripted engine.
"""

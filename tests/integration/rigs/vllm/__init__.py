"""The vLLM rig: the real ``vllm serve`` (0.33.0) on CPU, with a scripted engine written by us.

``install`` pins the venv, ``serve`` (run inside that venv) swaps vLLM's engine-core client for
``fake_engine`` and hands over to vLLM's own CLI, and ``server.VllmServer`` starts and stops it
from the dev environment. See ``shared/research/real-servers-on-cpu.md`` for why each piece is
real or faked.
"""

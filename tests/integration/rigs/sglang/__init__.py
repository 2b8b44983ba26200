"""The SGLang rig: SGLang 0.5.23's real OpenAI server on CPU, with a scripted scheduler by us.

``install`` pins the venv (and copies ``torchvision_stub/`` into it), ``serve`` (run inside that
venv) hands ``fake_scheduler.run_fake_scheduler`` to SGLang's ``launch_server`` through its
``run_scheduler_process_func`` hook, and ``server.SglangServer`` starts and stops it from the dev
environment. See ``shared/research/real-servers-on-cpu.md`` for why each piece is real or faked.
"""

"""Start SGLang's own OpenAI server with the scripted scheduler (runs inside the SGLang venv).

    <sglang venv>/bin/python -m tests.integration.rigs.sglang.serve --model-path DIR [flags]

The flags are ``sglang serve``'s, parsed by SGLang itself. This does what
``python -m sglang.launch_server`` does for the plain HTTP mode — parse, resolve, launch, and
kill the process tree on the way out — with one difference: ``launch_server`` gets
``run_scheduler_process_func=run_fake_scheduler``, a parameter ``launch_server`` already has.
Everything else (TokenizerManager, DetokenizerManager process, OpenAI serving, parsers,
FastAPI, uvicorn, warm-up) is SGLang's.

The project root must be importable (``server.SglangServer`` sets ``PYTHONPATH``): SGLang starts
the scheduler with multiprocessing's ``spawn``, and the child imports
``tests.integration.rigs.sglang.fake_scheduler`` by name.
"""

from __future__ import annotations

import os
import sys

from tests.integration.rigs.sglang.fake_scheduler import MODEL_DIR_ENV, run_fake_scheduler


def main(argv: list[str]) -> None:
    from sglang.srt.entrypoints.http_server import (  # type: ignore[import-not-found,unused-ignore]
        launch_server,
    )
    from sglang.srt.server_args import (  # type: ignore[import-not-found,unused-ignore]
        prepare_server_args,
    )
    from sglang.srt.utils import kill_process_tree  # type: ignore[import-not-found,unused-ignore]

    server_args = prepare_server_args(argv)
    # The scheduler process reads the model folder from here: SGLang does not fill in
    # server_args.tokenizer_path on its way to that process. Children inherit the environment.
    os.environ.setdefault(MODEL_DIR_ENV, str(server_args.model_path))
    server_args.resolve_once()  # as sglang.launch_server.run_server does before launching
    try:
        launch_server(server_args, run_scheduler_process_func=run_fake_scheduler)
    finally:
        kill_process_tree(os.getpid(), include_parent=False)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Mutation-test one core parser module against its fast tests (cosmic-ray).

Not part of CI: a module takes minutes. Run it when a parser changes and quote the score in the
commit message.

    pip install cosmic-ray
    python tools/mutation.py --list
    python tools/mutation.py sse               # mutate, test, report
    python tools/mutation.py sse --survivors   # the diffs of the mutants no test killed

Cosmic-ray edits the module *on disk* while it runs (and restores it after each mutant), so run
this in a checkout nothing else is using. Sessions are kept under ``.mutation/`` (git-ignored),
so an interrupted run picks up where it stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"

_TEXT = "tests/unit/providers/text_tool_calls"

# name -> (module path, the fast tests that are meant to pin it). A module is listed here when
# it parses what a server sends; the tests are the ones a change to it would run first.
MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "sse": ("providers/transport/sse.py", ("tests/unit/providers/transport/test_sse.py",)),
    "retry_after": (
        "providers/transport/retry_after.py",
        (
            "tests/unit/providers/transport/test_retry_after.py",
            "tests/unit/providers/transport/test_error_classification.py",
        ),
    ),
    "normalize": (
        "providers/chat_completions/normalize.py",
        (
            "tests/unit/providers/chat_completions/test_normalize.py",
            "tests/unit/providers/chat_completions/test_normalize_shapes.py",
        ),
    ),
    "accumulator": (
        "providers/chat_completions/tool_call_accumulator.py",
        ("tests/unit/providers/chat_completions/test_tool_call_accumulator.py",),
    ),
    "reasoning_parser": (
        "providers/reasoning/parser.py",
        ("tests/unit/providers/reasoning/test_reasoning.py",),
    ),
    "harmony_text": (
        "providers/reasoning/harmony_text.py",
        ("tests/unit/providers/reasoning/test_reasoning_harmony.py",),
    ),
    **{
        name: (
            f"providers/text_tool_calls/formats/{name}.py",
            (f"{_TEXT}/test_{name}.py", f"{_TEXT}/test_conformance.py"),
        )
        for name in (
            "hermes",
            "qwen3_coder",
            "llama3_json",
            "mistral",
            "pythonic",
            "gpt_oss",
            "nemotron",
        )
    },
    **{
        name: (
            f"providers/text_tool_calls/formats/{name}.py",
            (f"{_TEXT}/test_conformance.py", f"{_TEXT}/test_auto.py"),
        )
        for name in ("deepseek_v3", "deepseek_v31", "kimi_k2")
    },
    "sections": (
        "providers/text_tool_calls/formats/_sections.py",
        (f"{_TEXT}/test_sections.py", f"{_TEXT}/test_conformance.py"),
    ),
    "tool_call_tag": (
        "providers/text_tool_calls/formats/_tool_call_tag.py",
        (f"{_TEXT}/test_hermes.py", f"{_TEXT}/test_conformance.py"),
    ),
}


def _config(name: str, timeout: float) -> Path:
    path, tests = MODULES[name]
    # -x: the first failing test kills the mutant; no cache, no plugins that write to the tree.
    flags = "-x -q -p no:cacheprovider -o addopts=''"
    command = f"{sys.executable} -m pytest {flags} {' '.join(tests)}"
    WORK.mkdir(exist_ok=True)
    config = WORK / f"{name}.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(path)}\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n"
        "[cosmic-ray.distributor]\n"
        'name = "local"\n',
        encoding="utf-8",
    )
    return config


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # The cosmic-ray beside this interpreter, so a venv's copy is found without activating it.
    tool = Path(sys.executable).parent / args[0]
    args = (str(tool) if tool.exists() else args[0], *args[1:])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)
    return subprocess.run(args, cwd=ROOT, env=env, text=True, capture_output=True, check=False)


def _score(session: Path) -> tuple[int, int, list[dict[str, object]]]:
    dump = _run("cosmic-ray", "dump", str(session)).stdout.splitlines()
    killed = total = 0
    survivors: list[dict[str, object]] = []
    for line in dump:
        item, result = json.loads(line)
        if not result:
            continue
        total += 1
        if result.get("test_outcome") == "survived":
            survivors.append({**item, **result})
        else:
            killed += 1
    return killed, total, survivors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("module", nargs="?", choices=sorted(MODULES))
    parser.add_argument("--list", action="store_true", help="the modules and their tests")
    parser.add_argument("--fresh", action="store_true", help="drop the saved session first")
    parser.add_argument("--survivors", action="store_true", help="print the surviving diffs")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    if args.list or not args.module:
        for name in sorted(MODULES):
            print(f"{name:16} {MODULES[name][0]}  <- {' '.join(MODULES[name][1])}")
        return 0
    name = args.module
    session = WORK / f"{name}.sqlite"
    config = _config(name, args.timeout)
    if args.fresh or not session.exists():
        session.unlink(missing_ok=True)
        init = _run("cosmic-ray", "init", str(config), str(session))
        if init.returncode:
            print(init.stdout + init.stderr, file=sys.stderr)
            return init.returncode
        baseline = _run("cosmic-ray", "baseline", str(config))
        if baseline.returncode:
            print("the tests fail on the unmutated module:\n" + baseline.stdout + baseline.stderr)
            return 2
    executed = _run("cosmic-ray", "exec", str(config), str(session))
    if executed.returncode:
        print(executed.stdout + executed.stderr, file=sys.stderr)
        return executed.returncode
    killed, total, survivors = _score(session)
    percent = 100.0 * killed / total if total else 0.0
    print(f"{name}: {killed}/{total} mutants killed ({percent:.1f} %), {len(survivors)} survived")
    if args.survivors:
        for survivor in survivors:
            print(f"\n--- {survivor.get('job_id')}\n{survivor.get('diff', '')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Mutation-test one core parser module against its fast tests (cosmic-ray).

Not part of CI: a module takes minutes. Run it when a parser changes and quote the score in the
commit message.

    pip install cosmic-ray
    python tools/mutation.py --list
    python tools/mutation.py sse               # mutate, test, report
    python tools/mutation.py sse --survivors   # the diffs of the mutants no test killed
    python tools/mutation.py sse --recheck     # after adding tests: run only the survivors again

Cosmic-ray edits the module *on disk* while it runs (and restores it after each mutant), so run
this in a checkout nothing else is using (a git worktree per module is enough). Sessions are
kept under ``.mutation/`` (git-ignored), so an interrupted run picks up where it stopped; after
the module itself changes, start over with ``--fresh``. Mutants inside annotations are skipped
(see ``_annotation_spans``) and the score is killed / the rest. Each mutant's tests run in a
fork of a warm interpreter (tools/mutation_forkserver.py), about 1 s each instead of 3.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"

_TEXT = "tests/unit/providers/text_tool_calls"

# name -> (module path, the fast tests that are meant to pin it). A module is listed here when
# it parses what a server sends; the tests are the ones a change to it would run first.
MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "sse": (
        "providers/transport/sse.py",
        (
            "tests/unit/providers/transport/test_sse.py",
            "tests/unit/providers/transport/test_sse_chunkings.py",
            "tests/unit/providers/transport/test_sse_limits.py",
        ),
    ),
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
            "tests/unit/providers/chat_completions/test_normalize_edges.py",
        ),
    ),
    "accumulator": (
        "providers/chat_completions/tool_call_accumulator.py",
        (
            "tests/unit/providers/chat_completions/test_tool_call_accumulator.py",
            "tests/unit/providers/chat_completions/test_tool_call_accumulator_limits.py",
        ),
    ),
    "reasoning_parser": (
        "providers/reasoning/parser.py",
        (
            "tests/unit/providers/reasoning/test_reasoning.py",
            "tests/unit/providers/reasoning/test_reasoning_parser_api.py",
            "tests/unit/providers/reasoning/test_reasoning_harmony.py",
        ),
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
            (
                f"{_TEXT}/test_{name}.py",
                f"{_TEXT}/test_sections.py",
                f"{_TEXT}/test_conformance.py",
                f"{_TEXT}/test_auto.py",
            ),
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


def _socket(name: str) -> Path:
    return WORK / f"{name}.sock"


def _config(name: str, timeout: float) -> Path:
    path, tests = MODULES[name]
    # -x: the first failing test kills the mutant; no cache, no plugins that write to the tree.
    flags = "-x -q -p no:cacheprovider -o addopts="
    client = f"{sys.executable} -I -S {ROOT / 'tools' / 'mutation_forkserver.py'}"
    command = f"{client} run {_socket(name)} {timeout} -- {flags} {' '.join(tests)}"
    WORK.mkdir(exist_ok=True)
    config = WORK / f"{name}.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(path)}\n"
        # The fork server kills a hung child at `timeout`; cosmic-ray's own limit is the backstop.
        f"timeout = {timeout + 30}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n"
        "[cosmic-ray.distributor]\n"
        'name = "local"\n',
        encoding="utf-8",
    )
    return config


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)
    return env


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # The cosmic-ray beside this interpreter, so a venv's copy is found without activating it.
    tool = Path(sys.executable).parent / args[0]
    args = (str(tool) if tool.exists() else args[0], *args[1:])
    return subprocess.run(args, cwd=ROOT, env=_env(), text=True, capture_output=True, check=False)


@contextmanager
def _fork_server(name: str) -> Iterator[None]:
    """The warm interpreter each mutant's tests fork from (see tools/mutation_forkserver.py)."""
    socket = _socket(name)
    socket.unlink(missing_ok=True)
    script = str(ROOT / "tools" / "mutation_forkserver.py")
    server = subprocess.Popen([sys.executable, script, "serve", str(socket)], cwd=ROOT, env=_env())
    try:
        while not socket.exists():
            if server.poll() is not None:
                raise SystemExit(f"the fork server exited with {server.returncode}")
            time.sleep(0.05)
        yield
    finally:
        server.kill()
        server.wait()
        socket.unlink(missing_ok=True)


def _annotation_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the module's annotations are: under ``from __future__ import annotations`` they
    are strings nobody evaluates (no core parser uses pydantic or ``get_type_hints``), so a
    mutant inside one cannot change behaviour and is skipped rather than scored."""
    spans = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        annotations: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            annotations = [a.annotation for a in every] + [node.returns]
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        for annotation in annotations:
            if annotation is not None and annotation.end_lineno is not None:
                start = (annotation.lineno, annotation.col_offset)
                spans.append((start, (annotation.end_lineno, annotation.end_col_offset or 0)))
    return spans


def _skip_annotation_mutants(name: str, session: Path) -> int:
    spans = _annotation_spans(ROOT / MODULES[name][0])
    with sqlite3.connect(session) as db:
        rows = db.execute("SELECT job_id, start_pos_row, start_pos_col FROM mutation_specs")
        inside = [job for job, *start in rows if any(lo <= tuple(start) < hi for lo, hi in spans)]
        db.executemany(
            "INSERT INTO work_results (worker_outcome, output, job_id) VALUES ('SKIPPED', ?, ?)",
            [("annotation", job) for job in inside],
        )
    return len(inside)


def _forget_survivors(session: Path) -> None:
    """Make the surviving mutants pending again, so only they run against the new tests."""
    with sqlite3.connect(session) as db:
        db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'")


def _score(session: Path) -> tuple[int, int, int, list[dict[str, object]]]:
    """(killed, scored, skipped as annotation mutants, survivors)."""
    dump = _run("cosmic-ray", "dump", str(session)).stdout.splitlines()
    killed = total = skipped = 0
    survivors: list[dict[str, object]] = []
    for line in dump:
        item, result = json.loads(line)
        if not result:
            continue
        if result.get("worker_outcome") == "skipped":
            skipped += 1
            continue
        total += 1
        if result.get("test_outcome") == "survived":
            survivors.append({**item, **result})
        else:
            killed += 1
    return killed, total, skipped, survivors


def _survivor_line(survivor: dict[str, object]) -> str:
    mutation = survivor["mutations"][0]  # type: ignore[index]
    line, column = mutation["start_pos"]
    return f"{line}:{column} {mutation['operator_name']} in {mutation.get('definition_name')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("module", nargs="?", choices=sorted(MODULES))
    parser.add_argument("--list", action="store_true", help="the modules and their tests")
    parser.add_argument("--fresh", action="store_true", help="drop the saved session first")
    parser.add_argument("--survivors", action="store_true", help="print the surviving diffs")
    parser.add_argument(
        "--recheck", action="store_true", help="run the survivors again (after adding tests)"
    )
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    if args.list or not args.module:
        for name in sorted(MODULES):
            print(f"{name:16} {MODULES[name][0]}  <- {' '.join(MODULES[name][1])}")
        return 0
    name = args.module
    session = WORK / f"{name}.sqlite"
    config = _config(name, args.timeout)
    with _fork_server(name):
        if args.fresh or not session.exists():
            session.unlink(missing_ok=True)
            init = _run("cosmic-ray", "init", str(config), str(session))
            if init.returncode:
                print(init.stdout + init.stderr, file=sys.stderr)
                return init.returncode
            _skip_annotation_mutants(name, session)
            baseline = _run("cosmic-ray", "baseline", str(config))
            if baseline.returncode:
                print(
                    "the tests fail on the unmutated module:\n" + baseline.stdout + baseline.stderr
                )
                return 2
        elif args.recheck:
            _forget_survivors(session)
        executed = _run("cosmic-ray", "exec", str(config), str(session))
    if executed.returncode:
        print(executed.stdout + executed.stderr, file=sys.stderr)
        return executed.returncode
    killed, total, skipped, survivors = _score(session)
    percent = 100.0 * killed / total if total else 100.0
    print(
        f"{name}: {killed}/{total} mutants killed ({percent:.1f} %), {len(survivors)} survived, "
        f"{skipped} in annotations skipped"
    )
    for survivor in survivors:
        print(f"  survived {_survivor_line(survivor)}")
        if args.survivors:
            print(str(survivor.get("diff", "")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

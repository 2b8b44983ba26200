"""Two fake workers per module, and the real routers in front of them (``routers.py``).

Without a router binary (the ``integration`` extra not installed) the tests skip with the
reason, except on CI, where they fail instead (a skip would hide a broken set-up).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.integration.routers.fake_worker import FakeWorker
from tests.integration.routers.routers import RouterServer, router_binary


def _binary(name: str) -> str:
    binary = router_binary(name)
    if binary is None:
        reason = f"{name} is not installed (pip install -e '.[integration]')"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; on CI the integration suite must run, not skip")
        pytest.skip(reason)
    return binary


@pytest.fixture(scope="module")
def workers() -> Iterator[tuple[FakeWorker, FakeWorker]]:
    with FakeWorker("worker-a") as a, FakeWorker("worker-b") as b:
        yield a, b


@pytest.fixture
def clean_workers(workers: tuple[FakeWorker, FakeWorker]) -> tuple[FakeWorker, FakeWorker]:
    """The module's workers, their records emptied (the router's probes included)."""
    for worker in workers:
        worker.reset()
    return workers


def _router(
    kind: str, workers: tuple[FakeWorker, FakeWorker], **kwargs: list[str]
) -> Iterator[RouterServer]:
    router = RouterServer(kind, _binary(kind), [w.url for w in workers], **kwargs)
    with router:
        yield router


@pytest.fixture(scope="module")
def vllm_router(workers: tuple[FakeWorker, FakeWorker]) -> Iterator[RouterServer]:
    yield from _router("vllm-router", workers)


@pytest.fixture(scope="module")
def smg(workers: tuple[FakeWorker, FakeWorker]) -> Iterator[RouterServer]:
    yield from _router("smg", workers)


@pytest.fixture(scope="module")
def smg_user_key(workers: tuple[FakeWorker, FakeWorker]) -> Iterator[RouterServer]:
    """smg reading its routing key from ``x-user-id`` (the ``header`` mode's router)."""
    yield from _router("smg", workers, routing_key_headers=["x-user-id"])

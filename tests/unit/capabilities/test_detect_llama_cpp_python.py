"""llama-cpp-python's fingerprint: ``owned_by: "me"`` on a card that has a ``permissions`` list.

The recorded answers are the real server's (``transcripts/llama-cpp-python/discovery``). Its
``Server`` header is uvicorn's, like vLLM's and SGLang's, and it has no ``/props`` or
``/version``, so ``/v1/models`` is the only place it says who it is; ``"me"`` alone is too plain
a word to decide on.
"""

from __future__ import annotations

from contextlib import aclosing

import httpx
import respx

from capabilities import Backend, Source, detect_backend
from providers import ChatClientMetadata, create_chat_client
from providers.abstractions.services import service_of
from providers.backends import profile_for
from providers.transport.endpoint import Endpoint
from tests.unit.capabilities.fakes import discovery, mount

ROOT = "http://gpu.test/llm"
BACKEND = "llama-cpp-python"


async def _detect() -> tuple[str, str | None, str, str]:
    async with httpx.AsyncClient() as http:
        found = await detect_backend(http, Endpoint.from_base_url(f"{ROOT}/v1"))
    return found.backend, found.version, found.source, found.evidence


async def test_recognised_from_its_recorded_model_listing() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, BACKEND)
        backend, version, source, evidence = await _detect()
    assert (backend, version, source) == (Backend.LLAMA_CPP_PYTHON, None, Source.MODELS)
    assert 'owned_by "me" with "permissions"' in evidence


async def test_the_listing_alone_decides_no_other_probe_is_asked() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, BACKEND)
        await _detect()
        asked = [call.request.url.path for call in router.calls]
    assert asked == ["/llm/v1/models"]  # the row names no probes: nothing it would 404


async def test_owned_by_me_without_a_permissions_list_is_not_enough() -> None:
    listing = discovery(BACKEND, "gguf-template")["/v1/models"]
    payload = listing.json()
    for card in payload["data"]:
        del card["permissions"]
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, BACKEND, [listing.with_json(payload)])
        backend, _, source, _ = await _detect()
    assert (backend, source) == (Backend.GENERIC, Source.DEFAULT)


async def test_the_name_is_usable_wherever_a_backend_is_named() -> None:
    row = profile_for("LLAMA-CPP-PYTHON")
    assert row.name == BACKEND and row.model_field_ignored  # one model answers for any id
    client = create_chat_client("http://gpu.test/v1", "tiny", backend=BACKEND)
    async with aclosing(client):
        metadata = service_of(client, ChatClientMetadata)
    assert metadata is not None and metadata.provider_name == BACKEND

"""Does a Responses server keep responses? Asked once, on demand, never during a request.

Apart from the client because it is a one-off question with its own protocol (a read of an
unknown id, then a tiny stored response read back), not part of sending a request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from providers.abstractions.errors import InvalidRequestError

if TYPE_CHECKING:
    from providers.responses.client import OpenAiCompatibleResponsesClient

__all__ = ["PROBE_ID", "PROBE_OUTPUT_TOKENS", "probe_store"]

PROBE_ID = "resp_oaicompat_store_probe"
PROBE_OUTPUT_TOKENS = 3
"""The probe's ``max_output_tokens``: SGLang keeps 2 of it back (``max_new_tokens`` = limit - 2)
and refuses a limit that leaves less than 0, so 1 would be a 400; 3 generates one token."""


async def probe_store(client: OpenAiCompatibleResponsesClient) -> bool:
    """Is the server's response store on (so ``PREVIOUS_RESPONSE_ID`` can work)?

    SGLang answers a read of an unknown id with 400 "store is disabled" when it is off.
    vLLM answers 404 either way, so a tiny response is stored and read back (it costs a
    generation of a few tokens; ``PROBE_OUTPUT_TOKENS``).
    """
    try:
        await client.retrieve(PROBE_ID)
    except InvalidRequestError as exc:
        if exc.status != 404:
            return False
    else:
        return True
    body: dict[str, Any] = {
        "input": "ping",
        "max_output_tokens": PROBE_OUTPUT_TOKENS,
        "store": True,
    }
    if client.model_id:
        body["model"] = client.model_id
    created, _ = await client._transport.request_json("POST", client.url, body)
    response_id = created.get("id")
    if not isinstance(response_id, str):
        return False
    try:
        await client.retrieve(response_id)
    except InvalidRequestError:
        return False
    return True

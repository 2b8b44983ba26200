"""oaicompat inside agent frameworks and OpenAI-SDK clients, one optional extra each.

Each adapter lives in its own module or package and imports its framework; this package root
imports none of them, so ``import providers`` never needs a framework installed and a missing
extra shows up as an ``ImportError`` only where that adapter is imported
(``pip install 'oaicompat[langchain]'``…, ``[frameworks]`` for all). Import the one you use:

* ``providers.integrations.agent_framework``: ``OaicompatChatClient``, a Microsoft Agent
  Framework chat client, and ``OaicompatEmbeddingClient``, its embedding client;
* ``providers.integrations.pydantic_ai``: ``OaicompatModel``, a pydantic-ai model, and
  ``OaicompatEmbeddingModel``, an embedding model for ``pydantic_ai.Embedder``;
* ``providers.integrations.langchain``: ``ChatOaicompat``, a LangChain chat model, and
  ``providers.integrations.langchain_embeddings``: ``OaicompatEmbeddings``, LangChain
  ``Embeddings``;
* ``providers.integrations.openai``: ``OaicompatTransport`` (httpx) and
  ``providers.integrations.openai_httpx2``: ``OaicompatHttpx2Transport``: the pipeline behind
  any OpenAI-SDK client (chat, and embeddings when given an embedding pipeline), and so behind
  every framework class built on one;
* ``providers.integrations.openai_agents``: ``OaicompatAgentsModel``, an OpenAI Agents SDK
  model (the SDK's chat-completions model over the transport).
"""

__all__: list[str] = []

"""oaicompat inside agent frameworks and OpenAI-SDK clients, one module per framework.

Each module needs its framework, installed with an extra (``pip install 'oaicompat[openai]'``,
``[langchain]``, ``[frameworks]`` for all); this package root imports none of them, so
``import providers`` never loads a framework. Import the module you use:

* ``providers.integrations.openai``: ``OaicompatTransport`` (httpx), and
  ``providers.integrations.openai_httpx2``: ``OaicompatHttpx2Transport``: the pipeline behind
  any OpenAI-SDK client, and so behind every framework class built on one;
* ``providers.integrations.langchain``: ``ChatOaicompat``, a LangChain chat model.
"""

__all__: list[str] = []

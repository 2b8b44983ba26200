"""One module per text tool-call format; only ``providers.text_tool_calls.registry`` imports them.

Each module defines one class implementing ``ToolCallFormat`` (``protocol.py``): its markers, a
tracker that finds where a block ends, and ``parse_block``. Modules starting with ``_`` are
helpers shared by several formats. Adding a format (one module here, one entry in the registry,
its grammar and tests): docs/extending.md, "A new text tool-call format".
"""

"""Capability resolution and backend detection (see the capabilities issue)."""

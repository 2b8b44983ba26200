"""Timings and prompt-cache telemetry (see the telemetry issue)."""

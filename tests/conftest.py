"""Test configuration shared by every suite."""

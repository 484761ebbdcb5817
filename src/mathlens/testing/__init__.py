"""Utilities for testing mathlens and code built on it (local stand-in servers)."""

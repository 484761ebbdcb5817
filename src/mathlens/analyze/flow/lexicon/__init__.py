"""Versioned operation and concept lexicons (YAML data, read by ``flow.annotate``)."""

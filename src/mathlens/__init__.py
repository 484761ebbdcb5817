"""mathlens: see how language models reason through math problems."""

__version__ = "0.1.0"

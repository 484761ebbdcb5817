"""The `mathlens` command line: thin typer commands over the public functions.

Every module in this package that defines `register(app)` adds its commands; nothing else needs to
change to add one.
"""

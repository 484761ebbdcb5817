"""Report sections: one module per section, each defining `SECTION` (see `mathlens.report.registry`)."""

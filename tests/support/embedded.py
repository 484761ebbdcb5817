"""The embedded model the tests run.

Tests of the mechanics (a real backend's reply going through the run, the judge, the report) name the
smallest instruction-tuned embedded model explicitly, so the suite stays fast whatever the default
model is; tests of what the default is assert `mathlens.models.embedded.DEFAULT_EMBEDDED` itself.
"""

TEST_EMBEDDED = "qwen2.5-coder-0.5b"
TEST_EMBEDDED_SPEC = f"embedded/{TEST_EMBEDDED}"

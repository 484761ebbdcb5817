"""Shared fixtures: scripted models, the embedded model, third-party data, temporary caches."""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mathlens.models.cache import ResponseCache
from mathlens.models.model import Model, RetryPolicy
from mathlens.models.registry import get_model
from support.embedded import TEST_EMBEDDED

ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """`$MATHLENS_SHARED_DATA`, else `../shared/data` beside the project root."""
    env = os.environ.get("MATHLENS_SHARED_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own response cache directory, so no test sees another's responses."""
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="module")
def mathlens_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A `$MATHLENS_HOME` (knowledge bases) and response cache of the test module's own; the
    knowledge bases' database handles are released when the module is done."""
    root = tmp_path_factory.mktemp("mlhome")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MATHLENS_HOME", str(root))
        mp.setenv("MATHLENS_CACHE_DIR", str(root / "cache"))
        yield root
        from mathlens.solve.retrieval.store import release_clients

        release_clients()


@pytest.fixture
def shared_data() -> Path:
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"third-party data not found at {path} (set MATHLENS_SHARED_DATA)")
    return path


def embedded_available(name: str | None = None) -> bool:
    """llama-cpp-python and the weights of embedded model `name` (default: the default model) are installed."""
    from mathlens.errors import UserError
    from mathlens.models.embedded import DEFAULT_EMBEDDED, get_embedded
    from mathlens.models.embedded import chunk_files as _chunks

    try:
        import llama_cpp  # noqa: F401

        model = get_embedded(name or DEFAULT_EMBEDDED)
        if model.assembler:
            importlib.import_module(model.assembler.partition(":")[0])
        else:
            _chunks(model)
    except (ImportError, UserError):
        return False
    return True


@pytest.fixture
def embedded_model_path() -> Path:
    """The GGUF of the tests' embedded model, `TEST_EMBEDDED` (skips when it is not installed)."""
    if not embedded_available(TEST_EMBEDDED):
        pytest.skip(f"embedded {TEST_EMBEDDED} not installed (run `make setup`)")
    from mathlens.models.providers.llamacpp import embedded_model_path as path

    return path(TEST_EMBEDDED)


@pytest.fixture
def gemma_model_path() -> Path:
    """Gemma 3 270M's GGUF (skips when it is not installed)."""
    if not embedded_available("gemma3-270m"):
        pytest.skip("embedded gemma3-270m not installed (run `make setup`)")
    from mathlens.models.providers.llamacpp import embedded_model_path as path

    return path("gemma3-270m")


@pytest.fixture
def mock_model(tmp_path: Path) -> Any:
    """`mock_model(responses=[...], errors=[...], cache=False)` -> a `Model` over the mock provider."""

    def make(responses: list[str] | None = None, errors: list[str] | None = None, cache: bool = False,
             func: Any = None, name: str = "scripted") -> Model:
        return get_model(
            f"mock/{name}", {"responses": responses or [], "errors": errors or [], "func": func},
            cache=ResponseCache(tmp_path / "cache.sqlite") if cache else None,
            retry=RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01, timeout_s=5),
        )

    return make


#: Debian's chromium, driven by Playwright for the report's browser tests
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
#: headless, and nothing that reaches for the network on its own
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium (skipped with the reason when Chromium or Playwright is missing)."""
    if CHROMIUM is None:
        pytest.skip("Chromium not installed (Debian package `chromium`)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the Python package `playwright` is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


# -- the end of the session ----------------------------------------------------------------------
# Two things happen once every test has run and the summary is printed.
#
# 1. No HTTP session may be left open: a model that is never closed keeps its aiohttp session (and
#    its connections) until the interpreter exits. The sessions still open are counted and the run
#    fails, naming the test that opened each one.
# 2. The interpreter's own teardown is skipped: after the atexit handlers (which free the embedded
#    models, stop the step-check workers and shut Ray down), the process exits with pytest's status
#    without the final garbage collection and module teardown. Native libraries loaded by the suite
#    (Ray's core worker, llama.cpp, Chroma, Inspect's dependencies) have crashed that teardown with a
#    segmentation fault once in five whole-suite runs, after every test had passed; such a crash says
#    nothing about mathlens' tests, and point 1 keeps what the teardown used to report (unclosed sessions).

_SESSION_END: list[int] = []


def _open_http_sessions() -> list[str]:
    import gc
    import sys

    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is None:
        return []
    gc.collect()
    return [getattr(s, "_opened_by", "?") for s in gc.get_objects()
            if isinstance(s, aiohttp.ClientSession) and not s.closed]


def pytest_configure(config: pytest.Config) -> None:
    import aiohttp

    opened = aiohttp.ClientSession.__init__

    def tagged(self: Any, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        self._opened_by = os.environ.get("PYTEST_CURRENT_TEST", "outside a test")

    aiohttp.ClientSession.__init__ = tagged  # type: ignore[method-assign]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    left_open = _open_http_sessions()
    if left_open:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"{len(left_open)} aiohttp session(s) left open (close the models a test builds):",
                 *(f"  opened by {name}" for name in left_open[:20])]
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line("\n".join(lines), red=True)
        if session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    _SESSION_END.append(int(session.exitstatus))


def _exit_without_teardown() -> None:
    import sys

    if _SESSION_END:
        import logging

        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_SESSION_END[-1])


# registered before any handler of the code under test (pytest's own imports register at most
# logging's), so it runs after all of them: exit handlers run in reverse order
atexit.register(_exit_without_teardown)

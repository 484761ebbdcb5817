"""Shared fixtures: scripted models, the embedded model, third-party data, temporary caches."""

from __future__ import annotations

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

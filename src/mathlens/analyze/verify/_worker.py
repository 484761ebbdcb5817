"""The worker process behind ``budget.run_bounded``: a loop reading ``(fn, args)`` from a pipe.

Started as ``python -c "...; main(READ_FD, WRITE_FD, MEMORY_MB, MAIN_PATH, WARM_UPS)"``, never through
``multiprocessing``, so the caller's ``__main__`` script is not imported again in every worker
(it may lack a main guard, or import heavy libraries). A function pickled from the caller's
``__main__`` is still found: the script is then imported once, under another module name, so
that its guarded code does not run.
"""

from __future__ import annotations

import importlib.util
import io
import os
import pickle
import sys
from multiprocessing.connection import Connection
from typing import Any

_MAIN_ALIAS = "__mathlens_caller_main__"


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, main_path: str) -> None:
        super().__init__(io.BytesIO(data))
        self.main_path = main_path

    def find_class(self, module: str, name: str) -> Any:
        if module == "__main__" and self.main_path:
            mod = sys.modules.get(_MAIN_ALIAS)
            if mod is None:
                spec = importlib.util.spec_from_file_location(_MAIN_ALIAS, self.main_path)
                if spec is None or spec.loader is None:
                    raise pickle.UnpicklingError(f"cannot import {self.main_path}")
                mod = importlib.util.module_from_spec(spec)
                sys.modules[_MAIN_ALIAS] = mod
                spec.loader.exec_module(mod)
            return getattr(mod, name)
        return super().find_class(module, name)


def _limit_memory(memory_mb: int) -> None:
    if memory_mb <= 0:
        return
    try:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass  # the time budget still holds where a process cannot cap its own memory


def _run(data: bytes, main_path: str) -> tuple[str, Any]:
    try:
        fn, args = _Unpickler(data, main_path).load()
    except Exception as exc:
        return "error", f"could not load work: {type(exc).__name__}: {exc}"[:500]
    try:
        return "ok", fn(*args)
    except MemoryError:
        return "error", "MemoryError: worker memory limit reached"
    except RecursionError:
        return "error", "RecursionError: expression nested too deeply"
    except Exception as exc:
        return "error", f"{type(exc).__name__}: {exc}"[:500]


def main(read_fd: int, write_fd: int, memory_mb: int, main_path: str,
         warm_ups: tuple[tuple[str, str], ...] = ()) -> None:
    """Serve calls until the pipe closes or a ``None`` message arrives."""
    inbox = Connection(read_fd, writable=False)
    outbox = Connection(write_fd, readable=False)
    import warnings

    from mathlens.analyze.verify._preload import warm_in_background  # imports what a step check needs

    # Deprecation notices from SymPy on untrusted input would only clutter the caller's stderr.
    warnings.simplefilter("ignore", DeprecationWarning)
    _limit_memory(memory_mb)
    outbox.send_bytes(pickle.dumps(("ready", os.getpid())))
    warm_in_background(warm_ups)
    while True:
        try:
            data = inbox.recv_bytes()
        except (EOFError, OSError):
            return
        if data == b"stop":
            return
        reply = _run(data, main_path)
        try:
            payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            payload = pickle.dumps(("error", f"result could not be returned: {type(exc).__name__}: {exc}"[:500]))
        try:
            outbox.send_bytes(payload)
        except (OSError, ValueError):
            return

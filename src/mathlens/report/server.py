"""`mathlens view`: serve an index of runs and each run's report on 127.0.0.1.

Reports are rebuilt when a run's records or analyses change (checked by modification time), so a
page reloaded after `mathlens analyze` shows the new results. Only directories found under the
runs folder can be named in a URL; nothing else on disk is reachable: a run directory (or its
manifest or records) that is a symbolic link leading outside the runs folder is not served.
Requests whose `Host` header is not this server's own address (127.0.0.1 or localhost, with its
port) are refused, so a web page cannot reach the viewer through DNS rebinding.

It holds under load: the kernel queues up to `BACKLOG` connections, a fixed pool of `WORKERS`
threads answers them, at most `QUEUED` more wait for a thread, and any connection beyond that is
answered `503 Service Unavailable` (with `Retry-After`) at once rather than left hanging; a
connection that sends nothing is dropped after `CONNECTION_TIMEOUT_S`.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, Field

from mathlens.errors import MathlensError
from mathlens.report import make_report
from mathlens.report.context import ReportOptions
from mathlens.report.render import environment
from mathlens.runs.store import RunStore

HOST = "127.0.0.1"
#: connections the kernel queues before they are accepted (the system's somaxconn caps it)
BACKLOG = 1024
#: threads answering requests
WORKERS = 8
#: accepted requests that may wait for a thread; a connection beyond them is answered 503 at once
QUEUED = 256
#: seconds a connection may take to send its request (and to take its answer)
CONNECTION_TIMEOUT_S = 15.0
_BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"Content-Length: 40\r\nConnection: close\r\n\r\nthe viewer is busy: try again in a second")


class ViewOptions(BaseModel):
    """How `mathlens view` serves (checked before anything listens)."""

    port: int = Field(8765, ge=0, le=65535, description="port on 127.0.0.1 (0: any free port)")
    lifetime: float | None = Field(None, gt=0, le=10**7, allow_inf_nan=False,
                                   description="stop after this many seconds (default: until Ctrl-C)")
    workers: int = Field(WORKERS, ge=1, le=256, description="threads answering requests")
    queued: int = Field(QUEUED, ge=0, le=65536, description="requests waiting for a thread before 503")


def csp(nonce: str) -> str:
    """The Content-Security-Policy of every served page."""
    return (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; img-src data:; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder)
    except (OSError, RuntimeError):  # a symlink loop
        return False


def _servable(run: Path, root: Path) -> bool:
    """A run whose directory, manifest and records all lie inside the runs folder once links are followed."""
    return all(_inside(p, root) for p in (run, run / "manifest.json", run / "records.jsonl"))


def find_runs(root: Path) -> dict[str, Path]:
    """Run directories (holding a manifest.json) at `root` itself and one level below, by URL name."""
    runs: dict[str, Path] = {}
    base = root.resolve()
    if (root / "manifest.json").is_file() and _servable(root, base):
        runs[base.name] = root
    if root.is_dir():
        for d in sorted(root.iterdir()):
            if d.is_dir() and (d / "manifest.json").is_file() and _servable(d, base):
                runs[d.name] = d
    return runs


def _stamp(run: Path) -> tuple[float, ...]:
    paths = [run / "manifest.json", run / "records.jsonl", *sorted((run / "analysis").glob("*.jsonl"))]
    return (*(p.stat().st_mtime_ns for p in paths if p.exists()), len(paths))


@dataclass
class ViewState:
    """Shared by the request handlers: where the runs are and the reports built so far."""

    root: Path
    options: ReportOptions = field(default_factory=ReportOptions)
    _cache: dict[str, tuple[tuple[float, ...], Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def index_rows(self) -> list[dict[str, Any]]:
        rows = []
        for name, path in find_runs(self.root).items():
            row: dict[str, Any] = {"name": name, "path": str(path)}
            try:
                m = RunStore(path).manifest()
                row.update(run_id=m.run_id, created=m.created_at.strftime("%Y-%m-%d %H:%M"),
                           models=", ".join(e.spec for e in m.models), configurations=", ".join(m.configurations),
                           items=", ".join(i.source for i in m.items), finished=m.finished_at is not None,
                           analyses=", ".join(sorted(p.stem for p in (path / "analysis").glob("*.jsonl"))))
            except MathlensError as exc:
                row["error"] = str(exc)
            rows.append(row)
        return rows

    def report(self, name: str) -> Any | None:
        path = find_runs(self.root).get(name)
        if path is None:
            return None
        stamp = _stamp(path)
        with self._lock:
            hit = self._cache.get(name)
            if hit is None or hit[0] != stamp:
                hit = (stamp, make_report([path], self.options))
                self._cache[name] = hit
            return hit[1]


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    timeout = CONNECTION_TIMEOUT_S

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the CLI prints the URL once
        return

    def _send(self, status: HTTPStatus, body: str, nonce: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", csp(nonce))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_HEAD(self) -> None:
        self.do_GET()

    def _host_ok(self) -> bool:
        port = self.server.server_address[1]
        host = (self.headers.get("Host") or "").strip().lower()
        return host in {f"{HOST}:{port}", f"localhost:{port}"}

    def do_GET(self) -> None:
        if not self._host_ok():
            nonce = secrets.token_urlsafe(16)
            body = environment().get_template("error.html.j2").render(
                message="this viewer answers only requests addressed to 127.0.0.1 or localhost", nonce=nonce)
            self._send(HTTPStatus.MISDIRECTED_REQUEST, body, nonce)
            return
        try:
            self._get()
        except Exception as exc:  # a broken run must not take the server down; say what failed
            nonce = secrets.token_urlsafe(16)
            body = environment().get_template("error.html.j2").render(
                message=f"could not build this page ({type(exc).__name__}: {exc})", nonce=nonce)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, body, nonce)

    def _get(self) -> None:
        nonce = secrets.token_urlsafe(16)
        path = unquote(urlsplit(self.path).path)
        state = self.server.state
        env = environment()
        if path in ("/", "/index.html"):
            body = env.get_template("index.html.j2").render(rows=state.index_rows(), root=str(state.root), nonce=nonce)
            self._send(HTTPStatus.OK, body, nonce)
            return
        parts = [p for p in path.split("/") if p]
        if len(parts) in (2, 3) and parts[0] == "run" and (len(parts) == 2 or parts[2] == "report.html"):
            try:
                report = state.report(parts[1])
            except MathlensError as exc:
                body = env.get_template("error.html.j2").render(message=str(exc), nonce=nonce)
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, body, nonce)
                return
            if report is not None:
                self._send(HTTPStatus.OK, report.html(nonce=nonce), nonce)
                return
        if len(parts) == 4 and parts[0] == "run" and parts[2] == "report_questions":
            # a question page of a large run's report, linked from its main page
            report = state.report(parts[1])
            page = next((p for p in report.pages if p.file_name == parts[3]), None) if report is not None else None
            if report is not None and page is not None:
                self._send(HTTPStatus.OK, report.page_html(page, "../report.html", nonce=nonce), nonce)
                return
        body = env.get_template("error.html.j2").render(message=f"not found: {path}", nonce=nonce)
        self._send(HTTPStatus.NOT_FOUND, body, nonce)


class ViewServer(HTTPServer):
    """The HTTP server behind `mathlens view` (bound to 127.0.0.1 only; see the module notes)."""

    request_queue_size = BACKLOG

    def __init__(self, state: ViewState, port: int = 0, options: ViewOptions | None = None) -> None:
        opts = options or ViewOptions(port=port)
        self._pool = ThreadPoolExecutor(max_workers=opts.workers, thread_name_prefix="mathlens-view")
        self._slots = threading.BoundedSemaphore(opts.workers + opts.queued)
        try:
            super().__init__((HOST, opts.port), _Handler)
        except BaseException:
            self._pool.shutdown(wait=False)
            raise
        self.state = state

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand the connection to the pool, or answer 503 at once when every slot is taken."""
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            return
        try:
            self._pool.submit(self._answer, request, client_address)
        except RuntimeError:  # the pool is shut down: the server is closing
            self._slots.release()
            self.shutdown_request(request)

    def _answer(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def _refuse(self, request: socket.socket) -> None:
        try:
            request.settimeout(0.2)
            with contextlib.suppress(OSError):
                request.recv(65536)  # read the request first: closing over unread data would reset the answer
            request.sendall(_BUSY)
        except OSError:
            pass
        finally:
            self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away or timed out is not worth a traceback on the console."""
        return

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)


def serve(server: ViewServer, lifetime_s: float | None = None) -> None:
    """Serve until interrupted, or for `lifetime_s` seconds when given."""
    if lifetime_s is None:
        try:
            server.serve_forever(poll_interval=0.5)
        finally:
            server.server_close()
        return
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        time.sleep(lifetime_s)
    finally:
        server.shutdown()
        server.server_close()

"""`mathlens report` and `mathlens view` end to end: files written, JSON printed, the local server's
index, reports, headers and refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from mathlens.cli.main import app
from mathlens.report.server import ViewServer, ViewState
from mathlens.runs.documents import DocumentSpec
from support import report_run as fx

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"




@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    fx.make_run(root / "first", [fx.SOLUTION, fx.WRONG])
    fx.make_run(root / "second", [fx.WRONG], model="mock/other", limit=1, analyze=False)
    (root / "not-a-run").mkdir()
    return root


def test_report_command_writes_file_and_prints_json(runs_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    doc = fx.cli("report", str(runs_dir / "first"), str(runs_dir / "second"), "--out", str(out))
    assert doc["out"] == str(out) and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [r["run_dir"] for r in doc["runs"]] == [str(runs_dir / "first"), str(runs_dir / "second")]
    assert "overview" in doc["sections"] and doc["questions"] == 2
    assert {s["id"] for s in doc["skipped_sections"]} >= {"maple", "adaptivity"}
    default = fx.cli("report", str(runs_dir / "first"), "--sections", "overview,question")
    assert default["out"] == str(runs_dir / "first" / "report.html") and default["sections"] == ["overview"]


def test_report_quiet_prints_nothing_but_writes_the_page(runs_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "q.html"
    loud = runner.invoke(app, ["report", str(runs_dir / "first"), "--out", str(out)])
    assert loud.exit_code == 0 and "report:" in loud.output and "not shown:" in loud.output
    out.unlink()
    quiet = runner.invoke(app, ["report", str(runs_dir / "first"), "--out", str(out), "-q"])
    assert quiet.exit_code == 0 and quiet.output == "", quiet.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_report_command_user_errors(runs_dir: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(runs_dir / "not-a-run")])
    assert res.exit_code == 2 and "not a run directory" in res.output
    res = runner.invoke(app, ["report", str(runs_dir / "first"), "--sections", "flwo"])
    assert res.exit_code == 2 and "Did you mean 'flow'" in res.output


@pytest.mark.server
def test_view_server_index_reports_and_refusals(runs_dir: Path) -> None:
    server = ViewServer(ViewState(runs_dir), port=0)
    assert server.server_address[0] == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            index = client.get("/")
            assert index.status_code == 200
            assert 'href="/run/first/"' in index.text and 'href="/run/second/"' in index.text
            assert "not-a-run" not in index.text
            page = client.get("/run/first/")
            assert page.status_code == 200 and "Run overview" in page.text
            header_csp = page.headers["content-security-policy"]
            nonce = header_csp.split("'nonce-")[1].split("'")[0]
            assert f'<script nonce="{nonce}">' in page.text  # the served script is the one the policy allows
            assert page.headers["x-content-type-options"] == "nosniff"
            for bad in ("/run/not-a-run/", "/run/../first/", "/run/%2e%2e/etc/", "/etc/passwd", "/run/first/x"):
                assert client.get(bad).status_code == 404, bad
            # a new analysis file shows on reload
            before = client.get("/run/second/").text
            extra = DocumentSpec("extra", 1, _ExtraEntry, _ExtraSummary)
            extra.write(runs_dir / "second", run_id="second", records_sha256="", entries=[],
                        summary=_ExtraSummary(status="ok"))
            after = client.get("/run/second/").text
            assert "analysis/extra.jsonl" not in before and "analysis/extra.jsonl" in after
    finally:
        server.shutdown()
        server.server_close()


class _ExtraEntry(BaseModel):
    n: int


class _ExtraSummary(BaseModel):
    status: str


@pytest.mark.server
def test_view_command_serves_for_its_lifetime(runs_dir: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(runs_dir / ".cache")}
    proc = subprocess.Popen([sys.executable, "-m", "mathlens.cli.main", "view", str(runs_dir), "--port", "0",
                             "--lifetime", "8", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout is not None
        lines = []
        while not lines or lines[-1] != "}":
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            lines.append(line.rstrip("\n"))
        doc = json.loads("\n".join(lines))
        assert doc["url"].startswith("http://127.0.0.1:") and doc["runs"] == ["first", "second"]
        assert httpx.get(doc["url"], timeout=30).status_code == 200
        assert proc.wait(timeout=60) == 0  # stops by itself
    finally:
        if proc.poll() is None:
            proc.kill()

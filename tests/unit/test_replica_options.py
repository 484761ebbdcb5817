"""How the replicas of an openai/ model are given: URL lists, replica files, identity without URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.errors import UserError
from mathlens.models.admission import ReplicaStats
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.registry import get_model


def _urls(**options: object) -> list[str]:
    model = get_model("openai/m", options)
    return model.provider.urls  # type: ignore[attr-defined, no-any-return]


def test_replicas_from_a_list_a_comma_string_and_base_url_first() -> None:
    assert _urls(base_urls="http://a:1/v1/, http://b:2/v1") == ["http://a:1/v1", "http://b:2/v1"]
    assert _urls(base_urls=["http://a/v1", "http://b/v1"], base_url="http://b/v1") == ["http://b/v1", "http://a/v1"]
    assert _urls(base_url="http://only/v1") == ["http://only/v1"]


def test_replica_file_skips_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "replicas.txt"
    path.write_text("# the pool\n\nhttp://gpu1:8000/v1\n  http://gpu2:8000/v1   # older driver\n#http://gpu3/v1\n")
    assert _urls(base_urls=f"@{path}") == ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]


@pytest.mark.parametrize(("text", "message"), [
    ("http://a/v1\nftp://b/v1\n", r"replicas.txt line 2: 'ftp://b/v1' is not an http"),
    ("http://a/v1\nhttp://a:99999/v1\n", r"line 2: 'http://a:99999/v1' is not a valid URL"),
    ("# nothing\n\n", r"lists no URL"),
    ("http://a/v1\nhttp://a/v1/\n", r"http://a/v1 is listed twice"),
])
def test_bad_replica_files_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "replicas.txt"
    path.write_text(text)
    with pytest.raises(UserError, match=message):
        get_model("openai/m", {"base_urls": f"@{path}"})


def test_a_missing_replica_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"replica file .*nope\.txt: cannot read it"):
        get_model("openai/m", {"base_urls": f"@{tmp_path / 'nope.txt'}"})


def test_identity_holds_no_url_and_deployment_separates_setups() -> None:
    one = get_model("openai/m", {"base_url": "http://a/v1"})
    pool = get_model("openai/m", {"base_urls": "http://b/v1,http://c/v1"})
    assert one.identity() == pool.identity() == {"provider": "openai", "model": "m"}
    labelled = get_model("openai/m", {"base_url": "http://a/v1", "deployment": "awq-int4"})
    assert labelled.identity() == {"provider": "openai", "model": "m", "deployment": "awq-int4"}
    msgs = [Message(role="user", content="1+1?")]
    assert one.key(msgs, GenerateConfig()) == pool.key(msgs, GenerateConfig()) != labelled.key(msgs, GenerateConfig())


def test_progress_shows_a_row_per_replica_with_its_counters() -> None:
    from rich.console import Console

    from mathlens.cli.progress import Bar

    bar = Bar(enabled=True)  # the live bar, not started: nothing is drawn
    bar.on_replicas("openai/m", [
        ReplicaStats(url="http://gpu1/v1", state="in", in_flight=3, limit=11, requests=40, ok=39, errors=1,
                     overloaded=0),
        ReplicaStats(url="http://gpu2/v1", state="out", in_flight=0, limit=8, requests=5, ok=0, errors=5,
                     overloaded=2)])
    console = Console(record=True, width=200)
    assert bar.bar is not None
    for part in bar.bar.get_renderables():
        console.print(part)
    text = console.export_text()
    gpu1 = next(line for line in text.splitlines() if "gpu1" in line).split()
    gpu2 = next(line for line in text.splitlines() if "gpu2" in line).split()
    assert gpu1[-7:] == ["in", "40", "39", "1", "0", "3", "11"]
    assert gpu2[-7:] == ["out", "5", "0", "5", "2", "0", "8"]

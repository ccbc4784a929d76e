"""What a run directory or a request holds is not trusted by `confide view`: the server serves no
file outside the run, echoes nothing it read, and
answers only its own host name; a bundle replaces only an empty directory or an earlier
bundle, never writes through a link, leaves no stale file, and skips a bad trace."""

from __future__ import annotations

import http.client
import shutil
from pathlib import Path

import pytest

from confide.errors import ConfideError
from confide.runner import build_experiment, run_experiment
from confide.view import serve_in_thread, write_bundle
from confide.view.site import BUNDLE_MARKER

SECRET = "root:x:0:0:SECRET-LINE-OF-A-FILE-OUTSIDE-THE-RUN"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "run"
    run_experiment(build_experiment({"benchmark": "demo", "output_dir": str(out)}),
                   show_progress=False)
    return out


@pytest.fixture
def run(demo_run: Path, tmp_path: Path) -> Path:
    """A copy of a three-episode demo run whose first trace is a symlink to a file
    outside it."""
    copy = tmp_path / "run"
    shutil.copytree(demo_run, copy, symlinks=True)
    outside = tmp_path / "passwd"
    outside.write_text(SECRET + "\n")
    trace = sorted((copy / "traces").glob("*.jsonl.gz"))[0]
    trace.unlink()
    trace.symlink_to(outside)
    return copy


def _get(port: int, path: str, host: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_server_serves_no_link_out_of_the_run_and_checks_host(run: Path) -> None:
    linked, plain = (p.name.removesuffix(".jsonl.gz")
                     for p in sorted((run / "traces").glob("*.jsonl.gz"))[:2])
    server, _ = serve_in_thread([run])
    port = server.server_address[1]
    try:
        status, body = _get(port, f"/data/episodes/0/{linked}.js", f"127.0.0.1:{port}")
        assert status == 404 and "root:x" not in body and "SECRET" not in body
        assert _get(port, f"/data/episodes/0/{plain}.js", f"127.0.0.1:{port}")[0] == 200
        assert _get(port, "/", f"localhost:{port}")[0] == 200
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", ""):
            status, body = _get(port, "/data/index.js", host)
            assert status == 421 and "confideIndex" not in body, host
    finally:
        server.shutdown()
        server.server_close()


def test_bundle_refuses_a_users_directory_and_a_symlink(run: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "index.html").write_text("my page")
    with pytest.raises(ConfideError, match="holds no earlier bundle"):
        write_bundle([run], mine)
    assert [p.name for p in mine.iterdir()] == ["index.html"]
    assert (mine / "index.html").read_text() == "my page"
    link = tmp_path / "link"
    link.symlink_to(mine)
    with pytest.raises(ConfideError, match="is a symlink"):
        write_bundle([run], link)
    assert [p.name for p in mine.iterdir()] == ["index.html"]
    assert not list(tmp_path.glob(".*tmp"))


def test_bundle_replaces_an_earlier_one_whole_and_skips_a_bad_trace(
    run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "share"
    first = write_bundle([run], out)
    # the symlinked trace's episode is left out (its page and its details), named, not fatal
    details, linked = sorted(first.skipped)
    assert details == linked.replace("/episodes/", "/details/")
    assert "not a regular file inside the run directory" in first.skipped[linked]
    assert (out / "index.html").is_file() and (out / BUNDLE_MARKER).is_file()
    # plant a link to a victim and a stale file into the earlier bundle
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "data" / "index.js").unlink()
    (out / "data" / "index.js").symlink_to(victim)
    (out / "data" / "episodes" / "0" / "stale.js").write_text("old")
    # and make one more trace unreadable: cut in the middle of its gzip stream
    bad = sorted((run / "traces").glob("*.jsonl.gz"))[1]
    bad.write_bytes(bad.read_bytes()[:40])
    second = write_bundle([run], out)
    assert victim.read_text() == "precious"
    assert not (out / "data" / "index.js").is_symlink()
    assert (out / "data" / "index.js").read_text().startswith("confideIndex(")
    assert not (out / "data" / "episodes" / "0" / "stale.js").exists()
    assert len(second.skipped) == 4 and linked in second.skipped
    episodes = list((out / "data" / "episodes" / "0").glob("*.js"))
    # 3 assets, the index, the usage, the marker; a page and its details per episode
    assert len(episodes) == (second.files - 6) / 2 == 1
    assert not list(tmp_path.glob(".*tmp"))


def test_a_run_file_linking_out_of_the_run_is_not_read(run: Path, tmp_path: Path) -> None:
    from confide.runner.rundir import readable_run

    (run / "summary.csv").unlink()
    (run / "summary.csv").symlink_to(tmp_path / "passwd")
    with pytest.raises(ConfideError, match=r"summary\.csv links to a file outside the run"):
        readable_run(run)

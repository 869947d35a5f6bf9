"""The listener under other RF versions (each from its own venv, prepared by
``python tests/fixtures/generate.py --venvs-only ...``; .ci/run does it). Robot runs there
with only the capture side on PYTHONPATH (see ``robot`` in test_listener); the checks run here."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.generate import VERSIONS, _suite_dir
from oracle import dump_store
from robot_runs import robot

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
@pytest.mark.parametrize("version", ["7.0.1", "7.2.2", "7.4.2"])
def test_live_capture_equals_the_import_under(version: str, store: str, tmp_path: Path,
                                              request: pytest.FixtureRequest) -> None:
    def new_store(name: str) -> Path | str:
        if store == "sqlite":
            return tmp_path / f"{name}.sqlite3"
        return str(request.getfixturevalue("pg_server").new_database())

    suite = _suite_dir(tmp_path, VERSIONS[version])
    outputs = ["output.xml"] + (["output.json"] if version >= "7.2" else [])
    for output in outputs:
        db = new_store(f"live-{output}")
        done = robot("--listener", f"rf_log_listener;db={db}", "--loglevel", "DEBUG",
                     "--output", str(tmp_path / output), str(suite), cwd=tmp_path, version=version)
        assert done.returncode == 11 and "rf_log_listener" not in done.stderr, done.stderr[-2000:]
        live_conn = open_store(db)
        live = dump_store(live_conn, 1)
        ref_conn = open_store(new_store(f"imported-{output}"))
        reference = dump_store(ref_conn, import_result(ref_conn, tmp_path / output,
                                                       stable_window=0).run_id)
        flattened = next(n["id"] for n in live["nodes"] if n.get("name") == "Flattened") + "-"
        for key in ("nodes", "messages"):
            assert [x for x in live[key] if not x["id"].startswith(flattened)] == [
                x for x in reference[key] if not x["id"].startswith(flattened)], (version, output, key)
        assert live["errors"] == reference["errors"]
        assert live_conn.execute("SELECT status, rf_version, dry_run FROM runs").fetchone() == (
            "complete", version, 0)


@pytest.mark.parametrize("version", ["6.1.1", "7.0.1"])
def test_a_dry_run_is_marked_as_such_under(version: str, tmp_path: Path) -> None:
    """RF 7 captures live (robot says it is a dry run); RF 6 imports the output file at the
    end, which does not say it: read from its statuses (``rows.ran_dry``). The fixtures'
    suites use every construct the version has."""
    suite = _suite_dir(tmp_path, VERSIONS[version])
    db = tmp_path / "store.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--dryrun", "--output",
                 str(tmp_path / "output.xml"), str(suite), cwd=tmp_path, version=version)
    assert done.returncode > 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    origin = "import" if version < "7" else "listener"
    assert open_store(db).execute("SELECT origin, status, dry_run FROM runs").fetchall() == [
        (origin, "complete", 1)]
    imported = open_store(tmp_path / "imported.sqlite3")
    run_id = import_result(imported, tmp_path / "output.xml", stable_window=0).run_id
    assert imported.execute("SELECT dry_run FROM runs WHERE run_id = ?", (run_id,)).fetchone() == (1,)


def test_rf6_warns_once_and_imports_the_output_file(tmp_path: Path) -> None:
    suite = _suite_dir(tmp_path, VERSIONS["6.1.1"])
    db = tmp_path / "store.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--output", str(tmp_path / "output.xml"),
                 "--console", "dotted", "--report", str(tmp_path / "report.html"), str(suite),
                 cwd=tmp_path, version="6.1.1")
    assert done.returncode == 11
    assert done.stderr.count("[ WARN ] rf_log_listener") == 1 and "RF 6.x" in done.stderr
    # the import inside robot (reading the suite files beside it) leaves robot's console alone
    assert f"Report:  {tmp_path / 'report.html'}" in done.stdout, done.stdout
    conn = open_store(db)
    assert conn.execute("SELECT origin, status, rf_version, total, failed FROM runs").fetchall() == [
        ("import", "complete", "6.1.1", 22, 11)]

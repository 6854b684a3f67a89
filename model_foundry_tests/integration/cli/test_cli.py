"""The command line as a user runs it: a real process, a real nats-server, a real DuckDB file:
the integration tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb

from model_foundry.devtools.ports import free_port
from model_foundry_tests.shared.cli.cli import (
    _cells,
    cli,
)


def test_unreachable_nats_is_one_line_without_traceback() -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    result = cli("nats", "setup", env={"NATS_URL": url})
    assert result.returncode == 1
    assert url in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_query_on_a_missing_file_says_what_to_do(tmp_path: Path) -> None:
    result = cli("query", "SELECT 1", env={"MODEL_FOUNDRY_DUCKDB": str(tmp_path / "none.duckdb")})
    assert result.returncode == 1
    assert "no DuckDB file" in result.stderr and "Traceback" not in result.stderr


def test_bad_sql_is_duckdbs_sentence_and_query_stays_read_only(tmp_path: Path) -> None:
    db = tmp_path / "q.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS i")
    env = {"MODEL_FOUNDRY_DUCKDB": str(db)}
    typo = cli("query", "SELEC i FROM t", env=env)
    assert typo.returncode == 1
    assert "Traceback" not in typo.stderr
    assert len(typo.stderr.strip().splitlines()) == 1
    assert "syntax error" in typo.stderr.lower()
    write = cli("query", "INSERT INTO t VALUES (2)", env=env)
    assert write.returncode == 1 and "Traceback" not in write.stderr
    assert "read-only" in write.stderr.lower()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
    ok = cli("query", "SELECT i FROM t", env=env)
    assert ok.returncode == 0 and _cells(ok.stdout) == [["i"], ["int32"], ["1"]]


def test_query_shows_null_and_the_column_types_as_duckdb_draws_them(tmp_path: Path) -> None:
    db = tmp_path / "q.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(
            "CREATE TABLE t AS SELECT i, CASE WHEN i % 2 = 1 THEN 'odd' END AS label, "
            "i / 2 AS half, '{\"k\": 1}'::JSON AS doc FROM range(4) r(i)"
        )
    env = {"MODEL_FOUNDRY_DUCKDB": str(db)}
    result = cli("query", "SELECT * FROM t ORDER BY i", env=env)
    assert result.returncode == 0, result.stderr
    assert "NaN" not in result.stdout and "None" not in result.stdout
    header, types, *rows = _cells(result.stdout)
    assert header == ["i", "label", "half", "doc"]
    assert types == ["int64", "varchar", "double", "json"]
    assert [row[1] for row in rows] == ["NULL", "odd", "NULL", "odd"]
    assert rows[2] == ["2", "NULL", "1.0", '{"k": 1}']

    many = cli("query", "SELECT i FROM range(1000) r(i)", "--max-rows", "6", env=env)
    assert many.returncode == 0, many.stderr
    values = [row[0] for row in _cells(many.stdout)[2:] if row[0] != "·"]
    assert values == ["0", "1", "2", "997", "998", "999"]
    # The footer counts every row; DuckDB wraps it to the table's width.
    footer = " ".join(many.stdout.rsplit("┘", 1)[1].split())
    assert footer == "1000 rows (6 shown)", many.stdout


def test_dataset_names_that_would_leave_the_export_folder_are_refused(tmp_path: Path) -> None:
    env = {"MODEL_FOUNDRY_DATA_DIR": str(tmp_path / "data")}
    for flag, value in [
        ("--name", "../../escape"),
        ("--name", str(tmp_path / "absolute")),
        ("--version", "../v1"),
        ("--name", ".hidden"),
    ]:
        result = cli("dataset", "collect", flag, value, "--no-chat-sessions", env=env)
        assert result.returncode == 1, (flag, value, result.stdout)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "is not allowed" in result.stderr
    assert not (tmp_path / "escape").exists() and not (tmp_path / "absolute").exists()
    assert not (tmp_path / "data" / "datasets").exists()


def test_product_code_never_imports_the_dev_tools() -> None:
    # defs/ and lib/ must work where the simulator, benchmarks and local NATS are not wanted.
    code = textwrap.dedent(
        """
        import pkgutil, sys, importlib
        import model_foundry.definitions, model_foundry.defs, model_foundry.lib
        for pkg in (model_foundry.defs, model_foundry.lib):
            for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
                importlib.import_module(mod.name)
        print(sorted(m for m in sys.modules if m.startswith("model_foundry.devtools")))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_collect_and_recipe_run_reach_their_first_request_without_dagster() -> None:
    # What `dataset collect` and `recipe run` import before their first request leaves
    # (`bench client`'s start-up): the lib's run, not Dagster nor, without NATS_URL, nats.
    code = textwrap.dedent(
        """
        import sys
        import model_foundry.cli.datasets, model_foundry.cli.recipes
        from model_foundry.lib.recipes.collection import collect_samples
        from model_foundry.lib.recipes.generate import run_recipe
        from model_foundry.lib.slots.source import slot_source_from_env
        from model_foundry.lib.slots.dispatcher import batch
        slot_source_from_env().dispatch_options()
        print(sorted({m.split(".")[0] for m in sys.modules} & {"dagster", "nats", "sqlalchemy"}))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "MODEL_FOUNDRY_"))}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"

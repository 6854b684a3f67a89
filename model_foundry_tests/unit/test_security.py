"""Security: NATS with TLS and credentials, secrets kept out of Dagster and DuckDB, SQL only
with parameters: the unit tests."""

from __future__ import annotations

import ast
import json

import pytest

from model_foundry.defs.resources import (
    nats_resource_from_env,
)
from model_foundry.lib.nats.connection import (
    nats_client_from_env,
)
from model_foundry_tests.shared.security import (
    PACKAGE,
    PASSWORD,
    REVIEWED,
    SQL_METHODS,
    TOKEN,
    USER,
)

# Distinctive values, so a leak anywhere is found by a plain substring search.


# --- SQL text is never built from data ---------------------------------------------------
# Interpolations read and accepted, each with the reason it cannot carry event content.


def _is_placeholder_list(node: ast.expr) -> bool:
    """``",".join("?" * n)``, ``", ".join(["?"] * n)`` or ``",".join("?" for _ in x)``."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and isinstance(node.func.value, ast.Constant)
        and len(node.args) == 1
    ):
        return False
    arg = node.args[0]
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mult):
        unit = arg.left
        if isinstance(unit, ast.List) and len(unit.elts) == 1:
            unit = unit.elts[0]
        return isinstance(unit, ast.Constant) and set(str(unit.value)) <= set("?(), ")
    if isinstance(arg, ast.GeneratorExp | ast.ListComp):
        return isinstance(arg.elt, ast.Constant) and set(str(arg.elt.value)) <= set("?(), ")
    return False


class _SqlChecker(ast.NodeVisitor):
    """Finds SQL handed to DuckDB that is formatted from anything but placeholders/constants.

    A plain variable passed through (DDL constants, the user's own ``query`` text) is not
    formatting; an f-string, ``%`` or ``.format`` is, and each value it interpolates must be
    a constant, an ALL_CAPS module constant, or a name bound to a placeholder list.
    """

    def __init__(self, module: ast.Module, filename: str) -> None:
        self.filename = filename
        self.problems: list[str] = []
        self.constants = {
            target.id
            for stmt in module.body
            if isinstance(stmt, ast.Assign)
            for target in stmt.targets
            if isinstance(target, ast.Name) and target.id.isupper()
        }
        self.bindings: list[dict[str, ast.expr]] = [{}]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        scope: dict[str, ast.expr] = {}
        for inner in ast.walk(node):
            if isinstance(inner, ast.Assign):
                for target in inner.targets:
                    if isinstance(target, ast.Name):
                        scope[target.id] = inner.value
        self.bindings.append(scope)
        self.generic_visit(node)
        self.bindings.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _safe_value(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            if node.id in self.constants:
                return True
            bound = self.bindings[-1].get(node.id)
            return bound is not None and (
                _is_placeholder_list(bound) or isinstance(bound, ast.Constant)
            )
        return _is_placeholder_list(node)

    def _check_sql(self, node: ast.expr, line: int) -> None:
        if isinstance(node, ast.Name):
            bound = self.bindings[-1].get(node.id)
            if bound is not None and not isinstance(bound, ast.Name):
                self._check_sql(bound, line)
            return
        if isinstance(node, ast.JoinedStr):
            for part in node.values:
                if isinstance(part, ast.FormattedValue) and not self._safe_value(part.value):
                    if (self.filename, ast.unparse(part.value)) in REVIEWED:
                        continue
                    self.problems.append(
                        f"{self.filename}:{line}: f-string SQL interpolates "
                        f"{ast.unparse(part.value)!r}"
                    )
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            self.problems.append(f"{self.filename}:{line}: SQL built with % formatting")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            self._check_sql(node.left, line)
            self._check_sql(node.right, line)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
        ):
            self.problems.append(f"{self.filename}:{line}: SQL built with .format()")

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr in SQL_METHODS and node.args:
            self._check_sql(node.args[0], node.lineno)
        self.generic_visit(node)


def sql_problems(source: str, filename: str) -> list[str]:
    module = ast.parse(source)
    checker = _SqlChecker(module, filename)
    checker.visit(module)
    return checker.problems


def test_sql_checker_tells_placeholders_from_interpolated_data() -> None:
    safe = """
TABLE = "pipeline_event_inbox"
def f(con, ids, rows):
    placeholders = ",".join("?" * len(ids))
    con.execute(f"SELECT * FROM {TABLE} WHERE event_id IN ({placeholders})", ids)
    marks = ", ".join(["(?, ?)"] * len(rows))
    con.execute("INSERT INTO t VALUES " + f"{marks}", rows)
    con.sql("SELECT 1")
"""
    assert sql_problems(safe, "safe.py") == []
    unsafe = {
        "f-string": "def f(con, e):\n    con.execute(f\"SELECT * FROM t WHERE id = '{e}'\")\n",
        "bound f-string": (
            "def f(con, e):\n    q = f\"DELETE FROM t WHERE id = '{e.event_id}'\"\n"
            "    con.execute(q)\n"
        ),
        "percent": "def f(con, e):\n    con.execute(\"SELECT * FROM t WHERE id = '%s'\" % e)\n",
        "format": "def f(con, e):\n    con.sql(\"SELECT '{}'\".format(e))\n",
        "concatenation": 'def f(con, e):\n    con.execute("SELECT \'" + f"{e}\'")\n',
    }
    for kind, source in unsafe.items():
        assert sql_problems(source, f"{kind}.py"), f"the checker missed {kind}"


def test_product_sql_is_built_only_with_parameters() -> None:
    # Every module of the package, however deep the tree gets (it once globbed one folder).
    files = sorted(PACKAGE.rglob("*.py"))
    names = {str(p.relative_to(PACKAGE)) for p in files}
    assert {
        "lib/storage.py",
        "lib/inbox/store.py",
        "lib/inbox/drain/loop.py",
        "cli/events.py",
    } <= names
    assert len(files) >= 40, names
    problems = [
        problem
        for path in files
        for problem in sql_problems(path.read_text(), str(path.relative_to(PACKAGE)))
    ]
    assert problems == [], "\n".join(problems)


def test_dagster_shows_the_secret_variable_names_not_their_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NATS_USER", USER)
    monkeypatch.setenv("NATS_PASSWORD", PASSWORD)
    monkeypatch.setenv("NATS_TOKEN", TOKEN)
    # What the code location hands Dagster, which the UI shows as the resource's config.
    shown = json.dumps(nats_resource_from_env().model_dump(), default=str)
    assert "NATS_PASSWORD" in shown and "NATS_TOKEN" in shown
    assert PASSWORD not in shown and TOKEN not in shown
    # The CLI, outside Dagster, gets the values.
    resolved = nats_client_from_env()
    assert (resolved.password, resolved.token) == (PASSWORD, TOKEN)

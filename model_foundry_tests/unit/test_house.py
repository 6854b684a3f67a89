"""The house stays in small units: no class past 200 lines, no function past 100.

A unit past these bounds has almost always grown a second responsibility (the lease limiter
reached 461 lines, the dispatcher's batch 336, before they were split); the test names the
unit so the split happens when it is still cheap.
"""

from __future__ import annotations

import ast

from model_foundry_tests.tiers import REPO_ROOT

PACKAGE = REPO_ROOT / "model_foundry"
MAX_CLASS_LINES = 200
MAX_FUNCTION_LINES = 100


def oversized(source: str, filename: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            bound = MAX_CLASS_LINES
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            bound = MAX_FUNCTION_LINES
        else:
            continue
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        if lines > bound:
            found.append(f"{filename}:{node.lineno} {node.name} is {lines} lines (> {bound})")
    return found


def test_the_checker_counts_decorators_out_and_bodies_in() -> None:
    long_function = "def f():\n" + "    x = 1\n" * 100
    assert oversized(long_function, "f.py") == ["f.py:1 f is 101 lines (> 100)"]
    assert oversized("def f():\n" + "    x = 1\n" * 99, "f.py") == []
    long_class = "class C:\n" + "    x = 1\n" * 200
    assert oversized(long_class, "c.py") == ["c.py:1 C is 201 lines (> 200)"]


def test_no_class_or_function_of_the_package_is_oversized() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 80, "the package was not found"
    problems = [
        problem
        for path in files
        for problem in oversized(path.read_text(), str(path.relative_to(PACKAGE)))
    ]
    assert problems == [], "\n".join(problems)

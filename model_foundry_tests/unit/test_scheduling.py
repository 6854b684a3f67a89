"""The units of work pytest-xdist hands its workers (``tiers.work_unit``)."""

from __future__ import annotations

import ast

from model_foundry_tests.tiers import REPO_ROOT, SERIAL_STACKS, work_unit


def _test_names(path: str) -> set[str]:
    tree = ast.parse((REPO_ROOT / path).read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def test_every_daemon_stack_entry_still_names_a_test() -> None:
    # A renamed test would silently leave the group and run beside another stack.
    for entry in SERIAL_STACKS:
        path, _, name = entry.partition("::")
        names = _test_names(path)
        if name:
            assert name in names, f"{entry}: no such test"
        else:
            assert any(n.startswith("test_") for n in names), f"{path}: no test in it"


def test_modules_are_units_unit_tests_go_alone_and_daemon_stacks_go_together() -> None:
    system = "model_foundry_tests/system/test_real_llama.py"
    assert work_unit(f"{system}::test_a[x]") == work_unit(f"{system}::test_b") == system
    integration = "model_foundry_tests/integration/test_defs.py"
    assert work_unit(f"{integration}::test_a") == integration
    unit = "model_foundry_tests/unit/test_house.py::test_a"
    assert work_unit(unit) == unit
    stacks = {
        work_unit("model_foundry_tests/system/test_daemon_freshness.py::test_x"),
        work_unit("model_foundry_tests/system/test_pipeline_daemon.py::test_y[postgres]"),
        work_unit(
            "model_foundry_tests/system/cli/test_cli.py::"
            "test_bench_e2e_runs_the_daemon_and_loses_nothing"
        ),
    }
    assert len(stacks) == 1
    # The rest of that CLI module is a unit of its own, not part of the stacks.
    cli = "model_foundry_tests/system/cli/test_cli.py"
    assert work_unit(f"{cli}::test_nats_setup_is_idempotent") == cli

"""The README stays a manual: short, links that lead somewhere, the inbox's real columns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from model_foundry.lib import storage
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text outside code blocks, where links and headings are real."""
    return FENCE.sub("", text)


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in HEADING.findall(_prose(page.read_text(encoding="utf-8"))):
        base = _anchor(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchors.add(base if count == 0 else f"{base}-{count}")
    return anchors


def _relative_links(page: Path) -> list[str]:
    prose = INLINE_CODE.sub("", _prose(page.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(prose) if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def test_readme_is_a_manual_of_at_most_15_kb() -> None:
    size = README.stat().st_size
    assert size <= 15 * 1024, f"README.md is {size} bytes; move details into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_to_a_file_and_anchor_that_exist(page: Path) -> None:
    broken = []
    for target in _relative_links(page):
        path_part, _, anchor = target.partition("#")
        file = (page.parent / path_part).resolve() if path_part else page
        if not file.exists():
            broken.append(f"{target}: no file {file.relative_to(ROOT)}")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_checker_sees_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page: the first\n\n[ok](#a-page-the-first) [gone](nowhere.md) [bad](#nothing)\n"
        "```\n[in code](ignored.md)\n```\n`[inline](ignored.md)` [web](https://example.org)\n"
    )
    assert _relative_links(page) == ["#a-page-the-first", "nowhere.md", "#nothing"]
    assert _anchors(page) == {"a-page-the-first"}


def _readme_row(table: str) -> list[str]:
    """The cells (name, key, columns) of ``table``'s row in the README's tables section."""
    row = next(
        line
        for line in README.read_text(encoding="utf-8").splitlines()
        if line.startswith(f"| `{table}` |")
    )
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def test_the_readme_gives_the_inbox_the_columns_and_key_a_fresh_file_has(tmp_path: Path) -> None:
    with storage.connect(tmp_path / "fresh.duckdb") as con:
        real = [
            name
            for (name,) in con.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'pipeline_event_inbox' ORDER BY ordinal_position"
            ).fetchall()
        ]
        key_columns = con.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() "
            "WHERE table_name = 'pipeline_event_inbox' AND constraint_type = 'PRIMARY KEY'"
        ).fetchall()
    assert real, "a fresh file has no pipeline_event_inbox"
    _, key, columns = _readme_row("pipeline_event_inbox")
    assert [column.strip() for column in columns.split(",")] == real
    documented_key = [] if key == "none" else re.findall(r"\w+", key)
    assert documented_key == (list(key_columns[0][0]) if key_columns else [])


def test_every_test_docs_guarantees_names_exists() -> None:
    """docs/guarantees.md names files (``path.py``, ``path.py::test``) and, after a file,
    bare test names of that file; each must exist in the suite."""
    tests_root = ROOT / "model_foundry_tests"
    text = (ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")
    every_test = "\n".join(p.read_text(encoding="utf-8") for p in tests_root.rglob("test_*.py"))
    missing = []
    for file, test in re.findall(r"`((?:\w+/)*test_\w+\.py)(?:::(\w+))?", text):
        path = tests_root / file
        if not path.exists():
            missing.append(file)
        elif test and f"def {test}(" not in path.read_text(encoding="utf-8"):
            missing.append(f"{file}::{test}")
    for test in re.findall(r"`(test_\w+)(?:\[[^\]`]*\])?`", text):
        if f"def {test}(" not in every_test:
            missing.append(test)
    assert not missing, "docs/guarantees.md names tests that do not exist: " + ", ".join(missing)

"""Validation columns: lengths, regular expressions, JSON schemas, and Python that must parse
(parsed, never run)."""

from __future__ import annotations

from model_foundry.lib.recipes.spec import Column
from model_foundry.lib.recipes.validators import validate


def test_each_check_says_why_a_value_fails() -> None:
    lengths = Column("v", "validation", target="a", min_length=3, max_length=5)
    assert validate(lengths, "abcd") is None
    assert validate(lengths, "ab") == "shorter than 3 characters"
    assert validate(lengths, "abcdef") == "longer than 5 characters"
    regex = Column("v", "validation", target="a", regex=r"^def \w+\(")
    assert validate(regex, "def f(x): pass") is None
    assert validate(regex, "lambda: 1") == "does not match '^def \\\\w+\\\\('"
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    as_schema = Column("v", "validation", target="a", json_schema=schema)
    assert validate(as_schema, '{"n": 2}') is None
    assert validate(as_schema, {"n": 2}) is None
    assert (
        validate(as_schema, '{"n": "two"}')
        == "breaks its JSON schema ('two' is not of type 'integer')"
    )
    assert validate(as_schema, "n = 2").startswith("not JSON (")


def test_python_is_parsed_and_never_run(tmp_path) -> None:
    check = Column("v", "validation", target="a", python=True)
    marker = tmp_path / "ran"
    code = f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n"
    assert validate(check, code) is None
    assert validate(check, f"Here it is:\n```python\n{code}```\nDone.") is None
    assert not marker.exists()
    assert validate(check, "def f(:\n  pass").startswith("Python that does not parse (")

"""Validation columns: lengths, regular expressions, JSON schemas, and Python that must parse
(parsed, never run)."""

from __future__ import annotations

from model_foundry.lib.recipes.columns.validation import ValidationColumn, similarity


def test_each_check_says_why_a_value_fails() -> None:
    lengths = ValidationColumn(name="v", target="a", min_length=3, max_length=5)
    assert lengths.cause("abcd") is None
    assert lengths.cause("ab") == "shorter than 3 characters"
    assert lengths.cause("abcdef") == "longer than 5 characters"
    regex = ValidationColumn(name="v", target="a", regex=r"^def \w+\(")
    assert regex.cause("def f(x): pass") is None
    assert regex.cause("lambda: 1") == "does not match '^def \\\\w+\\\\('"
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    as_schema = ValidationColumn(name="v", target="a", json_schema=schema)
    assert as_schema.cause('{"n": 2}') is None
    assert as_schema.cause({"n": 2}) is None
    assert (
        as_schema.cause('{"n": "two"}') == "breaks its JSON schema ('two' is not of type 'integer')"
    )
    assert as_schema.cause("n = 2").startswith("not JSON (")


def test_python_is_parsed_and_never_run(tmp_path) -> None:
    check = ValidationColumn(name="v", target="a", python=True)
    marker = tmp_path / "ran"
    code = f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n"
    assert check.cause(code) is None
    assert check.cause(f"Here it is:\n```python\n{code}```\nDone.") is None
    assert not marker.exists()
    assert check.cause("def f(:\n  pass").startswith("Python that does not parse (")


def test_similarity_is_character_trigrams_alike_in_both_languages() -> None:
    assert similarity("", "") == 1.0 and similarity("abc", "") == 0.0
    # Case, width (NFKC) and white space do not count.
    assert similarity("The  Backup\nfinished", "the backup finished") == 1.0
    assert similarity("ＤｕｃｋＤＢ", "duckdb") == 1.0
    assert similarity("a", "a") == 1.0 and similarity("ab", "abc") == 0.0
    assert similarity("abcd", "bcde") == 1 / 3  # {abc, bcd} and {bcd, cde}
    assert similarity("x y z", "z y x") == similarity("z y x", "x y z")


# Faithful paraphrases (what a round trip through another language gives back) and unrelated
# texts: the example's min_similarity of 0.3 lies between the two kinds, in both languages.
PARAPHRASES = [
    ("The backup finished without errors.", "The backup completed with no errors."),
    ("The user asked how to compact a DuckDB file and the assistant suggested running "
     "CHECKPOINT and then copying the database to a new file.",
     "The user asked how to shrink a DuckDB file, and the assistant recommended running "
     "CHECKPOINT and copying the database into a new file."),
    ("ユーザーはDuckDBファイルを圧縮する方法を尋ね、"
     "アシスタントはCHECKPOINTを実行することを提案しました。",
     "ユーザーはDuckDBファイルを小さくする方法を質問し、"
     "アシスタントはCHECKPOINTの実行を勧めました。"),
]  # fmt: skip
UNRELATED = [
    ("The user asked how to compact a DuckDB file and the assistant suggested CHECKPOINT.",
     "Someone wanted the weather forecast for Tokyo tomorrow and got a link."),
    ("ユーザーはDuckDBファイルを圧縮する方法を尋ねました。",
     "明日の東京の天気予報についての質問でした。"),
]  # fmt: skip


def test_the_examples_threshold_tells_a_paraphrase_from_another_text() -> None:
    assert all(similarity(a, b) >= 0.3 for a, b in PARAPHRASES)
    assert all(similarity(a, b) < 0.3 for a, b in UNRELATED)


def test_similar_to_compares_the_target_with_the_rows_other_column() -> None:
    check = ValidationColumn(name="v", target="back", similar_to="summary", min_similarity=0.3)
    original, paraphrase = PARAPHRASES[1]
    assert check.cause(paraphrase, {"summary": original, "back": paraphrase}) is None
    other = UNRELATED[0][1]
    assert check.cause(other, {"summary": original, "back": other}) == (
        f"less similar to summary than 0.3 ({similarity(other, original):.2f})"
    )
    # A structured column is compared as its JSON text, as the other checks read it.
    as_json = ValidationColumn(name="v", target="b", similar_to="a", min_similarity=1)
    assert as_json.cause({"k": "v"}, {"a": '{"k": "v"}'}) is None

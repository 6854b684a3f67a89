"""dataset_judgements on the slot simulator: grandpa judges the standard profile's answers in:
the unit tests."""

from __future__ import annotations

import json

import duckdb
import pytest

from model_foundry_tests.shared.defs.datasets.judgements import (  # noqa: F401 - fixtures are found by name
    TOPICS,
    judged_fixture,
)

pytestmark = pytest.mark.timeout(300)


def test_every_comparison_is_asked_in_both_orders_and_parses(judged) -> None:
    meta = judged["judgements"]
    # Two chat roles in the standard profile: one pair per prompt, two asks each.
    assert meta["answer_pairs"] == len(TOPICS)
    assert meta["judgements_written"] == 2 * len(TOPICS)
    assert meta["judgements_unparsed"] == 0
    with duckdb.connect(str(judged["db"]), read_only=True) as con:
        firsts = con.execute(
            "SELECT answer_a, answer_b, list(first ORDER BY first), any_value(judge_slot) "
            "FROM dataset_judgements GROUP BY ALL"
        ).fetchall()
    assert len(firsts) == len(TOPICS)
    assert all(f == ["a", "b"] and slot == "grandpa" for _, _, f, slot in firsts)


def test_pairs_count_only_where_both_orders_agree(judged) -> None:
    meta = judged["judgements"]
    with duckdb.connect(str(judged["db"]), read_only=True) as con:
        verdicts = con.execute(
            "SELECT list(winner ORDER BY first) FROM dataset_judgements GROUP BY answer_a, answer_b"
        ).fetchall()
    agreed = sum(1 for (w,) in verdicts if w[0] == w[1] != "tie")
    assert meta["preference_pairs"] == agreed
    assert meta["ties"] == len(verdicts) - agreed
    assert meta["agreement_rate"] == round(agreed / len(verdicts), 3)
    # The simulator's verdicts are drawn from each ask's text, so both outcomes occur.
    assert 0 < agreed < len(verdicts)


def test_the_card_reports_the_judge(judged) -> None:
    card = (judged["folder"] / "README.md").read_text(encoding="utf-8")
    manifest = json.loads((judged["folder"] / "manifest.json").read_text(encoding="utf-8"))
    pref = manifest["preference"]
    assert pref["judge_models"] == ["glm-5.1"]
    assert "Judge model: glm-5.1" in card
    assert f"agreement rate:\n  {pref['agreement_rate']:.1%}" in card
    assert "| language | model | opponent |" in card
    assert sum(pref["pairs_by_pairing"].values()) == pref["pairs"]


def test_model_preferences_gives_win_rates_per_language(judged) -> None:
    with duckdb.connect(str(judged["db"]), read_only=True) as con:
        rows = con.execute(
            "SELECT language, model, opponent, comparisons, wins, losses, ties, win_rate "
            "FROM model_preferences ORDER BY ALL"
        ).fetchall()
    assert {r[0] for r in rows} == {"en", "ja"}
    by = {(lang, m, o): (n, w, lo, t) for lang, m, o, n, w, lo, t, _ in rows}
    for (lang, m, o), (n, w, lo, t) in by.items():
        # Each side's wins are the other side's losses.
        assert by[(lang, o, m)] == (n, lo, w, t)
    assert sum(n for n, *_ in by.values()) == 2 * judged["judgements"]["preference_pairs"]


# A planted token (random-looking, the shape of a GitHub classic token): the simulator's
# answers echo the prompt's words, so it reaches the answers and the pairs too.

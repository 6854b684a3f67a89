"""``dataset_judgements``: one row per judge answer, and ``model_preferences``, the models'
win rates from the judgements both orders agree on.

Every comparison of two answers to a prompt is asked twice, the answers swapped; each ask is
one row. ``answer_a`` and ``answer_b`` are the two samples' request keys in sorted order
(``a`` < ``b``), whichever came first in the prompt (``first``), so both asks of a
comparison share them and ``winner`` (``a``, ``b`` or ``tie``) is in those terms. A judge
answer that is not the JSON the schema asks for is a row with ``status`` ``unparsed`` and its
``cause``.

The table has no key: a version's rows are written once per request key, checked against the
version's own rows (``lib/datasets/judge.py``), so the check does not grow with other
versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table, View


@dataclass(frozen=True)
class JudgementRow:
    """One judge answer about answers ``a`` and ``b`` to prompt ``prompt_id``."""

    dataset: str
    version: str
    prompt_id: str
    language: str
    answer_a: str
    answer_b: str
    # Which answer the judge read first: "a" or "b".
    first: str
    model_a: str | None
    model_b: str | None
    slot_a: str | None
    slot_b: str | None
    request_key: str
    judge_slot: str
    judge_model: str
    status: str
    score_a: int | None
    score_b: int | None
    winner: str | None
    reason: str | None
    cause: str | None
    run_id: str | None
    created_at: datetime | None = field(default=None, metadata=FILLED_BY_DB)


DATASET_JUDGEMENTS: Table[JudgementRow] = Table(
    "dataset_judgements",
    JudgementRow,
    """
    CREATE TABLE IF NOT EXISTS dataset_judgements (
        dataset VARCHAR NOT NULL,
        version VARCHAR NOT NULL,
        prompt_id VARCHAR NOT NULL,
        language VARCHAR NOT NULL,
        answer_a VARCHAR NOT NULL,
        answer_b VARCHAR NOT NULL,
        first VARCHAR NOT NULL,
        model_a VARCHAR,
        model_b VARCHAR,
        slot_a VARCHAR,
        slot_b VARCHAR,
        request_key VARCHAR NOT NULL,
        judge_slot VARCHAR NOT NULL,
        judge_model VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        score_a INTEGER,
        score_b INTEGER,
        winner VARCHAR,
        reason VARCHAR,
        cause VARCHAR,
        run_id VARCHAR,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

# Each comparison's two asks as one row: agreed when both parsed and name the same winner.
JUDGED_PAIRS_SQL = """
SELECT dataset, version, prompt_id, any_value(language) AS language, answer_a, answer_b,
       any_value(model_a) AS model_a, any_value(model_b) AS model_b, judge_slot,
       any_value(judge_model) AS judge_model,
       count(*) FILTER (WHERE status = 'ok') AS parsed,
       count(DISTINCT winner) FILTER (WHERE status = 'ok') AS verdicts,
       any_value(winner) FILTER (WHERE status = 'ok') AS winner,
       avg(score_a) FILTER (WHERE status = 'ok') AS score_a,
       avg(score_b) FILTER (WHERE status = 'ok') AS score_b
FROM dataset_judgements
GROUP BY dataset, version, prompt_id, answer_a, answer_b, judge_slot
"""

MODEL_PREFERENCES = View(
    "model_preferences",
    f"""
    WITH pairs AS ({JUDGED_PAIRS_SQL}),
    judged AS (
        SELECT *, parsed = 2 AND verdicts = 1 AND winner <> 'tie' AS agreed
        FROM pairs WHERE parsed = 2 AND model_a IS DISTINCT FROM model_b
    ),
    sides AS (
        SELECT dataset, version, language, judge_model, model_a AS model, model_b AS opponent,
               agreed, agreed AND winner = 'a' AS won FROM judged
        UNION ALL
        SELECT dataset, version, language, judge_model, model_b, model_a,
               agreed, agreed AND winner = 'b' FROM judged
    )
    SELECT dataset, version, language, judge_model, model, opponent,
           count(*) FILTER (WHERE agreed) AS comparisons,
           count(*) FILTER (WHERE won) AS wins,
           count(*) FILTER (WHERE agreed AND NOT won) AS losses,
           count(*) FILTER (WHERE NOT agreed) AS ties,
           round(count(*) FILTER (WHERE won) / nullif(count(*) FILTER (WHERE agreed), 0), 3)
               AS win_rate
    FROM sides
    GROUP BY ALL
    """,
)

__all__ = ["DATASET_JUDGEMENTS", "JUDGED_PAIRS_SQL", "MODEL_PREFERENCES", "JudgementRow"]

"""``dataset_judgements``: one row per judge answer, and ``model_preferences``, the models'
win rates from the comparisons both orders agree on.

Every comparison of two answers to a prompt is asked twice, the answers swapped; each ask is
one row. ``answer_a`` and ``answer_b`` are the two samples' request keys in sorted order
(``a`` < ``b``), whichever came first in the prompt (``first``), so both asks of a
comparison share them and ``winner`` (``a``, ``b`` or ``tie``) is in those terms. A judge
answer that is not the JSON the schema asks for is a row with ``status`` ``unparsed`` and its
``cause``.

The rows are filled from the judge recipe's cells (``lib/recipes/collect_judge.py``), once per
request key and version, checked against the version's own rows, so the check does not grow
with other versions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from model_foundry.lib.tables.base import FILLED_BY_DB, Table, View
from model_foundry.lib.tables.recipes import IDENT_SQL


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


def comparison_id(a_key: str, b_key: str) -> str:
    """A comparison's row in its judge recipe and its preference pair's id: as
    ``JUDGED_PAIRS_SQL`` spells it, ``left(sha256(answer_a || chr(0) || answer_b), 16)``."""
    return hashlib.sha256(f"{a_key}\x00{b_key}".encode()).hexdigest()[:16]


# Each comparison's two asks as one row, with its judge recipe cell's verdict
# (``lib/recipes/collect_judge.py``: recipe ``judge_<dataset>``, row ``comparison_id``):
# ``winner`` is ``a``, ``b`` or ``tie`` by the pairwise judge's one rule (an answer wins when
# both orders prefer it), and NULL when the cell was held back or is missing; ``score_a`` and
# ``score_b`` are each answer's mean over both orders.
JUDGED_PAIRS_SQL = f"""
SELECT j.dataset, j.version, j.prompt_id, any_value(j.language) AS language, j.answer_a,
       j.answer_b, any_value(j.model_a) AS model_a, any_value(j.model_b) AS model_b,
       j.judge_slot, any_value(j.judge_model) AS judge_model,
       count(*) FILTER (WHERE j.status = 'ok') AS parsed,
       any_value(c.winner) AS winner, any_value(c.score_a) AS score_a,
       any_value(c.score_b) AS score_b
FROM dataset_judgements j
LEFT JOIN (
    SELECT recipe, version, row_id,
           CASE value ->> '$.winner' WHEN 'answer_a' THEN 'a' WHEN 'answer_b' THEN 'b'
                ELSE 'tie' END AS winner,
           TRY_CAST(value -> '$.quality_a' AS DOUBLE) AS score_a,
           TRY_CAST(value -> '$.quality_b' AS DOUBLE) AS score_b
    FROM dataset_recipe_cells
    WHERE column_name = 'verdict' AND status = 'ok' AND starts_with(recipe, 'judge_')
    QUALIFY row_number() OVER (PARTITION BY recipe, version, row_id ORDER BY created_at DESC) = 1
) c
  ON c.recipe = 'judge_' || {IDENT_SQL.format("j.dataset")}
  AND c.version = j.version
  AND c.row_id = left(sha256(j.answer_a || chr(0) || j.answer_b), 16)
GROUP BY j.dataset, j.version, j.prompt_id, j.answer_a, j.answer_b, j.judge_slot
"""

MODEL_PREFERENCES = View(
    "model_preferences",
    f"""
    WITH pairs AS ({JUDGED_PAIRS_SQL}),
    judged AS (
        SELECT *, winner <> 'tie' AS agreed
        FROM pairs WHERE winner IS NOT NULL AND model_a IS DISTINCT FROM model_b
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

__all__ = [
    "DATASET_JUDGEMENTS",
    "JUDGED_PAIRS_SQL",
    "MODEL_PREFERENCES",
    "JudgementRow",
    "comparison_id",
]

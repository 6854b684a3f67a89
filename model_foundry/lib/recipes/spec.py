"""A dataset recipe read from its YAML: the columns, each checked, or one sentence naming the
file and the field that is wrong.

A recipe is a small graph of named columns (the vocabulary of NVIDIA NeMo Data Designer's
column types, which a user of it will recognise): ``seed`` (a field of the seed rows),
``sampler``, ``expression``, ``llm_text``, ``llm_structured``, ``llm_judge`` and
``validation``. An ``llm_text`` column gives a ``prompt`` (chat turns) or a ``text`` (the bare
text, as the pipeline's translations send a translator slot). Everything that can be checked
without the slot file or the seed rows is checked here: field names and types, templates that
name columns the recipe lacks, cycles, JSON schemas. What needs the slot file (roles) or the
seed rows (their fields) is checked by the run (``generate.py``), in the same form of
sentence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from model_foundry.lib.errors import UserError
from model_foundry.lib.gates.config import GateConfig, GateConfigError, gate_settings
from model_foundry.lib.gates.verdict import REASON_MAX
from model_foundry.lib.recipes.templates import TemplateError, columns_read

COLUMN_TYPES = (
    "seed",
    "sampler",
    "expression",
    "llm_text",
    "llm_structured",
    "llm_judge",
    "validation",
)
LLM_TYPES = ("llm_text", "llm_structured", "llm_judge")
SAMPLERS = ("category", "uniform", "choice")
JUDGE_ROLE = "judge"
# Column names become SQL column names of the recipe's view and Jinja names: identifiers only.
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

_COMMON = {"name", "type", "description"}
# What an llm_text and an llm_structured column both take.
_LLM_FIELDS = {"role", "system", "prompt", "params", "samples", "thinking"}
_FIELDS: Mapping[str, set[str]] = {
    "seed": {"field"},
    "sampler": {"sampler", "values", "weights", "low", "high", "integer"},
    "expression": {"expr"},
    "llm_text": _LLM_FIELDS | {"text", "source_lang", "target_lang"},
    "llm_structured": _LLM_FIELDS | {"output_format"},
    "llm_judge": {"role", "system", "prompt", "params", "thinking", "scores", "compare"},
    "validation": {
        "target",
        "json_schema",
        "regex",
        "min_length",
        "max_length",
        "python",
        "similar_to",
        "min_similarity",
    },
}
# A text column's fields: the bare text and the languages sent with it as request parameters.
TEXT_FIELDS = ("text", "source_lang", "target_lang")
# The two orders of a pairwise judge: the first column's answer read first, then the second's.
PAIR_ORDERS = ("ab", "ba")
_TOP = {
    "name",
    "description",
    "seed",
    "rows",
    "random_seed",
    "schedule",
    "columns",
    "gates",
    "export",
}
_EXPORT = {"on_schedule"}


class RecipeError(UserError):
    """A recipe that cannot run; the message is one sentence naming the file and the field."""


@dataclass(frozen=True)
class Score:
    """One score of a judge's rubric: an integer from ``low`` to ``high``."""

    name: str
    description: str
    low: int = 1
    high: int = 5


@dataclass(frozen=True)
class Column:
    """One column of a recipe, as its YAML gave it (fields of other types are None)."""

    name: str
    type: str
    reads: tuple[str, ...] = ()
    # seed: the seed rows' field it takes (YAML ``field``)
    seed_field: str | None = None
    # sampler
    sampler: str | None = None
    values: tuple[Any, ...] = ()
    weights: tuple[float, ...] | None = None
    low: float | None = None
    high: float | None = None
    integer: bool = False
    # expression
    expr: str | None = None
    # llm_*
    role: str | None = None
    system: str | None = None
    prompt: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    samples: int = 1
    thinking: bool | None = None
    output_format: Mapping[str, Any] | None = None
    # llm_text asked with the bare text (a translator's body), not chat turns; its languages
    # are templates too, sent as the request's ``source_lang``/``target_lang``.
    text: str | None = None
    source_lang: str | None = None
    target_lang: str | None = None
    scores: tuple[Score, ...] = ()
    # llm_judge, pairwise: the two columns compared (YAML ``compare``), a's then b's
    compare: tuple[str, ...] = ()
    # validation
    target: str | None = None
    json_schema: Mapping[str, Any] | None = None
    regex: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    python: bool = False
    # validation: the column the target is compared with (validators.similarity)
    similar_to: str | None = None
    min_similarity: float | None = None

    @property
    def is_llm(self) -> bool:
        return self.type in LLM_TYPES

    @property
    def is_pairwise(self) -> bool:
        return self.type == "llm_judge" and bool(self.compare)

    def schema(self) -> Mapping[str, Any] | None:
        """The JSON schema the answer is constrained to (structured and judge columns). A
        pairwise judge's is one order's verdict: each score for the answer read first
        (``<score>_1``) and second (``<score>_2``)."""
        if self.type == "llm_structured":
            return self.output_format
        if self.type == "llm_judge":
            suffixes = ("_1", "_2") if self.is_pairwise else ("",)
            props: dict[str, Any] = {
                f"{s.name}{suffix}": {"type": "integer", "minimum": s.low, "maximum": s.high}
                for s in self.scores
                for suffix in suffixes
            }
            props["reason"] = {"type": "string", "maxLength": REASON_MAX}
            return {
                "type": "object",
                "properties": props,
                "required": sorted(props),
                "additionalProperties": False,
            }
        return None

    def sub_columns(self) -> dict[str, str]:
        """Typed sub-columns of a structured answer: property -> JSON type. A pairwise
        judge's value is not one verdict but both orders' (see ``generate.pairwise_value``):
        the winner, whether the orders agree, and each score of each answer (their mean)."""
        if self.is_pairwise:
            out = {"winner": "string", "agree": "boolean"}
            for s in self.scores:
                out |= {f"{s.name}_a": "number", f"{s.name}_b": "number"}
            return out
        schema = self.schema()
        if not schema:
            return {}
        props = schema.get("properties") or {}
        return {k: str(v.get("type", "string")) for k, v in props.items() if isinstance(v, dict)}


@dataclass(frozen=True)
class Seed:
    """Where seed rows come from: a file (JSONL, CSV, Parquet) or read-only SQL.
    ``incremental`` names an integer column of the query's rows that grows with every write
    (the inbox's ``commit_seq``): each run takes only the rows past the last run's mark."""

    file: str | None = None
    sql: str | None = None
    incremental: str | None = None


@dataclass(frozen=True)
class Recipe:
    """A checked recipe; ``source`` is the file it came from (for sentences)."""

    name: str
    source: str
    columns: tuple[Column, ...]
    seed: Seed | None = None
    rows: int | None = None
    random_seed: int = 0
    schedule: str | None = None
    description: str | None = None
    gates: GateConfig = field(default_factory=GateConfig)
    gates_on: bool = True
    # ``export: {on_schedule: true}``: the recipe's job (and so its schedule) exports too.
    export_on_schedule: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def roles(self) -> dict[str, str]:
        """column -> role of each LLM column."""
        return {c.name: str(c.role) for c in self.columns if c.is_llm}

    def error(self, where: str, problem: str) -> RecipeError:
        return RecipeError(f"{self.source}: {where}: {problem}")


def _fail(source: str, where: str, problem: str) -> RecipeError:
    return RecipeError(f"{source}: {where}: {problem}")


def _str(source: str, where: str, value: Any, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(source, where, "must be a non-empty string")
    return value


def _int(source: str, where: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise _fail(source, where, f"must be an integer >= {low}")
    return value


def _number(source: str, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(source, where, "must be a number")
    return float(value)


def _check_schema(source: str, where: str, value: Any, *, structured: bool) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(source, where, "must be a JSON schema (a mapping)")
    try:
        jsonschema.Draft202012Validator.check_schema(value)
    except jsonschema.SchemaError as exc:
        at = ".".join(str(p) for p in exc.absolute_path)
        raise _fail(
            source, f"{where}.{at}" if at else where, f"is not a valid JSON schema ({exc.message})"
        ) from None
    if structured and (
        value.get("type") != "object" or not isinstance(value.get("properties"), dict)
    ):
        raise _fail(source, where, "must be an object schema with properties (its sub-columns)")
    for prop in (value.get("properties") or {}) if structured else ():
        if not _NAME.match(str(prop)):
            raise _fail(source, f"{where}.properties.{prop}", "must be a lower-case identifier")
    return value


def _templates(column: Mapping[str, Any], kind: str) -> dict[str, str]:
    keys = {
        "expression": ("expr",),
        "llm_text": ("system", "prompt", *TEXT_FIELDS),
        "llm_structured": ("system", "prompt"),
        "llm_judge": ("system", "prompt"),
    }.get(kind, ())
    return {k: column[k] for k in keys if column.get(k) is not None}


def _sampler(source: str, at: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    kind = raw.get("sampler")
    if kind not in SAMPLERS:
        raise _fail(source, f"{at}.sampler", f"must be one of {', '.join(SAMPLERS)}")
    out: dict[str, Any] = {"sampler": kind}
    if kind in ("category", "choice"):
        values = raw.get("values")
        if not isinstance(values, list) or not values:
            raise _fail(source, f"{at}.values", "must be a non-empty list")
        out["values"] = tuple(values)
        weights = raw.get("weights")
        if weights is not None:
            if kind == "choice":
                raise _fail(source, f"{at}.weights", "is for the category sampler only")
            if not isinstance(weights, list) or len(weights) != len(values):
                raise _fail(source, f"{at}.weights", "must be a list as long as values")
            out["weights"] = tuple(_number(source, f"{at}.weights", w) for w in weights)
            if any(w < 0 for w in out["weights"]) or not sum(out["weights"]):
                raise _fail(source, f"{at}.weights", "must be >= 0 with a positive sum")
    else:
        out["low"] = _number(source, f"{at}.low", raw.get("low"))
        out["high"] = _number(source, f"{at}.high", raw.get("high"))
        if out["high"] < out["low"]:
            raise _fail(source, f"{at}.high", "must be >= low")
        out["integer"] = bool(raw.get("integer", False))
    return out


def _text(source: str, at: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """An ``llm_text`` column's ``text`` and its languages, or {} for one with a prompt."""
    if raw.get("text") is None:
        given = [k for k in TEXT_FIELDS if raw.get(k) is not None]
        if given:
            raise _fail(source, f"{at}.{given[0]}", "is for a column with text (the bare "
                        "text a translator is sent), not a prompt")  # fmt: skip
        return {}
    if raw.get("prompt") is not None:
        raise _fail(source, f"{at}.text", "and prompt are both given: a column sends either "
                    "the bare text or a prompt")  # fmt: skip
    if raw.get("system") is not None:
        raise _fail(source, f"{at}.system", "is not sent with text (the bare text has no "
                    "system turn)")  # fmt: skip
    params = raw.get("params") or {}
    for key in ("source_lang", "target_lang"):
        if isinstance(params, dict) and key in params:
            raise _fail(source, f"{at}.params.{key}", f"is set by the column's {key}")
    return {k: _str(source, f"{at}.{k}", raw.get(k), required=k == "text") for k in TEXT_FIELDS}


def _llm(source: str, at: str, raw: Mapping[str, Any], kind: str) -> dict[str, Any]:
    default_role = JUDGE_ROLE if kind == "llm_judge" else None
    text = _text(source, at, raw) if kind == "llm_text" else {}
    out: dict[str, Any] = {
        "role": _str(source, f"{at}.role", raw.get("role", default_role)),
        "prompt": None if text else _str(source, f"{at}.prompt", raw.get("prompt")),
        "system": _str(source, f"{at}.system", raw.get("system"), required=False),
        **text,
    }
    params = raw.get("params") or {}
    if not isinstance(params, dict):
        raise _fail(source, f"{at}.params", "must be a mapping of request parameters")
    if "json_schema" in params:
        raise _fail(source, f"{at}.params.json_schema", "is set by output_format, not params")
    out["params"] = dict(params)
    if kind != "llm_judge":
        out["samples"] = _int(source, f"{at}.samples", raw.get("samples", 1), 1)
    thinking = raw.get("thinking")
    if thinking is not None and not isinstance(thinking, bool):
        raise _fail(source, f"{at}.thinking", "must be true or false")
    out["thinking"] = thinking
    if kind == "llm_structured":
        out["output_format"] = _check_schema(
            source, f"{at}.output_format", raw.get("output_format"), structured=True
        )
    if kind == "llm_judge":
        out["scores"] = _scores(source, f"{at}.scores", raw.get("scores"))
        if raw.get("compare") is not None:
            out["compare"] = _compare(source, f"{at}.compare", raw["compare"])
    return out


def _compare(source: str, at: str, raw: Any) -> tuple[str, str]:
    """The two columns a pairwise judge compares; that both exist is checked with the graph."""
    if not isinstance(raw, list) or len(raw) != 2 or not all(isinstance(c, str) for c in raw):
        raise _fail(source, at, "must name two columns, [a, b]")
    if raw[0] == raw[1]:
        raise _fail(source, at, f"compares column {raw[0]!r} with itself")
    return raw[0], raw[1]


def _scores(source: str, at: str, raw: Any) -> tuple[Score, ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail(source, at, "must be a non-empty list of {name, description, min, max}")
    scores = []
    for i, s in enumerate(raw):
        where = f"{at}[{i}]"
        if not isinstance(s, dict):
            raise _fail(source, where, "must be a mapping with name and description")
        name = _str(source, f"{where}.name", s.get("name"))
        if not _NAME.match(str(name)) or name == "reason":
            raise _fail(
                source, f"{where}.name", "must be a lower-case identifier other than reason"
            )
        low = _int(source, f"{where}.min", s.get("min", 1), 0)
        high = _int(source, f"{where}.max", s.get("max", 5), low + 1)
        description = _str(source, f"{where}.description", s.get("description"))
        scores.append(Score(str(name), str(description), low, high))
    return tuple(scores)


def _validation(source: str, at: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"target": _str(source, f"{at}.target", raw.get("target"))}
    if raw.get("json_schema") is not None:
        out["json_schema"] = _check_schema(
            source, f"{at}.json_schema", raw["json_schema"], structured=False
        )
    if raw.get("regex") is not None:
        pattern = _str(source, f"{at}.regex", raw["regex"])
        try:
            re.compile(str(pattern))
        except re.error as exc:
            raise _fail(source, f"{at}.regex", f"is not a regular expression ({exc})") from None
        out["regex"] = pattern
    for key in ("min_length", "max_length"):
        if raw.get(key) is not None:
            out[key] = _int(source, f"{at}.{key}", raw[key], 0)
    python = raw.get("python", False)
    if not isinstance(python, bool):
        raise _fail(source, f"{at}.python", "must be true or false")
    out["python"] = python
    out.update(_similarity(source, at, raw, str(out["target"])))
    if len(out) == 2 and not python:
        raise _fail(source, at, "checks nothing: give json_schema, regex, min_length, "
                    "max_length, similar_to or python: true")  # fmt: skip
    return out


def _similarity(source: str, at: str, raw: Mapping[str, Any], target: str) -> dict[str, Any]:
    """``similar_to`` and ``min_similarity``, given together or not at all."""
    other, low = raw.get("similar_to"), raw.get("min_similarity")
    if other is None and low is None:
        return {}
    if other is None:
        raise _fail(source, f"{at}.similar_to", "is needed with min_similarity (the column "
                    "the target is compared with)")  # fmt: skip
    if low is None:
        raise _fail(source, f"{at}.min_similarity", "is needed with similar_to (a number "
                    "from 0 to 1)")  # fmt: skip
    name = str(_str(source, f"{at}.similar_to", other))
    if name == target:
        raise _fail(source, f"{at}.similar_to", "must name a column other than the target")
    value = _number(source, f"{at}.min_similarity", low)
    if not 0 <= value <= 1:
        raise _fail(source, f"{at}.min_similarity", "must be a number from 0 to 1")
    return {"similar_to": name, "min_similarity": value}


def _column(source: str, i: int, raw: Any, seen: set[str]) -> Column:
    at = f"columns[{i}]"
    if not isinstance(raw, dict):
        raise _fail(source, at, "must be a mapping with name and type")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _fail(source, f"{at}.name", "must be a lower-case identifier (a-z, 0-9, _)")
    at = f"columns.{name}"
    if name in seen:
        raise _fail(source, f"{at}.name", "is given to two columns")
    kind = raw.get("type")
    if kind not in COLUMN_TYPES:
        raise _fail(source, f"{at}.type", f"unknown column type {kind!r} (known: "
                    f"{', '.join(COLUMN_TYPES)})")  # fmt: skip
    unknown = sorted(set(raw) - _COMMON - _FIELDS[kind])
    if unknown:
        raise _fail(source, f"{at}.{unknown[0]}", f"is not a field of a {kind} column")
    fields: dict[str, Any] = {}
    if kind == "seed":
        fields["seed_field"] = _str(source, f"{at}.field", raw.get("field", name))
    elif kind == "sampler":
        fields = _sampler(source, at, raw)
    elif kind == "expression":
        fields["expr"] = _str(source, f"{at}.expr", raw.get("expr"))
    elif kind == "validation":
        fields = _validation(source, at, raw)
    else:
        fields = _llm(source, at, raw, kind)
    reads: set[str] = set()
    for key, template in _templates(raw, kind).items():
        try:
            reads |= columns_read(template)
        except TemplateError as exc:
            raise _fail(source, f"{at}.{key}", f"template {exc}") from None
    if kind == "validation":
        reads.add(str(fields["target"]))
        if fields.get("similar_to"):
            reads.add(str(fields["similar_to"]))
    reads |= set(fields.get("compare", ()))
    return Column(name=name, type=kind, reads=tuple(sorted(reads)), **fields)


def _check_graph(source: str, columns: Sequence[Column]) -> None:
    names = {c.name for c in columns}
    for c in columns:
        for read in c.reads:
            if read not in names:
                key = "target" if c.type == "validation" and read == c.target else "prompt"
                if c.type == "validation" and read == c.similar_to:
                    key = "similar_to"
                if c.type == "expression":
                    key = "expr"
                if read in c.compare:
                    key = "compare"
                key = next((k for k in TEXT_FIELDS if read in _reads(getattr(c, k))), key)
                raise _fail(source, f"columns.{c.name}.{key}",
                            f"names column {read!r}, which the recipe does not have")  # fmt: skip
            if read == c.name:
                raise _fail(source, f"columns.{c.name}", "reads itself")
    cycle = find_cycle(columns)
    if cycle:
        raise _fail(source, f"columns.{cycle[0]}",
                    f"is part of a cycle ({' -> '.join([*cycle, cycle[0]])})")  # fmt: skip


def _reads(template: str | None) -> set[str]:
    return columns_read(template) if template is not None else set()


def find_cycle(columns: Sequence[Column]) -> list[str] | None:
    """A cycle among the columns' reads (in order), or None."""
    reads = {c.name: c.reads for c in columns}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for nxt in reads.get(name, ()):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :]
            if nxt in reads and not state.get(nxt) and (found := visit(nxt)):
                return found
        path.pop()
        state[name] = 2
        return None

    for c in columns:
        if not state.get(c.name) and (found := visit(c.name)):
            return found
    return None


def levels(recipe: Recipe) -> list[list[Column]]:
    """The columns in waves: each wave reads only columns of earlier waves."""
    done: set[str] = set()
    waves: list[list[Column]] = []
    left = list(recipe.columns)
    while left:
        wave = [c for c in left if set(c.reads) <= done]
        waves.append(wave)
        done |= {c.name for c in wave}
        left = [c for c in left if c.name not in done]
    return waves


def dependants(recipe: Recipe, name: str) -> set[str]:
    """Columns that read ``name``, directly or through others."""
    out: set[str] = set()
    frontier = {name}
    while frontier:
        frontier = {c.name for c in recipe.columns if set(c.reads) & frontier} - out
        out |= frontier
    return out


def _seed(source: str, raw: Any) -> Seed:
    if not isinstance(raw, dict) or len({"file", "sql"} & set(raw)) != 1:
        raise _fail(source, "seed", "must give exactly one of file or sql")
    unknown = sorted(set(raw) - {"file", "sql", "incremental"})
    if unknown:
        raise _fail(source, f"seed.{unknown[0]}",
                    "is not a field of seed (file, sql, incremental)")  # fmt: skip
    if "incremental" in raw:
        if "sql" not in raw:
            raise _fail(source, "seed.incremental", "is for an sql seed only")
        column = raw["incremental"]
        if not isinstance(column, str) or not _NAME.match(column):
            raise _fail(source, "seed.incremental",
                        "must name a column of the query's rows, such as commit_seq")  # fmt: skip
        return Seed(sql=_str(source, "seed.sql", raw["sql"]), incremental=column)
    if "file" in raw:
        path = str(_str(source, "seed.file", raw["file"]))
        if not path.lower().endswith((".jsonl", ".csv", ".parquet")):
            raise _fail(source, "seed.file", "must be a .jsonl, .csv or .parquet file")
        return Seed(file=path)
    return Seed(sql=_str(source, "seed.sql", raw["sql"]))


def _export_on_schedule(source: str, raw: Any) -> bool:
    """``export: {on_schedule: true|false}``; unset: false."""
    if raw is None:
        return False
    if not isinstance(raw, dict):
        raise _fail(source, "export", "must be a mapping such as {on_schedule: true}")
    unknown = sorted(set(raw) - _EXPORT)
    if unknown:
        raise _fail(source, f"export.{unknown[0]}",
                    f"is not a field of export ({', '.join(sorted(_EXPORT))})")  # fmt: skip
    on = raw.get("on_schedule", False)
    if not isinstance(on, bool):
        raise _fail(source, "export.on_schedule", "must be true or false")
    return on


def parse_recipe(raw: Any, source: str, *, default_name: str | None = None) -> Recipe:
    """A checked :class:`Recipe` from a defs.yaml's ``attributes``; :class:`RecipeError`
    naming ``source`` and the field otherwise."""
    if not isinstance(raw, dict):
        raise _fail(source, "attributes", "must be a mapping (name, seed, columns, ...)")
    unknown = sorted(set(raw) - _TOP)
    if unknown:
        raise _fail(source, f"attributes.{unknown[0]}", "is not a field of a recipe")
    name = raw.get("name", default_name)
    if not isinstance(name, str) or not _NAME.match(name):
        raise _fail(source, "attributes.name", "must be a lower-case identifier (a-z, 0-9, _)")
    columns_raw = raw.get("columns")
    if not isinstance(columns_raw, list) or not columns_raw:
        raise _fail(source, "columns", "must be a non-empty list of columns")
    seen: set[str] = set()
    columns = []
    for i, c in enumerate(columns_raw):
        column = _column(source, i, c, seen)
        seen.add(column.name)
        columns.append(column)
    _check_graph(source, columns)
    seed = _seed(source, raw["seed"]) if raw.get("seed") is not None else None
    if any(c.type == "seed" for c in columns) and seed is None:
        raise _fail(source, "seed", "is needed: the recipe has seed columns")
    rows = raw.get("rows")
    if rows is not None:
        rows = _int(source, "rows", rows, 1)
    elif seed is None:
        raise _fail(source, "rows", "is needed without a seed (how many rows to generate)")
    gates_raw = raw.get("gates", True)
    gates_on = gates_raw is not False
    try:
        gates = gate_settings(f"{source}: gates", gates_raw if isinstance(gates_raw, dict) else {})
    except GateConfigError as exc:
        raise RecipeError(str(exc)) from None
    return Recipe(
        name=name,
        source=source,
        columns=tuple(columns),
        seed=seed,
        rows=rows,
        random_seed=_int(source, "random_seed", raw.get("random_seed", 0), 0),
        schedule=_str(source, "schedule", raw.get("schedule"), required=False),
        description=_str(source, "description", raw.get("description"), required=False),
        gates=gates,
        gates_on=gates_on,
        export_on_schedule=_export_on_schedule(source, raw.get("export")),
        raw=raw,
    )


__all__ = [
    "COLUMN_TYPES",
    "JUDGE_ROLE",
    "LLM_TYPES",
    "PAIR_ORDERS",
    "TEXT_FIELDS",
    "Column",
    "Recipe",
    "RecipeError",
    "Score",
    "Seed",
    "dependants",
    "find_cycle",
    "levels",
    "parse_recipe",
]

"""LLM columns: ``llm_text`` and ``llm_structured``, and what every column asked of a slot
shares (its role, system turn, prompt, request parameters, samples and thinking). The judge
(``judge.py``) is one of them too.

An ``llm_text`` column gives a ``prompt`` (chat turns), a ``text`` (the bare text, as the
pipeline's translations send a translator slot, with the languages sent as the request's
``source_lang``/``target_lang``) or ``messages``: a column whose value is the whole chat (a
list of ``{role, content}`` turns, or its JSON), sent as it is, as ``dataset collect`` sends a
prompt file's system and user turns. ``seed_per_sample: true`` sends sample ``i`` with
``seed: i`` (as ``dataset collect`` always has) instead of a seed hashed from the row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import Field

from model_foundry.lib.llm import Body, Request
from model_foundry.lib.recipes.columns.base import Column, ColumnAttributes, template_reads
from model_foundry.lib.recipes.problems import NAME, Problems
from model_foundry.lib.recipes.templates import render

# A text column's fields: the bare text and the languages sent with it as request parameters.
TEXT_FIELDS = ("text", "source_lang", "target_lang")
# What a column sends instead of a prompt: one of these, or the prompt.
_SENDS = ("text", "messages")


class LlmAttributes(ColumnAttributes):
    role: str | None = Field(default=None, description="The slot role asked (the slot file's).")
    system: str | None = Field(default=None, description="The system turn, a Jinja template.")
    prompt: str | None = Field(default=None, description="The user turn, a Jinja template.")
    params: dict[str, Any] | None = Field(
        default=None, description="Request parameters (max_tokens, temperature, seed, ...)."
    )
    thinking: bool | None = Field(default=None, description="Ask a thinking model to think.")


class _Sampled(LlmAttributes):
    samples: int = Field(default=1, description="Answers asked per row.")


class TextAttributes(_Sampled):
    type: Literal["llm_text"]
    text: str | None = Field(
        default=None, description="The bare text sent instead of a prompt (a translator's)."
    )
    source_lang: str | None = Field(default=None, description="Sent with text: its language.")
    target_lang: str | None = Field(default=None, description="Sent with text: the language "
                                    "to translate to.")  # fmt: skip
    messages: str | None = Field(
        default=None,
        description="A column whose value is the whole chat ({role, content} turns), sent "
        "instead of a prompt.",
    )
    seed_per_sample: bool = Field(
        default=False, description="Send sample i with seed i, not a seed hashed from the row."
    )


class StructuredAttributes(_Sampled):
    type: Literal["llm_structured"]
    output_format: dict[str, Any] = Field(
        description="The answer's JSON schema: an object whose properties are sub-columns."
    )


@dataclass(frozen=True, kw_only=True)
class LlmColumn(Column):
    """A column whose cells are asked of a slot role."""

    is_llm: ClassVar[bool] = True
    template_fields: ClassVar[tuple[str, ...]] = ("system", "prompt")
    default_role: ClassVar[str | None] = None

    role: str
    prompt: str | None = None
    system: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    samples: int = 1
    thinking: bool | None = None

    @classmethod
    def parse_llm(cls, raw: Mapping[str, Any], at: str, problems: Problems, *,
                  with_prompt: bool = True, sampled: bool = True) -> dict[str, Any]:  # fmt: skip
        out: dict[str, Any] = {}
        with problems.field():
            out["role"] = problems.text(f"{at}.role", raw.get("role", cls.default_role))
        if with_prompt:
            with problems.field():
                out["prompt"] = problems.text(f"{at}.prompt", raw.get("prompt"))
        with problems.field():
            out["system"] = problems.text(f"{at}.system", raw.get("system"), required=False)
        params = raw.get("params") or {}
        if not isinstance(params, dict):
            problems.add(f"{at}.params", "must be a mapping of request parameters")
        elif "json_schema" in params:
            problems.add(f"{at}.params.json_schema", "is set by output_format, not params")
        else:
            out["params"] = dict(params)
        if sampled:
            with problems.field():
                out["samples"] = problems.integer(f"{at}.samples", raw.get("samples", 1), 1)
        if raw.get("thinking") is not None:
            with problems.field():
                out["thinking"] = problems.flag(f"{at}.thinking", raw["thinking"])
        return out

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        return cls.parse_llm(raw, at, problems)

    def reading(self) -> dict[str, frozenset[str]]:
        # A name missing from the system turn is reported at the prompt, as it always was.
        return {"prompt": template_reads(self.system, self.prompt)}

    def slot_role(self) -> str | None:
        return self.role

    def sample_seed(self, sample: int) -> int | None:
        """The ``seed`` its sample's request is sent with, when the column gives it (None:
        one hashed from the row, the column and the sample)."""
        return None

    @property
    def sends_bare_text(self) -> bool:
        """Whether it sends the bare text (a translation), not chat turns."""
        return False

    def request_params(self, seed: int) -> dict[str, Any]:
        """Its request's parameters, with the cell's ``seed``. As the judge does: the schema
        is a parameter, part of the key, spelled per runtime."""
        params: dict[str, Any] = {**self.params, "seed": seed}
        if self.thinking is not None:
            params["thinking"] = self.thinking
        schema = self.schema()
        if schema is not None:
            params["json_schema"] = dict(schema)
        return params

    def turns(self, values: Mapping[str, Any]) -> list[dict[str, str]]:
        messages = []
        if self.system:
            messages.append({"role": "system", "content": render(self.system, values)})
        messages.append({"role": "user", "content": render(str(self.prompt), values)})
        return messages

    def requests(self, task: str, seed: int, values: Mapping[str, Any],
                 row_id: str) -> list[Request]:  # fmt: skip
        """What one of its cells asks: one request (a pairwise judge: two)."""
        body = Body(messages=self.turns(values))
        return [Request(task, self.role, body, params=self.request_params(seed))]

    def value_of(self, answers: list[Any], *, held_back: bool) -> Any:
        """A cell's value from its requests' answers (parsed when it has a schema)."""
        return answers[0]

    def chat_turns(self, values: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Its request as the export's chat shows it: (role, text) turns."""
        turns = [("user", render(str(self.prompt), values))]
        if self.system:
            turns.insert(0, ("system", render(self.system, values)))
        return turns


@dataclass(frozen=True, kw_only=True)
class TextColumn(LlmColumn):
    column_type: ClassVar[str] = "llm_text"
    attributes: ClassVar[type[ColumnAttributes]] = TextAttributes
    template_fields: ClassVar[tuple[str, ...]] = ("system", "prompt", *TEXT_FIELDS)
    chat_rank: ClassVar[int] = 2

    text: str | None = None
    source_lang: str | None = None
    target_lang: str | None = None

    messages: str | None = None
    seed_per_sample: bool = False

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        out = cls._parse_seeds(raw, at, problems)
        sent = [k for k in _SENDS if raw.get(k) is not None]
        if len(sent) > 1:
            problems.add(f"{at}.{sent[1]}", f"and {sent[0]} are both given: a column sends "
                         "one of text, messages or a prompt")  # fmt: skip
            return out
        if sent == ["messages"]:
            return out | cls._parse_messages(raw, at, problems)
        if raw.get("text") is None:
            given = [k for k in TEXT_FIELDS if raw.get(k) is not None]
            if given:
                problems.add(f"{at}.{given[0]}", "is for a column with text (the bare text a "
                             "translator is sent), not a prompt")  # fmt: skip
            return out | cls.parse_llm(raw, at, problems)
        if raw.get("prompt") is not None:
            problems.add(f"{at}.text", "and prompt are both given: a column sends either the "
                         "bare text or a prompt")  # fmt: skip
        if raw.get("system") is not None:
            problems.add(f"{at}.system", "is not sent with text (the bare text has no system "
                         "turn)")  # fmt: skip
        params = raw.get("params") or {}
        for key in ("source_lang", "target_lang"):
            if isinstance(params, dict) and key in params:
                problems.add(f"{at}.params.{key}", f"is set by the column's {key}")
        for key in TEXT_FIELDS:
            with problems.field():
                out[key] = problems.text(f"{at}.{key}", raw.get(key), required=key == "text")
        return out | cls.parse_llm(raw, at, problems, with_prompt=False)

    @classmethod
    def _parse_seeds(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        if raw.get("seed_per_sample") is None:
            return {}
        with problems.field():
            on = problems.flag(f"{at}.seed_per_sample", raw["seed_per_sample"])
            params = raw.get("params")
            if on and isinstance(params, dict) and "seed" in params:
                raise problems.error(f"{at}.params.seed", "is set by seed_per_sample (sample i "
                                     "is sent with seed i)")  # fmt: skip
            return {"seed_per_sample": on}
        return {}

    @classmethod
    def _parse_messages(cls, raw: Mapping[str, Any], at: str,
                        problems: Problems) -> dict[str, Any]:  # fmt: skip
        # The whole chat comes from the column: a prompt or system turn would be a second one.
        for key in ("prompt", "system", *TEXT_FIELDS):
            if raw.get(key) is not None:
                problems.add(f"{at}.{key}", "is not sent with messages (the column named "
                             "there holds the whole chat)")  # fmt: skip
        out: dict[str, Any] = {}
        with problems.field():
            name = raw["messages"]
            if not isinstance(name, str) or not NAME.match(name):
                raise problems.error(f"{at}.messages", "must name a column of the recipe "
                                     "(a lower-case identifier)")  # fmt: skip
            out["messages"] = name
        return out | cls.parse_llm(raw, at, problems, with_prompt=False)

    def reading(self) -> dict[str, frozenset[str]]:
        if self.messages is not None:
            return {"messages": frozenset({self.messages})}
        texts = {k: template_reads(getattr(self, k)) for k in TEXT_FIELDS}
        return texts | super().reading()

    def sample_seed(self, sample: int) -> int | None:
        return sample if self.seed_per_sample else None

    def chat(self, values: Mapping[str, Any]) -> list[dict[str, str]]:
        """The turns the ``messages`` column holds; a ``ValueError`` names the column when
        they are not a list of ``{role, content}`` turns."""
        value = values.get(str(self.messages))
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                value = None
        ok = isinstance(value, list) and value and all(
            isinstance(m, dict) and isinstance(m.get("role"), str)
            and isinstance(m.get("content"), str) for m in value
        )  # fmt: skip
        if not ok:
            raise ValueError(f"column {self.name}: messages: column {self.messages} must hold "
                             "a non-empty list of {role, content} turns")  # fmt: skip
        return [{"role": m["role"], "content": m["content"]} for m in value]

    @property
    def sends_bare_text(self) -> bool:
        return self.text is not None

    def requests(self, task: str, seed: int, values: Mapping[str, Any],
                 row_id: str) -> list[Request]:  # fmt: skip
        if self.messages is not None:
            # The samples of one chat send the same prompt: one family, so the dispatcher
            # asks them where it is cached.
            body = Body(messages=self.chat(values))
            return [Request(task, self.role, body, params=self.request_params(seed),
                            family=f"{task}:{row_id}")]  # fmt: skip
        if self.text is None:
            return super().requests(task, seed, values, row_id)
        # As the pipeline's translations ask: the bare text, its languages as parameters (a
        # translator slot's prompt format reads them; a chat slot it falls back to is given
        # the translation instruction, slots.request).
        params = self.request_params(seed)
        for key in ("source_lang", "target_lang"):
            if (lang := getattr(self, key)) is not None:
                params[key] = render(lang, values)
        return [Request(task, self.role, Body(text=render(self.text, values)), params=params)]

    def chat_turns(self, values: Mapping[str, Any]) -> list[tuple[str, str]]:
        if self.messages is not None:
            return [(m["role"], m["content"]) for m in self.chat(values)]
        # The request of a text column is its bare text: the user turn, with no system turn.
        if self.text is not None:
            return [("user", render(self.text, values))]
        return super().chat_turns(values)


@dataclass(frozen=True, kw_only=True)
class StructuredColumn(LlmColumn):
    column_type: ClassVar[str] = "llm_structured"
    attributes: ClassVar[type[ColumnAttributes]] = StructuredAttributes
    chat_rank: ClassVar[int] = 1

    output_format: Mapping[str, Any]

    @classmethod
    def parse(cls, raw: Mapping[str, Any], at: str, problems: Problems) -> dict[str, Any]:
        out = cls.parse_llm(raw, at, problems)
        with problems.field():
            out["output_format"] = problems.json_schema(
                f"{at}.output_format", raw.get("output_format"), structured=True
            )
        return out

    def schema(self) -> Mapping[str, Any] | None:
        return self.output_format

    def sub_columns(self) -> dict[str, str]:
        props = self.output_format.get("properties") or {}
        return {k: str(v.get("type", "string")) for k, v in props.items() if isinstance(v, dict)}


__all__ = [
    "TEXT_FIELDS",
    "LlmAttributes",
    "LlmColumn",
    "StructuredAttributes",
    "StructuredColumn",
    "TextAttributes",
    "TextColumn",
]

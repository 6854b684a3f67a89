"""The slot file: which GPU model servers ("slots") exist, what roles they play, which are live.

A user describes their machines once in YAML (``MODEL_FOUNDRY_SLOTS``, default the shipped
``slots.yaml`` beside this module) and picks a profile (``MODEL_FOUNDRY_PROFILE``, default
``standard``). Everything that sends prompts asks this module which slots may serve a role.

Routing rule: a role is served by the live slots that list it (a slot's name is always one of
its roles). When none of them is live, the role's ``fallbacks`` (other role names, in order)
are tried. ``SlotFile.role_tiers`` exposes the tiers so the dispatcher can move work to the
next tier while every slot of a tier cools down.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from model_foundry.lib import settings
from model_foundry.lib.slots.config_errors import field_problem
from model_foundry.lib.slots.runtimes import RUNTIMES, Runtime, known_runtimes, runtime_for

SHIPPED_SLOT_FILE = settings.SHIPPED_SLOT_FILE
SLOT_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# Used when the slot file names no key variable, or the variable is unset: local servers
# usually run without auth, but the SDK refuses an empty key.
DUMMY_API_KEY = "sk-no-key-required"


class SlotFileError(ValueError):
    """The slot file is missing, not YAML, or invalid; the message names file and field."""


class NoSlotForRoleError(LookupError):
    """No live slot in the active profile can serve a role, not even through its fallbacks."""


class _Strict(BaseModel):
    # Typos in a hand-edited file should fail loudly instead of being ignored.
    model_config = ConfigDict(extra="forbid", frozen=True)


class RequestDefaults(_Strict):
    """Request parameters sent with every call to a slot unless a task overrides them."""

    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    stop: list[str] | None = None
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    # Anything else the server understands (e.g. vLLM ``top_k``, llama.cpp ``cache_prompt``).
    extra_body: dict[str, Any] = Field(default_factory=dict)


class Timeouts(_Strict):
    connect_s: float = Field(default=5.0, gt=0)
    # Whole request, including the full stream: a server that stalls mid-stream is cut off.
    request_s: float = Field(default=600.0, gt=0)


class Translation(_Strict):
    source_lang: str = "English"
    target_lang: str = "Japanese"


class Slot(_Strict):
    """One OpenAI-compatible model server."""

    name: str
    roles: list[str] = Field(default_factory=list)
    # A name registered in ``runtimes.RUNTIMES``; it decides context discovery, token
    # counting, error wordings, metric names and response quirks.
    runtime: str
    base_url: str
    model: str = Field(min_length=1)
    parallel: int = Field(ge=1, le=256)
    # The most samples of one prompt sent as one request (``n`` choices), each holding one
    # of the ``parallel`` places while it runs. 1, the default: one request per sample, which
    # ``bench slots --samples`` and the real llama-server both measured faster (docs/slots.md).
    samples_per_request: int = Field(default=1, ge=1, le=256)
    # Tokens one request may use (prompt + answer). Unset: asked from the server (llama.cpp
    # /props, vLLM /v1/models); set it when the server hides those or to stay below them.
    context_tokens: int | None = Field(default=None, ge=64)
    gpu: str = "any"
    api: Literal["chat", "completions"] = "chat"
    # ``plamo-translate`` builds plamo-2-translate's raw prompt from a task's text;
    # ``raw`` sends a task's prompt as is. Only meaningful with ``api: completions``.
    prompt_format: Literal["raw", "plamo-translate"] = "raw"
    api_key_env: str | None = None
    stream: bool = True
    # For chat templates that reject the system role (some Gemma builds): the system text is
    # prepended to the first user turn instead.
    fold_system_into_user: bool = False
    # The ``chat_template_kwargs`` key that turns thinking on or off for this model.
    thinking_kwarg: str = "enable_thinking"
    request_defaults: RequestDefaults = Field(default_factory=RequestDefaults)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    translation: Translation = Field(default_factory=Translation)

    @field_validator("name")
    @classmethod
    def _name_is_safe(cls, v: str) -> str:
        # Slot names become lock file paths and metric labels.
        if not SLOT_NAME_RE.match(v):
            raise ValueError("must be lowercase letters, digits, '-' or '_'")
        return v

    @field_validator("runtime")
    @classmethod
    def _runtime_is_registered(cls, v: str) -> str:
        if v not in RUNTIMES:
            raise ValueError(f"unknown runtime {v!r} (known: {known_runtimes()})")
        return v

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not re.match(r"^https?://[^/\s]+", v):
            raise ValueError("must be an http:// or https:// URL, e.g. http://127.0.0.1:8101/v1")
        return v.rstrip("/")

    @model_validator(mode="after")
    def _completions_need_max_tokens(self) -> Slot:
        # vLLM's completions endpoint defaults to 16 tokens, which silently truncates.
        if self.api == "completions" and self.request_defaults.max_tokens is None:
            raise ValueError("request_defaults.max_tokens: must be set for api: completions")
        if self.prompt_format == "plamo-translate" and self.api != "completions":
            raise ValueError("prompt_format: plamo-translate needs api: completions")
        return self

    @model_validator(mode="after")
    def _samples_fit_parallel(self) -> Slot:
        if self.samples_per_request > self.parallel:
            raise ValueError(
                f"samples_per_request: {self.samples_per_request} is more than parallel "
                f"({self.parallel}); each sample of a request holds one of the slot's places"
            )
        return self

    @property
    def server(self) -> Runtime:
        """The runtime object for ``runtime``: what this slot's server does differently."""
        return runtime_for(self.runtime)

    @property
    def all_roles(self) -> list[str]:
        return [self.name, *[r for r in self.roles if r != self.name]]

    def api_key(self) -> str:
        """The key from the environment variable the slot file names, or a dummy key."""
        if self.api_key_env:
            value = settings.secret(self.api_key_env)
            if value:
                return value
        return DUMMY_API_KEY

    def host_port(self) -> tuple[str, int]:
        from urllib.parse import urlsplit

        parts = urlsplit(self.base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return parts.hostname or "127.0.0.1", port


class Role(_Strict):
    # None: leave the slot's own default; True/False: set ``chat_template_kwargs``.
    thinking: bool | None = None
    fallbacks: list[str] = Field(default_factory=list)


# The lab's quality slot: the judge of any profile that names none, when the file has it.
DEFAULT_JUDGE = "grandpa"
# The role judgements are asked of: only the judge slot serves it (``for_judging``).
JUDGE_ROLE = "judge"


class SlotFile(_Strict):
    """The parsed slot file. ``source`` is the path it came from, for messages.

    A profile is a list of slots, or a mapping ``{slots: [...], judge: <slot>}`` that also
    names the slot judging its dataset answers (``judges`` keeps those names).
    """

    slots: dict[str, Slot]
    profiles: dict[str, list[str]]
    roles: dict[str, Role] = Field(default_factory=dict)
    default_profile: str = "standard"
    judges: dict[str, str] = Field(default_factory=dict)
    source: str = "<memory>"

    @model_validator(mode="before")
    @classmethod
    def _profile_mappings(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("profiles"), dict):
            return data
        profiles, judges = {}, dict(data.get("judges") or {})
        for name, body in data["profiles"].items():
            if isinstance(body, dict):
                unknown = sorted(set(body) - {"slots", "judge"})
                if unknown:
                    raise ValueError(
                        f"profiles.{name}.{unknown[0]}: unknown field (use slots, judge)"
                    )
                if "slots" not in body:
                    raise ValueError(f"profiles.{name}.slots: is required")
                if body.get("judge") is not None:
                    judges[name] = body["judge"]
                body = body["slots"]
            profiles[name] = body
        return {**data, "profiles": profiles, "judges": judges}

    @model_validator(mode="before")
    @classmethod
    def _slot_names_from_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("slots"), dict):
            slots = {}
            for name, body in data["slots"].items():
                if isinstance(body, dict):
                    body = {**body, "name": body.get("name", name)}
                slots[name] = body
            data = {**data, "slots": slots}
        return data

    @model_validator(mode="after")
    def _cross_references(self) -> SlotFile:
        if not self.slots:
            raise ValueError("slots: must define at least one slot")
        for key, slot in self.slots.items():
            if slot.name != key:
                raise ValueError(f"slots.{key}.name: must equal its key {key!r}")
        for pname, members in self.profiles.items():
            for i, member in enumerate(members):
                if member not in self.slots:
                    raise ValueError(f"profiles.{pname}.{i}: unknown slot {member!r}")
        if self.default_profile not in self.profiles:
            raise ValueError(f"default_profile: unknown profile {self.default_profile!r}")
        for pname, judge in self.judges.items():
            if pname not in self.profiles:
                raise ValueError(f"profiles.{pname}: unknown profile for its judge")
            if judge not in self.slots:
                raise ValueError(f"profiles.{pname}.judge: unknown slot {judge!r}")
        known = self.known_roles()
        for rname, role in self.roles.items():
            for i, fb in enumerate(role.fallbacks):
                if fb not in known:
                    raise ValueError(f"roles.{rname}.fallbacks.{i}: unknown role {fb!r}")
        return self

    def known_roles(self) -> set[str]:
        names = set(self.roles)
        for slot in self.slots.values():
            names.update(slot.all_roles)
        return names

    def resolve_profile(self, profile: str | None = None) -> str:
        # An unset MODEL_FOUNDRY_PROFILE means "the file's default", not a hard-coded name.
        from_env = settings.profile() if settings.profile_set() else None
        name = profile or from_env or self.default_profile
        if name not in self.profiles:
            raise SlotFileError(
                f"{self.source}: profiles.{name}: no such profile "
                f"(known: {', '.join(sorted(self.profiles))}); set MODEL_FOUNDRY_PROFILE"
            )
        return name

    def live_slots(self, profile: str | None = None) -> list[Slot]:
        """The slots the profile switches on, in the profile's order."""
        return [self.slots[n] for n in self.profiles[self.resolve_profile(profile)]]

    def role_tiers(self, role: str, profile: str | None = None) -> list[list[Slot]]:
        """Live slots for a role, grouped by preference: its own slots, then each fallback.

        Fallbacks are followed transitively (a fallback role's own fallbacks come after it);
        each slot appears once, in its best tier. Empty tiers are dropped.
        """
        if role not in self.known_roles():
            raise NoSlotForRoleError(
                f"{self.source}: unknown role {role!r} "
                f"(known: {', '.join(sorted(self.known_roles()))})"
            )
        live = self.live_slots(profile)
        tiers: list[list[Slot]] = []
        seen_slots: set[str] = set()
        seen_roles: set[str] = set()
        queue = [role]
        while queue:
            current = queue.pop(0)
            if current in seen_roles:
                continue
            seen_roles.add(current)
            tier = [s for s in live if current in s.all_roles and s.name not in seen_slots]
            if tier:
                tiers.append(tier)
                seen_slots.update(s.name for s in tier)
            queue.extend(self.roles.get(current, Role()).fallbacks)
        return tiers

    def slots_for_role(self, role: str, profile: str | None = None) -> list[Slot]:
        """Live slots that can serve ``role``, best first (own slots, then fallbacks).

        The dispatcher sends work only to the first tier that is not cooling down; callers that
        just need "the model for this role" can take the first element.
        """
        tiers = self.role_tiers(role, profile)
        if not tiers:
            prof = self.resolve_profile(profile)
            raise NoSlotForRoleError(
                f"no live slot can serve role {role!r} in profile {prof!r} of {self.source}; "
                f"add a fallback under roles.{role}.fallbacks or choose another profile"
            )
        return [s for tier in tiers for s in tier]

    def thinking_for_role(self, role: str) -> bool | None:
        return self.roles.get(role, Role()).thinking

    def judge_slot(self, profile: str | None = None) -> Slot | None:
        """The slot judging the profile's answers: the one it names, else grandpa's when the
        file defines it (even outside the profile's fan-out), else None."""
        name = self.judges.get(self.resolve_profile(profile))
        if name is None and DEFAULT_JUDGE in self.slots:
            name = DEFAULT_JUDGE
        return self.slots[name] if name is not None else None

    def for_judging(self, profile: str | None = None) -> tuple[SlotFile, str]:
        """A copy in which the judge slot is live beside the profile's, and the only server of
        ``JUDGE_ROLE`` (no fallbacks, so no other slot ever judges), and the copy's profile.
        Raises ``NoSlotForRoleError`` in one sentence when there is no judge slot."""
        judge = self.judge_slot(profile)
        name = self.resolve_profile(profile)
        if judge is None:
            raise NoSlotForRoleError(
                f"profile {name!r} of {self.source} has no judge slot: name one with "
                f"profiles.{name}.judge, or define a {DEFAULT_JUDGE!r} slot"
            )
        slots = {}
        for key, slot in self.slots.items():
            roles = [r for r in slot.roles if r != JUDGE_ROLE]
            if key == judge.name:
                roles.append(JUDGE_ROLE)
            slots[key] = slot.model_copy(update={"roles": roles})
        # The judge thinks as its slot's own role says, where the server constrains only the
        # answer after the reasoning; elsewhere it answers without thinking unless the file
        # says otherwise under roles.judge.
        own = self.roles.get(judge.name, Role()).thinking
        given = self.roles.get(JUDGE_ROLE)
        if given is not None and given.thinking is not None:
            thinking: bool | None = given.thinking
        else:
            thinking = own if judge.server.schema_after_reasoning else False
        roles = {**self.roles, JUDGE_ROLE: Role(thinking=thinking, fallbacks=[])}
        members = self.profiles[name]
        judged = f"{name}+judge"
        live = members if judge.name in members else [*members, judge.name]
        profiles = {**self.profiles, judged: live}
        copy = self.model_copy(update={"slots": slots, "roles": roles, "profiles": profiles})
        return copy, judged

    def with_base_urls(self, urls: dict[str, str]) -> SlotFile:
        """A copy whose named slots point elsewhere (the simulator's real ports)."""
        slots = {
            n: s.model_copy(update={"base_url": urls[n].rstrip("/")}) if n in urls else s
            for n, s in self.slots.items()
        }
        return self.model_copy(update={"slots": slots})

    def to_yaml_dict(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude={"source", "judges"})
        for body in data["slots"].values():
            body.pop("name", None)
        for name, judge in self.judges.items():
            data["profiles"][name] = {"slots": data["profiles"][name], "judge": judge}
        return data


def parse_slot_file(data: Any, source: str = "<memory>") -> SlotFile:
    """Validate already-loaded YAML data; errors read ``<source>: <field>: <problem>``."""
    if not isinstance(data, dict):
        raise SlotFileError(f"{source}: (top level): must be a mapping with slots and profiles")
    try:
        return SlotFile.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise SlotFileError(f"{source}: {field_problem(exc.errors()[0])}") from None


def load_slot_file(path: str | os.PathLike[str] | None = None) -> SlotFile:
    """Read and validate the slot file (default: ``settings.slot_file_path()``)."""
    p = Path(path) if path is not None else settings.slot_file_path()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SlotFileError(
            f"{p}: file not found; set MODEL_FOUNDRY_SLOTS to your slot file"
        ) from None
    except OSError as exc:
        raise SlotFileError(f"{p}: cannot read: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(parse)"
        problem = getattr(exc, "problem", None) or str(exc)
        raise SlotFileError(f"{p}: {where}: not valid YAML: {problem}") from None
    return parse_slot_file(data, source=str(p))


def write_slot_file(slot_file: SlotFile, path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    p.write_text(yaml.safe_dump(slot_file.to_yaml_dict(), sort_keys=False), encoding="utf-8")
    return p


__all__ = [
    "DEFAULT_JUDGE",
    "DUMMY_API_KEY",
    "JUDGE_ROLE",
    "SHIPPED_SLOT_FILE",
    "NoSlotForRoleError",
    "RequestDefaults",
    "Role",
    "Slot",
    "SlotFile",
    "SlotFileError",
    "Timeouts",
    "Translation",
    "load_slot_file",
    "parse_slot_file",
    "write_slot_file",
]

"""The hygiene file: a user's own secret rules, an allowlist and the PII switches.

Default place: ``$MODEL_FOUNDRY_DATA_DIR/hygiene.yaml`` (``settings.hygiene_file``); a file
that does not exist means the defaults. Every field is optional::

    secrets:
      rules:                      # extra patterns, each match becomes [REDACTED:<kind>]
        - kind: acme_token        # lowercase letters, digits and _
          pattern: 'acme_[A-Za-z0-9]{32}'   # Python regex; a group named secret, if
                                            # present, is the only part replaced
      allow:                      # regexes: a found value that matches one wholly stays
        - 'sk-test-fixture-[0-9]+'
    pii:
      emails: true
      ip_addresses: true
      home_paths: true

A file that cannot be used raises :class:`HygieneConfigError`, whose one sentence names the
file and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from model_foundry.lib import settings
from model_foundry.lib.hygiene.rules import Rule


class HygieneConfigError(ValueError):
    """The hygiene file cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class PiiSwitches:
    """Which kinds of personal data are replaced (all on by default)."""

    emails: bool = True
    ip_addresses: bool = True
    home_paths: bool = True


@dataclass(frozen=True)
class HygieneConfig:
    """What the scrubbers apply on top of their built-in rules."""

    rules: tuple[Rule, ...] = ()
    allow: tuple[re.Pattern[str], ...] = ()
    pii: PiiSwitches = field(default_factory=PiiSwitches)
    # The backstop (``backstop.py``): cued random values no rule took. Off only to measure it.
    backstop: bool = True

    def allowed(self, value: str) -> bool:
        return any(p.fullmatch(value) for p in self.allow)


_KIND = re.compile(r"[a-z][a-z0-9_]{0,40}")


def _fail(path: Path, where: str, what: str) -> HygieneConfigError:
    return HygieneConfigError(f"{path}: {where} {what}")


def _compile(path: Path, where: str, raw: Any) -> re.Pattern[str]:
    if not isinstance(raw, str) or not raw:
        raise _fail(path, where, "must be a non-empty regular expression string")
    try:
        return re.compile(raw)
    except re.error as exc:
        raise _fail(path, where, f"is not a valid regular expression ({exc})") from None


def _rules(path: Path, raw: Any) -> tuple[Rule, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(path, "secrets.rules", "must be a list of {kind, pattern} entries")
    rules = []
    for i, entry in enumerate(raw):
        where = f"secrets.rules[{i}]"
        if not isinstance(entry, dict) or set(entry) - {"kind", "pattern"}:
            raise _fail(path, where, "must have exactly the fields kind and pattern")
        kind = entry.get("kind")
        if not isinstance(kind, str) or not _KIND.fullmatch(kind):
            raise _fail(path, f"{where}.kind", "must be lowercase letters, digits and _")
        rules.append(Rule(kind, _compile(path, f"{where}.pattern", entry.get("pattern"))))
    return tuple(rules)


def _pii(path: Path, raw: Any) -> PiiSwitches:
    if raw is None:
        return PiiSwitches()
    if not isinstance(raw, dict):
        raise _fail(path, "pii", "must be a mapping of switches")
    names = {"emails", "ip_addresses", "home_paths"}
    for key, value in raw.items():
        if key not in names:
            raise _fail(path, f"pii.{key}", f"is not a switch (known: {', '.join(sorted(names))})")
        if not isinstance(value, bool):
            raise _fail(path, f"pii.{key}", "must be true or false")
    return PiiSwitches(**raw)


def parse_config(path: Path, text: str) -> HygieneConfig:
    """The config in ``text`` (the content of ``path``, named in errors)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _fail(path, "the file", f"is not valid YAML ({exc.__class__.__name__})") from None
    data = data or {}
    if not isinstance(data, dict):
        raise _fail(path, "the top level", "must be a mapping with secrets and pii")
    # ``gates`` (thresholds per dataset) is read by lib/gates/config.py.
    unknown = set(data) - {"secrets", "pii", "gates"}
    if unknown:
        raise _fail(path, sorted(unknown)[0], "is not a section (known: secrets, pii, gates)")
    secrets = data.get("secrets") or {}
    if not isinstance(secrets, dict) or set(secrets) - {"rules", "allow"}:
        raise _fail(path, "secrets", "must be a mapping with rules and allow")
    allow_raw = secrets.get("allow") or []
    if not isinstance(allow_raw, list):
        raise _fail(path, "secrets.allow", "must be a list of regular expressions")
    allow = tuple(_compile(path, f"secrets.allow[{i}]", p) for i, p in enumerate(allow_raw))
    return HygieneConfig(_rules(path, secrets.get("rules")), allow, _pii(path, data.get("pii")))


def load_config(path: Path | None = None) -> HygieneConfig:
    """The hygiene file at ``path`` (default ``settings.hygiene_file()``); defaults if absent."""
    path = path or settings.hygiene_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return HygieneConfig()
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(path, "the file", f"cannot be read ({exc.__class__.__name__})") from None
    return parse_config(path, text)


__all__ = ["HygieneConfig", "HygieneConfigError", "PiiSwitches", "load_config", "parse_config"]

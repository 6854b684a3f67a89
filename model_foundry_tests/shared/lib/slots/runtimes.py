"""Slot runtimes as objects: the registry validates slot files, and a new runtime is one class.

The fake runtime here exists only inside its test (registered with ``monkeypatch``): a server
with its own window endpoint and its own way of counting, served over real HTTP.

What the unit, integration and system tests of ``lib/slots/test_runtimes.py`` share."""

from __future__ import annotations

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}, "why": {"type": "string"}},
    "required": ["score", "why"],
}

"""Jinja templates over a recipe's columns: which columns a template reads, and its rendering.

Templates run in jinja2's sandbox with undefined names as errors, so a template can read
columns and call filters, never Python objects' internals, and a name that is not a column is
caught when the recipe is read (:func:`columns_read`), not at render time.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import meta
from jinja2.sandbox import SandboxedEnvironment

_ENV = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)


class TemplateError(ValueError):
    """A template that does not parse; the message is jinja2's, one line."""


def columns_read(template: str) -> set[str]:
    """The top-level names ``template`` reads (``{{ answer.score }}`` reads ``answer``)."""
    try:
        parsed = _ENV.parse(template)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"does not parse (line {exc.lineno}: {exc.message})") from None
    return set(meta.find_undeclared_variables(parsed))


@lru_cache(maxsize=512)
def _compiled(template: str) -> jinja2.Template:
    # ``from_string`` compiles the template to Python each call: once a column's template,
    # not once a cell.
    return _ENV.from_string(template)


def render(template: str, values: Mapping[str, Any]) -> str:
    """``template`` with the row's ``values``; structured columns are dicts."""
    return _compiled(template).render(**values)


__all__ = ["TemplateError", "columns_read", "render"]

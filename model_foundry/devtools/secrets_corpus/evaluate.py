"""Scoring a scrubber's output against the corpus."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from model_foundry.devtools.secrets_corpus.model import FRAGMENT, Case, Plant, _json_escape

_GRAMS_UP_TO = 4_000_000  # characters of text for which a set of its blocks is built


class _Text:
    """A text to search, with the set of its ``FRAGMENT // 2``-character blocks when it is
    not too long, so that most blocks of a random part are ruled out without a scan."""

    def __init__(self, text: str) -> None:
        self.text = text
        b = FRAGMENT // 2
        self.grams: set[str] | None = None
        if len(text) <= _GRAMS_UP_TO:
            self.grams = {text[i : i + b] for i in range(len(text) - b + 1)}


def _fragment_at(haystack: _Text, source: str, n: int = FRAGMENT) -> int:
    """Where the text holds ``n`` consecutive characters of ``source`` (all of it when
    shorter), or -1. Any common run of ``n`` holds an aligned block of ``n // 2``, so only
    those blocks are searched, then each hit is extended both ways."""
    text = haystack.text
    if len(source) < n:
        return text.find(source) if source else -1
    block = n // 2
    for k in range(0, len(source) - block + 1, block):
        piece = source[k : k + block]
        if haystack.grams is not None and piece not in haystack.grams:
            continue
        at = text.find(piece)
        while at != -1:
            left = 0
            while k - left > 0 and at - left > 0 and source[k - left - 1] == text[at - left - 1]:
                left += 1
            right = 0
            while (
                k + block + right < len(source)
                and at + block + right < len(text)
                and source[k + block + right] == text[at + block + right]
            ):
                right += 1
            if left + block + right >= n:
                return at - left
            at = text.find(piece, at + 1)
    return -1


def _variants(s: str, levels: int) -> list[str]:
    out = [s]
    for _ in range(levels):
        out.append(_json_escape(out[-1]))
    return list(dict.fromkeys(out))


@dataclass
class Tally:
    plants: int = 0
    not_leaked: int = 0
    fragment_free: int = 0

    def add(self, whole: bool, fragment: bool) -> None:
        self.plants += 1
        self.not_leaked += not whole
        self.fragment_free += not (whole or fragment)

    @property
    def recall(self) -> float:
        return self.not_leaked / self.plants if self.plants else 1.0

    @property
    def fragment_free_share(self) -> float:
        return self.fragment_free / self.plants if self.plants else 1.0


@dataclass(frozen=True)
class Leak:
    kind: str
    context: str
    where: str
    whole: bool
    excerpt: str


@dataclass
class Report:
    cases: int = 0
    total: Tally = field(default_factory=Tally)
    by_kind: dict[str, Tally] = field(default_factory=dict)
    by_context: dict[str, Tally] = field(default_factory=dict)
    by_where: dict[str, Tally] = field(default_factory=dict)
    negatives: int = 0
    negatives_kept: int = 0
    keep_words: int = 0
    keep_words_kept: int = 0
    leaks: list[Leak] = field(default_factory=list)
    lost_negatives: list[str] = field(default_factory=list)
    lost_keep_words: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.total.recall

    @property
    def fragment_free_share(self) -> float:
        return self.total.fragment_free_share

    @property
    def negatives_kept_share(self) -> float:
        return self.negatives_kept / self.negatives if self.negatives else 1.0

    @property
    def keep_words_kept_share(self) -> float:
        return self.keep_words_kept / self.keep_words if self.keep_words else 1.0

    def _count(self, plant: Plant, where: str, whole: bool, fragment: bool) -> None:
        self.total.add(whole, fragment)
        self.by_kind.setdefault(plant.kind, Tally()).add(whole, fragment)
        self.by_context.setdefault(plant.context, Tally()).add(whole, fragment)
        self.by_where.setdefault(where, Tally()).add(whole, fragment)

    def format(self, leaks: int = 25) -> str:
        """A readable table: totals, then per kind, per context and per session location."""
        out = [
            f"cases {self.cases}, planted values {self.total.plants}",
            f"values removed whole (recall)  {self.recall:7.1%}",
            f"values with no fragment left   {self.fragment_free_share:7.1%}",
            f"hard negatives kept            {self.negatives_kept_share:7.1%}"
            f"  ({self.negatives_kept}/{self.negatives})",
            f"ordinary words kept            {self.keep_words_kept_share:7.1%}"
            f"  ({self.keep_words_kept}/{self.keep_words})",
        ]
        for title, table in (
            ("kind", self.by_kind),
            ("context", self.by_context),
            ("where", self.by_where),
        ):
            out += ["", f"{title:<32} {'values':>6} {'recall':>8} {'no-frag':>8}"]
            for name, t in sorted(table.items(), key=lambda kv: (kv[1].recall, kv[0])):
                out.append(
                    f"{name:<32} {t.plants:>6} {t.recall:>8.1%} {t.fragment_free_share:>8.1%}"
                )
        if self.leaks:
            out += ["", f"leaks (first {min(leaks, len(self.leaks))} of {len(self.leaks)}):"]
            for leak in self.leaks[:leaks]:
                how = "whole" if leak.whole else "fragment"
                out.append(f"  {leak.kind} / {leak.context} / {leak.where} ({how}): {leak.excerpt}")
        if self.lost_negatives:
            out += ["", "hard negatives lost: " + ", ".join(self.lost_negatives[:15])]
        if self.lost_keep_words:
            out += ["", "ordinary words lost: " + ", ".join(self.lost_keep_words[:15])]
        return "\n".join(out)


def _excerpt(text: str, at: int, width: int = 40) -> str:
    return text[max(0, at - width) : at + width].replace("\n", "\\n")


def _check_plant(plant: Plant, haystack: _Text, levels: int) -> tuple[bool, bool, int]:
    """(leaked whole, a fragment left, where) for one plant in the text."""
    text = haystack.text
    for form in plant.leak_forms:
        for variant in _variants(form, levels):
            at = text.find(variant)
            if at != -1:
                return True, True, at
    for source in plant.fragment_sources:
        for variant in _variants(source, levels):
            at = _fragment_at(haystack, variant)
            if at != -1:
                return False, True, at
    return False, False, -1


def _present(s: str, text: str, levels: int) -> bool:
    return any(v in text for v in _variants(s, levels))


def evaluate_texts(cases: Sequence[Case], scrubbed_texts: Sequence[str]) -> Report:
    """Score scrubbed texts, one per case in the same order."""
    if len(cases) != len(scrubbed_texts):
        raise ValueError(f"{len(cases)} cases but {len(scrubbed_texts)} texts")
    report = Report(cases=len(cases))
    for case, text in zip(cases, scrubbed_texts, strict=True):
        haystack = _Text(text)
        for plant in case.plants:
            whole, fragment, at = _check_plant(plant, haystack, 0)
            report._count(plant, case.where, whole, fragment)
            if fragment:
                report.leaks.append(
                    Leak(plant.kind, plant.context, case.where, whole, _excerpt(text, at))
                )
        for neg in case.negatives:
            report.negatives += 1
            if neg in text:
                report.negatives_kept += 1
            else:
                report.lost_negatives.append(neg)
        for word in case.keep_words:
            report.keep_words += 1
            if word in text:
                report.keep_words_kept += 1
            else:
                report.lost_keep_words.append(word)
    return report


def evaluate(cases: Sequence[Case], scrub: Callable[[str], str]) -> Report:
    """Scrub each case's text with ``scrub`` and score the results."""
    return evaluate_texts(cases, [scrub(case.text) for case in cases])


def evaluate_blob(cases: Sequence[Case], exported_text: str, escape_levels: int = 3) -> Report:
    """Score one exported text (e.g. a JSONL export of :func:`as_events`' sessions) against
    every case: each plant is looked for anywhere in it, also JSON-escaped up to
    ``escape_levels`` times; negatives and ordinary words count as kept when present.

    A value met in several cases is one string, so it leaks in all of them or in none."""
    report = Report(cases=len(cases))
    haystack = _Text(exported_text)
    for case in cases:
        for plant in case.plants:
            whole, fragment, at = _check_plant(plant, haystack, escape_levels)
            report._count(plant, case.where, whole, fragment)
            if fragment:
                excerpt = _excerpt(exported_text, at)
                report.leaks.append(Leak(plant.kind, plant.context, case.where, whole, excerpt))
        for neg in case.negatives:
            report.negatives += 1
            if _present(neg, exported_text, escape_levels):
                report.negatives_kept += 1
            else:
                report.lost_negatives.append(neg)
        for word in case.keep_words:
            report.keep_words += 1
            if _present(word, exported_text, escape_levels):
                report.keep_words_kept += 1
            else:
                report.lost_keep_words.append(word)
    return report


def summary(cases: Sequence[Case]) -> dict[str, object]:
    """Counts of the corpus: kinds, values, negatives, contexts, locations."""
    plants = [p for c in cases for p in c.plants]
    return {
        "cases": len(cases),
        "values": len(plants),
        "distinct_values": len({p.value for p in plants}),
        "kinds": sorted({p.kind for p in plants}),
        "contexts": sorted({p.context for p in plants}),
        "encodings": sorted({p.encoding for p in plants}),
        "wheres": sorted({c.where for c in cases}),
        "negatives": sum(len(c.negatives) for c in cases),
        "keep_words": sum(len(c.keep_words) for c in cases),
    }

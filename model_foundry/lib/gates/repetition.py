"""The ``repetition`` gate: Gopher's repetition statistics, adapted to short chat answers.

Gopher's repetition filter (Rae et al. 2021, Table A1) as datatrove implements it
(huggingface/datatrove, ``src/datatrove/pipeline/filters/gopher_repetition_filter.py``,
commit 06c98b0f), with its thresholds as defaults (:class:`config.GateConfig`). Changes for
short chat answers, which Gopher's web documents are not: a line, paragraph or top n-gram
counts as repeated only from its third occurrence (and a refrain, a line that comes back a
few times between lines said once, not at all), so a phrase used twice ("New
Year ... New Year's") or two alike CSS rules are no loop; the duplicate 5- to 10-gram
statistics apply from Gopher's minimum document length (50 words: Gopher's quality filter, a
stage before its repetition removal, drops shorter documents); lines or paragraphs without a
word (``}``, a code fence) are not compared. Words are ``\\w+`` runs (datatrove uses nltk's
English tokenizer).

Japanese has no spaces, so to ``\\w+`` a clause is one word and those statistics see no
n-gram: where most of a text's letters are kana or kanji, the share of its letters in runs of
:data:`CJK_NGRAM` letters seen before is taken instead (datatrove's count, over letters),
from :data:`CJK_MIN_LETTERS` letters (a question that says a phrase twice is no loop).

What those statistics leave out, a model can still loop on: a line of marks or figures, a
line the same but for a counter, one token or a short unit of figures and marks, written
:attr:`GateConfig.run_from` times in a row (a small model's ``-`` or ``|`` a line, ``(1,0)``
a line, ``1.`` ``2.`` ``3.``, ``40k 40k ...``, ``1.1.1.1...``), or several tokens each
written twice in a row (``def def``). A table, a code block, a
count or a list of figures does not write the same line, token or unit that many times in a
row, and a multiplication table's lines hold more than one number.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations, pairwise

from model_foundry.lib.gates.config import DEFAULTS, GateConfig
from model_foundry.lib.gates.noise import FENCE, INLINE_CODE, prose
from model_foundry.lib.gates.script import JAPANESE

_WORD = re.compile(r"\w+")
# A word needs a letter: digits and underscores alone do not make an answer.
LETTER = re.compile(r"[^\W\d_]")
_PARAGRAPHS = re.compile(r"\n{2,}")


def _duplicates(parts: Sequence[str], repeat_from: int) -> tuple[int, int, int, set[str]]:
    """(parts compared, occurrences counted as repeats, their characters, the refrains): a
    part that occurs at least ``repeat_from`` times counts every occurrence after its first,
    unless it is a refrain (:func:`_is_refrain`)."""
    worded = [p for p in parts if LETTER.search(p)]
    counts = Counter(worded)
    compared = sum(counts.values())
    refrains = {
        p for p, n in counts.items() if n >= repeat_from and _is_refrain(p, n, worded, counts)
    }
    looped = {p: n for p, n in counts.items() if n >= repeat_from and p not in refrains}
    repeats = sum(n - 1 for n in looped.values())
    chars = sum(len(p) * (n - 1) for p, n in looped.items())
    return compared, repeats, chars, refrains


# A song's or a poem's refrain comes back a few times, each time after lines of its own.
REFRAIN_TIMES = 4


def _is_refrain(part: str, times: int, parts: Sequence[str], counts: Counter[str]) -> bool:
    """``part`` comes back at most :data:`REFRAIN_TIMES` times, and between any two of its
    occurrences stand only parts said once (a lullaby's first line after each verse line).
    A loop writes the part back to back, or with other repeated parts between (``A B A B``)."""
    if times > REFRAIN_TIMES:
        return False
    at = [i for i, p in enumerate(parts) if p == part]
    return all(b - a > 1 and all(counts[p] == 1 for p in parts[a + 1 : b]) for a, b in pairwise(at))


def _without_refrains(lines: Sequence[str], refrains: set[str]) -> str:
    """The lines without each refrain's occurrences after its first."""
    seen: set[str] = set()
    kept = []
    for line in lines:
        if line in refrains and line in seen:
            continue
        seen.add(line)
        kept.append(line)
    return "\n".join(kept)


def _is_phrase(gram: str) -> bool:
    """An n-gram of words: every part letters only and one of two letters or more. Runs of
    figures (a CSV's dates, a chord chart's ``A7``) and of one-letter variables (``e^x``) are
    a table's or a formula's shape, not a phrase said over and over."""
    parts = gram.split(" ")
    return all(p.isalpha() for p in parts) and any(len(p) > 1 for p in parts)


def ngrams(words: Sequence[str], n: int) -> list[str]:
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def _repeated_ngram_chars(
    words: Sequence[str], n: int, joiner: str = " ", counts: Callable[[str], bool] = _is_phrase
) -> int:
    """Characters of n-grams seen before, stepping past each repeat (datatrove's count); only
    the n-grams ``counts`` takes are compared."""
    seen: set[str] = set()
    chars = at = 0
    while at < len(words) - n + 1:
        gram = joiner.join(words[at : at + n])
        if not counts(gram):
            at += 1
        elif gram in seen:
            chars += len(gram)
            at += n
        else:
            seen.add(gram)
            at += 1
    return chars


CJK_NGRAM = 10
CJK_MIN_LETTERS = 100
_JAPANESE = re.compile(f"[{JAPANESE}]")


def cjk_repeated_share(text: str) -> float | None:
    """The share of ``text``'s letters in runs of :data:`CJK_NGRAM` letters seen before,
    stepping past each repeat; None unless it has :data:`CJK_MIN_LETTERS` letters, most of
    them kana or kanji."""
    if _JAPANESE.search(text) is None:
        return None
    letters = [c for c in text if c.isalpha()]
    japanese = len(_JAPANESE.findall("".join(letters)))
    if len(letters) < CJK_MIN_LETTERS or 2 * japanese < len(letters):
        return None
    return _repeated_ngram_chars(letters, CJK_NGRAM, "", bool) / len(letters)


def _longest_run(items: Sequence[str]) -> int:
    """The most times one non-empty item comes in a row."""
    best = run = 0
    for n, item in enumerate(items):
        run = run + 1 if n and item and item == items[n - 1] else 1
        best = max(best, run if item else 0)
    return best


@functools.lru_cache(maxsize=8)
def _unit_run(times: int) -> re.Pattern[str]:
    # A unit of two to four characters, figures or letters with marks, ``times`` in a row.
    return re.compile(rf"(\S{{2,4}}?)\1{{{times - 1},}}")


def _is_mixed_unit(unit: str) -> bool:
    """Letters or figures with marks (``1.``, ``,0``): a rule (``==``, ``-|``) or a run of
    one kind (``00``, ``ab``: zeros of a hex value, base64 padding) is written so rightly."""
    return any(c.isalnum() for c in unit) and not unit.isalnum()


_DIGITS = re.compile(r"\d+")


def _counted(line: str) -> str:
    """A line with its one number made ``#`` (``(7) 語順`` is ``(#) 語順``); a line with no
    number, with two or more (a sum, a table's row) or with nothing else (a count) is
    itself, so only a counter with the same words around it matches its neighbours."""
    line = line.strip()
    numbers = _DIGITS.findall(line)
    if len(numbers) != 1 or numbers[0] == line:
        return line
    return "\0" + _DIGITS.sub("#", line)


def loop_run(text: str, config: GateConfig = DEFAULTS) -> str | None:
    """``line_run``, ``counted_run``, ``token_run`` or ``unit_run``: outside fenced code,
    the same line, the same line but for its one number (empty list items ``1.`` ``2.``,
    ``(3) 語順``), token of one line (trailing ``,`` and ``;`` aside) or mixed unit
    :attr:`GateConfig.run_from` times in a row, else None."""
    times = config.run_from
    # Code and its output (an array of zeros) are written as they must be.
    lines = FENCE.sub("\n", text).splitlines()
    if _longest_run([line.strip() for line in lines]) >= times:
        return "line_run"
    if _longest_run([_counted(line) for line in lines]) >= times:
        return "counted_run"
    if any(_longest_run([t.rstrip(",;") for t in line.split()]) >= times for line in lines):
        return "token_run"
    if any(_is_mixed_unit(m.group(1)) for line in lines for m in _unit_run(times).finditer(line)):
        return "unit_run"
    if doubled_tokens(text):
        return "doubled_tokens"
    return None


# Different words each written twice in a row (``def def ... return return ... import
# import``): a small model stuttering. Prose doubles a word by mistake once (``the the``);
# a language's real doubling (``very very``, ``had had``) is one word. Only tokens with a
# letter count: data repeats a value (``0, 0, 1, 1``) and a rule or ASCII art a mark.
DOUBLED_TOKENS = 3


def doubled_tokens(text: str) -> bool:
    """``doubled_tokens``: :data:`DOUBLED_TOKENS` or more different words of the prose each
    next to itself."""
    tokens = prose(text).split()
    doubled = {a for a, b in pairwise(tokens) if a == b and LETTER.search(a)}
    return len(doubled) >= DOUBLED_TOKENS


# One letter of a script beyond Latin twelve times in a row: no word has it (``ああああ...``);
# a word's run is a word repeated, which the statistics below see. Latin's runs are left to
# the word-length gate: an answer may show ``xxxxxxxxxxxx`` or ``aaaaaaaaaaaa`` as an example,
# and base64 of zeros is ``AAAAAAAA==``. The prolonged sound mark ``ー`` draws a line.
_LETTER_RUN = re.compile(r"([^\W\d_A-Za-zーｰ])\1{11,}")


# A term a list's item names is a few words; a sentence a model loops on with one word
# changed (``1. The cat is on the mat``, ``2. The cat is on the bed``) is longer.
ITEM_WORDS = 4


def _items_sharing(gram: str, times: int, lines: Sequence[str]) -> bool:
    """Whether each of ``gram``'s ``times`` occurrences stands on a line of its own of at
    most :data:`ITEM_WORDS` words, every such line different (``LEFT OUTER JOIN``, ``RIGHT
    OUTER JOIN``): a list's terms that share a word."""
    holding = [" ".join(_WORD.findall(line)) for line in lines]
    holding = [words for words in holding if gram in words]
    return len(holding) == times == len(set(holding)) and all(
        words.count(gram) == 1 and len(words.split()) <= ITEM_WORDS for words in holding
    )


# A short answer says a phrase this many times at most in parallel clauses; more is a list
# of questions or a loop, whatever lies between.
PARALLEL_TIMES = 4


def _same_gaps(words: Sequence[str], gram: str, n: int) -> bool:
    """Whether two of ``gram``'s occurrences have the same words between them and the next,
    or all but one (or none, in a loop): a short answer's parallel clauses (``3 C on each
    side, 8 H on each side``) each say something new between."""
    at = [i for i, g in enumerate(ngrams(words, n)) if g == gram]
    # A list's numbers between (``1. The cat is on the mat 2. The cat is on the bed``) are
    # no news.
    gaps = [tuple(w for w in words[a + n : b] if not w.isdigit()) for a, b in pairwise(at)]
    return any(_alike(a, b, n) for a, b in combinations(gaps, 2)) or () in gaps


# A sentence looped with one word changed is this many words at least, with its n-gram.
_LOOPED_WORDS = 4


def _alike(a: tuple[str, ...], b: tuple[str, ...], n: int) -> bool:
    """The same words, or as many but for one, in a sentence of :data:`_LOOPED_WORDS` with
    the n-gram (``the cat is on the mat``, ``... the bed``); not a formula's ``sin x x³``."""
    differ = sum(1 for x, y in zip(a, b, strict=False) if x != y)
    return a == b or (len(a) == len(b) and len(a) + n >= _LOOPED_WORDS and differ == 1)


def repetition_stat(text: str, config: GateConfig = DEFAULTS) -> str | None:
    """The first Gopher statistic ``text`` exceeds (e.g. ``dup_line_frac``), then
    :func:`loop_run`, else None; ``letter_run`` first, for :data:`_LETTER_RUN`."""
    size = len(text)
    if not size:
        return None
    if _LETTER_RUN.search(text):
        return "letter_run"
    paragraphs = _PARAGRAPHS.split(text.strip())
    compared, repeats, chars, _ = _duplicates(paragraphs, config.repeat_from)
    if compared and repeats / compared > config.dup_para_frac:
        return "dup_para_frac"
    if chars / size > config.dup_para_char_frac:
        return "dup_para_char_frac"
    lines = text.splitlines()
    compared, repeats, chars, refrains = _duplicates(lines, config.repeat_from)
    if compared and repeats / compared > config.dup_line_frac:
        return "dup_line_frac"
    if chars / size > config.dup_line_char_frac:
        return "dup_line_char_frac"
    # A refrain's words are counted once: it is said again, not looped.
    if refrains:
        text = _without_refrains(lines, refrains)
        size = len(text)
    words = _WORD.findall(text)
    # Code quoted inline names the same command or path again and again (`git switch x`).
    said = _WORD.findall(INLINE_CODE.sub(" ", text))
    for n, limit in sorted(config.top_ngram_char_frac.items()):
        counts = Counter(g for g in ngrams(said, n) if _is_phrase(g))
        if counts:
            gram, times = counts.most_common(1)[0]
            looped = times >= config.repeat_from and len(gram) * times / size > limit
            if (
                looped
                and not _items_sharing(gram, times, lines)
                and (
                    len(said) >= config.min_words_for_ngram_dups
                    or times > PARALLEL_TIMES
                    or _same_gaps(said, gram, n)
                )
            ):
                return f"top_{n}_gram"
    if len(words) >= config.min_words_for_ngram_dups:
        for n, limit in sorted(config.dup_ngram_char_frac.items()):
            if _repeated_ngram_chars(words, n) / size > limit:
                return f"dup_{n}_gram"
    share = cjk_repeated_share(text)
    if share is not None and share > config.dup_cjk_char_frac:
        return f"dup_cjk_{CJK_NGRAM}_letters"
    return loop_run(text, config)


__all__ = ["LETTER", "cjk_repeated_share", "loop_run", "ngrams", "repetition_stat"]

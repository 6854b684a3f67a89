"""Forms a prompt asks for that look like noise: an answer in such a form is no noise of it.

``Morse code for SOS`` is rightly answered ``... --- ...``, which has no word with a letter
(``empty``); ``a regex for an IPv4 address`` with a line that is mostly symbols
(``noise_chars``); ``the rows of a QWERTY keyboard`` with a keyboard walk; ``a poem with a
refrain`` with lines that repeat; ``count to 100`` with a hundred figures; ``hello in five
languages`` with words of five scripts on a line. The statistics
cannot tell these from junk, but the prompt and the answer together can: a form
(:data:`FORMS`) is asked for when the prompt names it, and answered when the answer has the
form's shape (Morse is dots and dashes, an encoding's groups are its digits, a regex has a
regex's constructs). Then the causes that form explains are waived for that answer, and only
those: a Morse answer that is also an echo is held back.

A topic is no request: ``Explain how binary search works`` names binary, but junk digits are
no binary groups, so the answer's shape decides. Only a short answer (:data:`MAX_CHARS`) is
let through: junk from a model that lost its way runs on to the token limit, far past what
any of these forms needs.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from model_foundry.lib.gates.noise import letter_script, many_figures, prose
from model_foundry.lib.gates.noise_artefacts import BLANK_RUN

# Longer than every asked-for form in the corpora's good answers (a poem with its refrain,
# 220 characters), shorter than a model's runaway answer.
MAX_CHARS = 400

# A line's label before its value (``SOS:``, ``0 =``, ``255 ->``), left out of the shape.
_LABEL = re.compile(r"(?m)^[ \t]*[\w' ]{1,24}?[ \t]*(?::|=|->|→)[ \t]*")
_MORSE = re.compile(r"[.\-–—−·•/| \t\n]+")
_REGEX_CONSTRUCT = re.compile(
    r"\\[dDwWsSbB.]|\[[^\]\n]+\]|\(\?[:=!<]|\{\d+(?:,\d*)?\}|^\^|\$$", re.M
)
# An encoding's groups, each answer all of one: binary, hex, base64 (a digit, ``+``, ``/`` or
# padding in it, or it is a word), UUIDs.
_ENCODINGS = (
    re.compile(r"[01]+"),
    re.compile(r"(?:0[xX])?[0-9a-fA-F]+"),
    re.compile(r"(?=\S*[0-9+/=])[A-Za-z0-9+/]{4,}={0,2}"),
    re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"),
)
_ADDRESS = re.compile(
    r"(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?"  # IPv4 (a CIDR too)
    r"|[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?:/\d{1,3})?"  # IPv6
    r"|[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}"  # MAC
)
_SEPARATORS = re.compile(r"[\s,;|]+")


def _tokens(answer: str) -> list[str]:
    return [t for t in _SEPARATORS.split(_LABEL.sub(" ", answer)) if t]


# Morse's longest code (a punctuation mark) has six symbols; a run past this is no letter.
_MORSE_LETTER = 7
_NOTE_LINES = 2


def _morse(answer: str) -> bool:
    """Morse's lines, and at most a note of :data:`_NOTE_LINES` lines after them (``(Words
    are separated by a slash.)``)."""
    lines = [line for line in _LABEL.sub("", answer).strip().splitlines() if line.strip()]
    codes = [line for line in lines if _MORSE.fullmatch(line.strip())]
    notes = lines[len(codes) :]
    if not codes or lines[: len(codes)] != codes or len(notes) > _NOTE_LINES:
        return False
    return all(len(t) <= _MORSE_LETTER for c in codes for t in re.split(r"[\s/|]+", c.strip()))


def _emoji(answer: str) -> bool:
    chars = [c for c in answer if not c.isspace()]
    return (
        bool(chars)
        and all(
            unicodedata.category(c) in ("So", "Sk", "Mn", "Cf", "Po", "Ps", "Pe") for c in chars
        )
        and any(unicodedata.category(c) == "So" for c in chars)
    )


def _regex(answer: str) -> bool:
    return _REGEX_CONSTRUCT.search(answer) is not None


def _encoded(answer: str) -> bool:
    tokens = _tokens(answer)
    return bool(tokens) and any(all(e.fullmatch(t) for t in tokens) for e in _ENCODINGS)


def _addresses(answer: str) -> bool:
    tokens = _tokens(answer)
    found = sum(1 for t in tokens if _ADDRESS.fullmatch(t))
    return found > 0 and found * 2 >= len(tokens)


_WORD_ENDS = ",;:、。，；：)）/"


def _languages_apart(answer: str) -> bool:
    """Each change of script between neighbouring words comes at a separator (a comma, a
    colon, a bracket, a line's end): words of several languages listed, not run together."""
    changes = apart = 0
    for line in answer.splitlines():
        last: tuple[str, str] | None = None
        for word in line.split():
            scripts = [s for s in map(letter_script, word) if s]
            if not scripts:
                continue
            script = max(set(scripts), key=scripts.count)
            if last is not None and last[0] != script:
                changes += 1
                apart += last[1][-1] in _WORD_ENDS or word[0] in "(（"
            last = (script, word)
    return changes > 0 and apart >= 0.8 * changes


def _any(answer: str) -> bool:
    return True


@dataclass(frozen=True)
class Form:
    """A form: the prompt's words that ask for it, the answer's shape, the causes it explains."""

    name: str
    asked: re.Pattern[str]
    shaped: Callable[[str], bool]
    explains: frozenset[str]
    # A table of figures asked for runs longer than the other forms (a 9x9 table, the primes
    # below 1000).
    max_chars: int = MAX_CHARS


def _words(words: str) -> re.Pattern[str]:
    # English words whole and in any case; Japanese as written.
    return re.compile(rf"(?i)(?<![A-Za-z])(?:{words})(?![A-Za-z])")


_TIMES = _words(
    r"(?:twice|thrice|(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen"
    r"|twenty|thirty|\d{1,2})\s+times)"
    r"|repeat(?:s|ed|ing)?|[0-9０-９一二三四五六七八九十]+回"
)


def _said_again(answer: str) -> bool:
    """Some three words in a row come back in ``answer``."""
    words = re.findall(r"\w+", answer.casefold())
    triples = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    return len(set(triples)) < len(triples)


def _laid_out(answer: str) -> bool:
    """A list or an output asked for may hold anything but a run of blank lines."""
    return not BLANK_RUN.search(answer)


# A refrain comes back between lines said once: half of the lines (or of a line's sentences)
# at least are different. A loop says the same few again and again.


# A sentence and its end; a question ends in a question mark (full-width in Japanese).
_SENTENCE = re.compile(r"[^.?!。？！\n]+[.?!。？！]+|[^.?!。？！\n]+$", re.M)


def _varied(answer: str) -> bool:
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    if len(lines) < _OUTPUT_LINES:
        lines = [s.strip() for s in _SENTENCE.findall(answer) if s.strip()]
    return 2 * len(set(lines)) >= len(lines)


# A program's output line: a word or figure or two (``Fizz``, ``14``, ``x = 3``).
_OUTPUT_WORDS = 3
_OUTPUT_LINES = 3
_DRAWING = re.compile(r"[+\-|/\\_=*#.:'`^<>()\[\]{}~ o\u2500-\u257f\u2580-\u259f]+")


def _short_lines(answer: str) -> bool:
    """Lines of a few words each, no one of them a third of all (``Fizz`` is a quarter of
    FizzBuzz's; a line looped is most of them)."""
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    return (
        len(lines) >= _OUTPUT_LINES
        and all(len(line.split()) <= _OUTPUT_WORDS for line in lines)
        and 3 * max(map(lines.count, set(lines))) <= len(lines)
    )


def _drawn(answer: str) -> bool:
    """Two lines or more, each box-drawing marks and blanks only."""
    lines = [line for line in answer.strip("`\n").splitlines() if line.strip()]
    return len(lines) >= 2 and all(_DRAWING.fullmatch(line) for line in lines)


_SYMBOL_CAUSES = frozenset({"empty", "noise_words", "noise_symbols", "noise_chars"})
FORMS = (
    Form("morse", _words("morse|モールス"), _morse, _SYMBOL_CAUSES),
    Form(
        "emoji",
        _words("emoji|emojis|emoticons?|kaomoji|絵文字|顔文字"),
        _emoji,
        _SYMBOL_CAUSES,
    ),
    Form(
        "regex",
        _words("regex|regexp|regexes|regular expressions?|正規表現"),
        _regex,
        _SYMBOL_CAUSES | {"noise_word_length"},
    ),
    Form(
        "addresses",
        _words("ipv4|ipv6|ip address(?:es)?|mac address(?:es)?|IPアドレス"),
        _addresses,
        _SYMBOL_CAUSES | {"noise_hex", "noise_digits"},
    ),
    Form(
        "encoding",
        _words("binary|hex|hexadecimal|octal|base64|uuids?|2進数?|8進数?|16進数?"),
        _encoded,
        _SYMBOL_CAUSES | {"noise_hex", "noise_digits", "noise_word_length", "noise_consonants"},
    ),
    Form(
        "figures",
        _words(
            r"count|counting|countdown|numbers|digits|integers|floats|decimals|primes"
            r"|powers|squares|cubes|fibonacci|sequence|series|table|grid|matrix|multiplication"
            r"|数|表|九九|累乗|並べ"
        ),
        many_figures,
        frozenset({"noise_digits"}),
        max_chars=4 * MAX_CHARS,
    ),
    Form(
        "languages",
        _words(r"languages|translat\w*|scripts|alphabets|言語|翻訳|文字"),
        _languages_apart,
        frozenset({"noise_scripts"}),
    ),
    Form(
        "links",
        _words(
            r"links?|urls?|websites?|sites|sources|references|paths?|files|director(?:y|ies)"
            r"|folders?|tree|リンク|パス|ファイル|フォルダ|ディレクトリ"
        ),
        _laid_out,
        frozenset({"noise_layout"}),
    ),
    Form("hashtags", _words("hashtags?|tags|ハッシュタグ|タグ"), _any, frozenset({"noise_layout"})),
    # A licence, a disclaimer or an advert asked for is their boilerplate.
    Form(
        "boilerplate",
        _words(
            r"licen[cs]es?|warrant(?:y|ies)|disclaimers?|copyright|terms|ads?|advert\w*"
            r"|marketing|slogans?|ライセンス|免責|広告"
        ),
        _any,
        frozenset({"noise_layout"}),
        max_chars=4 * MAX_CHARS,
    ),
    # A stack trace or a log, when the prompt asks for one.
    Form(
        "output",
        _words(r"tracebacks?|stack ?traces?|exceptions?|errors?|logs?|logging|エラー|ログ|例外"),
        _laid_out,
        frozenset({"noise_layout"}),
        max_chars=4 * MAX_CHARS,
    ),
    # A dialogue, an interview or a FAQ written, or a transcript translated: turns under
    # their roles' labels are the form. So are questions asked for, with their answers.
    Form(
        "dialogue",
        re.compile(
            r"(?i)\b(?:write|create|generate|draft|compose|make|give|show|translate|rewrite)\b"
            r".{0,60}\b(?:dialogues?|dialogs?|conversations?|transcripts?|scripts?|interviews?"
            r"|faqs?|q&a|exchanges?|chats?)\b|(?:会話|対話|台本|質疑応答|Q&A).{0,20}(?:書|作|翻訳)"
            r"|\b(?:questions|quiz(?:zes)?|faqs?|flashcards?|interview)\b|質問集|問題集|想定問答"
        ),
        _any,
        frozenset({"noise_tokens", "noise_questions"}),
        max_chars=4 * MAX_CHARS,
    ),
    # The cause is the shape here: a keyboard walk, lines that come back.
    Form("keyboard", _words("keyboard|qwerty|キーボード"), _any, frozenset({"noise_keyboard"})),
    Form(
        "refrain",
        _words("refrain|chorus|chants?|mantras?|cheers?|only (?:of )?the word"),
        _varied,
        frozenset({"repetition"}),
        # A poem's stanzas, each with its refrain, run past the short forms.
        max_chars=2 * MAX_CHARS,
    ),
    # A program's output asked for (FizzBuzz, a loop's prints): short lines that come back.
    Form(
        "program_output",
        re.compile(
            r"(?i)\b(?:fizzbuzz|outputs?)\b|\bwhat (?:does|will|would|do)\b.{0,80}\bprint\b"
        ),
        _short_lines,
        frozenset({"repetition"}),
        max_chars=4 * MAX_CHARS,
    ),
    # A drawing in characters: lines of box-drawing marks.
    Form(
        "drawing",
        _words(r"ascii|draw|drawing|diagram|box(?:es)?|grid|border|frame|図|描"),
        _drawn,
        _SYMBOL_CAUSES | {"repetition"},
    ),
    # ``Write 'echo' five times``, ``repeat it three times``: short, since a loop runs long.
    Form("times", _TIMES, _any, frozenset({"repetition", "noise_stop_words"}), max_chars=200),
    # What it repeats is often the prompt's words: an echo, but only said more than once
    # (``Repeat after me: X`` answered ``X`` is an echo still).
    Form("times_echo", _TIMES, _said_again, frozenset({"echo"}), max_chars=200),
)


_COUNT_WORDS = {
    **{
        w: n
        for n, w in enumerate(
            re.findall(r"\w+", "one two three four five six seven eight nine ten"), 1
        )
    },
    **{k: n for n, k in enumerate("一二三四五六七八九十", 1)},
}
# ``List three benefits``, ``give me 5 examples``, ``3つ挙げて``: how many items were asked for.
_ITEMS_ASKED = re.compile(
    r"(?i)\b(?:list|give|name|write|suggest|provide|share|offer|enumerate|mention|what are)"
    r"(?:\s+me)?(?:\s+the)?(?:\s+(?:first|last|top))?"
    r"\s+(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)\b"
    r"|([0-9]{1,2}|[一二三四五六七八九十])つ"
)
# ``Count from 1 to 5``, ``5まで数えて``: where a count was asked to stop (not in a base).
_COUNT_ASKED = re.compile(
    r"(?i)\bcount\b(?:\s+(?:up|down|backwards?))?(?:\s+from\s+(?P<start>\d{1,4}))?\s+to\s+"
    r"(\d{1,4})\b|(\d{1,4})まで数え"
)
# A list's items in a line, parted by commas (``2, 3, 5, 7``): each a word or two. Not
# Japanese ``、``, which parts a sentence's clauses as often.
_COMMA_ITEMS = re.compile(r"[,，]")
_ITEM_CHARS = 20


def _items_in_a_line(answer: str) -> int:
    """The most items a line lists, parted by commas, each :data:`_ITEM_CHARS` long at most;
    0 where a line's parts are clauses."""
    most = 0
    for line in answer.splitlines():
        parts = [p.strip() for p in _COMMA_ITEMS.split(line.strip().rstrip(",，."))]
        if len(parts) > 1 and all(0 < len(p) <= _ITEM_CHARS for p in parts):
            most = max(most, len(parts))
    return most


_IN_A_BASE = re.compile(r"(?i)binary|hex|octal|base\s*\d|roman|2進|16進")
_ITEM = re.compile(r"(?m)^[ \t]*(?:[-*•・]|\d{1,3}[.)])[ \t]*\S")
_INTEGER = re.compile(r"(?<![\w.])\d{1,6}(?![\w.])")
# A list past twice what was asked, by this many items at least (a bonus tip is one more), or
# this many figures past where a count was asked to stop.
OVER_BY = 4


# Whole numbers each one past the last this many times in a row (``1961 1962 1963 ...``): a
# count, which a prompt asks for (a count, numbers, a range: ``1-31``) or a model runs
# into unasked (``What year did the Berlin Wall fall?``).
COUNTING_RUN = 20
_WHOLE = re.compile(r"(?<![\w.])\d{1,9}(?![\w.]|[.,]\d)")


_BETWEEN = re.compile(r"[\s,;、，]*")


def counting(text: str) -> bool:
    """Whether :data:`COUNTING_RUN` whole numbers in a row, nothing but blanks and commas
    between them (a numbered list's items have words between), each add one to the last;
    code and its output aside."""
    run = 1
    last: int | None = None
    end = 0
    bare = prose(text)
    for match in _WHOLE.finditer(bare):
        number = int(match.group(0))
        adjacent = _BETWEEN.fullmatch(bare, end, match.start()) is not None
        run = run + 1 if adjacent and last is not None and number == last + 1 else 1
        if run >= COUNTING_RUN:
            return True
        last, end = number, match.end()
    return False


# Figures and nothing else, this many or more (a date's parts each), where no figures were
# asked for: a dump, not an answer (``Balance the combustion of propane.`` answered in
# numbers). Counted apart at blanks, commas, slashes and a hyphen between digits.
FIGURES_ALONE = 24
_FIGURE_RUNS = re.compile(r"[\s,;/]+|(?<=\d)-(?=\d)")
_ANY_LETTER = re.compile(r"[^\W\d_]")


def _figures_alone(answer: str) -> bool:
    if _ANY_LETTER.search(answer):
        return False
    runs = [r for r in _FIGURE_RUNS.split(answer) if any(c.isdigit() for c in r)]
    return len(runs) >= FIGURES_ALONE


# A prompt that asks for figures in a row: a count, numbers, a range of them (``0-31``).
_RANGE_ASKED = re.compile(r"\d+[ \t]*(?:-|–|to|〜|~|から)[ \t]*\d+")


def noise_count(answer: str, prompt: str) -> bool:
    """``noise_count``: a list of over twice the items the prompt asks for (and
    :data:`OVER_BY` more at least), :data:`OVER_BY` figures past where it asked a count to
    stop, or a count or :data:`FIGURES_ALONE` figures that no figures were asked for
    (:func:`counting`, :func:`_figures_alone`): a model that did not stop."""
    asked = _ITEMS_ASKED.search(prompt)
    if asked is not None:
        word = (asked.group(1) or asked.group(2)).lower()
        n = int(word) if word.isdigit() else _COUNT_WORDS[word]
        items = max(len(_ITEM.findall(answer)), _items_in_a_line(answer))
        if items > 2 * n and items >= n + OVER_BY:
            return True
    figures_asked = any(f.name == "figures" and f.asked.search(prompt) for f in FORMS)
    unasked = not figures_asked and not _RANGE_ASKED.search(prompt)
    if unasked and (counting(answer) or _figures_alone(answer)):
        return True
    count = _COUNT_ASKED.search(prompt)
    if count is None or _IN_A_BASE.search(prompt):
        return False
    end = int(count.group(2) or count.group(3))
    start = int(count.group("start") or 0)
    low, high = min(start, end), max(start, end)
    # Past either end: a count down that counts up runs past its start.
    return (
        sum(1 for m in _INTEGER.finditer(answer) if not low <= int(m.group(0)) <= high) >= OVER_BY
    )


_QUESTIONS = 3


def _trigrams(text: str) -> set[str]:
    words = re.findall(r"\w+", text.casefold())
    return {" ".join(words[i : i + 3]) for i in range(max(1, len(words) - 2))}


# A quiz's options: ``A)``, ``B.``, ``(C)`` opening a line or after a space.
_OPTION = re.compile(r"(?m)(?:^|\s)\(?([A-D])[).:]\s+\S")


def _options_unchosen(text: str) -> bool:
    """A question, then options A, B, C and D in that order."""
    found = list(_OPTION.finditer(text))
    labels = "".join(m.group(1) for m in found)
    at = labels.find("ABCD")
    return at >= 0 and any(mark in text[: found[at].start()] for mark in "?？")


def noise_questions(answer: str, prompt: str) -> bool:
    """``noise_questions``: :data:`_QUESTIONS` questions or more, half the sentences at least,
    two of them sharing three words in a row with another or with the prompt: the quiz or the
    interview continued (``How many legs ...? How many eyes ...?``) instead of answered; or a
    question with options A to D the prompt did not give (a quiz written, not answered). A
    question or two back (``Which version do you run?``) asks for what the answer needs."""
    if _options_unchosen(answer) and not _options_unchosen(prompt):
        return True
    sentences = [s.strip() for s in _SENTENCE.findall(answer) if len(s.strip()) > 3]
    questions = [s for s in sentences if s.endswith(("?", "？"))]
    if len(questions) < max(_QUESTIONS, len(sentences) / 2):
        return False
    grams = [_trigrams(q) for q in questions]
    asked = _trigrams(prompt)
    sharing = sum(
        1
        for i, own in enumerate(grams)
        if own & asked or any(own & other for j, other in enumerate(grams) if j != i)
    )
    return sharing >= 2


def asked_for(cause: str, answer: str, prompt: str) -> bool:
    """Whether ``prompt`` asks for a form that explains ``cause`` and the short ``answer``
    has that form's shape (see the module)."""
    if not prompt:
        return False
    return any(
        cause in form.explains
        and len(answer) <= form.max_chars
        and form.asked.search(prompt)
        and form.shaped(answer)
        for form in FORMS
    )


__all__ = ["FORMS", "MAX_CHARS", "Form", "asked_for", "noise_count", "noise_questions"]

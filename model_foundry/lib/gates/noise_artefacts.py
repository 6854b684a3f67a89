"""Noise gates for junk that is the machinery's, not a language's: bytes written as escapes,
a tokenizer's own marks, and keyboard mashing. Each reads the prose ``noise.prose`` leaves
(code spans and blocks are out of it, so an answer about escapes or tokenizers that quotes
them as code is not judged by them), with its separators.

- ``noise_escapes``: most of the text is byte escapes (``\\x8f``, ``\\u00e3``, ``\\351``);
- ``noise_tokens``: most of the text is a tokenizer's marks (``<unk>``, ``[PAD]``, WordPiece's
  ``##ing``, SentencePiece's ``▁``, byte-level BPE's ``Ġ`` and ``Ċ``), or the answer writes
  a conversation's turns under their roles' labels (``User:``, ``Assistant:``);
- ``noise_keyboard``: many letters lie in runs of neighbouring keys of one QWERTY row;
- ``noise_unfinished``: a one-line answer that stops on a word no sentence ends with
  (``The main reason this happens is``, ``その理由は、``): a stop sequence or an end-of-text
  token cut it, so its finish reason says ``stop`` and ``cut_off`` never sees it;
- ``noise_mojibake``: text decoded in the wrong encoding (UTF-8 read as Windows-1252 or
  Latin-1: ``Ã©``, ``â€™``, ``Ð¡ÐµÑ€``), by ftfy's detector (``ftfy.badness``, 6.3), which
  names the character sequences no real text has;
- ``noise_layout``: an answer that is layout, not words: a run of blank lines, nothing but
  links or paths (unless the prompt asks for them: ``asked.py``), a web page's frame, a
  table that lost its shape, hashtags alone.
"""

from __future__ import annotations

import re
from itertools import pairwise, takewhile

from ftfy.badness import badness

from model_foundry.lib.words import cut_word

# A link (the noise statistics take links out of the prose; ``noise_layout`` counts them).
URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3})")
_TOKEN = re.compile(
    r"</?(?:unk|pad|s|mask|bos|eos|cls|sep)>|\[(?:UNK|PAD|CLS|SEP|MASK|BOS|EOS)\]"
    r"|<\|[a-z_]+\|>|<0x[0-9A-Fa-f]{2}>"
    # Chat templates' turn marks: Gemma's, Llama 2's, Mistral's.
    r"|<(?:start|end)_of_turn>|\[/?INST\]|<</?SYS>>"
    # WordPiece's continuation (a Markdown heading has a space after its ``##``), a
    # SentencePiece word mark, byte-level BPE's space, newline and tab.
    r"|(?<![#\w])##\w+|\u2581(?=\w)|[\u0120\u010a\u0109]"
)
# Most of the text's characters (not spaces) inside such marks, and at least this many marks: a
# sentence that names a few (``[CLS] opens the input``) is an answer.
MARKS_SHARE = 0.5
ESCAPES_MIN = 8
TOKENS_SHARE = 0.3
TOKENS_MIN = 4


def _share(marks: list[str], prose: str) -> float:
    chars = sum(not c.isspace() for c in prose)
    return sum(map(len, marks)) / chars if chars else 0.0


def byte_escapes(prose: str) -> bool:
    """``noise_escapes``: :data:`ESCAPES_MIN` escapes or more, making :data:`MARKS_SHARE` of
    the characters."""
    found = _ESCAPE.findall(prose)
    return len(found) >= ESCAPES_MIN and _share(found, prose) >= MARKS_SHARE


# A template's slot left unfilled, the whole answer (``{{answer}}``, ``{response}``,
# ``<ANSWER>``): the prompt's template reached the model's output instead of its answer.
_SLOTS = re.compile(r"\s*(?:(?:\{\{\s*[\w.]+\s*\}\}|\$?\{[\w.]+\}|<[A-Z_]+>|\[[A-Z_]+\])\s*)+")


# A line that is one slot and nothing else, maybe a list item's (``1. {{方法1}}``).
_SLOT_LINE = re.compile(r"(?m)^[ \t]*(?:[-*+]|\d{1,2}[.)])?[ \t]*\{\{[^{}\n]{1,40}\}\}[ \t]*$")
# Lines of nothing but a slot this many times: a template's skeleton, not a template written
# on request (whose slots stand inside its sentences: ``Dear {{name}},``).
SLOT_LINES = 3


def template_slots(text: str) -> bool:
    """``noise_tokens`` too: the whole answer is template slots (:data:`_SLOTS`), or
    :data:`SLOT_LINES` of its lines are a slot alone."""
    if not text:
        return False
    return _SLOTS.fullmatch(text) is not None or len(_SLOT_LINE.findall(text)) >= SLOT_LINES


# A line opened by a chat role's label (``User:``, ``Assistant:``, ``Question:``, ``回答：``):
# the chat template's turns, which a base model writes on past its own answer.
_ROLE_LINE = re.compile(
    r"(?im)^[ \t>*_#-]*(user|assistant|human|ai|system|bot|model|question|answer"
    r"|ユーザー|アシスタント|質問|回答)[ \t*_]*[:：]"
)
ROLE_LINES = 3


def chat_roles(prose: str) -> bool:
    """``noise_tokens`` too: :data:`ROLE_LINES` lines or more opened by chat roles' labels,
    of two roles at least: the answer writes a conversation, both sides, instead of one
    turn (unless the prompt asks for one: ``asked.py``)."""
    labels = [label.lower() for label in _ROLE_LINE.findall(prose)]
    return len(labels) >= ROLE_LINES and len(set(labels)) >= 2


def tokenizer_marks(prose: str) -> bool:
    """``noise_tokens``: :data:`TOKENS_MIN` tokenizer marks or more, making
    :data:`TOKENS_SHARE` of the characters (a tokenizer's marks stand between a few letters,
    so they need a smaller share than escapes)."""
    found = _TOKEN.findall(prose)
    return len(found) >= TOKENS_MIN and _share(found, prose) >= TOKENS_SHARE


_ROWS = ("qwertyuiop[]", "asdfghjkl;'", "zxcvbnm,./")
_KEYS = {key: (row, i) for row, keys in enumerate(_ROWS) for i, key in enumerate(keys)}
# Five keys side by side on a row, either way (``ertyu``, ``lkjhg``): no word of English
# has them (``wert`` in German has four); mashing has them in runs.
KEYBOARD_RUN = 5
# The share of the letters (from this many) inside such runs over which a text is mashing.
KEYBOARD_SHARE = 0.2
KEYBOARD_LETTERS = 20


def _next_key(a: str, b: str, step: int) -> bool:
    ka, kb = _KEYS.get(a), _KEYS.get(b)
    return ka is not None and kb is not None and ka[0] == kb[0] and kb[1] - ka[1] == step


def _walked(text: str) -> set[int]:
    """The positions of ``text`` inside runs of :data:`KEYBOARD_RUN` neighbouring keys."""
    walked: set[int] = set()
    for step in (1, -1):
        start = 0
        for end in range(1, len(text) + 1):
            if end < len(text) and _next_key(text[end - 1], text[end], step):
                continue
            if end - start >= KEYBOARD_RUN:
                walked.update(range(start, end))
            start = end
    return walked


# A word that is a walk of four keys or more from end to end (``asdf``, ``hjkl``, ``fdsa``):
# words have such runs inside them (``liberty``: ``erty``) but are not made of one.
_LETTER_RUN = re.compile(r"[a-z]{4,}")
WHOLE_WALK = 4


def _whole_walks(text: str) -> set[int]:
    """The positions of ``text``'s words that are one walk of :data:`WHOLE_WALK` keys or more."""
    found: set[int] = set()
    for word in _LETTER_RUN.finditer(text):
        run = word.group(0)
        for step in (1, -1):
            if all(_next_key(a, b, step) for a, b in pairwise(run)):
                found.update(range(word.start(), word.end()))
    return found


def keyboard_walks(prose: str) -> bool:
    """``noise_keyboard``: :data:`KEYBOARD_SHARE` of the Latin letters or more lie in runs
    of :data:`KEYBOARD_RUN` neighbouring keys of one row, or in words that are such a walk of
    :data:`WHOLE_WALK` keys."""
    text = prose.lower()
    letters = sum("a" <= c <= "z" for c in text)
    if letters < KEYBOARD_LETTERS:
        return False
    walked = sum("a" <= text[i] <= "z" for i in _walked(text) | _whole_walks(text))
    return walked >= KEYBOARD_SHARE * letters


# Words an English sentence never ends with: articles, auxiliaries, prepositions, conjunctions.
_DANGLING = frozenset(
    (
        *("a", "an", "the", "is", "are", "was", "were", "be", "been", "am", "of", "to", "for"),
        *("with", "from", "by", "as", "at", "on", "in", "into", "that", "which", "because"),
        *("and", "or", "but", "if", "than", "then", "so", "while", "when", "whose", "your"),
        *("my", "our", "their", "its", "this", "these", "we", "they", "he", "she"),
    )
)
# Japanese: a comma, or a topic, subject or object particle the clause's verb must follow.
_JA_DANGLING = ("、", "，", "は", "が", "を")
# Or a polite ending cut short: a verb's stem and ``ま`` or ``まし`` (``休みま``, ``書きまし``),
# ``でし``, ``くださ``.
_JA_CUT = re.compile(r"[いきしちにひみりぎじびぴえけせてねへめれげぜでべぺ]まし?$|でし$|くださ$")
# ``Yes, it is``, ``here they are``: a verb after its pronoun ends a short reply.
_AUXILIARIES = frozenset(("is", "are", "was", "were", "am", "be", "been"))
_PRONOUNS = frozenset(("i", "you", "he", "she", "it", "we", "they", "there", "that", "this", "who"))
_LAST_WORDS = re.compile(r"([A-Za-z]+)[^A-Za-z]+([A-Za-z]+)$|([A-Za-z]+)$")


# A cut word ends a line of prose this long at least, after a space: no command, no code.
_CUT_LINE_WORDS = 6
_CUT_WORD = re.compile(r"(?<= )([a-z]{3,})$")
_CODE_MARKS = re.compile(r"[`$=(){}<>]")


def cut_mid_word(text: str) -> bool:
    """The last line is prose that stops inside a word (``... the primary key of anoth``):
    its last run of letters no word but the start of one (``words.cut_word``)."""
    last = text.rstrip().rsplit("\n", 1)[-1]
    found = _CUT_WORD.search(last)
    return (
        found is not None
        and len(re.findall(r"[A-Za-z]+", last)) >= _CUT_LINE_WORDS
        and not _CODE_MARKS.search(last)
        and cut_word(found.group(1))
    )


def unfinished(text: str) -> bool:
    """``noise_unfinished``: one line, two words or more, its last a word from
    :data:`_DANGLING`, a Japanese comma or particle from :data:`_JA_DANGLING` or a polite
    ending cut short (:data:`_JA_CUT`); or any answer cut mid-word (:func:`cut_mid_word`)."""
    if cut_mid_word(text):
        return True
    line = text.strip()
    if not line or "\n" in line or (len(line.split()) < 2 and line.isascii()):
        return False
    if line.endswith(_JA_DANGLING) or _JA_CUT.search(line):
        return len(line) > 2
    found = _LAST_WORDS.search(line)
    if found is None:
        return False
    before, last = (found.group(1) or "").lower(), (found.group(2) or found.group(3)).lower()
    return last in _DANGLING and not (last in _AUXILIARIES and before in _PRONOUNS)


# Mojibake's sequences: at least this many, and one for every this many characters (not
# spaces) of the prose. An answer that explains mojibake with an example or two (``café``
# read as ``cafÃ©``) is a real answer.
MOJIBAKE_MIN = 3
MOJIBAKE_CHARS_EACH = 20


def mojibake(prose: str) -> bool:
    """``noise_mojibake``: ftfy's count of mojibake sequences over :data:`MOJIBAKE_MIN` and
    one for every :data:`MOJIBAKE_CHARS_EACH` characters."""
    found = badness(prose)
    if found < MOJIBAKE_MIN:
        return False
    return found * MOJIBAKE_CHARS_EACH >= len("".join(prose.split()))


# Nine blank lines in a row: no answer's layout needs them (code keeps two at most).
BLANK_RUN = re.compile(r"\n(?:[ \t]*\n){9,}")
# Links or paths, at least this many, and the answer nothing else (a list's marks aside).
LAYOUT_MIN = 5
_PATH = re.compile(r"~?/?(?:[\w.@+-]+/){2,}[\w.@+-]*|[A-Za-z]:\\(?:[\w. +-]+\\)+[\w. +-]*")
_LIST_MARKS = re.compile(r"(?m)^[ \t]*(?:[-*+•>]|\d{1,3}[.)])[ \t]+|[,;()\[\]<>\"'`|]")


# A program's own output: a stack trace's lines (Python, Java, JavaScript) and log lines (a
# level first, or a time stamp then a level or a bracketed source; a schedule's lines, a time
# then words, are no log).
_TRACE_LINE = re.compile(
    r"Traceback \(most recent call last\):|File \"[^\"\n]*\", line \d+.*|at [\w$.<>/:-]+ ?\(.*\)"
    r"|(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning)\b.*|Caused by: .*|\.\.\. \d+ more"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d\S*[ \t]+(?:\[[^\]\n]+\]|[A-Z]{4,7}\b).*"
    r"|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\]?[ :].*"
)
# Lines of it, at least this many and all the answer's lines but a fence: the answer is what
# a program printed, not what the model said.
TRACE_LINES = 3


def machine_output(text: str) -> bool:
    """Whether every line of ``text`` (from :data:`TRACE_LINES`) is a stack trace's or a log's;
    the line of code a Python trace quotes under its ``File`` line counts as the trace's."""
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("```")]
    if len(lines) < TRACE_LINES:
        return False
    after_file = False
    for line in lines:
        if not (_TRACE_LINE.fullmatch(line) or after_file):
            return False
        after_file = line.startswith('File "')
    return True


# A web page's frame around its content: navigation, footer, a forum post's signature. C4's
# clean-up (Raffel et al., 2020, section 2.2) drops crawled lines naming a site's terms of
# use or privacy or cookie policy; a model trained on crawled pages writes them, and the rest
# of the frame, where its answer should be.
_PAGE_CHROME = re.compile(
    r"(?i)privacy policy|terms of (?:use|service)|all rights reserved|cookie (?:settings"
    r"|policy|preferences)|\bsitemap\b|skip to (?:main )?content|subscribe to our newsletter"
    r"|you are here:|\bposted by\b|\|\s*reply\s*\||\bjoin date\b|last edited by"
    r"|sent from my (?:iphone|android)|back to top|\bpowered by\b|contact us|about us"
    r"|サイトマップ|プライバシーポリシー|お問い合わせ|ページの(?:先頭|トップ)へ|利用規約|会社概要|©"
    # An advert's calls, and a licence's disclaimer, which a page's foot carries too.
    r"|click here|free trial|limited time|buy now|order now|\b\d{1,2}% off\b|act now"
    r"|no credit card required|sign up (?:now|today)|special offer"
    r"|without warranty|merchantability|fitness for a particular purpose|noninfringement"
    # A forum thread's and a shop's frame.
    r"|more posts from|\bcomments? · share\b|\blevel \d+ · |you've come to the right place"
    r"|add to cart|free shipping|customer reviews|read more"
    r"|送料無料|レビューを書く|この商品を見た人|ポイント\d+倍|カートに入れる|在庫あり"
)
# Distinct phrases of it: a good answer may name a privacy policy, not three of these.
PAGE_CHROME_MIN = 3


def page_chrome(text: str) -> bool:
    """:data:`PAGE_CHROME_MIN` distinct phrases or more of a web page's frame."""
    return len({m.lower() for m in _PAGE_CHROME.findall(text)}) >= PAGE_CHROME_MIN


# A Markdown table's rule line (``|---|:--:|``), and a row's cells between its pipes.
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*")


def _cells(line: str) -> int:
    row = line.strip()
    return len(row.removeprefix("|").removesuffix("|").split("|"))


def broken_table(text: str) -> bool:
    """A Markdown table whose rule line has not as many cells as its header, or whose rows
    (2 or more, half at least) have not: a table the model lost the shape of. Every table
    in the corpora's good answers keeps its width."""
    lines = text.splitlines()
    for i, line in enumerate(lines[1:], 1):
        if "|" not in lines[i - 1] or not _TABLE_RULE.fullmatch(line):
            continue
        width = _cells(lines[i - 1])
        rows = [_cells(r) for r in takewhile(lambda r: "|" in r, lines[i + 1 :])]
        off = sum(1 for n in rows if n != width)
        if _cells(line) != width or (off >= 2 and 2 * off >= len(rows)):
            return True
    return False


# Hashtags (``#kubernetes #instagood``): a social post's tags where an answer should be, this
# many at least and nearly every word one (unless asked for: ``asked.py``).
_HASHTAG = re.compile(r"(?<![\w&#])#[^\W\d_][\w]*")
HASHTAGS_MIN = 8
HASHTAGS_SHARE = 0.8


def hashtags(text: str) -> bool:
    found = len(_HASHTAG.findall(text))
    return found >= HASHTAGS_MIN and found >= HASHTAGS_SHARE * len(text.split())


# Markup a model garbled: a tag opened inside another's brackets (``<titl<title>>``,
# ``<body<<p>>``), doubled brackets. Marked-up code in a fence is the code's own.
_TAG = re.compile(r"</?[A-Za-z][\w-]*[^<>]*>")
_BROKEN_TAG = re.compile(r"<\w*<|<<\w|\w>>|</\w*(?=<)|<\w+(?=<)")
BROKEN_TAGS = 3


def broken_markup(text: str) -> bool:
    """Four tags or more outside a code fence, :data:`BROKEN_TAGS` of them garbled."""
    return (
        "```" not in text
        and len(_TAG.findall(text)) >= 4
        and len(_BROKEN_TAG.findall(text)) >= BROKEN_TAGS
    )


def layout(text: str) -> bool:
    """``noise_layout``: a run of blank lines (:data:`BLANK_RUN`), :data:`LAYOUT_MIN` links
    or paths and no other word, a program's output alone (:func:`machine_output`), a web
    page's frame (:func:`page_chrome`), a table that lost its shape (:func:`broken_table`),
    markup garbled (:func:`broken_markup`) or nothing but hashtags (:func:`hashtags`)."""
    if BLANK_RUN.search(text) or machine_output(text) or page_chrome(text):
        return True
    if broken_table(text) or broken_markup(text) or hashtags(text):
        return True
    found = URL.findall(text)
    rest = URL.sub(" ", text)
    found += _PATH.findall(rest)
    rest = _LIST_MARKS.sub(" ", _PATH.sub(" ", rest))
    return len(found) >= LAYOUT_MIN and not rest.split()

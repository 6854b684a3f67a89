"""Quality gates on planted answers: each cause on bad ones, good ones of several kinds pass,
and the planted set's precision and recall per cause (docs/datasets.md prints the table:
``python -m model_foundry_tests.unit.lib.gates.test_answers``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib.gates.answers import gate, sample_gate
from model_foundry.lib.gates.config import (
    CAUSES,
    GateConfig,
    GateConfigError,
    gate_config,
    gate_settings,
    load_gate_config,
)
from model_foundry.lib.gates.repetition import repetition_stat
from model_foundry.lib.gates.verdict import VERDICT_SCHEMA

QUESTION = "Explain in two sentences why the sky is blue during the day."
TRANSLATE = "Translate the user's English text into Japanese. Reply with the translation only."
CODE = """```python
def fizzbuzz(n: int) -> list[str]:
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out
```"""
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Planted:
    name: str
    answer: str
    expected: str | None
    prompt: str = QUESTION
    finish_reason: str | None = "stop"
    target_lang: str | None = None
    json_schema: dict[str, Any] | None = None


PLANTED = [
    # Good answers of several kinds.
    Planted("short factual", "Paris.", None, prompt="What is the capital of France?"),
    Planted("yes", "Yes", None, prompt="Is water wet? Answer yes or no."),
    Planted(
        "explanation",
        "Sunlight is scattered by the molecules of the air, and blue light, with its short "
        "wavelength, is scattered far more than red. So blue reaches our eyes from every "
        "direction of the sky.",
        None,
    ),
    Planted("code", CODE, None, prompt="Write fizzbuzz in Python."),
    Planted(
        "list",
        "- flour: 200 g\n- sugar: 100 g\n- eggs: 2\n- butter: 100 g\n- a pinch of salt",
        None,
        prompt="List what goes into a simple sponge cake.",
    ),
    Planted(
        "markdown table",
        "| planet | moons |\n|---|---|\n| Earth | 1 |\n| Mars | 2 |\n| Jupiter | 95 |",
        None,
        prompt="A table of planets and their moons, please.",
    ),
    Planted("japanese", "空が青いのは、太陽の光が空気の分子に散乱されるからです。", None),
    Planted(
        "translation",
        "空が青いのは光の散乱のためです。",
        None,
        prompt=TRANSLATE + "\nThe sky is blue because of light scattering.",
        target_lang="ja",
    ),
    Planted(
        "translation with a name",
        "OpenAI の GPT と Llama を比べました。",
        None,
        prompt=TRANSLATE + "\nWe compared OpenAI's GPT with Llama.",
        target_lang="ja",
    ),
    Planted("json", '{"name": "Ada", "age": 36}', None, json_schema=SCHEMA),
    Planted(
        "verdict",
        '{"score_1": 7, "score_2": 4, "reason": "The first is correct."}',
        None,
        json_schema=dict(VERDICT_SCHEMA),
    ),
    Planted(
        "quotes the question",
        "You asked why the sky is blue during the day. Air molecules scatter blue light "
        "more strongly than red light, so the whole sky glows blue.",
        None,
    ),
    # Figures alone answer a question that asks for them.
    Planted("a number", "42", None),
    Planted("a sum", "1234 + 8766 = 10000", None),
    Planted("a list of primes", "2, 3, 5, 7, 11, 13, 17, 19", None),
    Planted(
        "a CSV of readings",
        "date,rain_mm\n" + "\n".join(f"2026-11-{d:02},{d * 1.5}" for d in range(1, 30)),
        None,
    ),
    Planted("a chord chart", "| A7 | A7 | A7 | A7 |\n| D7 | D7 | A7 | A7 |", None),
    Planted("counting in japanese", "1、2、3、4、5、6、7、8、9、10。", None, prompt="数えて。"),
    # Said again because asked to; code marked as code.
    Planted(
        "a word n times",
        "echo echo echo echo echo",
        None,
        prompt="Write the word 'echo' five times, separated by spaces.",
    ),
    Planted(
        "a phrase three times",
        "Red lorry, yellow lorry, red lorry, yellow lorry, red lorry, yellow lorry.",
        None,
        prompt="Repeat 'red lorry, yellow lorry' three times.",
    ),
    Planted(
        "a cron line in backticks",
        "`30 2 * * 1-5`",
        None,
        prompt="What cron expression runs a job at 02:30 every weekday?",
    ),
    # Links, paths and words of many languages, asked for.
    Planted(
        "links asked for",
        "- https://docs.python.org/3/\n- https://peps.python.org/\n- https://pypi.org/\n"
        "- https://realpython.com/tutorials/\n- https://github.com/python/cpython",
        None,
        prompt="Give me five links about Python.",
    ),
    Planted(
        "files asked for",
        "src/app/main.py\nsrc/app/util.py\nsrc/db/models.py\ntests/app/test_main.py\ndocs/a/b.md",
        None,
        prompt="Which files does the project have?",
    ),
    Planted(
        "hello in five languages",
        "こんにちは, 안녕하세요, привет, γειά σου, مرحبا",
        None,
        prompt="Say hello in five languages.",
    ),
    Planted(
        "languages named in a sentence",
        "In Japanese thank you is ありがとう, in Korean 감사합니다, in Russian спасибо and in "
        "Greek ευχαριστώ.",
        None,
        prompt="How do you say thank you?",
    ),
    # Most of its words are the question's, but one is the answer: a restatement, no echo.
    Planted(
        "the question restated with its answer",
        "Yes. Paris is the capital of France.",
        None,
        prompt="What is the capital of France?",
    ),
    # Bad answers, one cause each.
    Planted(
        "truncated", "Sunlight is scattered by the molecules of", "cut_off", finish_reason="length"
    ),
    Planted("blank", "   \n\t ", "empty"),
    Planted("punctuation", "...!?", "empty"),
    Planted("digits and marks", "7 % 3 # 1", "empty"),
    Planted("list numbers only", "1.\n2.\n3.", "empty"),
    Planted("markup", "<br/><p></p>\n```\n```", "empty"),
    Planted("a code span of marks", "`!!!`", "empty"),
    Planted("not json", "Sure! Here is the person: Ada, 36.", "unparsed", json_schema=SCHEMA),
    Planted("json off schema", '{"name": "Ada"}', "unparsed", json_schema=SCHEMA),
    Planted(
        "verdict out of range",
        '{"score_1": 11, "score_2": 4, "reason": "x"}',
        "unparsed",
        json_schema=dict(VERDICT_SCHEMA),
    ),
    Planted(
        "english for japanese",
        "Blue light is scattered more than red light by the air.",
        "wrong_script",
        prompt=TRANSLATE + "\nThe sky is blue because of light scattering.",
        target_lang="ja",
    ),
    # Both an echo and the wrong script: the surer name wins.
    Planted(
        "source handed back untranslated",
        "The sky is blue because of light scattering.",
        "echo",
        prompt=TRANSLATE + "\nThe sky is blue because of light scattering.",
        target_lang="ja",
    ),
    Planted("japanese for english", "空は光の散乱のために青い。", "wrong_script", target_lang="en"),
    Planted("echo", QUESTION, "echo"),
    Planted(
        "digits after a word",
        "Sure. 83#4!5,6;7.8:9?0%1&2*,55;%$3@91!(0)?#27&.8^4[6]3~9/15|42<>",
        "noise_words",
    ),
    Planted(
        "symbol words",
        "the cat #### sat ???? on **** the &&&& mat @@@@ and $$$$ then %%%% slept",
        "noise_symbols",
    ),
    Planted(
        "letters without spaces",
        "Here " + "qwXrtzPLmnbvcXzqwertyuKLMNBVCXzas " * 3,
        "noise_word_length",
    ),
    Planted("a word in noise", "Result is (7x)#9@2^3k)!4*8@(m]2~5&q#9%", "noise_chars"),
    Planted(
        "pseudo-words",
        "toxgli rentoxgli quilloorb vuloka shntox miquilvugli vuvupratox kaze zekalo lolo "
        "zerenquilmi zeloprashn",
        "noise_stop_words",
    ),
    Planted(
        "random letters",
        "Sure: brtkwelpq zamxtrvd, oqsdfghk; plmntrsua vbcxzqel",
        "noise_consonants",
    ),
    Planted("scripts mixed in words", "Жаёβδдзяжkηмаягzдxяζгаб漢ζяqzбΩ", "noise_scripts"),
    Planted(
        "binary groups",
        "1010 0101111011010101 00100000 1011101100110010 1110 " * 2 + "1",
        "noise_digits",
    ),
    Planted("hex dump", "00000000  7b 79 95 48 ee f1 a5 4b ff 9c c1 2a 9a e9 53 bc", "noise_hex"),
    Planted("kana out of order", "ャモッアケ ンヌゥテ ョカッイソ ヲミュ ンォセ", "noise_kana"),
    Planted(
        "kanji without particles", "雨森駅語朝理海石道弱電図犬花鳥空川金土月", "noise_particles"
    ),
    Planted("byte escapes", "\\x8f\\xa2\\x01\\xc4\\x5e\\x9b\\x37\\xf0\\x6d", "noise_escapes"),
    Planted("tokenizer marks", "<unk> [PAD] <s> [SEP] </s> <mask> [UNK] <pad>", "noise_tokens"),
    Planted("keyboard mashing", "qwertyuiop[] poiuytrewq asdfghjkl;' tyuiop", "noise_keyboard"),
    Planted(
        "stopped mid-sentence",
        "The reason the build fails on Windows is that the",
        "noise_unfinished",
    ),
    Planted("stopped at a particle", "ビルドが失敗する理由は、", "noise_unfinished"),
    Planted("mojibake", "Die GrÃ¶ÃŸe der Datei betrÃ¤gt fÃ¼nf Megabyte", "noise_mojibake"),
    Planted(
        "a list that did not stop",
        "\n".join(f"{n}. Item {n}" for n in range(1, 13)),
        "noise_count",
        prompt="List three benefits of unit tests.",
    ),
    Planted("blank-line run", "Okay." + "\n" * 30 + ".", "noise_layout"),
    Planted(
        "the quiz continued",
        "How long is the Nile? How long is the Amazon in miles? Which river is wider?",
        "noise_questions",
        prompt="How long is the Nile?",
    ),
    Planted("a few digits over and over", "19" + "89" * 20, "noise_digits"),
    Planted("a template's slot", "{{answer}}", "noise_tokens"),
    Planted("one kana over and over", "あ" * 20 + "い" * 12, "repetition"),
    Planted(
        "morse that spells nothing",
        ".-" * 40,
        "empty",
        prompt="Convert the word 'hello' to Morse code.",
    ),
    Planted(
        "links and nothing else",
        " ".join(f"https://{h}.xyz/{p}" for h, p in zip("abcdef", "uvwxyz", strict=True)),
        "noise_layout",
    ),
    Planted(
        "path soup",
        " ".join(f"/{a}q/{b}z/{a}{b}k" for a, b in zip("bcdfg", "hjklm", strict=True)),
        "noise_layout",
    ),
    Planted(
        "a line of many scripts",
        "Ответ είναι 答え 정답 सही ответ ist τελικά وهو 正解",
        "noise_scripts",
    ),
    Planted("echo with a preface", "Question: " + QUESTION.lower(), "echo"),
    Planted(
        "echo framed",
        "You asked: what is the capital of France?",
        "echo",
        prompt="What is the capital of France?",
    ),
    Planted(
        "echo of the text to translate",
        "The sky is blue because of light scattering.",
        "echo",
        prompt="Summarize: The sky is blue because of light scattering.",
    ),
    Planted("loop of lines", "\n".join(["I am sorry, I cannot help."] * 8), "repetition"),
    Planted("loop of a phrase", "the sky is blue " * 30, "repetition"),
    Planted(
        "loop of paragraphs",
        "\n\n".join(["Blue light scatters more.", "Red light scatters less."] * 4),
        "repetition",
    ),
    Planted(
        "loop after a good start",
        "Sunlight is scattered by air. " + "And then the light is scattered again by air. " * 6,
        "repetition",
    ),
]


def verdict(p: Planted) -> str | None:
    return gate(
        p.answer,
        finish_reason=p.finish_reason,
        prompt=p.prompt,
        target_lang=p.target_lang,
        json_schema=p.json_schema,
    )


@pytest.mark.parametrize("planted", PLANTED, ids=[p.name for p in PLANTED])
def test_each_planted_answer_gets_its_cause(planted: Planted) -> None:
    assert verdict(planted) == planted.expected


def test_every_cause_is_planted() -> None:
    assert {p.expected for p in PLANTED} - {None} == set(CAUSES)


def test_gophers_statistics_name_what_repeats() -> None:
    assert repetition_stat("\n\n".join(["same paragraph here"] * 5)) == "dup_para_frac"
    assert repetition_stat("one line\n\n" + "\n".join(["same line"] * 4)) == "dup_line_frac"
    assert repetition_stat("word salad " * 10) == "top_2_gram"
    # Repeated brace lines of code are not lines with words: not compared.
    assert repetition_stat("if a {\n  b();\n}\nif c {\n  d();\n}\n") is None


# Loops Gemma 3 270M wrote (benchmarks/gates/gemma_answers.py), and the shapes of good answers
# that write the same thing many times but never 16 times in a row.
LOOPS = {
    "line_run": [
        "Comparison of TCP and UDP.\n" + "-\n" * 70,
        "matrix multiply [[1,2],[3,4]] by [[0,1],[1,0]]\n" + "(1,0)\n" * 23,
        "Area under the curve\n4-19\n41\n" + "2016\n" * 27,
    ],
    "counted_run": [
        "(1) 読み方\n" + "\n".join(f"({n}) 語順" for n in range(2, 22)),
        "The recursive function:\n" + "\n".join(f"$n = {n};" for n in range(2, 19)),
    ],
    "token_run": ["when you're running a 40k in a" + " 40k" * 37, "Zeros: " + "0, " * 60],
    "unit_run": ["In Python, a tuple holds objects.\n4." + "1." * 70, "summation\n" + "1." * 79],
    "dup_cjk_10_letters": [
        "雨の駅に乗り、雨の駅の景色を見ながら、雨の駅に\n降り立つ。雨の駅の景色を眺めるのに、"
        "雨の駅の\n景色を眺めながら、雨の駅に降り立つ。雨の\n駅の景色を眺めるのに、雨の駅の景色を"
        "眺めながら、\n雨の駅に降り立つ。雨の駅の景色を眺めるのに\n雨の駅の景色を眺めながら、雨の駅に"
        "降り立つ。\n雨の駅の景色を眺めるのに、雨の駅の景色を\n眺めながら、雨の駅に降り立つ。"
    ],
}
NOT_LOOPS = [
    "Count to twenty:\n" + "\n".join(str(n) for n in range(1, 21)),
    "Seven times table:\n" + "\n".join(f"7 x {n} = {7 * n}" for n in range(1, 21)),
    "Chapters:\n" + "\n".join(f"Chapter {n}: {t}" for n, t in enumerate("abcdefghijklmnopqrst")),
    "Powers of two:\n" + "\n".join(f"2^{n} = {2**n}" for n in range(17)),
    "The zero matrix:\n" + "\n".join(["0 0 0 0 0 0 0 0"] * 8),
    "Title\n" + "=" * 60 + "\n\nSome text under a heading, then a rule.\n" + "-" * 60,
    "The key is 0x" + "0" * 64 + " and the padding AAAAAAAAAAAAAAAAAAAAAAAAAAAA==.",
    "| n | square |\n|---|---|\n" + "\n".join(f"| {n} | {n * n} |" for n in range(1, 30)),
    "```js\nfunction f() {\n  if (a) {\n    if (b) {\n      g();\n    }\n  }\n}\n```",
    "Dots lead to the page: Introduction " + "." * 40 + " 1",
    "`np.zeros(20)` prints:\n```\n[" + " ".join(["0."] * 20) + "]\n```",
    # Japanese that names its terms again and again, and a question that says a phrase twice.
    "アクセストークンは短命の証明書のようなもので、APIを呼ぶたびに送ります。"
    "リフレッシュトークンは長命で、アクセストークンの有効期限が切れたときに新しい"
    "アクセストークンを受け取るためだけに使います。アクセストークンが漏れても被害は"
    "短時間で済みます。リフレッシュトークンは安全な場所に保管し、定期的に取り替えます。",
    "東京から大阪までの新幹線の料金と、大阪から東京までの新幹線の料金は同じですか？",
]


@pytest.mark.parametrize(("stat", "text"), [(s, t) for s, ts in LOOPS.items() for t in ts])
def test_a_loop_of_marks_figures_or_one_token_is_repetition(stat: str, text: str) -> None:
    assert repetition_stat(text) == stat
    assert gate(text) == "repetition"


@pytest.mark.parametrize("text", NOT_LOOPS)
def test_lists_tables_rules_and_padding_are_no_loop(text: str) -> None:
    assert repetition_stat(text) is None


def test_how_long_a_run_makes_a_loop_comes_from_the_config() -> None:
    text = "x\n" + "-\n" * 20
    assert gate(text) == "repetition"
    assert gate(text, config=gate_settings("gates", {"run_from": 30})) is None


def test_thresholds_and_switches_come_from_the_config() -> None:
    loop = "\n".join(["I am sorry, I cannot help."] * 8)
    assert gate(loop, config=GateConfig(skip=frozenset({"repetition"}))) is None
    lenient = GateConfig(dup_para_char_frac=1.0, dup_line_frac=1.0, dup_line_char_frac=1.0,
                         top_ngram_char_frac={}, dup_ngram_char_frac={})  # fmt: skip
    assert gate(loop, config=lenient) is None
    assert gate("x y z w", prompt="a x y z w b", config=GateConfig(echo_share=1.0)) == "echo"
    assert gate("x y z w v", prompt="a x y z w b", config=GateConfig(echo_share=1.0)) is None


def test_the_hygiene_files_gates_section_per_dataset(tmp_path: Path) -> None:
    raw = {"default": {"skip": ["echo"], "dup_line_frac": 0.5}, "nightly": {"echo_share": 0.9}}
    nightly = gate_config(raw, "nightly")
    assert nightly.skip == {"echo"} and nightly.dup_line_frac == 0.5 and nightly.echo_share == 0.9
    assert gate_config(raw, "other").echo_share == GateConfig().echo_share
    with pytest.raises(GateConfigError, match=r"gates.nightly.skip must be a list of causes"):
        gate_config({"nightly": {"skip": ["typo"]}}, "nightly")
    with pytest.raises(GateConfigError, match=r"gates.default.loops is not a gate setting"):
        gate_config({"default": {"loops": 1}}, "x")
    path = tmp_path / "hygiene.yaml"
    assert load_gate_config("x", path) == GateConfig()
    path.write_text("pii: {emails: true}\ngates: {x: {skip: [empty]}}\n")
    assert load_gate_config("x", path).skip == {"empty"}


def test_a_sample_record_is_gated_from_its_stored_columns() -> None:
    record = {
        "messages": [
            {"role": "system", "content": TRANSLATE},
            {"role": "user", "content": "Good morning, everyone."},
            {"role": "assistant", "content": "Good morning, everyone."},
        ],
        "response": "Good morning, everyone.",
        "finish_reason": "stop",
        "params": json.dumps({"temperature": 0.2}),
    }
    assert sample_gate(record, GateConfig()) == "wrong_script"
    assert sample_gate({**record, "finish_reason": "length"}, GateConfig()) == "cut_off"
    schema = json.dumps({"json_schema": SCHEMA})
    assert sample_gate({**record, "messages": record["messages"][1:], "params": schema},
                       GateConfig()) == "unparsed"  # fmt: skip


def precision_recall() -> dict[str, tuple[float, float, int]]:
    """Per cause: precision, recall and how many were planted."""
    got = [(p.expected, verdict(p)) for p in PLANTED]
    out = {}
    for cause in CAUSES:
        flagged = sum(g == cause for _, g in got)
        planted = sum(e == cause for e, _ in got)
        hit = sum(e == g == cause for e, g in got)
        out[cause] = (hit / flagged if flagged else 1.0, hit / planted if planted else 1.0, planted)
    return out


def test_precision_and_recall_on_the_planted_set() -> None:
    assert all(p == r == 1.0 for p, r, _ in precision_recall().values())


if __name__ == "__main__":
    good = sum(p.expected is None for p in PLANTED)
    print(f"{len(PLANTED)} planted answers, {good} good\n")
    print("| cause | planted | precision | recall |\n|---|---|---|---|")
    for cause, (p, r, n) in precision_recall().items():
        print(f"| `{cause}` | {n} | {p:.2f} | {r:.2f} |")


@pytest.mark.parametrize(
    "text",
    [
        # Figures and the signs between them are an answer, written tight or full-width.
        "2^8 = 256\n2^9 = 512\n2^10 = 1024",
        "2×3=6\n2×4=8\n2×5=10",
        "2 ** 16 = 65536",
        "１×１＝１　１×２＝２",
        "2⁸ = 256",
    ],
)
def test_figures_with_signs_between_them_are_not_empty(text: str) -> None:
    assert gate(text) is None


def test_a_refrain_between_lines_said_once_is_no_loop() -> None:
    refrain = "Sleep now, little one, sleep"
    song = "\n".join([refrain, "The stars are out above", refrain, "The wind is soft and low",
                      refrain, "And morning waits for you", refrain])  # fmt: skip
    assert gate(song) is None
    # The same line between lines that repeat too, or back to back, is a loop.
    assert gate("\n".join([refrain, "The stars are out above"] * 4)) == "repetition"
    assert gate("\n".join([refrain] * 4 + ["The stars are out above"])) == "repetition"
    # Said more often than a song's refrain is, it is a loop whatever stands between.
    verses = [f"Verse line number {w}" for w in ("one", "two", "three", "four", "five")]
    assert gate("\n".join(x for v in verses for x in (refrain, v))) == "repetition"


# (prompt, answer, the cause the answer gets without its prompt): forms a prompt asks for.
ASKED_FORMS = [
    ("Morse code for SOS, please.", "... --- ... / ... --- ...", "empty"),
    ("Morse code for SOS and HELP", "SOS: ... --- ...\nHELP: .... . .-.. .--.", "noise_words"),
    ("Three emoji for a sunny day.", "☀️ 🌞 😎", "empty"),
    ("A regex for a 24-hour time like 09:45?", r"^([01]?\d|2[0-3]):[0-5]\d$", "noise_chars"),
    ("A regex for a MAC address in lowercase", r"^(?:[0-9a-f]{2}:){5}[0-9a-f]{2}$", "noise_words"),
    (
        "The letter rows of a QWERTY keyboard, one line.",
        "qwertyuiop asdfghjkl zxcvbnm",
        "noise_keyboard",
    ),
]


@pytest.mark.parametrize(("prompt", "answer", "cause"), ASKED_FORMS)
def test_a_short_answer_in_the_form_its_prompt_asks_for_is_kept(
    prompt: str, answer: str, cause: str
) -> None:
    assert gate(answer) == cause  # the form alone looks like noise
    assert gate(answer, prompt=prompt) is None
    # Another prompt does not ask for it.
    assert gate(answer, prompt="What is the capital of France?") == cause


# (prompt, junk): the prompt names a form as its topic, the answer does not have its shape.
TOPIC_NOT_FORM = [
    (
        "Explain how binary search works.",
        "Sure: 0110 9;2)(4 1101 ;;0 1(0) 11;0)) 10 0101 (;;)1 0111",
    ),
    (
        "Why do people still learn Morse code?",
        "Sure!!! ### @@@ ^^^ ~~~ ||| +++ === !!! ### @@@ ^^^ ~~~",
    ),
    ("How do regex engines backtrack?", "xkqzv bplmt wrrtn qzxvk plmbt zzxqv kptrw bbmlq"),
    # Words are no base64 groups; a keyboard named waives only a keyboard walk.
    ("Is binary search faster than hex lookup?", "xkqzv bplmt wrrtn qzxvk plmbt zzxqv kptrw"),
    ("Why does my keyboard double letters?", "xkqzv bplmt wrrtn qzxvk plmbt zzxqv kptrw"),
]


@pytest.mark.parametrize(("prompt", "junk"), TOPIC_NOT_FORM)
def test_a_form_named_as_a_topic_waives_nothing_for_junk(prompt: str, junk: str) -> None:
    assert gate(junk) is not None
    assert gate(junk, prompt=prompt) == gate(junk)


def test_a_long_answer_in_an_asked_form_is_judged_as_any_other() -> None:
    assert gate("... --- ... " * 60, prompt="Morse code for SOS, please.") is not None
    # The waiver covers the causes the form explains, not an echo.
    prompt = "Repeat after me: the quick brown fox jumps over the lazy dog near the river bank"
    answer = "the quick brown fox jumps over the lazy dog near the river bank"
    assert gate(answer, prompt=prompt) == "echo"

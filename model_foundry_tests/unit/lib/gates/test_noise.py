"""The noise gates on answers written by people who had read no gate code.

``fixtures/independent/`` (noise_answers, good_answers) was written first and the gates were
shaped on it; ``fixtures/heldout_answers/`` was written later by another author and first
measured after the gates existed; the misses it showed then were mended in general ways
(figures, hex hashes, paths and NFKC), so it is no longer held out either. The floors say what
the gates do on these files; ``docs/datasets.md`` gives the figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_foundry.lib.gates.answers import gate
from model_foundry.lib.gates.config import CAUSES, GateConfig, gate_settings
from model_foundry.lib.gates.noise import NOISE_CAUSES, noise_cause, noise_stats

FIXTURES = Path(__file__).parents[3] / "fixtures"


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _verdict(row: dict[str, Any]) -> str | None:
    return gate(row["answer"], prompt=row.get("prompt") or "")


def test_every_good_answer_is_kept() -> None:
    good = _load(FIXTURES / "independent" / "good_answers.jsonl")
    good += _load(FIXTURES / "heldout_answers" / "good.jsonl")
    assert not [(r["id"], _verdict(r)) for r in good if _verdict(r) in NOISE_CAUSES]
    # By every gate: one miss of 258, a product rule whose "sin x" comes four times in 95
    # characters (Gopher's top 2-gram share); figures, tables and chord charts are kept.
    held = [r["answer"] for r in good if _verdict(r) is not None]
    assert len(held) <= 1 and all("sin x" in a for a in held), held
    assert len(good) >= 250


def test_the_gate_corpora_answers_kept_stay_kept() -> None:
    rows = [
        r
        for name in ("corpus_a.jsonl", "corpus_b.jsonl")
        for r in _load(FIXTURES / "gate_answers" / name)
        if r["expected"] == "kept"
    ]
    assert [r["id"] for r in rows if noise_cause(r["answer"])] == []


def test_noise_is_held_back() -> None:
    noise = _load(FIXTURES / "independent" / "noise_answers.jsonl")
    held = [r["id"] for r in noise if _verdict(r) is not None]
    # All 86 (85 before backticks inside a line stopped being read as a code fence).
    assert len(held) == len(noise) == 86


def test_held_out_noise_recall_is_what_the_docs_say() -> None:
    noise = _load(FIXTURES / "heldout_answers" / "noise.jsonl")
    kept = [r["id"] for r in noise if _verdict(r) is None]
    # All 114 (87 with Gopher's four statistics alone: random consonant words, keyboard
    # mashing, pseudo-syllables, hex dumps, binary and digit groups, mixed scripts and
    # half-width kana passed them; the five later gates take those, docs/datasets.md).
    assert kept == [] and len(noise) == 114


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("Sure. 83#4!5,6;7.8:9?0%1&2*,55;%$3@91!(0)?#27&.8^4[6]3~9/15|42<>", "noise_words"),
        ("はい。１２３！？＃＄％８９＠＆（）＊４１＃！？７＾＄２〜", "noise_chars"),
        (
            "the cat #### sat ???? on **** the &&&& mat @@@@ and $$$$ then %%%% slept",
            "noise_symbols",
        ),
        ("Here " + "qwXrtzPLmnbvcXzqwertyuKLMNBVCXzas " * 3, "noise_word_length"),
    ],
)
def test_each_statistic_has_its_own_cause(text: str, cause: str) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    "text",
    [
        "date,temp_c\n2026-11-01,7.6\n2026-11-02,19.1\n2026-11-03,6.5\n2026-11-04,2.3",
        "The checksum is 3f8a2c71e9b04d5a66c2f1e0b7d93a48c5e21f06ab7d49e38c10f5b2a6d7e914.",
        "Use this:\n```\n$ grep -E '^[0-9]{3}-[0-9]{4}$' *.txt | awk -F: '{print $1}'\n```",
        "About 48.8584° N, 2.2945° E.",
        "東京の人口は約1,400万人で、面積は2,194km²です。",
    ],
)
def test_figures_hashes_and_code_are_no_noise(text: str) -> None:
    assert noise_cause(text) is None


def test_too_little_text_is_not_judged() -> None:
    assert noise_stats("42!") is None
    assert noise_cause("ok ##") is None


def test_a_structured_answer_is_judged_by_its_schema_not_by_noise() -> None:
    answer = '{"a": [1, 2, 3], "b": {"c": null}, "d": "#$%^&*()!@#$%^&*"}'
    assert gate(answer, json_schema={"type": "object"}) is None


def test_thresholds_and_skips_come_from_the_gates_settings() -> None:
    text = "Sure. 83#4!5,6;7.8:9?0%1&2*,55;%$3@91!(0)?#27&.8^4[6]3~9/15|42<>"
    assert set(NOISE_CAUSES) <= set(CAUSES)
    loose = gate_settings("gates", {"noise_letter_words": 0.0, "noise_chars": 1.0})
    assert noise_cause(text, loose) is None
    skipped = GateConfig(skip=frozenset({"noise_words"}))
    assert noise_cause(text, skipped) == "noise_chars"


@pytest.mark.parametrize(
    "text",
    [
        "Served by ~gemma-4-26b-a4b-it-iq4_xs#578598582 on slot kindergarten",
        "Upgrade to v1.2.3-rc1 then pin torch==2.13.0+cpu and rerun build_42",
    ],
)
def test_model_names_versions_and_build_ids_are_no_noise(text: str) -> None:
    stats = noise_stats(text)
    assert stats is not None and stats.noise_chars == 0.0
    assert noise_cause(text) is None


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # Pseudo-words made of a few syllables: pronounceable, but no function word.
        (
            "zelopra renzeze lokapra shnkaka renorbvu miren logli zeglitox orbshn renzepra "
            "kagli mitox zeka",
            "noise_stop_words",
        ),
        # Random letters: five consonants in a row in most words.
        ("Brtkwelpq zamxtrvd oqsdfghk plmntrsua vbcxzqel qwrtzpo", "noise_consonants"),
        ("Бγ바zЖ龍δщ다qΩяk나Я가Щ字Жва라龍яΩzЩЖ", "noise_scripts"),
        (
            "0110 11100100 1010110110000101 0100 1011 0010010111110011 0001 111 10 01011",
            "noise_digits",
        ),
        ("Result: 2 60 9176308 8 74 6 9617881 9864 0761 4 24 2378", "noise_digits"),
        (
            "00000000  a9 16 f3 21 90 9a 34 94 c1 02 48 64 6b a8 c6 05\n"
            "00000010  6a 68 3e 4c 28 83 db 3d 83 c1 18 94 5e ea 93 43",
            "noise_hex",
        ),
        # Longer than any digest written in hex (SHA-512's 128): a dump, not a figure.
        ("c11760e834ca0dd537b54e5dab2638cd" * 5, "noise_words"),
        # Half-width kana: NFKC parts its voicing marks from the kana, which stay one word.
        ("了解しました！" + "ｴﾟﾗｷﾟｳｷｹｷｱｴﾝｱﾛﾟｸｷｺﾟｸｴｵｹﾝﾝｹﾟﾛｵﾙﾛｶﾙﾘﾙｸｷｵｴｳｶ" * 2, "noise_word_length"),
        # Backticks inside a line are no fence: the noise after them is judged.
        ("Answer _`6|{6/@-_+,2:@%```(8>@=<?2.)5><_424~#>>'+/?7''$&71=7&>2!8:", "noise_words"),
    ],
)
def test_the_later_gates_each_have_their_own_cause(text: str, cause: str) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    "text",
    [
        # Sentences in languages whose function words the list holds, and lists without any.
        "Bugün hava çok güzel olduğu için parkta uzun bir yürüyüş yaptık ve sonra kahve içtik.",
        "Hôm nay trời rất đẹp nên chúng tôi đã đi dạo trong công viên và uống cà phê với bạn bè.",
        "Dzisiaj rano poszedłem do sklepu i kupiłem chleb, mleko oraz jajka na śniadanie dla nas.",
        "Ingredients:\n- flour\n- sugar\n- eggs\n- butter\n- milk\n- salt\n- baking powder\n"
        "- vanilla extract\n- lemon zest\n- cinnamon\n- nutmeg\n- cream cheese",
        "Keywords: machine learning, neural networks, gradient descent, backpropagation, "
        "convolution, transformers, attention, embeddings, tokenization, regularization",
        "Tokyo Osaka Kyoto Nagoya Sapporo Fukuoka Kobe Kawasaki Saitama Hiroshima Sendai Chiba",
        "Theatre people traditionally thought wishing someone good luck directly would bring "
        "bad luck.",
        # German's consonant runs, in a real sentence.
        "Die Kraftfahrzeug-Haftpflichtversicherung ist Pflicht, und die Rechtsschutzversicherung "
        "ist freiwillig; beide schützen vor hohen Kosten nach einem Unfall in Deutschland.",
        # Scripts side by side, not inside words: Greek variables, Japanese with Latin terms.
        "The Δx·Δp ≥ ħ/2 relation, with σx and σp the standard deviations of position and "
        "momentum.",
        "私たちのチームは毎日SlackとGitHubを使っています。",
        "UK /ˈskwɪr.əl/, US /ˈskwɝː.əl/.",
        # Numbers in order, of one width, or few; bytes of one width; a few hex bytes.
        "0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377",
        "PINs: 0482 1937 5521 0093 7710 6628 3305 9184 0267 4451 8873 1209",
        "01001000 01100101 01101100 01101100 01101111 00100000 01010111 01101111 01110010",
        "Random numbers: 482 7 91 356 12 904 77 3 618 245 59 830",
        "Hello World in hex: 48 65 6c 6c 6f 20 57 6f 72 6c 64",
        "SHA-512: " + "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce" * 2,
    ],
)
def test_what_the_later_gates_leave(text: str) -> None:
    assert noise_cause(text) is None


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # Pseudo-words in sentences: each clause shorter than 12 words, none a function word.
        (
            "Vorumpla tenquistor marvelix dunobra, kelipran sotumax fribolen. Quarmento "
            "belistrave ogrundel paximor tel. Morvanti plexudo carnibrel sostumax.",
            "noise_stop_words",
        ),
        # A C array of random bytes, and xxd's offsets with their colons.
        (", ".join(f"0x{(i * 73 + 29) % 256:02x}" for i in range(24)), "noise_hex"),
        (
            "00000000: 7a3c 19e0 b4d2 6f81 2c9a e357 08bb 4f16  z<....o.,..W..O.\n"
            "00000010: d0c4 91a7 3e5b 72f9 a06d 15c8 e2b3 6a4e  ....>[r..m....jN",
            "noise_hex",
        ),
        # Random katakana, half-width kana and mojibake: small kana after a kanji or a kana
        # that takes none, ッ before a vowel, ン opening a word, a voicing mark left alone.
        ("ョルケッアモ ンテカャヌ ゥホリッイ ヲセュネ ンミョャソ ッエクォ", "noise_kana"),
        ("ﾝﾀｯｴﾐｮ ﾊﾟﾁｬﾅﾞ ｯｵﾘｭｹ ｧﾓﾝﾇｨ ﾃﾞｰﾝｮ", "noise_kana"),
        ("縺ｮ繝ｪ縺ｯ繧ｹ縺ｧ縺ｮ繧ｵ蜿ｯ縺ｮ", "noise_kana"),
        # Kanji and katakana strung together with no hiragana between them.
        ("はい。" + "森駅語雨朝理海石道弱電" + "ラパネゾキボ" + "図犬花鳥", "noise_particles"),
        ("七千三九二五八百四一六万九億三七二千五八一四三", "noise_particles"),
        # Byte escapes, and a tokenizer's marks.
        ("\\xd3\\x0f\\x9a\\x41\\xe7\\x22\\x5c\\xb8\\x03\\x7d\\xfe", "noise_escapes"),
        ("\\344\\273\\212\\346\\227\\245\\343\\201\\257\\342", "noise_escapes"),
        ("[CLS] <pad> [MASK] </s> [SEP] <unk> <pad> [UNK] <s>", "noise_tokens"),
        ("Ġhello ĠworldĊĠĠĠĠĊĉĠĠtheĠĠĊĊĠ", "noise_tokens"),
        ("##ing ##ly [UNK] ##ness ##ed ##er ##tion ##s", "noise_tokens"),
        # Rows of the keyboard walked over, back and forth.
        ("asdfgh lkjhgf qwerty poiuytr zxcvbn tyuiop hjkl;' ", "noise_keyboard"),
    ],
)
def test_the_newest_gates_each_have_their_own_cause(text: str, cause: str) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    "text",
    [
        # Terse prose, and a list of noun phrases one to a line.
        "Nous partons demain matin. Le train part de Lyon à huit heures pile, puis Paris.",
        "Features:\nfast incremental build caching\nparallel test execution support\n"
        "remote artifact storage backend\nautomatic dependency graph analysis",
        # A short hex constant or two; a few bytes of a C array.
        "Masks: 0xff00 and 0x00ff, e.g. 0x1234 & 0xff00 = 0x1200.",
        # Japanese with small kana, ッ, ン, voiced and half-width kana where words have them.
        "ちょっと待ってください。キャッシュをクリアしてからシャットダウンします。",
        "振込名義「ｶ)ｼﾞｬﾊﾟﾝﾃﾞｰﾀ」は株式会社ジャパンデータのことです。",
        "フュージョン、ティーカップ、ヴァイオリン、デュエットはどれも外来語です。",
        # Long compounds and lists of kanji, Chinese with its function characters.
        "情報処理安全確保支援士試験、オーケストレーションプラットフォーム。",
        "北海道、青森県、岩手県、宮城県、秋田県、山形県、福島県、茨城県、栃木県。",
        "我们今天早上在公园里散步然后一起去咖啡馆喝咖啡和吃蛋糕。",
        # Escapes and tokens named, as code or in a sentence.
        "UTF-8 writes é as two bytes, `\\xc3\\xa9`; in Python that is b'\\xc3\\xa9'.",
        "BERT puts [CLS] before the input and [SEP] between sentences; ##ing joins a piece.",
        # Words with keys side by side, and a password named.
        "Werte und Bewertungen: never use qwerty as a password; the type writer was loud.",
    ],
)
def test_what_the_newest_gates_leave(text: str) -> None:
    assert noise_cause(text) is None


# Written for this test from heldout5's tuned half's shapes (not copied from it).
_TIMETABLE = "| Departs | Platform | Arrives |\n|---|---|---|\n" + "".join(
    f"| {h:02d}:{m:02d} | {p} | {h + 1:02d}:{(m + 7) % 60:02d} |\n"
    for h, m, p in [(6, 5, 1), (6, 40, 12), (7, 3, 2), (7, 26, 1), (8, 0, 3), (8, 45, 11)]
)
_BINARY = "| Dec | Bin | Hex |\n|---|---|---|\n" + "".join(
    f"| {n} | {n:04b} | {n:X} |\n" for n in range(16)
)
_RANDOM_IN_TABLE = "| a | b |\n|---|---|\n" + "".join(
    f"| {x} | {y} |\n"
    for x, y in [("0712", "93"), ("5", "0048"), ("331", "07"), ("09", "1123"), ("44", "006"),
                 ("0031", "8"), ("72", "0905"), ("008", "61"), ("913", "04"), ("06", "557")]
)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # Hundreds of digits after a lead: no measure has so many.
        ("Answer: 3." + "".join(str((i * 7 + 3) % 10) for i in range(160)), "noise_digits"),
        # Random digit groups still, one table column at a time.
        (_RANDOM_IN_TABLE, "noise_digits"),
    ],
)
def test_long_digit_runs_and_random_table_columns_are_noise(text: str, cause: str) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    "text",
    [
        # A timetable and a binary table: each column in order or of one width, though rows
        # mix widths and zero-padding.
        _TIMETABLE,
        _BINARY,
        # Pi to the fifty places asked for.
        "3.14159265358979323846264338327950288419716939937510\n\nThat is 50 places.",
    ],
)
def test_tables_of_times_and_codes_and_asked_for_digits_are_no_noise(text: str) -> None:
    assert noise_cause(text) is None


@pytest.mark.parametrize(
    "text",
    [
        # Short and complete, without a full stop; a line ending in a name or a figure.
        "Paris",
        "Yes, it is",
        "The answer is 42",
        "東京です",
        "見てください",
        # More than one line: code or a list, whatever its last word.
        "Steps:\n1. open the file\n2. read it and",
        "if x is None:\n    return the",
    ],
)
def test_what_the_unfinished_gate_leaves(text: str) -> None:
    assert noise_cause(text) != "noise_unfinished"


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # UTF-8 read as Windows-1252: Russian, French, German.
        ("Ð¡ÐµÑ€Ð²ÐµÑ€ Ð¿ÐµÑ€ÐµÐ·Ð°Ð¿ÑƒÑ‰ÐµÐ½ Ð¸ Ñ€Ð°Ð±Ð¾Ñ‚Ð°ÐµÑ‚", "noise_mojibake"),
        ("Le cafÃ© est trÃ¨s bon, merci Ã  vous pour lâ€™accueil.", "noise_mojibake"),
        ("Die GrÃ¶ÃŸe der Datei betrÃ¤gt fÃ¼nf Megabyte", "noise_mojibake"),
        # An answer that explains mojibake with an example, and accented words.
        ("Mojibake: 'café' read as Windows-1252 becomes 'cafÃ©'.", None),
        ("naïve façade, Zürich, São Paulo, Straße, ½ cup at 25 °C for €3", None),
    ],
)
def test_mojibake_is_noise_an_example_of_it_is_not(text: str, cause: str | None) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # A good start, then real words in no order: two function words in 21.
        (
            "To fix it, add the package to requirements.txt and then quietly neither yesterday "
            "because softly river window therefore purple orange lantern kernel perhaps spoon "
            "compile velvet umbrella glass seven",
            "noise_stop_words",
        ),
        # A long sentence of a terse register still has its function words.
        (
            "Install the package with pip, then run the tests in a fresh virtual environment "
            "so that nothing from the system site packages leaks into the results you compare",
            None,
        ),
        # English words in no order, a few function words sprinkled: 3 of 22 words.
        (
            "Lantern velvet the orbit cabinet nonetheless spoon, harbour quietly ledger of "
            "thunder kettle, meanwhile copper radish purple the compass firmly yesterday.",
            "noise_stop_words",
        ),
        # The same share in a language the list holds only a few function words of is kept:
        # two of 14 words are listed, and neither is only English.
        (
            "Saya pergi ke pasar pagi untuk membeli sayur segar, buah mangga dan roti manis "
            "bersama ibu saya kemarin.",
            None,
        ),
    ],
)
def test_a_long_stretch_with_few_function_words_is_noise(text: str, cause: str | None) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # Nouns and conjunctions drawn at random, no punctuation between them.
        (
            "窓の鍵しかし電車ゆっくり本棚そして青い傘なぜなら時計を机それから夕焼け。",
            "noise_stop_words",
        ),
        # A good start, then salad: the salad's run is judged on its own.
        (
            "ポートは設定ファイルで変えられます。猫ボタンしかし明日の雨ですが東京よろしく設定。",
            "noise_stop_words",
        ),
        # Each conjunction set off by punctuation, or one inside a run, is prose.
        (
            "設定を変えました。しかし、反映されません。なぜなら、再起動していないからです。",
            None,
        ),
        ("このツールは安くてしかも速いので、確認したいのですがよろしいでしょうか。", None),
        ("雨だから今日は家で本を読みます。そして、夜は早く寝ます。", None),
    ],
)
def test_japanese_conjunctions_in_one_unpunctuated_run_are_salad(
    text: str, cause: str | None
) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # A good start, then fragments and symbols to the end of the line.
        (
            "Tides are caused mainly by the pull of the moon "
            "7& qz 00 ]] xx 4 ~~ @@ 00 ^^ 11 kk 0x0x ## zz",
            "noise_symbols",
        ),
        # A sum written out ends in figures and arithmetic's marks, not junk.
        ("The sum is 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 = 55", None),
        # Symbols in the tail, but fewer than twelve runs: a short aside is no tail of junk.
        ("Use the arrow keys to move the cursor: ← ↑ → ↓ and ## for headings.", None),
    ],
)
def test_a_good_start_that_ends_in_junk_is_noise(text: str, cause: str | None) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # A template's skeleton reached the answer: lines that are a slot and nothing else.
        ("読書のコツは次の3つです。\n\n1. {{コツ1}}\n2. {{コツ2}}\n3. {{コツ3}}\n", "noise_tokens"),
        ("Here is the plan:\n- {{step_one}}\n- {{step_two}}\n- {{step_three}}", "noise_tokens"),
        # A template written because it was asked for: its slots stand inside sentences.
        (
            "Dear {{name}},\n\nThank you for your order {{order_id}}. It ships on {{date}} "
            "and should reach you within a week.\n\nBest regards,\nThe team",
            None,
        ),
    ],
)
def test_lines_of_bare_template_slots_are_noise(text: str, cause: str | None) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # Words that are each a walk of four keys: no five-key run, still mashing.
        ("qwer asdf zxcv; hjkl fdsa uiop rewq lkjh dfgh poiu vcxz, sdfg", "noise_keyboard"),
        # Words with such a run inside them (property, liberty) are words.
        ("The property is liberty, and the poverty of the party is certain.", None),
        # One walk named in a sentence is a fifth of nothing.
        ("In vim, hjkl move the cursor: h left, j down, k up and l right.", None),
    ],
)
def test_words_that_are_keyboard_walks_are_mashing(text: str, cause: str | None) -> None:
    assert noise_cause(text) == cause


_TURNS = "User: What's the capital of Canada?\nAssistant: Let me think.\nUser: ok\nAssistant:"


@pytest.mark.parametrize(
    ("text", "prompt", "cause"),
    [
        # A base model writes both sides of the chat on past its own turn.
        (_TURNS, "What's the capital of Canada?", "noise_tokens"),
        (
            "質問：日本の首都は？\n回答：東京です。\n質問：日本の首都は？\n回答：",
            "日本の首都は？",
            "noise_tokens",
        ),
        # Asked for: a dialogue written, a transcript translated.
        (_TURNS, "Write a short dialogue between a user and an assistant about Canada.", None),
        ("User: hola\nAssistant: hello\nUser: adiós", "Translate this chat into English.", None),
        (
            "Question: What is a list?\nAnswer: A mutable sequence.\nQuestion: A tuple?\n"
            "Answer: An immutable one.",
            "Common interview questions about Python, with answers?",
            None,
        ),
        # One label, or two lines, is an answer's own layout.
        ("Answer: Ottawa.\nIt has been the capital since 1857.", "Capital of Canada?", None),
        # A web page's frame where the answer should be.
        (
            "Home | About Us | Blog\nSkip to main content\n© 2019 All Rights Reserved | "
            "Privacy Policy | Terms of Use",
            "Summarize what a load balancer does.",
            "noise_layout",
        ),
        (
            "ホーム ＞ 会社概要\nサイトマップ | プライバシーポリシー | お問い合わせ",
            "説明して",
            "noise_layout",
        ),
        # Naming one policy is an answer.
        ("Link the privacy policy from the footer of every page.", "Where does it go?", None),
    ],
)
def test_chat_turns_and_a_page_frame_are_noise_unless_asked(
    text: str, prompt: str, cause: str | None
) -> None:
    assert gate(text, prompt=prompt) == cause


_TAGS = "#k8s #devops #cloud #love #cute #tbt #happy #style #tech"


@pytest.mark.parametrize(
    ("text", "prompt", "cause"),
    [
        # A table that lost its shape: the rule line and the rows disagree with the header.
        (
            "| list | tuple | list |\n|---|---|\n| yes | | tuple tuple |\n| 4 | banana | |\n"
            "| list | | | list |\n| --- | --- | --- | --- | --- |",
            "Compare Python lists and tuples in a table.",
            "noise_layout",
        ),
        (
            "| | list | tuple |\n|---|---|---|\n| mutable | yes | no |\n| hashable | no | yes |",
            "Compare Python lists and tuples in a table.",
            None,
        ),
        # Hashtags where an answer should be, unless asked for.
        (
            _TAGS,
            "What is Kubernetes?",
            "noise_layout",
        ),
        (
            _TAGS,
            "Give me hashtags for a Kubernetes post.",
            None,
        ),
    ],
)
def test_a_broken_table_and_hashtags_alone_are_layout(
    text: str, prompt: str, cause: str | None
) -> None:
    assert gate(text, prompt=prompt) == cause


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # Real words shuffled, function words sprinkled in at a prose's share: "the of" and
        # "the and" are no English.
        (
            "Copper meadow the of thirty railway beneath carpet violet if rose harbour whose "
            "pebble account the and silver seven engine hum the biscuit therefore spindle.",
            "noise_stop_words",
        ),
        # One such pair is a typo, not salad.
        ("Open the the settings page, then pick the network tab and save.", None),
        # Homoglyphs: Cyrillic and Greek look-alikes inside Latin words.
        (
            "A Kubеrnеtes pоd іs thе smаllest unit that runѕ οne or more cοntainers tоgether.",
            "noise_scripts",
        ),
        # A formula's Greek, and a Russian word named in an English sentence, are no look-alikes.
        ("Speed is Δx over Δt, and the area of a circle is πr² for radius r.", None),
        ("The Russian word for data is данные, and for server it is сервер.", None),
        # Programming's keywords named as things, and hyphenated words, are no salad.
        (
            "Use the if statement to branch and the for loop to repeat; the in operator tests "
            "membership.",
            None,
        ),
        ("Add it to your to-do list, then review your to-do list every morning.", None),
        # A paragraph that ends on a command with no full stop is an answer (cuts mid-word
        # are left to cut_off: a stop sequence seldom cuts a word).
        (
            "Update the package index first. Then, on Ubuntu, open a terminal and run sudo apt "
            "install git",
            None,
        ),
        # One sentence without its full stop is a reply.
        (
            "You can reverse a list in place with its reverse method or build a new one with a "
            "slice that steps backwards through the items",
            None,
        ),
    ],
)
def test_salad_and_look_alikes_are_noise(text: str, cause: str | None) -> None:
    assert noise_cause(text) == cause


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # Three different tokens each doubled: a stutter.
        (
            "for for i in range(3): print print (i) ) and and then return return the value",
            "repetition",
        ),
        # Prose doubles one word now and then ("very very", a typo).
        ("It is very very fast, and that that matters is clear from the benchmark.", None),
        # Data repeats its figures.
        ("Floor of n / 2 for n = 0 to 5: 0, 0, 1, 1, 2, 2", None),
        # A rule or ASCII art repeats its marks.
        ("Before = = = after - - - and * * * between", None),
    ],
)
def test_several_tokens_doubled_are_a_stutter(text: str, cause: str | None) -> None:
    assert gate(text) == cause


@pytest.mark.parametrize(
    ("text", "prompt", "cause"),
    [
        # A list that did not stop at what was asked, and a count past its end.
        ("\n".join(f"{n}. {n}" for n in range(1, 14)), "List three HTTP methods.", "noise_count"),
        (", ".join(map(str, range(1, 31))), "Count from 1 to 5.", "noise_count"),
        # A bonus item or two is an answer; so is a count in binary, whose figures run past.
        ("1. GET\n2. POST\n3. PUT\n4. Bonus: PATCH", "List three HTTP methods.", None),
        ("1, 10, 11, 100, 101", "Count from 1 to 5 in binary.", None),
        # A chant asked to repeat its phrase; a list whose items share a term.
        (
            "Tests pass, ship it!\nBuild is green, ship it!\nPager sleeps, so\n"
            "ship it, ship it, ship it!",
            "Write a short chant for the team, repeating 'ship it'.",
            None,
        ),
        (
            "- INNER JOIN\n- LEFT OUTER JOIN\n- RIGHT OUTER JOIN\n- FULL OUTER JOIN",
            "Name the kinds of SQL join.",
            None,
        ),
        # A sentence looped with one word changed is no list of terms.
        (
            "1. The cat is on the mat\n2. The cat is on the bed\n3. The cat is on the sofa\n"
            "4. The cat is on the roof",
            "Name three kinds of SQL join.",
            "repetition",
        ),
    ],
)
def test_a_list_or_count_past_what_was_asked_is_noise(
    text: str, prompt: str, cause: str | None
) -> None:
    assert gate(text, prompt=prompt) == cause


@pytest.mark.parametrize(
    ("text", "prompt", "cause"),
    [
        # An advert's calls and a licence's disclaimer, unasked for, are a page's boilerplate.
        (
            "Need faster builds?? Start your FREE TRIAL of TurboCI today, no credit card "
            "required! 40% off for teams. Click here >>>",
            "How do I cache pip downloads in CI?",
            "noise_layout",
        ),
        (
            "Provided as is, without warranty of any kind, including merchantability and "
            "fitness for a particular purpose.",
            "What does this regex match?",
            "noise_layout",
        ),
        # Asked for, they are the answer.
        (
            "Provided as is, without warranty of any kind, including merchantability and "
            "fitness for a particular purpose.",
            "Write the warranty disclaimer for our README.",
            None,
        ),
    ],
)
def test_an_advert_or_a_disclaimer_unasked_is_boilerplate(
    text: str, prompt: str, cause: str | None
) -> None:
    assert gate(text, prompt=prompt) == cause


@pytest.mark.parametrize(
    ("text", "prompt", "cause"),
    [
        # A chat template's turn marks written out.
        (
            "<start_of_turn>user\nWhat is DNS?<end_of_turn>\n<start_of_turn>model\n"
            "<start_of_turn>user\nWhat is DNS?<end_of_turn>",
            "What is DNS?",
            "noise_tokens",
        ),
        # A forum thread's and a shop's frame.
        (
            "Posted by u/someone · 3y\n\n12 comments · share · save\n\nlevel 1 · 3y\nthis\n\n"
            "More posts from r/linux",
            "What does chmod 755 do?",
            "noise_layout",
        ),
        (
            "明日休みます。\n送料無料・あす楽対応\nレビューを書く\nポイント10倍",
            "敬語で「明日休みます」を伝えたい。",
            "noise_layout",
        ),
        # A count nobody asked for; a count or a range asked for is the answer.
        (" ".join(str(y) for y in range(1950, 1975)), "When did the war end?", "noise_count"),
        (", ".join(str(n) for n in range(1, 31)), "Count from 1 to 30.", None),
        (" ".join(f"{n}=0x{n:02X}" for n in range(32)), "Show decimal 0-31 in hex.", None),
        # Particles alone between commas.
        ("日本の祝日は、の、が、を、で、祝日の日の", "日本の祝日を1つ教えて。", "noise_particles"),
        ("東京、大阪、名古屋の順に人口が多いです。", "人口の多い都市は？", None),
    ],
)
def test_turn_marks_a_pages_frame_an_unasked_count_and_lone_particles(
    text: str, prompt: str, cause: str | None
) -> None:
    assert gate(text, prompt=prompt) == cause


@pytest.mark.parametrize(
    ("text", "prompt", "cause"),
    [
        # A figure and its full stop, a sum with a true minus sign, a table's rule, roots.
        ("56.", "What is 7 times 8?", None),
        ("(1200 − 900) / 1200 = 25 %.", "Margin if revenue is 1200 and cost 900?", None),
        ("1. 2. 3.", "List three colours.", "empty"),
        ("| n | n² |\n|---|---|\n| **1** | 1 |\n| **2** | 4 |\n| **3** | 9 |", "Squares?", None),
        ("\n".join(f"√{n} = {n**0.5:.4f}" for n in range(1, 9)), "Square roots 1..8.", None),
        ("\n".join(f"3^{n} = {3**n:,}" for n in range(12)), "Powers of three to 3^11.", None),
        ("\n".join(f"cos({x / 2}) = 0.{n}" for n, x in enumerate(range(6), 1000)), "cos?", None),
        # Parallel clauses say a phrase three times; a loop says it with the same between.
        (
            "2 Fe + 3 Cl₂ → 2 FeCl₃. Check: 2 Fe on the left side, 6 Cl on the left side, "
            "and both again on the right side.",
            "Balance iron and chlorine.",
            None,
        ),
        ("I think so. I think so. I think so. I think so.", "Is it ready?", "repetition"),
        # Inline code names the same command again.
        (
            "1. `git stash list`で確認します。\n2. `git stash pop stash@{0}`で戻します。\n"
            "3. `git stash drop stash@{0}`で消します。",
            "git stashの使い方は？",
            None,
        ),
    ],
)
def test_figures_formulas_and_parallel_clauses_are_answers(
    text: str, prompt: str, cause: str | None
) -> None:
    assert gate(text, prompt=prompt) == cause


@pytest.mark.parametrize(
    ("text", "prompt", "cause"),
    [
        # The quiz continued, or a question with options nobody chose among.
        (
            "How deep is the Pacific? How deep is the Atlantic at its deepest point? Which "
            "ocean is saltier?",
            "How deep is the Pacific?",
            "noise_questions",
        ),
        (
            "Which planet is largest?\nA) Mars\nB) Jupiter\nC) Venus\nD) Mercury",
            "Which planet is the largest?",
            "noise_questions",
        ),
        ("Which is largest?\nA) Mars\nB) Jupiter\nC) Venus\nD) Mercury", "Write a quiz.", None),
        # A question or two back is no quiz.
        ("Which OS do you run? And which shell? Paste the error too.", "Fix my script.", None),
        # Cut inside a word; a command at the end is no cut word.
        (
            "An index lets the database find rows without scanning every row of the whole databa",
            "What is an index?",
            "noise_unfinished",
        ),
        ("On Debian you can install it with sudo apt install htop", "Install htop?", None),
        # Forms asked for: a drawing, a program's output, Morse with a note, a chant.
        ("+--+--+\n|  |  |\n+--+--+", "Draw two boxes side by side in ASCII.", None),
        ("\n".join("Fizz" if n % 3 == 0 else str(n) for n in range(1, 13)), "Its output?", None),
        ("import os\n" * 20, "Write a script that prints the home folder.", "repetition"),
        ("--. --- / ..- .--.\n\n(A slash parts the words.)", "'GO UP' in Morse code?", None),
        (" ".join(["la"] * 13) + " la!", "Sing 'la' thirteen times.", None),
        ("ding dong ding dong ding dong ding dong", "The doorbell's sound, four times.", None),
    ],
)
def test_a_quiz_continued_a_cut_word_and_forms_asked_for(
    text: str, prompt: str, cause: str | None
) -> None:
    assert gate(text, prompt=prompt) == cause


@pytest.mark.parametrize(
    ("text", "prompt", "cause"),
    [
        # The translation asked for, in another language; the right one is kept.
        (
            "Dov'è la stazione? Dov'è la stazione, per favore?",
            "Translate 'Where is the station?' into French.",
            "wrong_script",
        ),
        (
            "Où est la gare, s'il vous plaît ?",
            "Translate 'Where is the station?' into French.",
            None,
        ),
        # A drift into a script the prompt has none of.
        (
            "東京から大阪まで 서울에서 부산까지 기차로 약 세 시간 정도 걸립니다.",
            "東京から大阪まで何時間？",
            "wrong_script",
        ),
        ("「ありがとう」は韓国語で 감사합니다 です。", "「ありがとう」を韓国語で。", None),
        # Counted the wrong way, a list of ten that runs on, figures nobody asked for.
        (", ".join(str(n) for n in range(5, 30)), "Count down from 5 to 1.", "noise_count"),
        (", ".join(str(n) for n in range(5, 0, -1)), "Count down from 5 to 1.", None),
        (
            ", ".join(str(n) for n in range(1, 60, 2)),
            "List the first ten odd numbers.",
            "noise_count",
        ),
        (
            "\n".join(str(7 * n) for n in range(3, 30)),
            "Balance this equation: H2 + O2.",
            "noise_count",
        ),
        ("-".join(str(n) for n in range(300, 330)), "積分して。", "noise_count"),
        ("2026-12-07, 2026-12-14, 2026-12-21, 2026-12-28", "Mondays in December 2026?", None),
        # A polite ending cut short; a pronoun left hanging.
        ("明日の会議は欠席いたしま", "敬語で断って。", "noise_unfinished"),
        ("明日は会議に出られません。", "敬語で断って。", None),
        (
            "I grew up by the sea. Let me tell you about the summer when we",
            "Tips for a beach trip?",
            "noise_unfinished",
        ),
        # Markup garbled; a page in a code fence is code.
        ("<html><head><titl<title>><body<<p>>hi</p></ti</body></html>", "A page?", "noise_layout"),
        (
            "```html\n<html><head><title>T</title></head><body>hi</body></html>\n```",
            "A page?",
            None,
        ),
    ],
)
def test_another_language_a_count_the_wrong_way_and_cut_endings(
    text: str, prompt: str, cause: str | None
) -> None:
    assert gate(text, prompt=prompt) == cause

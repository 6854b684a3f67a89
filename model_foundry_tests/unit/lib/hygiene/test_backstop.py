"""The backstop: cued random values in shapes no rule names go; what training needs stays.

The values below were made up for this file. The corpus test reads
``fixtures/independent/`` (written without reading lib/hygiene) and holds the floors measured
when the backstop was added; the figures are in docs/benchmarks.md."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from model_foundry.lib.exports.proof import unmarked
from model_foundry.lib.hygiene.config import HygieneConfig
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.hygiene.secrets import SecretScrubber

CORPUS = Path(__file__).parents[3] / "fixtures" / "independent"

# (text, the value that must go): one or more per cue family.
PLANTED = [
    # Credential words joined to others, in any case.
    ("myApiKeyProd=Zq8vR2mXw4LpT6nB", "Zq8vR2mXw4LpT6nB"),
    ("cfg.dbPassWord = 'Hk3$pW9qLm2x'", "Hk3$pW9qLm2x"),
    ("X-Internal-AccessTok: Ry7uP2kQ9wXe4Lm1", "Ry7uP2kQ9wXe4Lm1"),
    (
        "privKeyHex: 9f3a7c21e84b0d56a2f19c83e7b4d05a6c2e1f98",
        "9f3a7c21e84b0d56a2f19c83e7b4d05a6c2e1f98",
    ),
    # A name ending in ``pw``, ``appid``, hex of both cases, a table column headed by a
    # credential word (one-case value), a URL path segment random enough alone.
    ("mysqlpw='Tq7#vL2@xR9!mK4' ./load.sh", "Tq7#vL2@xR9!mK4"),
    (
        "curl 'https://api.meteo.example/v1?city=Oslo&appid=4be0c2a9d71f83e65a0b9c7d2e41f8a3'",
        "4be0c2a9d71f83e65a0b9c7d2e41f8a3",
    ),
    (
        "Our support licence key is 7D2Ac09bE41f58A3c6B0d92E7a1F4c85.",
        "7D2Ac09bE41f58A3c6B0d92E7a1F4c85",
    ),
    (
        "| app | secret |\n|---|---|\n| billing | `bl-9qk2x7m4v8z3n6w1p5r0t2y7u4i8o3e6` |",
        "bl-9qk2x7m4v8z3n6w1p5r0t2y7u4i8o3e6",
    ),
    (
        "Subscribe at https://cal.example/ics/Vb7Qm2XkP9wL4zR8tN1sY6hJ3cF0dG5aE2uK/all.ics",
        "Vb7Qm2XkP9wL4zR8tN1sY6hJ3cF0dG5aE2uK",
    ),
    ("<password>Tq5=Wn8vXk2pLz</password>", "Tq5=Wn8vXk2pLz"),
    ("the temporary password is Vb4*Hy7mQp2Lx", "Vb4*Hy7mQp2Lx"),
    ("本番のパスワードは「Cedar%river4417」です。", "Cedar%river4417"),
    # Password flags of tools no rule names, attached or not.
    ("zip -P Mw7^Kq2xVp9L -r logs.zip logs/", "Mw7^Kq2xVp9L"),
    ("7z a -pJn4%Ty8wQe3R archive.7z data/", "Jn4%Ty8wQe3R"),
    ("mongosh -u app -p Willow.cedar8812 --authenticationDatabase admin", "Willow.cedar8812"),
    ("smbclient //fs/share -U deploy%Gk5rTy8NqW2pXm -c ls", "Gk5rTy8NqW2pXm"),
    # The last field of a credentials line, in a sentence.
    ("Add db-3.internal:5432:app:etl:Birch-lantern3391 to ~/.pgpass.", "Birch-lantern3391"),
    ("echo 'svc:Xr6Lpq2m9Wt4z' | sudo chpasswd", "Xr6Lpq2m9Wt4z"),
    ("log in as admin:Maple*harbor6620@10.1.2.3", "Maple*harbor6620"),
    # A URL path segment after a hook, token or bot segment.
    ("POST https://ci.example.com/hooks/hQ7lm2Xw9Pv4tr8Kz3nb5Yc", "hQ7lm2Xw9Pv4tr8Kz3nb5Yc"),
    (
        "https://x.webhook.office.com/webhookb2/IncomingWebhook/5e0c9a1f7b3d42e68a9c1f0b2d4e6a8c/x",
        "5e0c9a1f7b3d42e68a9c1f0b2d4e6a8c",
    ),
    # No cue at all: a long token of both cases and digits with a random draw's entropy,
    # or a short issuer word before a long random body.
    (
        "Pasted BZtmyHFRDyepGK4tY0aClvqGT8rP2oFU4h8YFfAs into the runner.",
        "BZtmyHFRDyepGK4tY0aClvqGT8rP2oFU4h8YFfAs",
    ),
    (
        "ci は S63RZMgUH2mbiWR5Azuh7R6IkrMV9smXKT6gNjdOLJSP を使います",
        "S63RZMgUH2mbiWR5Azuh7R6IkrMV9smXKT6gNjdOLJSP",
    ),
    ("sdk.Init(`2kJtQoUD87ee6CPZG39B3AA2JxKVUNyQPpoS`)", "2kJtQoUD87ee6CPZG39B3AA2JxKVUNyQPpoS"),
    (
        "rotated to acme_2f1ab2cdde4e66d4d471b0f0fb15f1e947c37ff8bc5fc2e1 today",
        "acme_2f1ab2cdde4e66d4d471b0f0fb15f1e947c37ff8bc5fc2e1",
    ),
    (
        "QXR-Bnb77OR6zFgc3nZk9ZGxGcQ7504Zz5En0VOs9HIK2vJB3prADg works",
        "QXR-Bnb77OR6zFgc3nZk9ZGxGcQ7504Zz5En0VOs9HIK2vJB3prADg",
    ),
    # A literal handed to a client, login or auth call: the callee is the cue (hex too).
    (
        "c = Client('ACa1b2', '126e685460d8f5ec89e8361bd0b12010')",
        "126e685460d8f5ec89e8361bd0b12010",
    ),
    ("session.auth = HTTPBasicAuth('etl', 'Vq7#mLx2Rt9p')", "Vq7#mLx2Rt9p"),
    # ``user / password`` on a line about logging in, before or after the pair.
    ("Sign in with `ops` / `Tr4-vKq.8Lm#Zp`", "Tr4-vKq.8Lm#Zp"),
    ("ポータルは guest / Harbor#maple5521 でログインします", "Harbor#maple5521"),
    # A password as the argument after a user's name.
    ("net user svc-backup Lk8%Qw2!Zr5x /add", "Lk8%Qw2!Zr5x"),
    # A Markdown table whose column header names the credential.
    ("| host | login | passwd |\n|---|---|---|\n| db1 | etl | Nm4^Kp7wQx2 |", "Nm4^Kp7wQx2"),
    # ``user:pw`` after a credential word, short or hex.
    ("the license creds are 872ae13c:9022d44a", "9022d44a"),
    ("BUNDLE_GEMS__ACME__IO=872ae13c:9022d44a", "9022d44a"),
    ("bundle config set --global gems.acme.io 872ae13c:9022d44a", "9022d44a"),
    # A quoted value whose own ``&`` would otherwise end it.
    ('<add key="HookSecret" value="MulrgQw3&8bJrlDHCT=" />', "MulrgQw3&8bJrlDHCT="),
    # One case cut by digits every few letters is a base36 draw, not a name.
    ('<add key="FeedPassword" value="qhw3kzmu8tplrx4vyn2odsf6" />', "qhw3kzmu8tplrx4vyn2odsf6"),
    # A credential word written without its vowels.
    ("[sync]\ntkn = 5be0c91fa37d48e2b6a0c4d19f7e3a20", "5be0c91fa37d48e2b6a0c4d19f7e3a20"),
    ("scrt: 9f1c2e7a44b05d8c3e6a9b7d0f2c4e81", "9f1c2e7a44b05d8c3e6a9b7d0f2c4e81"),
    # A file printed whose name is the cue; Windows' /p: flag.
    (
        "$ cat secrets/api.token\n7d2f9b0c5e8a41d3b6c0e9f2a7d5c8b1",
        "7d2f9b0c5e8a41d3b6c0e9f2a7d5c8b1",
    ),
    ("rdesktop-cli /v:host /u:ops /p:Vx7#q2LmZ9", "Vx7#q2LmZ9"),
    # curl's cookie argument.
    (
        "curl -b 'sid=s%3AkT8vQ2mX9pL4wZ7r.aB3cD5eF' https://x.example",
        "s%3AkT8vQ2mX9pL4wZ7r.aB3cD5eF",
    ),
    # Japanese credential words beyond パスワード.
    ("合言葉は Qm7vX2kL9pR4w です", "Qm7vX2kL9pR4w"),
]

KEPT = [
    # Names with words and versions in them: not drawn, though long and of mixed case.
    '"bom-ref": "tool:pkg:pypi/tinyplug@3.1.4#tinyplug-3.1.4.dist-info/RECORD"',
    '"name": "acme_widgets-12.0.1.dist-info/METADATA"',
    "Collected Orbit_Scheduler2-Build44-Release_FINAL-Candidate",
    'integrity="sha384-sAlf/p6nbfSOUMojlMT3T6sn+GS8d2HtTDg1cA6kRx/Sp8jhlnq3qCkrk+hBJ43/"',
    "golang.org/x/text v0.14.0 h1:yEMbOuCLxvm71R6FrM4XiwIIBGqOcS4kVh0EeCuJD+A=",
    "pkg/__init__.py,sha256=25eYYnij2Jey_CN5H7OP-Vn1L1Nv_9RZ4tTG-fgQTKQ,2301",
    "ED25519 key fingerprint is SHA256:yEMbOuCLxvm71R6FrM4XiwIIBGqOcS4kVh0EeCuJD+A.",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILjvDJ18Rrsutd0tKOUUa06gxRZY8ZVqTkS481mh7jgx me@box",
    "response chatcmpl-hGLdFEUn0BV7eKdHhzbGo8xHXKGBo finished",
    "sheet id LjvDJ18Rrsutd0tKOUUa06gxRZY8ZVqTkS481mh7jgx",
    "echo bmlnaHRseSBleHBvcnQgZmluaXNoZWQgd2l0aG91dCBlcnJvcnM= | base64 -d",
    'ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"',
    "the password is in db:5432/app",
    "| name | count |\n|---|---|\n| widgets | Qz81Kr4mWx |",
    "git checkout 3f35a35ad9b84d0e4c5b33ca2f3e6639a6a7c519",
    "request_id=07a472d1-ccb1-43b1-b107-1668e51a814d status=200",
    "FROM python:3.12-slim@sha256:8b3c63a073930a1dfae5596d9cc714d2efd4c5e8140e646e151e13acfcc4ac6a",
    "Signature: 8a477f597d28d172789f06886806bc55",
    "pip install torch==2.5.1+cu124",
    "virtualenv -p python3.11 .venv",
    "docker run -p 8080:80 nginx:1.27",
    "HF_TOKEN=<your-hf-token>",
    "password: ${DB_PASSWORD}",
    "api_key = settings.OPENAI_API_KEY",
    "password: OAuth2PasswordRequestForm = Depends()",
    "token = tokenizer.encode(text)[0]",
    "ls -la ~/.cache/huggingface/hub/models--google--gemma-3-27b-it/snapshots/",
    "SSH fingerprint SHA256:sk8ns3uPHs7KsZKV5xOeyW4dYEiBzyv/RrUpcgX2QaI",
    "See https://github.com/lab/repo/pull/412/files#diff-5ea89760c38db5f846e0757aaafc37a013",
    "kubectl logs dagster-webserver-3d96467ec7-chjph -n mf",
    "key = cache_key(model_id, prompt_hash)",
    'VALID_KEY_RE = re.compile(r"^[-/_=\\.a-zA-Z0-9]+$")',
    "class Ed25519PrivateKey(metaclass=abc.ABCMeta):",
    "| key id | owner |\n|---|---|\n| 3f9a2c7e81b4d05a6c2e1f98 | ops |",
    "https://ipfs.io/ipfs/QmT5NvUtoM5nWFfrQdVrFtvGfKFmG7AHE8P34isapyhCxX/readme",
    # Base64 of UTF-8 text in any script (here ``名前,年齢``); a vowel-less word that is not a
    # credential word; a printed file whose name says public; code and format references.
    "CSV を Base64 にしたもの: 5ZCN5YmNLOW5tOm9ogrlsbHnlLAsMzQK",
    "prd = 5be0c91fa37d48e2b6a0c4d19f7e3a20",
    "$ cat keys/id_ed25519.pub\n5be0c91fa37d48e2b6a0c4d19f7e3a20",
    "$ cat build/version.txt\n5be0c91fa37d48e2b6a0c4d19f7e3a20",
    "password=%(db_password)s",
    "$password = $request->input('password');",
    "utf8mb4 sha256sum base64url x86",
]


@pytest.mark.parametrize(("text", "value"), PLANTED)
def test_a_cued_random_value_goes_whole(text: str, value: str) -> None:
    counts: Counter[str] = Counter()
    out = SecretScrubber().scrub(text, counts)
    assert value not in out and "[REDACTED:" in out, out
    assert not any(value[i : i + 8] in out for i in range(len(value) - 7)), out
    assert sum(counts.values()) >= 1


@pytest.mark.parametrize("text", KEPT)
def test_what_training_needs_stays(text: str) -> None:
    """The backstop adds nothing to what the rules do (some of these are rule cases too)."""
    on: Counter[str] = Counter()
    off: Counter[str] = Counter()
    rules_only = SecretScrubber(HygieneConfig(backstop=False)).scrub(text, off)
    assert SecretScrubber().scrub(text, on) == rules_only
    assert on == off


def test_the_backstop_can_be_switched_off() -> None:
    text = "zip -P Mw7^Kq2xVp9L -r logs.zip logs/"
    assert SecretScrubber(HygieneConfig(backstop=False)).scrub(text) == text


# Letters-only passwords (a passphrase of joined words, a CamelCase word): taken only where
# the cue makes the next token a value.
WORD_PASSWORDS = [
    ("mysql -u root -pcorrecthorsebattery app", "correcthorsebattery"),
    ("mysqldump --password BlueHarborLantern app > a.sql", "BlueHarborLantern"),
    ("mongosh -u app -p willowcedarriver --authenticationDatabase admin", "willowcedarriver"),
    ("docker login -u kenji -p BlueHarborLantern registry.example.com", "BlueHarborLantern"),
    ("zip -P moonlitgarden -r a.zip d/", "moonlitgarden"),
    ("7z a -pmoonlitgarden a.7z d/", "moonlitgarden"),
    ("keytool -list -storepass moonlitgarden -keystore k.jks", "moonlitgarden"),
    ("smbclient //fs/share -U deploy%moonlitgarden -c ls", "moonlitgarden"),
    ("echo 'svc:moonlitgarden' | sudo chpasswd", "moonlitgarden"),
    ("pass: HarborLights", "HarborLights"),
    ("  - db_password: moonlitgarden", "moonlitgarden"),
    ('{"user": "kenji", "pwd": "moonlitgarden"}', "moonlitgarden"),
    ("pass=moonlitgarden  # rotated monthly", "moonlitgarden"),
    ("log in as admin:moonlitgarden@10.1.2.3", "moonlitgarden"),
    ("Use kenji:moonlitgarden@db.internal to connect.", "moonlitgarden"),
    ("Your ~/.pgpass line is localhost:5432:app:kenji:BlueHarbor, then chmod 600.", "BlueHarbor"),
    ("htpasswd -b .htpasswd admin moonlitgarden", "moonlitgarden"),
    # A ``#`` right after the letters is the value's own, no comment: it goes whole.
    ("bitbucketAppPassword: Glacier#falcon9481", "#falcon9481"),
    # Tools' own password arguments.
    ("oc login -u dev -p quietharbor https://api.ocp.example:6443", "quietharbor"),
    ("curl -u deploy:velvetcanyon https://repo.example/upload", "velvetcanyon"),
    ("lftp -u backup,velvetcanyon sftp://files.example", "velvetcanyon"),
    ("NET USE Q: \\\\nas01\\media velvetcanyon /USER:HOME\\kim", "velvetcanyon"),
    ("net user svc_backup quillfeather /add", "quillfeather"),
    ("sqlplus scott/tigerlilypond@orcl", "tigerlilypond"),
    ("rman target sys/walnutgrove@prod", "walnutgrove"),
    ("SQL> connect hr/pineconeforest", "pineconeforest"),
    ('spawn ftp files.example\nexpect "Password:"\nsend "lemonmeadow\\r"', "lemonmeadow"),
    # Keys as a shell word, a query's pair, an XML element; SQL.
    ("pgcli login user=app password=copperkettle --host db", "copperkettle"),
    ("jdbc:mysql://db:3306/app?user=app&password=ravenquill&useSSL=true", "ravenquill"),
    ("<ns:Password>amberlantern</ns:Password>", "amberlantern"),
    ("CREATE ROLE app LOGIN PASSWORD 'copperkettle';", "copperkettle"),
    ("GRANT ALL ON app.* TO 'u'@'%' IDENTIFIED BY \"ravenquill\";", "ravenquill"),
    # Prose, English and Japanese.
    ("FYI the wifi password is tangerines.", "tangerines"),
    ("Guest box: username guest, password glacierpenguin until Monday.", "glacierpenguin"),
    ("The kiosk login is kiosk / MarbleOtter, ask Sam for the rest.", "MarbleOtter"),
    ("ステージングのパスワードは cloudberry です。", "cloudberry"),
    ("管理画面のパスワード：StoneWillow（変更予定）", "StoneWillow"),
    ("検証機のpwは「lanternmoss」です", "lanternmoss"),
    # Any tool given a user and a password on one command line.
    ("mosquitto_sub -h hub -u probe -P HollyBramble -t x/#", "HollyBramble"),
    ("remmina-cli /v:box /u:ops /p:GingerMarten /f", "GingerMarten"),
    ("ansible-playbook a.yml -e 'ansible_ssh_pass=CedarLoom'", "CedarLoom"),
    ("the password for the kiosk account is FernTrellis, keep it handy", "FernTrellis"),
    ("金庫のパスフレーズはmarblecanyon。", "marblecanyon"),
    ("会議室のパスワードは quartzmeadow になりました。", "quartzmeadow"),
]

WORDS_KEPT = [
    "Go to the password reset page and pick a new one.",
    "password: required field",
    "password: incorrect",
    "--password-file /run/secrets/x",
    "docker login --password-stdin",
    "password: changeme",
    "password: <token>",
    "password: ${DB_PASSWORD}",
    "password: ****",
    "All tests pass: congratulations",
    "Reset password immediately",
    "mysql -p database",
    "mkdir -p build && gcc -pthread -pedantic main.c",
    "passwords: must match",
    "password = settings.DB_PASSWORD",
    "git@github.com:org/repo.git",
    "mailto:kenji@example.com",
    "The password is stored in Bitwarden.",
    "The password is case sensitive, so mind caps lock.",
    "the password is different for each environment.",
    "If the password is expired, reset it.",
    "The password is never logged.",
    "log in with Google / GitHub",
    "login page / dashboard",
    "user accounts, password policies and audit logs",
    "connect input/output streams",
    "curl -u user:pass https://api.example",
    "vault login -method=userpass username=ops password=-",
    "<password>${DB_PASS}</password>",
    "net use Z: \\\\fs\\share * /user:CORP\\me",
    "openssl enc -aes-256-cbc -in a.txt -out a.enc -pass env:FILE_KEY",
    "postgres://user:pass@localhost:5432/dbname",
    "see vendor/github.com/acme/secretstore/v3/client.go:142",
    "パスワードは Bitwarden に保存してあります。",
    "パスワードは changeme です。",
    "パスワード: ******",
    "ssh -l admin -p 2222 bastion",
    "psql -U admin -p 5432 warehouse",
    "パスワードは quartzmeadow に保存。",
]


@pytest.mark.parametrize(("text", "value"), WORD_PASSWORDS)
def test_a_letters_only_password_after_a_strong_cue_goes(text: str, value: str) -> None:
    counts: Counter[str] = Counter()
    out = SecretScrubber().scrub(text, counts)
    assert value not in out and "[REDACTED:password]" in out, out
    assert RecordScrubber(salt=b"twice").scrub(out)[0] == out


@pytest.mark.parametrize("text", WORDS_KEPT)
def test_prose_flags_and_placeholders_beside_password_words_stay(text: str) -> None:
    assert SecretScrubber().scrub(text, Counter()) == text


def _load(name: str, folder: Path = CORPUS) -> list[dict]:
    lines = (folder / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_independent_corpus_floors() -> None:
    """Recall whole and in fragments (no 8 characters of a value survive) and negatives kept,
    at the figures measured (the rules alone: 571 and 568 of 689; 381 of 384 kept)."""
    scrubber = RecordScrubber(salt=b"independent-corpus")
    whole = fragment_free = values = 0
    for row in _load("secrets.jsonl"):
        out = scrubber.scrub(row["text"])[0]
        around = row["text"]
        for v in row["secrets"]:
            around = around.replace(v, "\0")
        for v in row["secrets"]:
            values += 1
            whole += v not in out
            # A fragment is 8 characters of the value that the output holds more often than
            # the text around the value did (``rubygems key rubygems_<hex>`` keeps its word).
            fragment_free += not any(
                out.count(v[i : i + 8]) > around.count(v[i : i + 8]) for i in range(len(v) - 7)
            )
    kept = total = 0
    for row in _load("negatives.jsonl"):
        out = scrubber.scrub(row["text"])[0]
        for k in row["keep"]:
            total += 1
            kept += k in out
    print(f"whole {whole}/{values}, fragment-free {fragment_free}/{values}, kept {kept}/{total}")
    assert values == 689 and total == 384
    assert whole >= 689
    assert fragment_free >= 689
    # The three lost are PII by design (two home folders, one IPv6 address), not the backstop.
    assert kept >= 381


# What the scrubber writes: scrubbing it again must leave it as it is.
SCRUBBED = [
    "git push https://[REDACTED:github_token]@github.com/lab/repo.git",
    "postgres://app:[REDACTED:url_password]@db:5432/x",
    "PGPASSWORD=[REDACTED:password] psql -h db -U app",
    "db-1:5432:app:etl:[REDACTED:password]",
    "[REDACTED:aws_access_key_id]:[REDACTED:aws_secret_access_key]",
    "the license creds are 872ae13c:[REDACTED:password]",
    '<add key="HookSecret" value="[REDACTED:secret]" />',
    "| host | login | passwd |\n|---|---|---|\n| db1 | etl | [REDACTED:password] |",
]


@pytest.mark.parametrize("text", SCRUBBED)
def test_markers_are_never_read_as_values(text: str) -> None:
    """A record scrubbed twice (an export rescanned, a session exported again) comes out as
    once: ``https://[REDACTED:x]@host`` is no ``user:password@host``."""
    assert RecordScrubber(salt=b"twice").scrub(text)[0] == text


@pytest.mark.parametrize(("text", "value"), PLANTED)
def test_scrubbing_twice_is_scrubbing_once(text: str, value: str) -> None:
    scrubber = RecordScrubber(salt=b"twice")
    once = scrubber.scrub(text)[0]
    assert scrubber.scrub(once)[0] == once


def _corpus_texts() -> list[str]:
    """Every text of the independent corpora and heldout3, secrets and negatives."""
    return [
        row["text"]
        for folder in (CORPUS, CORPUS.parent / "heldout3")
        for name in ("secrets.jsonl", "negatives.jsonl")
        for row in _load(name, folder)
    ]


def test_looking_for_cues_once_a_text_changes_no_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backstop skips word and Japanese cues in a text holding none of their stems, and
    the call cue where no quote opens the value: on every corpus text the scrub is the same
    as with every cue looked for at every value, and the memos change nothing either."""
    from model_foundry.lib.hygiene import backstop

    texts = _corpus_texts()
    assert len(texts) > 900

    def scrubbed() -> list[tuple[str, Counter[str]]]:
        out = []
        for text in texts:
            counts: Counter[str] = Counter()
            out.append((SecretScrubber(HygieneConfig()).scrub(text, counts), counts))
        return out

    shortcut = scrubbed()
    monkeypatch.setattr(backstop, "_present_cues", lambda text: (True, True))
    for name in ("randomness", "_camel_words", "_not_a_value", "name_cue", "strong"):
        monkeypatch.setattr(backstop, name, getattr(backstop, name).__wrapped__)
    full = scrubbed()
    assert sum(1 for (a, _), t in zip(shortcut, texts, strict=True) if a != t) > 300
    assert shortcut == full


# Made up for this file, in the shapes heldout5's tuned half showed (its values not copied).
OTHER_LANGUAGES_AND_COLUMNS = [
    # Other languages' credential words, with a phrase saying whose and a colon between.
    ("Le mot de passe du serveur mail est : Gh7#kLp2Qx9v", ["Gh7#kLp2Qx9v"]),
    ("Пароль от тестовой базы: HarborLanternMint, логин admin.", ["HarborLanternMint"]),
    ("数据库的 root 密码：Zx9-Pq47Lm#2Tv，请尽快修改。", ["Zx9-Pq47Lm#2Tv"]),
    ("Das Passwort für den Router lautet: Kq4!mZ8pR2wx", ["Kq4!mZ8pR2wx"]),
    # Japanese: ``=`` right after the word, and a JSON key inside a tool call's arguments.
    ("WARN [auth] ユーザー=sato パスワード=^Rt5+qW0zP8mYk 接続元=192.0.2.7", ["^Rt5+qW0zP8mYk"]),
    (
        '{"arguments": "{\\"ユーザー名\\": \\"sato\\", \\"パスワード\\": \\"CobaltMeadowFern\\"}"}',
        ["CobaltMeadowFern"],
    ),
    # A CSV column headed by a credential word: every row's value, letters or not.
    (
        "login,mail,initial_password,team\nsato,sato@corp.example,Qw3$zX7!pL,ops\n"
        "lee,lee@corp.example,MarbleOtterGlow,dev\n",
        ["Qw3$zX7!pL", "MarbleOtterGlow"],
    ),
    # An access key's id under its own name, hex or not base32.
    ("access_key_id = 7c1e9a04b3d25f68e0a7c3b19d4f2e58", ["7c1e9a04b3d25f68e0a7c3b19d4f2e58"]),
    (
        '{"private_key_id": "3fa9c0e71b2d48a65c0e9f17d3b2a4c8e6f01d9b"}',
        ["3fa9c0e71b2d48a65c0e9f17d3b2a4c8e6f01d9b"],
    ),
    ("AWS_ACCESS_KEY_ID=ASIAQ8RT1ZK9VB0MWXYP", ["ASIAQ8RT1ZK9VB0MWXYP"]),
    # A Wi-Fi QR payload's password field.
    ("Scan this: WIFI:T:WPA;S:Cafe-5G;P:MossyPebbleLark;H:false;;", ["MossyPebbleLark"]),
    # A value cut by a shell's line continuation; one under the line that names it.
    (
        "export DEPLOY_TOKEN=Rk4Zp9Qw2Lx7\\\nx9Qv2Lr7Kp3Zt8Wm\nrun deploy",
        ["Rk4Zp9Qw2Lx7", "x9Qv2Lr7Kp3Zt8Wm"],
    ),
    (
        "Botのアクセストークンは\nq7Z+/Lk2Pw9xR4/tY8mN3vB6/cF1hJ5sD0gA==",
        ["q7Z+/Lk2Pw9xR4/tY8mN3vB6/cF1hJ5sD0gA=="],
    ),
]


@pytest.mark.parametrize(("text", "values"), OTHER_LANGUAGES_AND_COLUMNS)
def test_other_languages_csv_columns_and_key_ids(text: str, values: list[str]) -> None:
    scrubbed = RecordScrubber(salt=b"t").scrub(text)[0]
    for value in values:
        assert value in text
        assert value not in json.dumps(scrubbed, ensure_ascii=False), scrubbed


@pytest.mark.parametrize(
    "text",
    [
        # A CSV whose columns count or describe tokens, a commit's id, a French sentence.
        "model,token_count,password_policy\nsmall,2048,strict\nbase,4096,none\n",
        "commit_id = 3fa9c0e71b2d48a65c0e9f17d3b2a4c8e6f01d9b",
        "Le mot de passe doit contenir au moins douze caractères.",
        "Пароль: см. менеджер паролей.",
        # A path under a line that names a token, a continued command that is no value.
        "Where the token lives:\n/etc/app/secrets/token.txt",
        "export PATH=/opt/bin:$PATH \\\n  && make",
    ],
)
def test_what_the_other_language_and_column_cues_leave(text: str) -> None:
    assert RecordScrubber(salt=b"t").scrub(text)[0] == text


def test_a_cue_is_spent_on_the_value_it_named_unless_the_next_continues_it() -> None:
    scrub = SecretScrubber().scrub
    # The id after a taken password is the record's next field, not a second password.
    assert scrub("DB_PSWD=Wintergarten8 id=a8f9e7d6c5b4a392") == (
        "DB_PSWD=[REDACTED:password] id=a8f9e7d6c5b4a392"
    )
    # The rest of a value glued on, and the next of a list, go with it.
    glued = scrub("Authorization: Bearer 2/1113928475129490/9172194468383450:d5a9be56d16d6018")
    assert "d5a9be56d16d6018" not in glued
    listed = scrub("tokens: ghp_Xk29fjQ8LmZp3RtWv7YbN2cAq1w2e3r4t5y6, a8f9e7d6c5b4a392a8f9e7d6")
    assert "a8f9e7d6c5b4a392" not in listed


def test_an_exports_rescan_finds_nothing_a_spent_cue_left() -> None:
    """The rescan reads markers as ``REDACTED`` (``exports/proof.py``): the word must spend
    the cue too, or the field after a taken password is a find the export never made."""
    scrubber = RecordScrubber()
    for text in (
        "DB_PSWD=Wintergarten8 id=a8f9e7d6c5b4a392",
        json.dumps({"DB_PSWD": "Wintergarten8", "id": "a8f9e7d6c5b4a392"}),
    ):
        out, _ = scrubber.scrub(text)
        assert "a8f9e7d6c5b4a392" in out
        assert scrubber.scrub(unmarked(out))[1] == {}


def test_a_data_keys_base36_draw_is_a_key_its_names_and_digests_are_not() -> None:
    # PagerDuty's events key under ``routing_key``: no digest (letters past f), no name.
    scrubber = RecordScrubber()
    draw = json.dumps({"routing_key": "hamp9f0qy09xzoonw8de667ya9oi8qen", "event": "trigger"})
    assert "hamp9f0qy09xzoonw8de667ya9oi8qen" not in scrubber.scrub(draw)[0]
    for kept in (
        json.dumps({"routing_key": "orders.created.eu"}),
        "partition_key: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "cache_key: hamp9f0qy09xzoonw8de667ya9oi8qen",
    ):
        assert scrubber.scrub(kept)[0] == kept


def test_a_value_sent_in_two_messages_goes_whole() -> None:
    scrub = SecretScrubber().scrub
    # The chat cut a long token: its first part is taken by its prefix, the rest comes next
    # from the same speaker, or on the message's next line.
    first = "ghp_Xk29fjQ8LmZp3RtWv7YbN2cAq1w2"
    for text in (
        f"mika: here is the token, in two parts\nmika: {first}\nmika: Tq8rVw2Lx9Kp4Zs\n",
        f"mika: {first}\nTq8rVw2Lx9Kp4Zs\n",
    ):
        assert "Tq8rVw2Lx9Kp4Zs" not in scrub(text)
    # Another key's value under a taken one, or another speaker's line, is no rest.
    for kept in (
        f"token: {first}\nbuild: Tq8rVw2Lx9Kp4Zs\n",
        f"mika: {first}\nkai: Tq8rVw2Lx9Kp4Zs\n",
    ):
        assert "Tq8rVw2Lx9Kp4Zs" in scrub(kept)


def test_a_rest_after_a_value_the_backstop_took_goes_in_the_same_pass() -> None:
    # The first part is random enough to be its own cue (no rule's prefix), so the backstop
    # takes it; its rest on the next line goes in the same scrub, not only in a second one.
    scrub = SecretScrubber().scrub
    text = "mika: Xk29fjQ8LmZp3RtWv7YbN2cAq1w2e3r4\nmika: Tq8rVw2Lx9Kp4Zs\n"
    once = scrub(text)
    assert "Tq8rVw2Lx9Kp4Zs" not in once
    assert scrub(once) == once

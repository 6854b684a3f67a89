"""A secrets corpus made at test time: fake credentials of realistic shapes from a seeded RNG,
the sentences they are pasted into, and hard negatives that look like them but are not.

Nothing here is a live credential: every value is drawn from ``random.Random(seed)``.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from model_foundry.devtools.secrets_corpus.model import ALNUM, B32, B64, B64URL, HEX
from model_foundry.devtools.secrets_corpus.values import varied_part

URLSAFE = B64URL


@dataclass(frozen=True)
class Planted:
    """One planted secret: its kind, the text carrying it and the value that must vanish."""

    kind: str
    text: str
    value: str


def _pem(rng: random.Random, label: str) -> str:
    body = "\n".join(varied_part(rng, B64, 64) for _ in range(6))
    return f"-----BEGIN {label}-----\n{body}\n{varied_part(rng, B64, 20)}==\n-----END {label}-----"


def _password(rng: random.Random) -> str:
    return (
        varied_part(rng, ALNUM, rng.randint(6, 10)) + rng.choice("!#%*") + str(rng.randint(10, 99))
    )


Maker = Callable[[random.Random], tuple[str, str]]

# kind -> maker returning (text with the secret, the secret value)
MAKERS: dict[str, Maker] = {
    "openai_legacy": lambda g: (
        v := "sk-" + varied_part(g, ALNUM, 48),
        f"OPENAI_API_KEY is {v} ok",
    ),
    "openai_project": lambda g: (
        v := "sk-proj-" + varied_part(g, URLSAFE, 74) + "T3BlbkFJ" + varied_part(g, URLSAFE, 74),
        f"client = OpenAI(api_key='{v}')",
    ),
    "openai_service": lambda g: (
        v := "sk-svcacct-" + varied_part(g, URLSAFE, 60),
        f"use {v} for CI",
    ),
    "anthropic": lambda g: (
        v := "sk-ant-api03-" + varied_part(g, URLSAFE, 93) + "AA",
        f'"x-api-key": "{v}"',
    ),
    "huggingface": lambda g: (
        v := "hf_" + varied_part(g, string.ascii_letters, 34),
        f"HF token {v}",
    ),
    "github_classic": lambda g: (
        v := "ghp_" + varied_part(g, ALNUM, 36),
        f"git push https://{v}@github",
    ),
    "github_oauth": lambda g: (v := "gho_" + varied_part(g, ALNUM, 36), f"oauth: {v}"),
    "github_user": lambda g: (v := "ghu_" + varied_part(g, ALNUM, 36), f"token={v}"),
    "github_server": lambda g: (v := "ghs_" + varied_part(g, ALNUM, 36), f"GH app says {v}."),
    "github_refresh": lambda g: (v := "ghr_" + varied_part(g, ALNUM, 36), f"refresh {v}"),
    "github_fine_grained": lambda g: (
        v := "github_pat_" + varied_part(g, ALNUM, 22) + "_" + varied_part(g, ALNUM, 59),
        f"gh auth login --with-token <<< {v}",
    ),
    "gitlab": lambda g: (v := "glpat-" + varied_part(g, URLSAFE, 20), f"PRIVATE-TOKEN: {v}"),
    "slack_bot": lambda g: (
        v := f"xoxb-{g.randint(10**10, 10**11)}-{g.randint(10**12, 10**13)}-"
        + varied_part(g, ALNUM, 24),
        f"slack_client({v})",
    ),
    "slack_user": lambda g: (
        v := f"xoxp-{g.randint(10**10, 10**11)}-{varied_part(g, ALNUM, 32)}",
        f"SLACK {v}",
    ),
    "slack_webhook": lambda g: (
        v := f"T{varied_part(g, ALNUM.upper(), 8)}/B{varied_part(g, ALNUM.upper(), 10)}/"
        + varied_part(g, ALNUM, 24),
        f"curl -X POST https://hooks.slack.com/services/{v} -d @msg.json",
    ),
    "stripe_secret": lambda g: (
        v := "sk_live_" + varied_part(g, ALNUM, 99),
        f"stripe.api_key = '{v}'",
    ),
    "stripe_restricted": lambda g: (v := "rk_live_" + varied_part(g, ALNUM, 24), f"restricted {v}"),
    "aws_access_key_id": lambda g: (
        v := "AKIA" + varied_part(g, string.ascii_uppercase + "234567", 16),
        f"aws configure set aws_access_key_id {v}",
    ),
    "aws_secret_next_to_id": lambda g: (
        v := varied_part(g, B64, 40),
        f"[default]\nkey {'ASIA' + varied_part(g, B32, 16)}\nsecret {v}",
    ),
    "google_api_key": lambda g: (v := "AIza" + varied_part(g, URLSAFE, 35), f"maps?key={v}&q=x"),
    "google_oauth_secret": lambda g: (v := "GOCSPX-" + varied_part(g, URLSAFE, 28), f"client {v}"),
    "npm": lambda g: (v := "npm_" + varied_part(g, ALNUM, 36), f"//registry/:_authToken={v}"),
    "sendgrid": lambda g: (
        v := "SG." + varied_part(g, URLSAFE, 22) + "." + varied_part(g, URLSAFE, 43),
        f"sendgrid {v}",
    ),
    "twilio": lambda g: (v := "SK" + varied_part(g, HEX, 32), f"twilio key {v}"),
    "digitalocean": lambda g: (v := "dop_v1_" + varied_part(g, HEX, 64), f"doctl auth init -t {v}"),
    "discord_bot": lambda g: (
        v := "M"
        + varied_part(g, ALNUM, 25)
        + "."
        + varied_part(g, URLSAFE, 6)
        + "."
        + varied_part(g, URLSAFE, 38),
        f"bot.run('{v}')",
    ),
    "telegram": lambda g: (
        v := f"{g.randint(10**8, 10**9)}:AA{varied_part(g, URLSAFE, 33)}",
        f"https://api.telegram.org/bot{v}/getMe",
    ),
    "pypi": lambda g: (
        v := "pypi-AgEIcHlwaS5vcmc" + varied_part(g, URLSAFE, 120),
        f"twine upload -p {v} dist/*",
    ),
    "shopify": lambda g: (v := "shpat_" + varied_part(g, HEX, 32), f"X-Shopify-Access-Token {v}"),
    "mailgun": lambda g: (v := "key-" + varied_part(g, HEX, 32), f"mailgun api {v}"),
    "azure_storage": lambda g: (
        v := varied_part(g, B64, 86) + "==",
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={v};EndpointSuffix=core",
    ),
    "azure_client_secret": lambda g: (
        v := varied_part(g, ALNUM, 3)
        + str(g.randint(0, 9))
        + "Q~"
        + varied_part(g, ALNUM + "_~.-", 34),
        f"client secret {v} (app reg)",
    ),
    "databricks": lambda g: (v := "dapi" + varied_part(g, HEX, 32), f"DATABRICKS {v}"),
    "jwt": lambda g: (
        v := "eyJhbGciOiJIUzI1NiJ9.eyJ"
        + varied_part(g, URLSAFE, 60)
        + "."
        + varied_part(g, URLSAFE, 43),
        f"cookie session={v}; Path=/",
    ),
    "bearer": lambda g: (
        v := varied_part(g, ALNUM + "._-", 40),
        f"curl -H 'Authorization: Bearer {v}' https://api",
    ),
    "basic": lambda g: (
        v := base64.b64encode(f"deploy:{_password(g)}".encode()).decode(),
        f"Authorization: Basic {v}",
    ),
    "url_password": lambda g: (
        v := _password(g).replace("#", "x").replace("%", "y"),
        f"DATABASE_URL=postgresql://app:{v}@db.internal:5432/app",
    ),
    "rsa_private_key": lambda g: (v := _pem(g, "RSA PRIVATE KEY"), f"key file:\n{v}\nend"),
    "openssh_private_key": lambda g: (v := _pem(g, "OPENSSH PRIVATE KEY"), v),
    "env_password": lambda g: (v := _password(g), f"export DB_PASSWORD={v}\nrun"),
    "env_key": lambda g: (v := varied_part(g, ALNUM, 32), f"MY_SERVICE_KEY={v}\n"),
    "env_secret": lambda g: (v := varied_part(g, B64, 44), f"JWT_SECRET='{v}'"),
    "env_pass": lambda g: (v := _password(g), f"SMTP_PASS={v}"),
    "env_pwd": lambda g: (v := _password(g), f"MYSQL_PWD={v} mysql -u root"),
    "env_credential": lambda g: (v := varied_part(g, B64, 48), f"GCP_CREDENTIALS={v}"),
    "env_auth": lambda g: (v := varied_part(g, ALNUM, 30), f"X_AUTH={v}"),
    "env_private": lambda g: (v := varied_part(g, HEX + "XYZ", 48), f"PRIVATE_SEED={v}"),
    "json_client_secret": lambda g: (v := varied_part(g, ALNUM, 40), f'{{"client_secret": "{v}"}}'),
    "json_access_token": lambda g: (
        v := varied_part(g, ALNUM + ".-", 50),
        f'{{"accessToken": "{v}"}}',
    ),
    "yaml_password": lambda g: (v := _password(g), f"db:\n  password: {v}\n  user: app"),
    "flag_token": lambda g: (v := varied_part(g, ALNUM, 32), f"tool --token {v} --verbose"),
    "flag_password_eq": lambda g: (v := _password(g), f"mysqladmin --password={v} status"),
    "flag_api_key": lambda g: (v := varied_part(g, HEX, 40), f"run --api-key '{v}'"),
    "curl_user": lambda g: (v := _password(g), f"curl -u admin:{v} https://host/api"),
    "header_api_key": lambda g: (v := varied_part(g, ALNUM, 32), f"X-Api-Key: {v}"),
}

NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "git_sha": lambda g: f"commit {varied_part(g, HEX, 40)} (HEAD -> main)",
    "short_sha": lambda g: f"fixed in {varied_part(g, HEX, 7)}",
    "uuid": lambda g: "id " + "-".join(varied_part(g, HEX, n) for n in (8, 4, 4, 4, 12)),
    "sha256": lambda g: f"sha256:{varied_part(g, HEX, 64)}  dist.tar.gz",
    "md5": lambda g: f"md5sum {varied_part(g, HEX, 32)}",
    "placeholder_sk": lambda g: "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "placeholder_dots": lambda g: "set api_key to sk-... in the config",
    "placeholder_angle": lambda g: "curl -H 'Authorization: Bearer <your-token>' https://api",
    "placeholder_env": lambda g: 'export GITHUB_TOKEN="${GITHUB_TOKEN}"',
    "placeholder_your": lambda g: '{"api_key": "YOUR_API_KEY"}',
    "placeholder_ghp": lambda g: "token ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "placeholder_changeme": lambda g: "POSTGRES_PASSWORD=changeme",
    "max_tokens": lambda g: f'{{"max_tokens": {g.randint(64, 4096)}, "temperature": 0.2}}',
    "author": lambda g: '{"author": "Ada Lovelace", "title": "Notes"}',
    "path_home": lambda g: "PATH=/usr/local/bin:/usr/bin:/bin\nHOME=/root\nPWD=/srv/app",
    "token_type": lambda g: '{"token_type": "bearer", "expires_in": 3600}',
    "password_stdin": lambda g: "echo $PW | docker login --password-stdin registry",
    "basic_prose": lambda g: "Basic configuration is described below.",
    "bearer_prose": lambda g: "Bearer authentication sends a token in a header.",
    "code_token": lambda g: "    token = tokenizer.encode(text)\n    password: str | None = None",
    "code_kwarg": lambda g: "client = Client(token=token, auth=auth)",
    "request_key": lambda g: f'{{"request_key": "sess-{g.randint(1, 999)}:planner:0"}}',
    "primary_key": lambda g: "PRIMARY KEY (dataset, version)\nprimary_key: id",
    "url_user_only": lambda g: "https://alice@git.example.org/repo.git",
    "url_query": lambda g: f"https://example.com/search?page={g.randint(1, 9)}&q=tokens",
    "image_data": lambda g: "data:image/png;base64," + varied_part(g, B64, 120),
    "semver": lambda g: f"upgraded to 1.{g.randint(0, 30)}.{g.randint(0, 9)}",
    "trace_id": lambda g: f"trace_id={varied_part(g, HEX, 32)} span_id={varied_part(g, HEX, 16)}",
    "token_count": lambda g: f"prompt_tokens={g.randint(1, 900)} completion_tokens=12",
    "public_key": lambda g: (
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + varied_part(g, B64, 43) + " me"
    ),
}

PLACES = (
    "content",
    "tool_arguments_raw",
    "tool_arguments_json",
    "tool_result",
    "reasoning",
    "tools_schema",
)


def record_with(text: str, place: str) -> dict[str, Any]:
    """An OpenAI-shaped chat record carrying ``text`` in ``place``."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    tools: list[dict[str, Any]] = [
        {"type": "function", "function": {"name": "sh", "parameters": {"type": "object"}}}
    ]
    if place == "content":
        messages.append({"role": "user", "content": f"Here is my setup:\n{text}\nWhy?"})
    elif place in ("tool_arguments_raw", "tool_arguments_json", "reasoning"):
        args = json.dumps({"command": text}) if place == "tool_arguments_json" else text
        call = {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": args}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        if place == "reasoning":
            messages[-1]["reasoning"] = f"The user pasted {text} so I should"
            call["function"]["arguments"] = "{}"
    elif place == "tool_result":
        messages.append({"role": "tool", "tool_call_id": "c1", "content": f"$ cat .env\n{text}"})
    else:
        tools[0]["function"]["description"] = f"Runs a shell command. Example: {text}"
    return {"messages": messages, "tools": tools}


def planted(seed: int, copies: int) -> list[Planted]:
    rng = random.Random(seed)
    out = []
    for kind, make in MAKERS.items():
        for _ in range(copies):
            value, text = make(rng)
            out.append(Planted(kind, text, value))
    return out


def negatives(seed: int, copies: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(kind, make(rng)) for kind, make in NEGATIVES.items() for _ in range(copies)]

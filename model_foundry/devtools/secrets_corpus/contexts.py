"""Generic contexts: one kind of secret written where sessions meet it."""

from __future__ import annotations

import json
from collections.abc import Callable

from model_foundry.devtools.secrets_corpus.generator import _comment, _Gen, _render_kv
from model_foundry.devtools.secrets_corpus.model import Plant, _b64
from model_foundry.devtools.secrets_corpus.values import Kind
from model_foundry.devtools.secrets_corpus.words import PHRASES, PLAIN_TEXTS, _timestamp, _uuid


def _ctx_dotenv(g: _Gen, k: Kind) -> None:
    fmt = g.rng.choice(["dotenv", "dotenv", "yaml", "toml", "ini"])
    value, part = g.secret(k)
    p1, p2 = g.phrases()
    neg_lines, neg = g.negatives(fmt, 2)
    line = _render_kv(fmt, k.env, value, g.rng)
    lines = [_comment(fmt, p1), *neg_lines[:1], line, *neg_lines[1:], _comment(fmt, p2)]
    if fmt == "toml":
        lines.insert(0, "[service]")
    elif fmt == "ini":
        lines.insert(0, "[default]")
    path = {"dotenv": ".env", "yaml": "config/settings.yaml", "toml": "config/app.toml",
            "ini": "setup.cfg"}[fmt]  # fmt: skip
    where = g.file_where()
    text, source = g.wrap_file(where, path, "\n".join(lines) + "\n", g.rng.choice(PHRASES))
    key = k.env if fmt == "dotenv" else k.env.lower()
    g.add(text, [Plant(k.name, fmt, value, part)], neg, [p1, p2, key], where, source)


def _ctx_json(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    key = g.rng.choice([k.env.lower(), "apiKey", "token", "secret"])
    nkey, nvalue = g.negative()
    style = g.rng.randrange(4)
    if style == 3:  # a JavaScript object literal: keys without quotes
        q = g.rng.choice(["'", '"'])
        text = (
            f"module.exports = {{\n  service: {q}billing-sync{q},\n  {key}: {q}{value}{q},\n"
            f"  {nkey.lower()}: {q}{nvalue}{q},\n  note: {q}{p1}{q},\n}};\n"
        )
        path = "config/local.js"
    else:
        sep = [": ", ":", " : "][style]
        pairs = [("service", "billing-sync"), (key, value), (nkey.lower(), nvalue), ("note", p1)]
        items = [f'"{a}"{sep}"{b}"' for a, b in pairs]
        if g.rng.random() < 0.5:
            text = "{" + ", ".join(items) + "}"
        else:
            text = "{\n  " + ",\n  ".join(items) + "\n}\n"
        path = "config/credentials.json"
    where = g.file_where()
    text, source = g.wrap_file(where, path, text, g.rng.choice(PHRASES))
    g.add(text, [Plant(k.name, "json", value, part)], [nvalue], [p1, "billing-sync", key], where,
          source)  # fmt: skip


def _ctx_header(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    header = (k.header or "Authorization: Bearer {}").format(value)
    name = header.split(":", 1)[0]
    p1 = g.phrases(1)[0]
    host = g.rng.choice(["api.acme.test", "hooks.acme.test", "internal-gw.acme.test"])
    sentence, neg = g.prose_negative()
    if g.rng.random() < 0.5:
        text = (
            f"# {p1}\n# {sentence}\n"
            f"curl -sS -X POST https://{host}/v2/jobs -H '{header}' "
            "-H 'Content-Type: application/json' -d '{\"dry_run\": true}'"
        )
        where, source = "tool_arguments", "shell"
    else:
        rid = _uuid(g.rng)
        text = (
            f"> POST /v2/jobs HTTP/1.1\n> Host: {host}\n> User-Agent: curl/8.5.0\n> {header}\n"
            f"> Accept: */*\n>\n< HTTP/1.1 202 Accepted\n< X-Request-Id: {rid}\n<\n"
            f'{{"status": "queued", "note": "{p1}", "detail": "{sentence}"}}'
        )
        where, source = "tool_result", "curl -v"
        g.add(text, [Plant(k.name, "http_header", value, part)], [neg, rid], [p1, name, host],
              where, source)  # fmt: skip
        return
    g.add(text, [Plant(k.name, "http_header", value, part)], [neg], [p1, name, host], where,
          source)  # fmt: skip


def _ctx_command(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    env = k.env
    flag = env.lower().replace("_", "-")
    forms = [
        f"export {env}={value}\n./scripts/sync.sh --dry-run",
        f"docker run --rm -e {env}={value} -e LOG_LEVEL=info acme/worker:2.3.1 sync",
        f"acme-cli deploy --{flag} {value} --region eu-central-1",
        f"acme-cli deploy --{flag}={value} --region eu-central-1",
        f"{env}={value} python -m acme.jobs.backfill --since 2024-05-01",
        f"kubectl create secret generic worker-env --from-literal={env}={value} -n jobs",
    ]
    command = g.rng.choice(forms)
    sentence, neg = g.prose_negative()
    where = g.rng.choice(["tool_arguments", "tool_arguments", "assistant_turn", "user_turn"])
    if where == "tool_arguments":
        text = f"# {p1}\n# {sentence}\n{command}"
    elif where == "assistant_turn":
        text = f"To test this ({p1}), run:\n\n```bash\n{command}\n```\n\n{sentence}"
    else:
        text = f"I ran this, {p1}:\n{command}\nbut it hangs. {sentence}"
    keep = [p1, "--region eu-central-1" if "--region" in command else env]
    g.add(text, [Plant(k.name, "command_line", value, part)], [neg], keep, where, "shell")


def _ctx_prose(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    sentence, neg = g.prose_negative()
    where = g.rng.choice(["user_turn", "assistant_turn", "reasoning"])
    if where == "user_turn":
        text = (
            f"My {k.label} is {value} - can you check why the job says unauthorized? "
            f"Note that {p1}. {sentence}"
        )
        keep = ["can you check why the job says unauthorized", p1]
    elif where == "assistant_turn":
        text = (
            f"The config sets the {k.label} to `{value}`, which looks fine. Remember that "
            f"{p1}. {sentence}"
        )
        keep = ["which looks fine", p1]
    else:
        text = (
            f"The user pasted the {k.label} {value} earlier. I should not repeat it; "
            f"{p1}, so the failure is probably elsewhere. {sentence}"
        )
        keep = ["so the failure is probably elsewhere", p1]
    g.add(text, [Plant(k.name, "prose", value, part)], [neg], keep, where)


def _ctx_k8s_secret(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    name = g.rng.choice(["billing-api", "worker-env", "sync-credentials", "gateway"])
    key = k.env
    ver = f"{g.rng.randint(1, 3)}.{g.rng.randint(0, 9)}.{g.rng.randint(0, 9)}"
    if g.rng.random() < 0.7:
        plant = Plant(k.name, "k8s_secret", value, part, "base64")
        body = f"data:\n  {key}: {plant.shown}\n"
    else:
        plant = Plant(k.name, "k8s_secret", value, part)
        body = f"stringData:\n  {key}: {value}\n"
    text = (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: payments\n"
        f'  annotations:\n    acme.test/note: "{p1}"\n    acme.test/chart-version: "{ver}"\n'
        f"type: Opaque\n{body}"
    )
    where = g.rng.choice(["tool_result", "tool_arguments"])
    source = f"kubectl get secret {name} -o yaml" if where == "tool_result" else "k8s/secret.yaml"
    g.add(text, [plant], [ver], [p1, name, key], where, source)


def _ctx_json_escaped(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    path = g.rng.choice(["deploy/.env.production", "services/api/.env", "ops/vars.env"])
    content = f'# {p1}\n{k.env}="{value}"\nLOG_LEVEL=info\n'
    if g.rng.random() < 0.5:
        inner = json.dumps({"path": path, "content": content})
        text = json.dumps({"name": "write_file", "arguments": inner})
        encoding = "json2"
    else:
        text = json.dumps({"level": "info", "msg": "tool call", "arguments": json.dumps(
            {"command": f"echo '{k.env}={value}' >> {path}", "why": p1})})  # fmt: skip
        encoding = "json"
    plant = Plant(k.name, "json_escaped", value, part, encoding)
    where = g.rng.choice(["tool_arguments", "tool_result"])
    g.add(text, [plant], [path], [p1, k.env], where, "write_file")


def _ctx_base64_wrapped(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    wrapped = f"{k.env}={value}\n"
    plant = Plant(k.name, "base64_wrapped", value, part, "base64", wrapped)
    neg_text = _b64(g.rng.choice(PLAIN_TEXTS))
    text = (
        f"# {p1}\necho '{plant.shown}' | base64 -d >> .env\n"
        f"echo '{neg_text}' | base64 -d  # just a greeting, not a secret"
    )
    g.add(text, [plant], [neg_text], [p1, "just a greeting, not a secret"], "tool_arguments",
          "shell")  # fmt: skip


def _ctx_url_param(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    plant = Plant(k.name, "url_encoded", value, part, "url")
    ts = _timestamp(g.rng)
    param = g.rng.choice(["access_token", "api_key", "key", "token"])
    text = (
        f'10.1.4.22 - - [{ts}] "GET /v1/export?format=csv&{param}={plant.shown}&page=2 HTTP/1.1" '
        f'200 5123 "-" "python-requests/2.31.0"\n# {p1}'
    )
    g.add(text, [plant], [ts, "python-requests/2.31.0"], [p1, "/v1/export?format=csv"],
          "tool_result", "tail -n 1 /var/log/nginx/access.log")  # fmt: skip


_GENERIC: tuple[Callable[[_Gen, Kind], None], ...] = (
    _ctx_dotenv,
    _ctx_json,
    _ctx_header,
    _ctx_command,
    _ctx_prose,
    _ctx_k8s_secret,
    _ctx_json_escaped,
    _ctx_base64_wrapped,
    _ctx_url_param,
)


# -- passwords in their own contexts -------------------------------------------------------------

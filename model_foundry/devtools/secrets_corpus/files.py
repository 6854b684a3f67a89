"""Credential and config files as a session reads them."""

from __future__ import annotations

from model_foundry.devtools.secrets_corpus.generator import _Gen
from model_foundry.devtools.secrets_corpus.kinds import TOKEN_KINDS
from model_foundry.devtools.secrets_corpus.model import B64, HEX, Plant, _b64
from model_foundry.devtools.secrets_corpus.values import random_part
from model_foundry.devtools.secrets_corpus.words import PHRASES, _uuid

# -- credential and config files ---------------------------------------------------------------


def _aws_credentials(g: _Gen) -> None:
    p1, p2 = g.phrases()
    plants: list[Plant] = []
    blocks = []
    for n, profile in enumerate(g.rng.sample(["default", "ci", "billing-prod", "sandbox"], 2)):
        kid, kid_part = g.secret("aws_access_key_id")
        sec, sec_part = g.secret("aws_secret_access_key")
        sp = g.rng.choice([" = ", "=", " =", "= "]) if n else " = "
        lines = [f"[{profile}]", f"aws_access_key_id{sp}{kid}", f"aws_secret_access_key{sp}{sec}"]
        plants += [Plant("aws_access_key_id", "aws_credentials", kid, kid_part),
                   Plant("aws_secret_access_key", "aws_credentials", sec, sec_part)]  # fmt: skip
        if n == 1 and g.rng.random() < 0.6:
            tok, tok_part = g.secret("aws_session_token")
            lines.append(f"aws_session_token{sp}{tok}")
            plants.append(Plant("aws_session_token", "aws_credentials", tok, tok_part))
        blocks.append("\n".join(lines))
    region = g.rng.choice(["eu-west-1", "us-east-2", "ap-southeast-2"])
    body = f"# {p1}\n" + "\n\n".join(blocks) + f"\nregion = {region}\n# {p2}\n"
    where = g.rng.choice(["tool_result", "tool_result", "user_turn", "tool_arguments"])
    text, source = g.wrap_file(where, "~/.aws/credentials", body, g.rng.choice(PHRASES))
    g.add(text, plants, [f"region = {region}"], [p1, p2, "aws_secret_access_key"], where, source)


def _netrc(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    pw, pw_part = g.secret("netrc_password")
    tok, tok_part = g.secret("github_classic_pat")
    user = g.user()
    if g.rng.random() < 0.5:
        body = (
            f"# {p1}\nmachine artifacts.acme.test\n  login {user}\n  password {pw}\n\n"
            f"machine api.github.com login {user} password {tok}\n"
            "machine ftp.acme.test login anonymous password changeme\n"
        )
    else:
        body = (
            f"# {p1}\nmachine artifacts.acme.test login {user} password {pw}\n"
            f"machine api.github.com\nlogin {user}\npassword {tok}\n"
            "machine ftp.acme.test login anonymous password changeme\n"
        )
    plants = [Plant("netrc_password", "netrc", pw, pw_part),
              Plant("github_classic_pat", "netrc", tok, tok_part)]  # fmt: skip
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.netrc", body, g.rng.choice(PHRASES))
    g.add(text, plants, ["password changeme"], [p1, "machine artifacts.acme.test"], where, source)


def _pgpass(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    lines = [f"# {p1}", "# hostname:port:database:username:password"]
    plants = []
    for _ in range(g.rng.randint(1, 3)):
        pw, part = g.secret("postgres_password")
        host, db, user = g.host(), g.db(), g.user()
        lines.append(f"{host}:5432:{db}:{user}:{pw}")
        plants.append(Plant("postgres_password", "pgpass", pw, part))
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.pgpass", "\n".join(lines) + "\n", g.rng.choice(PHRASES))
    g.add(text, plants, [], [p1, "hostname:port:database:username:password"], where, source)


def _npmrc(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    tok, part = g.secret("npm_token")
    gh, gh_part = g.secret("github_classic_pat")
    body = (
        f"; {p1}\n//registry.npmjs.org/:_authToken={tok}\n@acme:registry=https://npm.pkg.github.com\n"
        f"//npm.pkg.github.com/:_authToken={gh}\n"
        "//npm.acme.test/:_authToken=${NPM_INTERNAL_TOKEN}\nalways-auth=true\n"
    )
    plants = [Plant("npm_token", "npmrc", tok, part),
              Plant("github_classic_pat", "npmrc", gh, gh_part)]  # fmt: skip
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.npmrc", body, g.rng.choice(PHRASES))
    g.add(text, plants, ["${NPM_INTERNAL_TOKEN}", "https://npm.pkg.github.com"],
          [p1, "always-auth=true", "//registry.npmjs.org/"], where, source)  # fmt: skip


def _pypirc(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    t1, part1 = g.secret("pypi_token")
    t2, part2 = g.secret("pypi_token")
    body = (
        f"# {p1}\n[distutils]\nindex-servers =\n    pypi\n    testpypi\n\n[pypi]\n"
        f"username = __token__\npassword = {t1}\n\n[testpypi]\n"
        f"repository = https://test.pypi.org/legacy/\nusername = __token__\npassword={t2}\n"
    )
    plants = [Plant("pypi_token", "pypirc", t1, part1), Plant("pypi_token", "pypirc", t2, part2)]
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.pypirc", body, g.rng.choice(PHRASES))
    g.add(text, plants, ["https://test.pypi.org/legacy/"], [p1, "index-servers", "[testpypi]"],
          where, source)  # fmt: skip


def _pip_conf(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    if g.rng.random() < 0.5:
        pw, part = g.secret("pip_index_password")
        plant = Plant("pip_index_password", "pip_conf", pw, part)
        index = f"https://{g.user()}:{pw}@pypi.acme.test/simple"
    else:
        pw, part = g.secret("gitlab_pat")
        plant = Plant("gitlab_pat", "pip_conf", pw, part)
        index = f"https://__token__:{pw}@gitlab.acme.test/api/v4/projects/42/packages/pypi/simple"
    body = (
        f"# {p1}\n[global]\nindex-url = {index}\nextra-index-url = https://pypi.org/simple\n"
        "timeout = 60\n"
    )
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.config/pip/pip.conf", body, g.rng.choice(PHRASES))
    g.add(text, [plant], ["https://pypi.org/simple", "timeout = 60"], [p1, "[global]"], where,
          source)  # fmt: skip


def _git_credentials(g: _Gen) -> None:
    gh, gh_part = g.secret(g.rng.choice(["github_classic_pat", "github_fine_grained_pat"]))
    gl, gl_part = g.secret("gitlab_pat")
    user = g.user()
    body = f"https://{user}:{gh}@github.com\nhttps://oauth2:{gl}@gitlab.com\n"
    plants = [Plant(_kind_of(gh), "git_credentials", gh, gh_part),
              Plant("gitlab_pat", "git_credentials", gl, gl_part)]  # fmt: skip
    p1 = g.phrases(1)[0]
    if g.rng.random() < 0.5:
        text, where, source = body, "tool_result", "cat ~/.git-credentials"
    else:
        text, where, source = f"My ~/.git-credentials ({p1}):\n{body}", "user_turn", ""
    g.add(text, plants, [], ["@github.com", "@gitlab.com"] + ([p1] if where == "user_turn" else []),
          where, source)  # fmt: skip


def _git_remote(g: _Gen) -> None:
    tok, part = g.secret(g.rng.choice(["github_app_token", "github_oauth_token"]))
    repo = g.rng.choice(["acme/api", "acme/widgets", "acme/infra"])
    text = (
        f"origin\thttps://x-access-token:{tok}@github.com/{repo}.git (fetch)\n"
        f"origin\thttps://x-access-token:{tok}@github.com/{repo}.git (push)\n"
        "upstream\thttps://x-access-token:none@github.com/acme/upstream.git (fetch)\n"
        "upstream\thttps://x-access-token:none@github.com/acme/upstream.git (push)\n"
    )
    plant = Plant(_kind_of(tok), "git_remote", tok, part)
    g.add(
        text,
        [plant],
        ["https://x-access-token:none@github.com/acme/upstream.git"],
        [f"@github.com/{repo}.git (fetch)", "upstream"],
        "tool_result",
        "git remote -v",
    )


def _kind_of(value: str) -> str:
    for prefix, kind in (
        ("github_pat_", "github_fine_grained_pat"),
        ("ghp_", "github_classic_pat"),
        ("gho_", "github_oauth_token"),
        ("ghs_", "github_app_token"),
    ):
        if value.startswith(prefix):
            return kind
    raise ValueError(value[:8])  # fmt: skip


def _kubeconfig(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    tok, tok_part = g.secret("kubernetes_sa_token")
    key, key_part = g.secret(g.rng.choice(["rsa_private_key", "ec_private_key"]))
    key_plant = Plant(_pem_kind(key), "kubeconfig", key, key_part, "base64")
    cert = random_part(g.rng, B64, 64)
    ca = _b64(f"-----BEGIN CERTIFICATE-----\n{cert}\n-----END CERTIFICATE-----\n")
    server = f"https://10.0.{g.rng.randint(0, 255)}.{g.rng.randint(1, 254)}:6443"
    body = (
        f"# {p1}\napiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        f"    certificate-authority-data: {ca}\n    server: {server}\n  name: staging\n"
        "contexts:\n- context:\n    cluster: staging\n    user: ci-bot\n  name: staging\n"
        "current-context: staging\nusers:\n- name: ci-bot\n  user:\n"
        f"    token: {tok}\n- name: admin\n  user:\n    client-key-data: {key_plant.shown}\n"
    )
    plants = [Plant("kubernetes_sa_token", "kubeconfig", tok, tok_part), key_plant]
    where = g.rng.choice(["tool_result", "tool_result", "user_turn"])
    text, source = g.wrap_file(where, "~/.kube/config", body, g.rng.choice(PHRASES))
    g.add(text, plants, [server], [p1, "current-context: staging", "client-key-data"], where,
          source)  # fmt: skip


def _pem_kind(value: str) -> str:
    head = value.split("\n", 1)[0]
    for label, kind in (("RSA", "rsa_private_key"), ("OPENSSH", "openssh_private_key"),
                        ("EC", "ec_private_key")):  # fmt: skip
        if f"BEGIN {label} " in head:
            return kind
    return "pkcs8_private_key"


def _docker_config(g: _Gen) -> None:
    pw, part = g.secret("registry_password")
    user = g.user()
    a = Plant("registry_password", "docker_config", pw, part, "base64", f"{user}:{pw}")
    gh, gh_part = g.secret("github_classic_pat")
    b = Plant("github_classic_pat", "docker_config", gh, gh_part, "base64", f"{user}:{gh}")
    text = (
        '{\n  "auths": {\n    "registry.acme.test": {\n      "auth": "' + a.shown + '"\n    },\n'
        '    "ghcr.io": {\n      "auth": "' + b.shown + '"\n    }\n  },\n'
        '  "credsStore": "desktop",\n  "currentContext": "default"\n}\n'
    )
    g.add(
        text,
        [a, b],
        ['"credsStore": "desktop"'],
        ["registry.acme.test", "ghcr.io"],
        g.rng.choice(["tool_result", "tool_result", "user_turn"]),
        "cat ~/.docker/config.json",
    )


def _k8s_secret_multi(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    kinds = g.rng.sample(TOKEN_KINDS, 2)
    plants, lines = [], []
    for k in kinds:
        value, part = g.secret(k)
        plant = Plant(k.name, "k8s_secret", value, part, "base64")
        plants.append(plant)
        lines.append(f"  {k.env}: {plant.shown}")
    pw, pw_part = g.secret("postgres_password")
    plants.append(Plant("postgres_password", "k8s_secret", pw, pw_part, "base64"))
    lines.append(f"  DB_PASSWORD: {plants[-1].shown}")
    if g.rng.random() < 0.5:
        key, key_part = g.secret("pkcs8_private_key")
        plants.append(Plant("pkcs8_private_key", "k8s_secret", key, key_part, "base64"))
        lines.append(f"  tls.key: {plants[-1].shown}")
    text = (
        f"# {p1}\napiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secrets\n"
        "  namespace: prod\ntype: Opaque\ndata:\n" + "\n".join(lines) + "\n"
    )
    g.add(
        text,
        plants,
        [],
        [p1, "app-secrets", "DB_PASSWORD"],
        g.rng.choice(["tool_result", "tool_arguments"]),
        "kubectl get secret app-secrets -o yaml",
    )


def _pem_cases(g: _Gen) -> None:
    for kind in ("rsa_private_key", "openssh_private_key", "ec_private_key", "pkcs8_private_key"):
        for style in range(2):
            key, part = g.secret(kind)
            p1 = g.phrases(1)[0]
            if style == 0:
                path = "~/.ssh/id_ed25519" if "OPENSSH" in key else "certs/server.key"
                g.add(key + "\n", [Plant(kind, "pem_file", key, part)], [], [], "tool_result",
                      f"cat {path}")  # fmt: skip
            else:
                text = f"Here is the deploy key ({p1}):\n\n```\n{key}\n```\n\nIs it right?"
                g.add(text, [Plant(kind, "prose", key, part)], [],
                      [p1, "Is it right?"], "user_turn")  # fmt: skip
    for _ in range(3):  # a GCP service account file: the PEM JSON-escaped
        key, part = g.secret("pkcs8_private_key")
        plant = Plant("pkcs8_private_key", "json_escaped", key, part, "json")
        kid = random_part(g.rng, HEX, 40)
        email = f"exporter@acme-analytics-{g.rng.randint(100, 999)}.iam.gserviceaccount.com"
        text = (
            '{\n  "type": "service_account",\n  "project_id": "acme-analytics",\n'
            f'  "private_key_id": "{kid}",\n  "private_key": "{plant.shown}\\n",\n'
            f'  "client_email": "{email}",\n'
            '  "token_uri": "https://oauth2.googleapis.com/token"\n}\n'
        )
        g.add(text, [plant], ["https://oauth2.googleapis.com/token"],
              ['"type": "service_account"', email],
              g.rng.choice(["tool_result", "tool_arguments"]), "gcp-key.json")  # fmt: skip


_ENV_BASE = (
    ("SHELL", "/bin/bash"),
    ("HOME", "/home/runner"),
    ("LANG", "C.UTF-8"),
    ("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
    ("RUNNER_TEMP", "/home/runner/work/_temp"),
    ("TZ", "Europe/Berlin"),
    ("PWD", "/home/runner/work/acme/acme"),
)


def _env_dump(g: _Gen) -> None:
    rng = g.rng
    pairs: list[tuple[str, str]] = list(rng.sample(_ENV_BASE, 4))
    sha = random_part(rng, HEX, 40)
    pairs.append(("GITHUB_SHA", sha))
    run_id = _uuid(rng)
    pairs.append(("CI_RUN_ID", run_id))
    plants = []
    for _ in range(rng.randint(3, 6)):
        if g.seen and rng.random() < 0.35:
            k, value, part = rng.choice(g.seen)  # the same value met again elsewhere
        else:
            k = rng.choice(TOKEN_KINDS)
            value, part = g.secret(k)
        if any(name == k.env for name, _ in pairs):
            continue
        pairs.append((k.env, value))
        plants.append(Plant(k.name, "env_dump", value, part))
    if rng.random() < 0.5:
        pw, part = g.secret("postgres_password")
        pairs.append(("PGPASSWORD", pw))
        plants.append(Plant("postgres_password", "env_dump", pw, part))
    pairs.append(("DB_PASSWORD_FILE", "/run/secrets/db_password"))
    rng.shuffle(pairs)
    style = rng.randrange(3)
    if style == 0:
        text, source = "\n".join(f"{a}={b}" for a, b in pairs), "env"
    elif style == 1:
        text, source = "\n".join(f'declare -x {a}="{b}"' for a, b in pairs), "export -p"
    else:
        items = ",\n".join(f'                "{a}={b}"' for a, b in pairs)
        text = f'[\n    {{\n        "Config": {{\n            "Env": [\n{items}\n            ]\n'
        text += "        }\n    }\n]"
        source = "docker inspect worker"
    g.add(text, plants, [sha, run_id, "/run/secrets/db_password"], ["DB_PASSWORD_FILE"],
          "env_dump", source)  # fmt: skip

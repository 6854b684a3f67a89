"""Passwords of HTTP, registries, mail, SSH and cloud services."""

from __future__ import annotations

from model_foundry.devtools.secrets_corpus.contexts import _ctx_k8s_secret
from model_foundry.devtools.secrets_corpus.databases import (
    _command_case,
    _file_case,
    _mongodb_password_cases,
    _mysql_password_cases,
    _oracle_password_cases,
    _postgres_password_cases,
    _rabbitmq_password_cases,
    _redis_password_cases,
    _sql_server_password_cases,
)
from model_foundry.devtools.secrets_corpus.generator import _Gen
from model_foundry.devtools.secrets_corpus.kinds import KIND_BY_NAME
from model_foundry.devtools.secrets_corpus.model import ALNUM, PW_SPECIAL, Plant
from model_foundry.devtools.secrets_corpus.words import _timestamp


def _http_basic_auth_password_cases(g: _Gen) -> None:
    c = _command_case
    c(
        g,
        "http_basic_password",
        "command_line",
        lambda u, pw, h, db: (
            f"curl -fsS -u {u}:{pw} https://{h}/api/health",
            [f"https://{h}/api/health"],
        ),
    )
    c(
        g,
        "http_basic_password",
        "command_line",
        lambda u, pw, h, db: (
            f"wget --user={u} --password={pw} https://artifacts.acme.test/raw/builds/app-1.4.2.tgz",
            ["artifacts.acme.test/raw/builds/app-1.4.2.tgz"],
        ),
    )
    c(
        g,
        "http_basic_password",
        "url",
        lambda u, pw, h, db: (
            f"git clone https://{u}:{pw}@git.acme.test/platform/infra.git",
            ["git clone", "git.acme.test/platform/infra.git"],
        ),
    )
    for _ in range(2):
        value, part = g.secret("http_basic_password")
        user = g.user()
        plant = Plant("http_basic_password", "http_header", value, part, "base64",
                      f"{user}:{value}")  # fmt: skip
        p1 = g.phrases(1)[0]
        text = (
            f"GET /metrics HTTP/1.1\nHost: reports.acme.test\nAuthorization: Basic {plant.shown}\n"
            f"Accept: text/plain\n\n# {p1}"
        )
        g.add(text, [plant], ["reports.acme.test"], [p1, "Authorization: Basic", "GET /metrics"],
              g.rng.choice(["tool_result", "tool_arguments"]), "http_request")  # fmt: skip


def _registries_and_indexes_password_cases(g: _Gen) -> None:
    c = _command_case
    c(
        g,
        "registry_password",
        "command_line",
        lambda u, pw, h, db: (
            f"docker login --username {u} --password {pw} registry.acme.test",
            ["docker login", "registry.acme.test"],
        ),
    )
    c(
        g,
        "registry_password",
        "command_line",
        lambda u, pw, h, db: (
            f"echo '{pw}' | docker login ghcr.io -u {u} --password-stdin",
            ["--password-stdin", "ghcr.io"],
        ),
    )
    c(
        g,
        "pip_index_password",
        "url",
        lambda u, pw, h, db: (
            f"pip install --index-url https://{u}:{pw}@pypi.acme.test/simple/ acme-core==1.4.2",
            ["pypi.acme.test/simple/", "acme-core==1.4.2"],
        ),
    )
    c(
        g,
        "pip_index_password",
        "url",
        lambda u, pw, h, db: (
            f"PIP_EXTRA_INDEX_URL=https://{u}:{pw}@nexus.acme.test/repository/pypi/simple",
            ["PIP_EXTRA_INDEX_URL", "nexus.acme.test/repository/pypi/simple"],
        ),
    )


def _mail_and_directory_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    f(
        g,
        "smtp_password",
        "ini",
        "config/mail.ini",
        lambda u, pw, h, db, p: (
            f"; {p}\n[smtp]\nhost = smtp.acme.test\nport = 587\nuser = {u}@acme.test\n"
            f"password = {pw}\nstarttls = true\n",
            ["host = smtp.acme.test", "starttls = true"],
            ["port = 587"],
        ),
    )
    f(
        g,
        "smtp_password",
        "python_settings",
        "acme/settings/production.py",
        lambda u, pw, h, db, p: (
            f'# {p}\nEMAIL_HOST = "smtp.acme.test"\nEMAIL_PORT = 587\nEMAIL_HOST_USER = "{u}"\n'
            f'EMAIL_HOST_PASSWORD = "{pw}"\nEMAIL_USE_TLS = True\n',
            ["EMAIL_HOST_PASSWORD", "EMAIL_USE_TLS = True"],
            ["EMAIL_PORT = 587"],
        ),
    )
    c(
        g,
        "smtp_password",
        "url",
        lambda u, pw, h, db: (
            f"MAILER_DSN=smtps://{u}:{pw}@smtp.acme.test:465",
            ["MAILER_DSN", "smtp.acme.test:465"],
        ),
    )
    c(
        g,
        "ldap_bind_password",
        "command_line",
        lambda u, pw, h, db: (
            'ldapsearch -x -H ldaps://ldap.acme.test:636 -D "cn=admin,dc=acme,dc=test" '
            f'-w {pw} -b "dc=acme,dc=test" "(uid={u})"',
            ["ldaps://ldap.acme.test:636", "cn=admin,dc=acme,dc=test"],
        ),
    )
    f(
        g,
        "ldap_bind_password",
        "yaml",
        "config/ldap.yaml",
        lambda u, pw, h, db, p: (
            f"# {p}\nldap:\n  url: ldaps://ldap.acme.test:636\n"
            f"  bind_dn: cn=reader,dc=acme,dc=test\n  bind_password: {pw}\n"
            "  user_filter: (uid=%s)\n",
            ["bind_dn: cn=reader,dc=acme,dc=test", "user_filter"],
            ["ldaps://ldap.acme.test:636"],
        ),
    )


def _ssh_and_later_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "ssh_password",
        "command_line",
        lambda u, pw, h, db: (
            f"sshpass -p '{pw}' ssh -o StrictHostKeyChecking=no {u}@{h} 'uptime'",
            ["StrictHostKeyChecking=no", "'uptime'"],
        ),
    )
    f(
        g,
        "ssh_password",
        "ini",
        "inventory/hosts.ini",
        lambda u, pw, h, db, p: (
            f"# {p}\n[web]\nweb1 ansible_host={h} ansible_user={u} ansible_ssh_pass={pw}\n"
            "web2 ansible_host=10.20.3.15 ansible_user=deploy\n",
            ["[web]", f"web1 ansible_host={h}"],
            ["ansible_host=10.20.3.15"],
        ),
    )
    f(
        g,
        "django_secret_key",
        "python_settings",
        "acme/settings/base.py",
        lambda u, pw, h, db, p: (
            f"# {p}\nDEBUG = False\nSECRET_KEY = '{pw}'\nALLOWED_HOSTS = ['app.acme.test']\n",
            ["SECRET_KEY", "ALLOWED_HOSTS"],
            ["app.acme.test"],
        ),
    )
    f(
        g,
        "django_secret_key",
        "dotenv",
        ".env",
        lambda u, pw, h, db, p: (
            f'# {p}\nDJANGO_SECRET_KEY="{pw}"\nDJANGO_DEBUG=false\n',
            ["DJANGO_SECRET_KEY", "DJANGO_DEBUG=false"],
            [],
        ),
    )
    _ctx_k8s_secret(g, KIND_BY_NAME["django_secret_key"])


def _azure_connection_strings_and_sas_urls_password_cases(g: _Gen) -> None:
    for _ in range(3):
        value, part = g.secret("azure_storage_account_key")
        acct = g.rng.choice(["acmelogs", "acmeexports", "acmebackups"])
        p1 = g.phrases(1)[0]
        text = (
            f'"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName={acct};'
            f'AccountKey={value};EndpointSuffix=core.windows.net",\n"Note": "{p1}"'
        )
        g.add(text, [Plant("azure_storage_account_key", "conn_string", value, part)],
              ["EndpointSuffix=core.windows.net"], [p1, f"AccountName={acct}"],
              g.file_where(), "local.settings.json")  # fmt: skip
    for _ in range(3):
        value, part = g.secret("azure_servicebus_key")
        p1 = g.phrases(1)[0]
        text = (
            f"# {p1}\nSERVICEBUS_CONNECTION=Endpoint=sb://acme-bus.servicebus.windows.net/;"
            f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={value}\n"
        )
        g.add(text, [Plant("azure_servicebus_key", "conn_string", value, part)],
              ["sb://acme-bus.servicebus.windows.net/"], [p1, "SharedAccessKeyName"],
              g.file_where(), ".env")  # fmt: skip
    for _ in range(4):
        value, part = g.secret("azure_sas_signature")
        plant = Plant("azure_sas_signature", "url_encoded", value, part, "url")
        p1 = g.phrases(1)[0]
        st = _timestamp(g.rng)
        url = (
            "https://acmeexports.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b"
            f"&srt=o&sp=r&st={st}&spr=https&sig={plant.shown}"
        )
        text = f"Download it from {url} ({p1})."
        g.add(text, [plant], [st], [p1, "acmeexports.blob.core.windows.net/exports/report.csv"],
              g.rng.choice(["user_turn", "assistant_turn", "tool_result"]), "")  # fmt: skip


def _passwords_with_reserved_characters_written_url_encoded_password_cases(g: _Gen) -> None:
    for kind in ("postgres_password", "mysql_password", "redis_password", "mongodb_password",
                 "http_basic_password", "rabbitmq_password"):  # fmt: skip
        for _ in range(2):
            value = g.secret(kind)[0][:10]
            value += "".join(g.rng.choice(PW_SPECIAL) + g.rng.choice(ALNUM) for _ in range(4))
            plant = Plant(kind, "url_encoded", value, value, "url")
            p1 = g.phrases(1)[0]
            user, host = g.user(), g.host()
            if g.rng.random() < 0.6:
                scheme = {
                    "postgres_password": "postgresql",
                    "mysql_password": "mysql",
                    "redis_password": "redis",
                    "mongodb_password": "mongodb",
                    "http_basic_password": "https",
                    "rabbitmq_password": "amqp",
                }[kind]
                text = f'# {p1}\nurl = "{scheme}://{user}:{plant.shown}@{host}/main"\n'
                keep = [p1, f"@{host}/main"]
            else:
                text = (
                    f"POST /oauth/token HTTP/1.1\nHost: login.acme.test\nContent-Type: "
                    f"application/x-www-form-urlencoded\n\ngrant_type=password&username={user}"
                    f"&password={plant.shown}&client_id=web-console\n# {p1}"
                )
                keep = [p1, "grant_type=password", "client_id=web-console"]
            g.add(text, [plant], ["login.acme.test" if "login" in text else host], keep,
                  g.rng.choice(["tool_arguments", "tool_result"]), "")  # fmt: skip


def _password_cases(g: _Gen) -> None:
    """Passwords of databases, brokers and servers, one group of cases per kind."""
    _postgres_password_cases(g)
    _mysql_password_cases(g)
    _sql_server_password_cases(g)
    _oracle_password_cases(g)
    _redis_password_cases(g)
    _rabbitmq_password_cases(g)
    _mongodb_password_cases(g)
    _http_basic_auth_password_cases(g)
    _registries_and_indexes_password_cases(g)
    _mail_and_directory_password_cases(g)
    _ssh_and_later_password_cases(g)
    _azure_connection_strings_and_sas_urls_password_cases(g)
    _passwords_with_reserved_characters_written_url_encoded_password_cases(g)

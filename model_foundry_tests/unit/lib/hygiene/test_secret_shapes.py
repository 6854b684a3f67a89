"""Secrets in the shapes an agent meets daily: credentials and config files, connection
strings, URLs, headers, command lines, Kubernetes manifests and escaped forms.

Each case says which values must vanish (no 12 consecutive characters of one may survive:
a fragment is a leak) and which words around them must stay (the host, the key name, the
command). The formats were read from each tool's own documentation: the AWS CLI's
credentials file, netrc(5), PostgreSQL's pgpass, npm's npmrc, pip's configuration, git's
credential store, kubeconfig and Secret manifests, Docker's config.json, ODBC/ADO.NET and
JDBC connection strings, RFC 7235 and RFC 6265 headers.
"""

from __future__ import annotations

import base64
import hashlib
import json
from urllib.parse import quote

import pytest

from model_foundry.lib.hygiene.config import HygieneConfig
from model_foundry.lib.hygiene.record import RecordScrubber

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def _v(tag: str, n: int = 24, alphabet: str = ALNUM) -> str:
    """A fake credential: ``n`` characters drawn from a hash of ``tag`` (stable, random-looking,
    never a live value)."""
    out, i = "", 0
    while len(out) < n:
        digest = hashlib.sha256(f"{tag}{i}".encode()).digest()
        out += "".join(alphabet[b % len(alphabet)] for b in digest)
        i += 1
    return out[:n]


def _pw(tag: str) -> str:
    # Passwords carry the punctuation that cuts naive patterns short.
    return _v(tag, 10) + "/+=-_.@:" + _v(tag + "x", 6)


def _url_pw(tag: str) -> str:
    # In a URL a raw "/" would end the authority; "@" and ":" are seen unescaped in the wild.
    return _v(tag, 10) + "+=-_.~!@:" + _v(tag + "x", 6)


def _pgpass_pw(tag: str) -> str:
    # pgpass escapes ":" and "\" in a password with a backslash.
    return _v(tag, 10) + "/+=-_.@\\:" + _v(tag + "x", 6)


AWS_SECRET = _v("aws", 40, B64)
K8S_KEY = base64.b64encode(("-----BEGIN EC PRIVATE KEY-----\n" + _v("k8k", 90)).encode()).decode()
DOCKER_AUTH = base64.b64encode(f"deploy:{_v('dock', 18)}".encode()).decode()

# (id, text, values that must vanish, words that must stay)
# An Atlassian API token (heldout6's, invented): about 190 characters, a checksum after ``=``.
ATLASSIAN = (
    "ATATT3xFfGF0t-AAErL4Sa008-IlxKrMg18JALAl8Oc0K44Ws_usfz3aj40PN5MMBrwqC8CC0gnIE9UaTSV4FYxQbx6m"
    "keo-D_t9ps6WheZcDtuMH0cbmI7c1n_2zsCObVGWWBMqkuM204cCjsAug_YLBFYW2Q_cMTw5nfBIWcMhYF92zeouyB"
    "=BEF4B0DD"
)

CASES: list[tuple[str, str, list[str], list[str]]] = [
    (
        "aws_credentials_spaces",
        f"[default]\naws_secret_access_key = {AWS_SECRET}\nregion = eu-west-1",
        [AWS_SECRET],
        ["[default]", "aws_secret_access_key", "region", "eu-west-1"],
    ),
    (
        "aws_session_token_spaces",
        f"[dev]\naws_session_token = {_v('sess', 300, B64)}==\noutput = json",
        [_v("sess", 300, B64)],
        ["[dev]", "aws_session_token", "output", "json"],
    ),
    (
        "netrc_one_line",
        f"machine git.corp.internal login alice password {_pw('netrc')}",
        [_pw("netrc")],
        ["machine", "git.corp.internal", "login", "alice", "password"],
    ),
    (
        "netrc_lines",
        f"machine api.corp.internal\n  login bob\n  password {_v('netrc2', 20)}\n",
        [_v("netrc2", 20)],
        ["machine", "api.corp.internal", "login", "bob", "password"],
    ),
    (
        "pgpass",
        f"db.corp.internal:5432:appdb:app:{_pgpass_pw('pgpass')}\n*:*:*:postgres:{_v('pg2', 16)}",
        [_pgpass_pw("pgpass"), _v("pg2", 16)],
        ["db.corp.internal:5432:appdb:app:", "*:*:*:postgres:"],
    ),
    (
        "npmrc",
        f"//registry.npmjs.org/:_authToken={_v('npm', 36)}\n"
        f"//npm.corp.io/:_auth={base64.b64encode(b'ci:' + _v('npa').encode()).decode()}\n"
        f"//npm.corp.io/:_password={base64.b64encode(_v('npp').encode()).decode()}\n"
        "always-auth=true",
        [
            _v("npm", 36),
            base64.b64encode(b"ci:" + _v("npa").encode()).decode(),
            base64.b64encode(_v("npp").encode()).decode(),
        ],
        ["//registry.npmjs.org/:_authToken=", "//npm.corp.io/:_auth=", "always-auth=true"],
    ),
    (
        "pypirc",
        "[internal]\nrepository = https://pypi.corp.io/\nusername = bob\n"
        f"password = {_pw('pypirc')}",
        [_pw("pypirc")],
        ["[internal]", "repository", "https://pypi.corp.io/", "username", "bob", "password"],
    ),
    (
        "pip_conf",
        f"[global]\nindex-url = https://bob:{_v('pip', 20)}@pypi.corp.io/simple",
        [_v("pip", 20)],
        ["[global]", "index-url", "pypi.corp.io/simple"],
    ),
    (
        "git_credentials",
        f"https://alice:{_v('gitcred', 40)}@git.corp.io\n",
        [_v("gitcred", 40)],
        ["git.corp.io", "https://alice:"],
    ),
    (
        "kubeconfig",
        "users:\n- name: dev\n  user:\n"
        f"    token: {_v('kube', 60)}\n    client-key-data: {K8S_KEY}\n"
        f"    password: {_pw('kubepw')}\n",
        [_v("kube", 60), K8S_KEY, _pw("kubepw")],
        ["users:", "name:", "dev", "token:", "client-key-data:", "password:"],
    ),
    (
        "docker_config",
        json.dumps(
            {
                "auths": {"registry.corp.io": {"auth": DOCKER_AUTH}},
                "identitytoken": _v("idt", 40),
            },
            indent=2,
        ),
        [DOCKER_AUTH, _v("idt", 40)],
        ["auths", "registry.corp.io", "identitytoken"],
    ),
    (
        "ini_unquoted_spaces",
        f"[app]\nclient_secret = {_v('ini', 32)}\ndebug = false",
        [_v("ini", 32)],
        ["[app]", "client_secret", "debug", "false"],
    ),
    (
        "toml_quoted",
        f'[service]\napi_key = "{_v("toml", 32)}"\nname = "svc"',
        [_v("toml", 32)],
        ["[service]", "api_key", "name", '"svc"'],
    ),
    (
        "yaml_camel",
        f"auth:\n  apiKey: {_v('yaml', 32)}\n  sessionToken: '{_v('yaml2', 40)}'\n  region: eu",
        [_v("yaml", 32), _v("yaml2", 40)],
        ["auth:", "apiKey:", "sessionToken:", "region:", "eu"],
    ),
    (
        "env_quoted",
        f'SECRET_KEY="{_pw("envq")}"\nDEBUG=1',
        [_pw("envq")],
        ["SECRET_KEY=", "DEBUG=1"],
    ),
    (
        "env_spaces",
        f"DB_PASSWORD = {_pw('envsp')}\nDB_HOST = db",
        [_pw("envsp")],
        ["DB_PASSWORD", "DB_HOST", "db"],
    ),
    (
        "json_session_cookie_signature",
        json.dumps(
            {
                "session": _v("jsess", 32),
                "cookie": _v("jcook", 32),
                "signature": _v("jsig", 43),
                "user": "ada",
            }
        ),
        [_v("jsess", 32), _v("jcook", 32), _v("jsig", 43)],
        ["session", "cookie", "signature", "ada"],
    ),
    (
        "ado_connection_string",
        f"Server=tcp:db.corp.net,1433;Database=app;User Id=app;Password={_pw('ado')};Encrypt=True;",
        [_pw("ado")],
        ["Server=tcp:db.corp.net,1433;Database=app;", "Encrypt=True;"],
    ),
    (
        "odbc_pwd",
        f"Driver={{ODBC Driver 18}};Server=db;Uid=app;Pwd={_v('odbc', 16)};",
        [_v("odbc", 16)],
        ["Driver=", "Server=db;Uid=app;", "Pwd="],
    ),
    (
        "azure_service_bus",
        "Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=send;"
        f"SharedAccessKey={_v('sak', 43, B64)}=",
        [_v("sak", 43, B64)],
        ["Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=send;"],
    ),
    (
        "jdbc_query",
        f"jdbc:postgresql://db.corp.io:5432/app?user=app&password={_pw('jdbc')}&ssl=true",
        [_pw("jdbc")],
        ["jdbc:postgresql://db.corp.io:5432/app?user=app&password=", "&ssl=true"],
    ),
    (
        "redis_empty_user",
        f"redis://:{_v('redis', 24)}@cache.corp.io:6379/0",
        [_v("redis", 24)],
        ["redis://:", "@cache.corp.io:6379/0"],
    ),
    (
        "mongo_srv",
        f"mongodb+srv://app:{_url_pw('mongo')}@cluster0.ab1cd.mongodb.net/db?retryWrites=true",
        [_url_pw("mongo")],
        ["mongodb+srv://app:", "cluster0.ab1cd.mongodb.net/db?retryWrites=true"],
    ),
    (
        "authorization_token",
        f"Authorization: Token {_v('tok', 40)}\nAccept: application/json",
        [_v("tok", 40)],
        ["Authorization:", "Token", "Accept:", "application/json"],
    ),
    (
        "proxy_authorization",
        f"Proxy-Authorization: Bearer {_v('proxy', 40)}",
        [_v("proxy", 40)],
        ["Proxy-Authorization:", "Bearer"],
    ),
    (
        "cookie_header",
        f"Cookie: sid={_v('sid', 32)}; theme=dark\nSet-Cookie: connect.sid={_v('csid', 40)}; "
        "Path=/; HttpOnly",
        [_v("sid", 32), _v("csid", 40)],
        ["Cookie:", "theme=dark", "Set-Cookie:", "Path=/;", "HttpOnly"],
    ),
    (
        "mysql_p",
        f"mysql -h db.corp.io -u root -p{_v('mysql', 16)} appdb",
        [_v("mysql", 16)],
        ["mysql", "db.corp.io", "root", "appdb"],
    ),
    (
        "sshpass",
        f"sshpass -p '{_v('sshpass', 16)}' ssh deploy@build.corp.io uptime",
        [_v("sshpass", 16)],
        ["sshpass", "ssh", "uptime"],
    ),
    (
        "docker_env_flags",
        f'docker run -e API_TOKEN={_v("dock1", 32)} -e MODE=prod -e "DB_PASSWORD='
        f'{_pw("dock2")}" app:latest',
        [_v("dock1", 32), _pw("dock2")],
        ["docker", "run", "MODE=prod", "app:latest"],
    ),
    (
        "password_flag_space",
        f"psql --password {_pw('flag')} --host db.corp.io",
        [_pw("flag")],
        ["psql", "--password", "--host", "db.corp.io"],
    ),
    (
        "env_before_command",
        f"PGPASSWORD={_v('pgp', 16)} psql -h db -U app -c 'select 1'",
        [_v("pgp", 16)],
        ["PGPASSWORD=", "psql", "select"],
    ),
    (
        "env_before_command_keeps_command",
        f"MYSQL_PWD={_v('mpwd', 16)} mysql -u root appdb",
        [_v("mpwd", 16)],
        ["MYSQL_PWD=", "mysql", "root", "appdb"],
    ),
    (
        "k8s_secret_yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-creds\ntype: Opaque\ndata:\n"
        f"  username: {base64.b64encode(b'svc-app-admin').decode()}\n"
        f"  api-endpoint: {base64.b64encode(_v('k8ep', 30).encode()).decode()}\n"
        f"stringData:\n  dsn: {_v('k8dsn', 24)}\n",
        [
            base64.b64encode(b"svc-app-admin").decode(),
            base64.b64encode(_v("k8ep", 30).encode()).decode(),
            _v("k8dsn", 24),
        ],
        ["kind: Secret", "name: db-creds", "type: Opaque", "data:", "username:", "dsn:"],
    ),
    (
        "json_escaped_newlines",
        f"log: DB_HOST=db\\nDB_PASSWORD={_pw('esc')}\\nDB_USER=app",
        [_pw("esc")],
        ["DB_HOST=db", "DB_USER=app"],
    ),
    (
        "json_escaped_yaml",
        f'cfg: \\"db:\\\\n  password: {_v("escy", 20)}\\\\n  user: app\\"',
        [_v("escy", 20)],
        ["user:", "app"],
    ),
    (
        "url_encoded",
        f"next=%2Flogin%3Fuser%3Dbob%26password%3D{quote(_v('urlenc', 20))}%26x%3D1",
        [_v("urlenc", 20)],
        ["next=%2Flogin%3Fuser%3Dbob%26password%3D"],
    ),
    (
        "base64_wrapped_env",
        "payload "
        + base64.b64encode(f"DB_PASSWORD={_v('b64w', 24)}\nDB_USER=app\n".encode()).decode()
        + " done",
        [base64.b64encode(f"DB_PASSWORD={_v('b64w', 24)}\nDB_USER=app\n".encode()).decode()],
        ["payload", "done"],
    ),
    (
        "prose_named_value",
        f"The deploy key is {_v('prose1', 40, B64)} and the webhook token was "
        f"`{_v('prose2', 32)}`, rotate both.",
        [_v("prose1", 40, B64), _v("prose2", 32)],
        ["The deploy key is", "and the webhook token was", "rotate both."],
    ),
    (
        "url_user_token",
        f"SENTRY_DSN=https://{_v('dsn', 32, '0123456789abcdef')}@o12345.ingest.corp.io/67",
        [_v("dsn", 32, "0123456789abcdef")],
        ["SENTRY_DSN=https://", "@o12345.ingest.corp.io/67"],
    ),
    (
        "sqlcmd_ldap_rabbit",
        f"sqlcmd -S db.corp.io -U sa -P {_v('sqlcmd', 16)} -Q 'select 1'\n"
        f"ldapsearch -H ldaps://dir.corp.io -D cn=admin -w {_v('ldap', 16)} -b dc=corp\n"
        f"rabbitmqctl add_user metrics {_v('rabbit', 16)}",
        [_v("sqlcmd", 16), _v("ldap", 16), _v("rabbit", 16)],
        ["sqlcmd", "-Q 'select 1'", "ldapsearch", "-b dc=corp", "add_user metrics"],
    ),
    (
        "password_stdin_pipe",
        f"echo '{_v('stdin', 20)}' | docker login registry.corp.io -u ci --password-stdin",
        [_v("stdin", 20)],
        ["echo", "docker login registry.corp.io", "--password-stdin"],
    ),
    (
        "oracle_connect",
        f"sqlplus scott/{_v('ora', 14)}@//db.corp.io:1521/ORCL\n"
        f"jdbc:oracle:thin:app/{_v('ora2', 14)}@db.corp.io:1521:ORCL",
        [_v("ora", 14), _v("ora2", 14)],
        ["sqlplus scott/", "@//db.corp.io:1521/ORCL", "jdbc:oracle:thin:app/"],
    ),
    (
        "config_directive",
        f"port 6379\nrequirepass {_v('redisconf', 20)}\nmaxmemory 2gb",
        [_v("redisconf", 20)],
        ["port 6379", "requirepass", "maxmemory 2gb"],
    ),
    (
        "dotted_token_query",
        f"GET /tiles?style=dark&api_key=sk.eyJ{_v('dot1', 30)}.{_v('dot2', 22)}&z=3",
        ["eyJ" + _v("dot1", 30), _v("dot2", 22)],
        ["GET /tiles?style=dark&api_key=", "&z=3"],
    ),
    (
        "aws_id_and_secret_prose",
        f"keys: AKIA{_v('akia', 16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')} and {AWS_SECRET} ok",
        [AWS_SECRET, "AKIA" + _v("akia", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")],
        ["keys:", "and", "ok"],
    ),
    # A quoted flag value runs to its closing quote, spaces and all; a flag before the
    # password flag takes no value from it.
    (
        "flag_quoted_phrase",
        'gpg --batch --passphrase "seven quiet lanterns drift" --decrypt b.gpg\n'
        'mysql -u root --password="correct horse battery" shop',
        ["seven quiet lanterns drift", "correct horse battery"],
        ["--batch", "--decrypt b.gpg", "-u root", "shop"],
    ),
    ("passcode_flag", "vpn-cli connect --passcode 482913", ["482913"], ["--passcode"]),
    # A value converted as it is assigned (Go, Python, JavaScript).
    (
        "converted_values",
        'var jwtKey = []byte("penguinbiscuitvolcano")\nSECRET_KEY = b"kj3h4kj5h3k4j5h"\n'
        'const signingSecret = Buffer.from("otterlamp42")',
        ["penguinbiscuitvolcano", "kj3h4kj5h3k4j5h", "otterlamp42"],
        ["var jwtKey = []byte(", "SECRET_KEY = b", "Buffer.from("],
    ),
    # A token folded over lines of a YAML block scalar.
    (
        "yaml_folded_token",
        "auth:\n  bearer: >-\n    glpat-G3LuY_F1n4\n    PqjCS3iulH.kn86vi0fs\n  url: https://x",
        ["glpat-G3LuY_F1n4", "PqjCS3iulH.kn86vi0fs"],
        ["bearer: >-", "url: https://x"],
    ),
    # Letters-only passwords after their cues: net use with the user first, a chat's "user
    # is X, pass is Y (...)", a password file's one line shown by cat.
    (
        "word_password_cues",
        "net use Z: \\\\fs01\\finance /user:CORP\\svc SilverFernCanyon /persistent:no\n"
        "user is admin, pass is MarbleOtterLantern (no spaces)\n"
        "$ cat .vault_pass\nTidalIvoryFalcon\n$ ansible-playbook site.yml",
        ["SilverFernCanyon", "MarbleOtterLantern", "TidalIvoryFalcon"],
        ["/persistent:no", "(no spaces)", "ansible-playbook site.yml", "user is admin"],
    ),
    # Atlassian's API tokens run to about 190 characters and end in ``=`` and a checksum: the
    # whole of one goes.
    (
        "curl_user_long_token",
        f"curl -s -u mina@corp.example:{ATLASSIAN} \\\n  'https://corp.atlassian.net/rest/api/3/myself'",
        [ATLASSIAN],
        ["mina@corp.example", "https://corp.atlassian.net/rest/api/3/myself"],
    ),
    # A name and its value as two attributes of one element (.NET, NuGet, Spring).
    (
        "xml_key_value_attributes",
        '<add key="Username" value="build" />\n'
        '<add key="ClearTextPassword" value="HazelRocketPudding" />',
        ["HazelRocketPudding"],
        ["ClearTextPassword", 'value="build"'],
    ),
    # A Markdown table's password column holds a password of words, which nothing else marks.
    (
        "markdown_password_column",
        "| Env | User | Password |\n|-----|------|----------|\n| dev | app | BasketPeonyThunder |",
        ["BasketPeonyThunder"],
        ["| dev | app |", "Password"],
    ),
    # A quoted value after a password cue, whatever it holds: a passphrase of words in prose,
    # in SQL and in Japanese brackets (hiragana with spaces, or ASCII), PowerShell's
    # SecureString from plain text.
    (
        "quoted_passphrases",
        'the wifi password is "amber kites over harbour" (all lowercase)\n'
        "CREATE ROLE reporting LOGIN PASSWORD 'slow rivers count stones';\n"
        "パスフレーズ、ひらがなで 「あおい そらの した」 です。パスワードは「moon-cake-38」です\n"
        '$s = ConvertTo-SecureString "Velvet&Anchor71" -AsPlainText -Force',
        [
            "amber kites over harbour",
            "slow rivers count stones",
            "あおい そらの した",
            "moon-cake-38",
            "Velvet&Anchor71",
        ],
        ["(all lowercase)", "CREATE ROLE reporting LOGIN", "です", "-AsPlainText -Force"],
    ),
    # Names the value stands a subscript or a type away from, and a systemd line's variable.
    (
        "subscript_type_and_systemd_names",
        'app.config["SECRET_KEY"] = "CobaltWillowKestrel"\n'
        'def connect(user: str = "etl", pw: str = "Lantern7Quokka") -> None: ...\n'
        "Environment=DB_PASSWORD=MeadowTrumpet",
        ["CobaltWillowKestrel", "Lantern7Quokka", "MeadowTrumpet"],
        ['app.config["SECRET_KEY"]', 'user: str = "etl"', "Environment=DB_PASSWORD="],
    ),
    # A WireGuard key opens with "/" when its first six bits are 63: no path for all that.
    (
        "wireguard_key_with_slash",
        "[Interface]\nPrivateKey = /" + _v("wg", 42, B64) + "=\nListenPort = 51820",
        ["/" + _v("wg", 42, B64) + "="],
        ["[Interface]", "ListenPort = 51820"],
    ),
    # A wallet's recovery phrase after the words naming it, a few lines below or quoted.
    (
        "recovery_phrases",
        "## hot wallet\nseed phrase (24 words):\n\n> "
        + " ".join(["maple", "orbit"] * 12)
        + "\n\nMNEMONIC='cabin lemon drift north vivid oak salad proud tiger arch fiber rain'",
        [" ".join(["maple", "orbit"] * 12), "cabin lemon drift north vivid oak salad proud"],
        ["## hot wallet", "seed phrase (24 words):", "MNEMONIC='"],
    ),
    # A secret split into two literals to get past a scanner: the second half goes too.
    (
        "split_literal",
        "const KEY = 'ghp_" + _v("split", 20) + "' +\n  '" + _v("split2", 16) + "';",
        ["ghp_" + _v("split", 20), _v("split2", 16)],
        ["const KEY = '", "';"],
    ),
    # An EVM wallet's key: in a Hardhat network, a key-taking call, under its name.
    (
        "evm_private_keys",
        "networks: { sepolia: { accounts: ['0x" + _v("hh", 64, HEX) + "'] } }\n"
        'const w = new ethers.Wallet("0x' + _v("ew", 64, HEX) + '", provider)\n'
        "PRIVATE_KEY=0x" + _v("pk", 64, HEX),
        [
            "0x" + _v("hh", 64, HEX),
            "0x" + _v("ew", 64, HEX),
            "0x" + _v("pk", 64, HEX),
        ],
        ["networks: { sepolia: { accounts: ['", "new ethers.Wallet(", "PRIVATE_KEY="],
    ),
    # Names of other words for a secret: a Wi-Fi PSK, a PAT, German's Kennwort, PIN flags.
    (
        "psk_pat_kennwort_pin",
        'network={\n    psk="' + "the kettle sings at " + _v("psk", 4, "0123456789") + '"\n}\n'
        "GH_PAT=" + _v("pat", 30) + "\n"
        "Benutzername: j.weber\nKennwort: Fichtenwald-Brücke-" + _v("kw", 2, "0123456789") + "\n"
        "$ ykman piv access change-pin --pin "
        + _v("pin", 6, "0123456789")
        + " --new-pin "
        + _v("pin2", 6, "0123456789")
        + "\n入口の暗証番号は "
        + "4826"
        + " です",
        [
            "the kettle sings at " + _v("psk", 4, "0123456789"),
            _v("pat", 30),
            "Fichtenwald-Brücke-" + _v("kw", 2, "0123456789"),
            _v("pin", 6, "0123456789"),
            _v("pin2", 6, "0123456789"),
            "4826",
        ],
        ["network={", "GH_PAT=", "Benutzername: j.weber", "--new-pin", "入口の暗証番号は"],
    ),
    # A token whose prefix names it a credential; Terraform's sensitive default; ids that are
    # tokens by where they stand (HashiCorp's secret id, Loggly's and Cloudsmith's paths).
    (
        "cued_by_prefix_block_or_path",
        "the new one is sm_pat_" + _v("smp", 16) + " and\n"
        'variable "db" {\n  sensitive = true\n  default   = "' + _v("tf", 24) + '"\n}\n'
        "Secret ID    = 4af145a2-fde9-4bd7-a271-71049f1ec221\n"
        "https://logs-01.loggly.com/inputs/7d29b70d-1601-42c5-ab05-ac9c6fd85fbe/tag/x/\n"
        "https://dl.cloudsmith.io/" + _v("cs", 16) + "/org/repo/python/simple/",
        [
            "sm_pat_" + _v("smp", 16),
            _v("tf", 24),
            "4af145a2-fde9-4bd7-a271-71049f1ec221",
            "7d29b70d-1601-42c5-ab05-ac9c6fd85fbe",
            _v("cs", 16),
        ],
        ["the new one is", 'variable "db" {', "Secret ID    =", "/tag/x/", "/org/repo/"],
    ),
    # A password of words and digits mid-line after its word, in three languages; a secret
    # split into literals joined in code under its name.
    (
        "mixed_password_mid_line_and_joined_literals",
        "# password: sakura-mochi-" + _v("sm", 2, "123456789") + " (for the client)\n"
        "Passwort: Linde-Ahorn-" + _v("la", 3, "123456789") + " (Kunde)\n"
        "# 合言葉: yuzu-" + _v("yz", 4, "123456789") + " (確認用)\n"
        'HARNESS_PAT = (\n    "pat.' + _v("h1", 22) + '."\n    "' + _v("h2", 24) + '"\n)\n'
        'String apiKey = "' + _v("j1", 10) + '" +\n  "' + _v("j2", 10) + '";',
        [
            "sakura-mochi-" + _v("sm", 2, "123456789"),
            "Linde-Ahorn-" + _v("la", 3, "123456789"),
            "yuzu-" + _v("yz", 4, "123456789"),
            _v("h1", 22),
            _v("h2", 24),
            _v("j1", 10),
            _v("j2", 10),
        ],
        ["(for the client)", "(Kunde)", "(確認用)", "HARNESS_PAT = (", "String apiKey = "],
    ),
    # A login call's arguments on lines of their own: a user's literal, then the password.
    (
        "call_arguments_on_lines",
        'Cluster cluster = Cluster.connect(\n    "couchbases://cb.example",\n    "app_rw",\n'
        '    "Larkspur#' + _v("cb", 8) + '"\n);',
        ["Larkspur#" + _v("cb", 8)],
        ["Cluster cluster = Cluster.connect(", '"app_rw",', ");"],
    ),
    # A credential column headed in Japanese.
    (
        "japanese_table_header",
        "| システム | トークン |\n|---|---|\n| 勤怠 | " + _v("jt", 32, HEX) + " |",
        [_v("jt", 32, HEX)],
        ["| システム | トークン |", "| 勤怠 |"],
    ),
    # A key file printed without a last newline runs into the next prompt.
    (
        "printed_key_before_prompt",
        "$ cat config/master.key\n" + _v("mk", 32, HEX) + "$ bin/rails s",
        [_v("mk", 32, HEX)],
        ["$ cat config/master.key", "$ bin/rails s"],
    ),
]

# Texts that must come back unchanged.
NEGATIVES: list[tuple[str, str]] = [
    ("placeholder_url_user", "git remote add o https://x-access-token:none@github.com/lab/f.git"),
    ("placeholder_netrc", "machine github.com login <user> password <your-token>"),
    ("placeholder_ini", "password = changeme\napi_key = YOUR_API_KEY\ntoken = ${API_TOKEN}"),
    ("placeholder_stars", "Password=****;User Id=app;"),
    ("mysql_prompt", "mysql -u root -p appdb"),
    ("code_assign", "token = tokenizer.encode(text)\npassword = getpass.getpass()"),
    ("cookie_plain", "Set-Cookie: theme=dark; Path=/; Max-Age=3600"),
    ("session_id", '{"session_id": "2f1c9a4e-5b7d-4e2a-9c3f-8d6e1b0a7f42", "session": 3}'),
    ("k8s_configmap", "kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  REGION: eu-west-1"),
    ("timestamps", "at 2025-03-04T12:30:45Z and 12:30:45:123 took 1:02:03"),
    ("sha_and_uuid", "commit 3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f901 id 2f1c9a4e-5b7d-4e2a-9c3f"),
    ("image_base64", "data:image/png;base64," + base64.b64encode(bytes(range(256))).decode()),
    ("path_pwd", "PWD=/srv/app\nOLDPWD=/srv/old\nPWD=~/src"),
    # A transaction hash has a key's shape; nothing on its line says it signs.
    ("evm_transaction_hash", "tx hash 0x" + _v("tx", 64, HEX) + " confirmed"),
    ("published_defaults", "MINIO_ROOT_PASSWORD=minioadmin\nkeytool -storepass changeit -list"),
    (
        "documentation_jwt",
        "jwt.io's sample: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI"
        "6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    ("google_doc_id", "https://docs.google.com/document/d/" + _v("doc", 44) + "/edit"),
    ("trace_id_after_api", "決済APIがタイムアウトしました trace_id=" + _v("tr", 32, HEX)),
    # Public values in a random draw's shape, and published examples.
    ("evm_address", "vitalik.eth resolves to 0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"),
    ("ipfs_cid", "added QmaVRNKjEw3iVerot1USKx12J6wxA5CgmFMR5BFqRMjWDw site"),
    ("publishable_key", "PAY.JP の公開鍵: pk_live_" + _v("pk", 24)),
    ("captcha_site_key", '<div class="g-recaptcha" data-sitekey="6Le' + _v("site", 37) + '">'),
    ("cache_key", "Cache restored from key: Linux-pnpm-store-" + _v("ck", 64, HEX)),
    ("not_a_real_token", "the bot token is written as xoxb-not-a-real-token-this-will-not-work"),
    (
        "rfc7519_jwt",
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogI"
        "mh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    ),
    # Another language's password word with a word describing it after: the hint, not it.
    ("world_word_with_descriptor", "kennwort_hint: Lieblingsfarbe7\n"),
    (
        "password_words_not_values",
        "password: ${DB_PASS} ok\npassword: v1.2.3 later\npassword=/run/secrets/db here\n"
        'msg = ("hello " "world")',
    ),
    ("powershell_env_reference", 'password = "$env:DB_PASS"\n$cred = $Env:API_TOKEN'),
    ("versions", "python 3.11.7, node v20.11.1, numpy==1.26.4"),
    ("code_dotted", "RegKey = win32api.RegKey\n    authkey=self._authkey, exposed=None,"),
    ("code_snake_hex", "RC4_KEY = rc4_key_st\n_DD_SIGNATURE = 0x08074b50"),
    ("code_authorization", 'authorization = self.headers.get("authorization")'),
    ("cookie_escaped_crlf", "'Set-Cookie: chips=ahoy\\r\\nSet-Cookie: vienna=finger'"),
    ("prose_wrapped_line", "a user name and\npassword combination.\ntoken expired"),
    ("prose_key_word", "The key is stored in the vault; the token is rotated daily."),
    ("url_login_word", "https://alice@git.corp.io/repo.git and https://deploy-bot@ci.corp.io"),
    ("command_substitution", 'API_TOKEN="$(cat /run/secrets/api_token)"'),
    ("creds_helper", '{"credsStore": "desktop", "credHelpers": {"gcr.io": "gcloud"}}'),
    # A publishable key is public (Stripe's and Clerk's ``pk_``); AWS's documented example
    # secret; a value in Japanese words ("your API key"); notes in a password column.
    ("publishable_key", "STRIPE_PUBLISHABLE=pk_live_51HqLyjWDarjtT1zdp7dcXYZ"),
    ("aws_doc_example", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("ja_placeholder", "PINECONE_API_KEY=あなたのAPIキー"),
    ("table_notes", "| Host | Password |\n|---|---|\n| db1 | ask ops |\n| db2 | — |"),
    ("attribute_plain", '<add key="PasswordPolicy" value="strict" />'),
    (
        "cat_not_a_password_file",
        "$ cat token_usage.log\nprocessing\n$ cat secret_santa.txt\nMargaret",
    ),
    ("pass_is_prose", "user is admin, pass is required for this step"),
    ("converted_plain", 'name = str("alice")\ntoken_type = str("bearer")\nkeyword = b"select"'),
    ("yaml_block_prose", "password: |\n  Must be twelve characters long\nauth:\n  type: bearer"),
    # Japanese brackets after a password word name a screen or a button; a path under a
    # key's name; an HTTP entity tag; literals joined to a marker-free string; a variable
    # interpolated in PowerShell.
    ("ja_bracketed_screen", "パスワードは「設定画面」から変更できます。「パスワードを忘れた場合」"),
    ("key_paths", "PrivateKeyFile = /etc/wireguard/private.key\npw_path: /run/secrets/pw"),
    ("etag", 'ETag: W/"e5210e3e-og0LfS_JC8myvopfE-jaFWSQf-K"\nIf-None-Match: "8f3kDq2LmZ"'),
    # A translation file's labels under credential keys are words, not values.
    ("ja_labels", '{"password": "パスワード", "token": "トークンを入力してください"}'),
    ("joined_literals", "msg = 'Hello, ' +\n  'world'\nurl = base + '/api/v1/' + 'items'"),
    ("securestring_variable", '$s = ConvertTo-SecureString "$pw" -AsPlainText -Force'),
    ("password_is_quoted_prose", 'The password is "required" for every account.'),
    (
        "recovery_phrase_prose",
        "Write the recovery phrase down on paper and keep it in a safe away from the phone\n"
        "mnemonic words must come from the list they were drawn from in the right order",
    ),
]


def _scrub(text: str) -> str:
    return RecordScrubber(HygieneConfig(), b"s" * 32).scrub(text)[0]


def _fragments(value: str) -> list[str]:
    return [value[i : i + 12] for i in range(max(1, len(value) - 11))]


@pytest.mark.parametrize(
    ("text", "values", "kept"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_secret_shape_is_removed_and_its_surroundings_kept(
    text: str, values: list[str], kept: list[str]
) -> None:
    out = _scrub(text)
    for value in values:
        leaked = [f for f in _fragments(value) if f in out]
        assert not leaked, f"fragment {leaked[0]!r} of a secret survived in {out!r}"
    missing = [word for word in kept if word not in out]
    assert not missing, f"lost {missing} from {out!r}"


@pytest.mark.parametrize("text", [n[1] for n in NEGATIVES], ids=[n[0] for n in NEGATIVES])
def test_hard_negative_is_kept(text: str) -> None:
    assert _scrub(text) == text


def test_a_kubernetes_secret_as_json_loses_every_data_value() -> None:
    user, password = base64.b64encode(b"svc-reports").decode(), _v("k8sjson", 24)
    manifest = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db"},
        "data": {"username": user},
        "stringData": {"dsn": password},
    }
    out = json.loads(_scrub(json.dumps(manifest)))
    assert out["data"] == {"username": "[REDACTED:k8s_secret]"}
    assert out["stringData"] == {"dsn": "[REDACTED:k8s_secret]"}
    assert out["metadata"] == {"name": "db"}
    config_map = {"kind": "ConfigMap", "data": {"LOG_LEVEL": "debug"}}
    assert json.loads(_scrub(json.dumps(config_map))) == config_map


def test_a_url_user_name_before_a_host_is_never_an_email() -> None:
    out = _scrub(f"https://x-access-token:{_v('xat', 36)}@github.com/lab/foundry.git")
    assert "@github.com/lab/foundry.git" in out
    assert "email" not in out

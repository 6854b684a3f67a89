"""Passwords of database and queue clients, on their command lines and in their files."""

from __future__ import annotations

from collections.abc import Callable

from model_foundry.devtools.secrets_corpus.generator import _Gen
from model_foundry.devtools.secrets_corpus.model import Plant
from model_foundry.devtools.secrets_corpus.words import PHRASES


def _say(g: _Gen, snippet: str, p1: str) -> tuple[str, str, str, list[str]]:
    """A command line as a session meets it: text, where, source, negatives."""
    sentence, neg = g.prose_negative()
    where = g.rng.choice(
        ["tool_arguments", "tool_arguments", "tool_result", "assistant_turn", "user_turn",
         "reasoning"]
    )  # fmt: skip
    if where == "tool_arguments":
        return f"# {p1}\n# {sentence}\n{snippet}", where, "shell", [neg]
    if where == "tool_result":
        n = g.rng.randint(200, 900)
        text = f"  {n}  git status\n  {n + 1}  {snippet}\n  {n + 2}  ls -la  # {p1}\n# {sentence}"
        return text, where, "history | tail -n 3", [neg]
    if where == "assistant_turn":
        return f"Run this ({p1}):\n\n    {snippet}\n\n{sentence}", where, "", [neg]
    if where == "user_turn":
        text = f"About this: {p1}. I tried `{snippet}` and got a timeout. {sentence}"
        return text, where, "", [neg]
    return f"The user ran {snippet} earlier; {p1}. {sentence}", where, "", [neg]


def _command_case(
    g: _Gen, kind: str, context: str, build: Callable[[str, str, str, str], tuple[str, list[str]]]
) -> None:
    value, part = g.secret(kind)
    snippet, keep = build(g.user(), value, g.host(), g.db())
    p1 = g.phrases(1)[0]
    text, where, source, neg = _say(g, snippet, p1)
    g.add(text, [Plant(kind, context, value, part)], neg, [p1, *keep], where, source)


def _file_case(
    g: _Gen,
    kind: str,
    context: str,
    path: str,
    build: Callable[[str, str, str, str, str], tuple[str, list[str], list[str]]],
) -> None:
    value, part = g.secret(kind)
    p1 = g.phrases(1)[0]
    body, keep, neg = build(g.user(), value, g.host(), g.db(), p1)
    where = g.file_where()
    text, source = g.wrap_file(where, path, body, g.rng.choice(PHRASES))
    g.add(text, [Plant(kind, context, value, part)], neg, [p1, *keep], where, source)


def _postgres_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "postgres_password",
        "command_line",
        lambda u, pw, h, db: (
            f"PGPASSWORD={pw} psql -h {h} -U {u} -d {db} -c 'select count(*) from orders'",
            [f"psql -h {h}", "select count(*) from orders"],
        ),
    )
    c(
        g,
        "postgres_password",
        "command_line",
        lambda u, pw, h, db: (
            f"docker run -d --name pg -e POSTGRES_PASSWORD={pw} -p 5432:5432 postgres:16.2",
            ["docker run -d --name pg", "postgres:16.2"],
        ),
    )
    c(
        g,
        "postgres_password",
        "url",
        lambda u, pw, h, db: (
            f"DATABASE_URL=postgres://{u}:{pw}@{h}:5432/{db}?sslmode=require",
            [f"{h}:5432/{db}?sslmode=require", "DATABASE_URL"],
        ),
    )
    f(
        g,
        "postgres_password",
        "conn_string",
        "src/main/resources/application.properties",
        lambda u, pw, h, db, p: (
            f"# {p}\nspring.datasource.url=jdbc:postgresql://{h}:5432/{db}?user={u}&password={pw}"
            f"&ssl=true\nspring.jpa.hibernate.ddl-auto=validate\nserver.port=8080\n",
            [f"jdbc:postgresql://{h}:5432/{db}", "spring.jpa.hibernate.ddl-auto=validate"],
            ["server.port=8080"],
        ),
    )
    f(
        g,
        "postgres_password",
        "yaml",
        "docker-compose.yml",
        lambda u, pw, h, db, p: (
            f"# {p}\nservices:\n  db:\n    image: postgres:16.2\n    environment:\n"
            f"      POSTGRES_USER: {u}\n      POSTGRES_PASSWORD: {pw}\n      POSTGRES_DB: {db}\n"
            "  api:\n    environment:\n      DB_PASSWORD: ${DB_PASSWORD}\n    ports:\n"
            '      - "8080:8080"\n',
            ["POSTGRES_PASSWORD", f"POSTGRES_DB: {db}"],
            ["${DB_PASSWORD}", "postgres:16.2"],
        ),
    )


def _mysql_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "mysql_password",
        "command_line",
        lambda u, pw, h, db: (
            f"mysql -h {h} -u {u} -p{pw} {db} -e 'SHOW TABLES'",
            [f"mysql -h {h}", "SHOW TABLES"],
        ),
    )
    c(
        g,
        "mysql_password",
        "command_line",
        lambda u, pw, h, db: (
            f"mysqldump --user={u} --password={pw} --single-transaction {db} > /tmp/{db}.sql",
            ["--single-transaction", f"/tmp/{db}.sql"],
        ),
    )
    f(
        g,
        "mysql_password",
        "conn_string",
        "config/database.yml",
        lambda u, pw, h, db, p: (
            f"# {p}\nproduction:\n  url: jdbc:mysql://{h}:3306/{db}?user={u}&password={pw}"
            "&useSSL=true\n  pool: 10\n",
            [f"jdbc:mysql://{h}:3306/{db}", "pool: 10"],
            [],
        ),
    )
    f(
        g,
        "mysql_password",
        "ini",
        "~/.my.cnf",
        lambda u, pw, h, db, p: (
            f"# {p}\n[client]\nuser = {u}\npassword = {pw}\nhost = {h}\nport = 3306\n",
            ["[client]", f"host = {h}"],
            [],
        ),
    )
    c(
        g,
        "mysql_password",
        "url",
        lambda u, pw, h, db: (
            f'SQLALCHEMY_DATABASE_URI = "mysql+pymysql://{u}:{pw}@{h}:3306/{db}?charset=utf8mb4"',
            ["SQLALCHEMY_DATABASE_URI", f"{h}:3306/{db}?charset=utf8mb4"],
        ),
    )


def _sql_server_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    f(
        g,
        "mssql_password",
        "conn_string",
        "appsettings.Production.json",
        lambda u, pw, h, db, p: (
            '{\n  "ConnectionStrings": {\n    "Default": "Server=tcp:'
            + h
            + ",1433;Initial Catalog="
            + db
            + ";Persist Security Info=False;User ID="
            + u
            + ";Password="
            + pw
            + ';Encrypt=True;TrustServerCertificate=False;Connection Timeout=30;"\n  },\n'
            '  "Note": "' + p + '"\n}\n',
            ["Persist Security Info=False", "Connection Timeout=30"],
            [],
        ),
    )
    c(
        g,
        "mssql_password",
        "conn_string",
        lambda u, pw, h, db: (
            'conn = pyodbc.connect("Driver={ODBC Driver 18 for SQL Server};Server='
            + h
            + ";Database="
            + db
            + ";UID="
            + u
            + ";PWD="
            + pw
            + ';Encrypt=yes")',
            ["pyodbc.connect", "ODBC Driver 18 for SQL Server"],
        ),
    )
    c(
        g,
        "mssql_password",
        "command_line",
        lambda u, pw, h, db: (
            f'sqlcmd -S {h} -U sa -P {pw} -Q "SELECT name FROM sys.databases"',
            ["SELECT name FROM sys.databases"],
        ),
    )
    c(
        g,
        "mssql_password",
        "command_line",
        lambda u, pw, h, db: (
            f'docker run -e "ACCEPT_EULA=Y" -e "MSSQL_SA_PASSWORD={pw}" -p 1433:1433 '
            "mcr.microsoft.com/mssql/server:2022-latest",
            ["ACCEPT_EULA=Y", "mcr.microsoft.com/mssql/server:2022-latest"],
        ),
    )


def _oracle_password_cases(g: _Gen) -> None:
    c = _command_case
    c(
        g,
        "oracle_password",
        "command_line",
        lambda u, pw, h, db: (
            f"sqlplus {u}/{pw}@//{h}:1521/ORCLPDB1 @scripts/report.sql",
            ["sqlplus", "ORCLPDB1 @scripts/report.sql"],
        ),
    )
    c(
        g,
        "oracle_password",
        "conn_string",
        lambda u, pw, h, db: (
            f"jdbc:oracle:thin:{u}/{pw}@{h}:1521/ORCLPDB1",
            [f"{h}:1521/ORCLPDB1"],
        ),
    )


def _redis_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "redis_password",
        "url",
        lambda u, pw, h, db: (f"REDIS_URL=redis://:{pw}@{h}:6379/0", [f"@{h}:6379/0", "REDIS_URL"]),
    )
    c(
        g,
        "redis_password",
        "url",
        lambda u, pw, h, db: (
            f"CELERY_RESULT_BACKEND = 'rediss://default:{pw}@{h}:6380/1'",
            ["CELERY_RESULT_BACKEND", f"{h}:6380/1"],
        ),
    )
    c(
        g,
        "redis_password",
        "command_line",
        lambda u, pw, h, db: (
            f"redis-cli -h {h} -p 6379 -a {pw} --no-auth-warning INFO replication",
            ["--no-auth-warning INFO replication"],
        ),
    )
    f(
        g,
        "redis_password",
        "config_file",
        "/etc/redis/redis.conf",
        lambda u, pw, h, db, p: (
            f"# {p}\nbind 127.0.0.1 -::1\nport 6379\nrequirepass {pw}\nmaxmemory 2gb\n"
            "maxmemory-policy allkeys-lru\n",
            ["requirepass", "maxmemory-policy allkeys-lru"],
            ["port 6379"],
        ),
    )


def _rabbitmq_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "rabbitmq_password",
        "url",
        lambda u, pw, h, db: (
            f"CELERY_BROKER_URL=amqp://{u}:{pw}@{h}:5672/%2F",
            ["CELERY_BROKER_URL", ":5672/%2F"],
        ),
    )
    c(
        g,
        "rabbitmq_password",
        "url",
        lambda u, pw, h, db: (f'broker = "amqps://{u}:{pw}@{h}:5671/jobs"', [f"{h}:5671/jobs"]),
    )
    c(
        g,
        "rabbitmq_password",
        "command_line",
        lambda u, pw, h, db: (
            f"rabbitmqctl add_user {u} {pw} && rabbitmqctl set_user_tags {u} monitoring",
            ["rabbitmqctl add_user", "set_user_tags"],
        ),
    )
    f(
        g,
        "rabbitmq_password",
        "yaml",
        "compose.yaml",
        lambda u, pw, h, db, p: (
            f"# {p}\nservices:\n  mq:\n    image: rabbitmq:3.13-management\n    environment:\n"
            f"      RABBITMQ_DEFAULT_USER: {u}\n      RABBITMQ_DEFAULT_PASS: {pw}\n",
            ["RABBITMQ_DEFAULT_PASS", "image: rabbitmq:3.13-management"],
            ["rabbitmq:3.13-management"],
        ),
    )


def _mongodb_password_cases(g: _Gen) -> None:
    c = _command_case
    c(
        g,
        "mongodb_password",
        "url",
        lambda u, pw, h, db: (
            f"MONGO_URI=mongodb+srv://{u}:{pw}@cluster0.k3x9q.mongodb.net/{db}"
            "?retryWrites=true&w=majority",
            ["cluster0.k3x9q.mongodb.net", "retryWrites=true&w=majority"],
        ),
    )
    c(
        g,
        "mongodb_password",
        "url",
        lambda u, pw, h, db: (
            f"mongodb://{u}:{pw}@mongo-0.acme.test:27017,mongo-1.acme.test:27017/{db}"
            "?replicaSet=rs0&authSource=admin",
            ["mongo-1.acme.test:27017", "replicaSet=rs0&authSource=admin"],
        ),
    )
    c(
        g,
        "mongodb_password",
        "command_line",
        lambda u, pw, h, db: (
            f'mongosh "mongodb://{h}:27017/{db}" --username {u} --password {pw} '
            "--authenticationDatabase admin",
            ["--authenticationDatabase admin", f"mongodb://{h}:27017/{db}"],
        ),
    )

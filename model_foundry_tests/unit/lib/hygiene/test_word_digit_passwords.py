"""A word with digits or marks after a cue that makes it a value (``word_passwords``): the
backstop takes only random-looking values, so these passed before."""

from __future__ import annotations

import pytest

from model_foundry.lib.hygiene.secrets import scrub_secrets


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("echo 'deploy:Harbourlight7' | sudo chpasswd", "Harbourlight7"),
        ("htpasswd -nbB grafana-viewer 'pebble-fjord-31'", "pebble-fjord-31"),
        ("htpasswd -b /etc/nginx/.htpasswd admin Quarry#2290", "Quarry#2290"),
        ("xfreerdp /v:jump-01 /u:ops /p:'Lantern#4417' /cert:ignore", "Lantern#4417"),
        ("DB_USER=shop\nDB_PSWD=marmaladeskies\n", "marmaladeskies"),
        ("el usuario es admin y la contraseña es Tortuga_2024. gracias", "Tortuga_2024"),
        ("le mot de passe est Noisette-88 pour le wifi", "Noisette-88"),
        ("数据库密码是 Bamboo_7731 记得改", "Bamboo_7731"),
        # A quoted passphrase after a password flag, or in a file the shell makes of it.
        ("gpg --batch --passphrase 'amber gull at dusk' -c notes.txt", "amber gull at dusk"),
        ("restic --password-file <(echo 'moss under the bridge') backup /srv", "moss under the"),
        ("ssh-keygen -p -P 'thimble' -N 'thimble and thread' -f id_ed25519", "thimble"),
    ],
)
def test_a_word_with_digits_after_a_password_cue_goes(text: str, secret: str) -> None:
    out, counts = scrub_secrets(text)
    assert secret not in out
    assert counts["password"] >= 1


@pytest.mark.parametrize(
    "text",
    [
        # A flag after the password flag is the next option, not its value.
        "echo $PW | docker login -u ci --password-stdin registry.example",
        # A file or a code name after a password word is no password.
        "--password-file secrets.txt\n",
        "db_password = get_password_v2\n",
        # An empty new passphrase, a file's path, a command that prints the password.
        "ssh-keygen -t ed25519 -N '' -f deploy_key",
        "restic --password-file '/run/secrets/restic' backup",
        "restic --password-file 'backup pass.txt' backup",
        "restic --password-command 'pass show restic' backup",
        'RESTIC_PASSWORD_COMMAND="pass show restic"\n',
        # A German name joined to more words is the key's, and its last word says a hint.
        "kennwort_hint: Lieblingsfarbe7\n",
    ],
)
def test_what_stands_after_a_cue_but_is_no_password_stays(text: str) -> None:
    assert scrub_secrets(text)[0] == text


def test_a_table_of_fields_and_values_loses_its_credentials_values() -> None:
    table = (
        "| field | value |\n|---|---|\n| user | admin |\n| password | Tuesday-Biscuit |\n"
        "| API key | `Orchard-Lamp` |\n| token | ask ops |\n| port | 3000 |\n"
    )
    out, _ = scrub_secrets(table)
    assert "Tuesday-Biscuit" not in out and "Orchard-Lamp" not in out
    assert "| user | admin |" in out and "| port | 3000 |" in out
    assert "| token | ask ops |" in out  # a note, not a value
    # A table describing fields (their types) holds no value.
    described = "| field | description |\n|---|---|\n| password | string |\n"
    assert scrub_secrets(described)[0] == described


def test_a_password_hash_after_its_user_goes_an_example_of_the_format_stays() -> None:
    shadow = "deploy:$6$Rk2pQ9s1$Vb7nW3xL0cF5hJ8mT2qY6eU4iO1pA9sD3gK7lZ0xC5v:19700:0:99999:7:::"
    out, counts = scrub_secrets(shadow)
    assert counts["password_hash"] == 1
    assert out == "deploy:[REDACTED:password_hash]:19700:0:99999:7:::"
    line = '{"stdout": "viewer:$apr1$Lk3j9d2f$Qm4nB7vC1xZ8aS5dF2gH0.\\n"}'
    assert "$apr1$" not in scrub_secrets(line)[0]
    example = (
        "A bcrypt hash looks like $2b$12$Xq8vN2mL5pR7tY1wE4uI6oA3sD9fG0hJ2kL4zX6cV8bN0mQ2wE4r."
    )
    assert scrub_secrets(example)[0] == example
    # PHC's form: its salt and hash are random draws, yet the whole is still an example.
    repl = ">>> PasswordHasher().hash('correct horse')\n'$argon2id$v=19$m=65536,t=3,p=4$" + (
        "oBHqQ+5MrvT6GTXogp4Txw$IIjC0eQj0b6uzVJDTtMGxxb1iwxBC5k8C+fttpIgJug'"
    )
    assert scrub_secrets(repl)[0] == repl
    stored = "svc:" + repl.split("'")[-2]
    assert scrub_secrets(stored)[0] == "svc:[REDACTED:password_hash]"


def test_a_short_token_after_a_hook_segment_goes_a_numeric_hook_id_stays() -> None:
    out, _ = scrub_secrets("posts to https://hooks.zapier.com/hooks/catch/5120044/q7x2kd9/ now")
    assert "q7x2kd9" not in out and "/hooks/catch/5120044/" in out
    api = "GET https://api.github.com/repos/lab/site/hooks/480112233 returned 200"
    assert scrub_secrets(api)[0] == api

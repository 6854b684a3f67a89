"""A key pair's id in a login's user field goes with the password beside it; a person's
login stays."""

from __future__ import annotations

import pytest

from model_foundry.lib.hygiene.secrets import scrub_secrets


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # Kafka's SASL config: the API key is the user name.
        (
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
            "    username='Q4KD7MZP2W9XR3TL' \\\n"
            "    password='vH3nQ8sLk2PzR7wXy5TbN0cJm4Fd6GaE';",
            "Q4KD7MZP2W9XR3TL",
        ),
        # Maven's settings.xml with a repository's user token.
        (
            "<server>\n  <id>central</id>\n  <username>Tq8rVw2Lx9Kp</username>\n"
            "  <password>Zr4u-Nm8q-Hs2w-Lp6x</password>\n</server>",
            "Tq8rVw2Lx9Kp",
        ),
    ],
)
def test_a_random_user_beside_a_password_goes(text: str, value: str) -> None:
    out, _ = scrub_secrets(text)
    assert value not in out
    assert "[REDACTED:api_key]" in out


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # A person's or a service's login, beside a password.
        ("username: svc_backup01\npassword: Zr4uNm8qHs2wLp6xQ9", "svc_backup01"),
        (
            "<username>deploy-bot-2024</username>\n<password>x7Hq2LmP9vRw</password>",
            "deploy-bot-2024",
        ),
        # A random user name with no password near it: no pair, an account the line names.
        ("username: Q4KD7MZP2W9XR3TL\nstatus: active\nregion: eu-west-1", "Q4KD7MZP2W9XR3TL"),
    ],
)
def test_a_login_or_an_id_alone_stays(text: str, value: str) -> None:
    out, _ = scrub_secrets(text)
    assert value in out

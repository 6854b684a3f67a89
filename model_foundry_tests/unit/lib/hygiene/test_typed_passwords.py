"""A password typed at the shell's prompt after a password prompt had gone (``typed_passwords``)."""

from __future__ import annotations

from model_foundry.lib.hygiene.secrets import scrub_secrets

SUDO = """[sudo] password for ren:
Sorry, try again.
ren@db-02:~$ Thistle&Mortar93
[1] 5120
bash: Mortar93: command not found
bash: Thistle: command not found
[1]+  Exit 127                Thistle
ren@db-02:~$ ls"""


def test_the_token_typed_and_each_piece_the_shell_named_go() -> None:
    out, counts = scrub_secrets(SUDO)
    for piece in ("Thistle", "Mortar93"):
        assert piece not in out
    assert "ren@db-02:~$ [REDACTED:password]\n" in out
    assert "bash: [REDACTED:password]: command not found" in out
    assert out.endswith("ren@db-02:~$ ls")  # what was typed after stays
    assert counts["password"] >= 4


def test_zsh_and_an_ssh_passphrase_prompt() -> None:
    text = (
        "Enter passphrase for key '/home/ren/.ssh/id_ed25519':\n"
        "% quietlantern\nzsh: command not found: quietlantern\n"
    )
    out, _ = scrub_secrets(text)
    assert "quietlantern" not in out
    assert "/home/ren/.ssh/id_ed25519" in out


def test_a_typo_or_a_missing_tool_without_a_password_prompt_stays() -> None:
    # No prompt before: a missing tool is a missing tool.
    missing = "$ kubectx staging\nbash: kubectx: command not found\n"
    assert scrub_secrets(missing)[0] == missing
    # After a prompt, a short typo of a real command is not taken.
    typo = "[sudo] password for ren:\nren@db-02:~$ sl\nbash: sl: command not found\n"
    assert scrub_secrets(typo)[0] == typo
    # Far below the prompt (more than a screenful of other output), not the typed value.
    far = "Password:\n" + "ok\n" * 20 + "bash: deploytool: command not found\n"
    assert scrub_secrets(far)[0] == far

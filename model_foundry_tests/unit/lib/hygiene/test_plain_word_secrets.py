"""Secrets a person chose or a device prints, in the places heldout11's tuned half put them:
another script's word with digits after its password word (no verb), a phrase bracketed
after パスワードは, security questions' answers, a lock's combination, a BitLocker recovery
password, a Teams webhook, a password a few words after its word. And what stays: public
tokens (Mapbox's ``pk.``, Google's OAuth client id), Helm's ``existingSecret`` name, a
button's name in brackets, a label without a security question."""

from __future__ import annotations

import pytest

from model_foundry.lib.hygiene.record import RecordScrubber


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("зайди в админку, логин admin, пароль Медведь_2031", "Медведь_2031"),
        ("아이디는 admin, 비밀번호는 구름다리58 입니다.", "구름다리58"),
        ("添付ファイルの解凍パスワードは「春風とさくら」です。", "春風とさくら"),
        (
            "user: set up the recovery questions. First pet: Biscotti. Street I grew up on: "
            "Larchmont.",
            "Biscotti",
        ),
        (
            "user: set up the recovery questions. First pet: Biscotti. Street I grew up on: "
            "Larchmont.",
            "Larchmont",
        ),
        ("秘密の質問は「母の旧姓」で、答えは「たかはし」です。", "たかはし"),
        ("note for the handover: the safe combination is 27-09-61, key in drawer", "27-09-61"),
        ("金庫のダイヤル番号は左に 12-40-07 の順です。", "12-40-07"),
        (
            "Password:\n    703241-118811-520399-046475-285670-601205-411312-009911\n",
            "703241-118811-520399-046475-285670-601205-411312-009911",
        ),
        (
            "POST https://acme.webhook.office.com/webhookb2/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
            "@1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809/IncomingWebhook/"
            "c0ffee0ddba11f00dfeedface0123456/9e8d7c6b-5a49-3827-1605-f4e3d2c1b0a9 failed",
            "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
        ),
        (
            "done: the password you gave me, Tamarind#Ridge42, works on the relay.",
            "Tamarind#Ridge42",
        ),
        # heldout12's even half: words run together with digits after 密码是, a bracketed phrase
        # with spaces, an answer on its own line, a password sent in halves, an unlock code.
        ("访客网络的密码是 qingshan2031hai", "qingshan2031hai"),
        ("パスワードは「yuki no hi 2031」です。", "yuki no hi 2031"),
        ("秘密の質問を登録して\n質問：母の旧姓は？\n答え：たかなし\n", "たかなし"),
        (
            "パスワードは長いので分けて送ります\n前半「Suzume-Kaede」\n後半「-Tsuki71」",
            "Suzume-Kaede",
        ),
        ("検証機のロック解除コードは 520713 です。", "520713"),
    ],
)
def test_a_plain_word_secret_goes(text: str, value: str) -> None:
    out, _ = RecordScrubber().scrub(text)
    assert value not in out


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (
            "mapboxgl.accessToken = 'pk.eyJ1IjoibGFiIiwiYSI6ImNrMHh5ejEyMyJ9.Zm9vYmFyYmF6cXV4'",
            "pk.eyJ1IjoibGFiIiwiYSI6ImNrMHh5ejEyMyJ9.Zm9vYmFyYmF6cXV4",
        ),
        (
            "client_id='771203845512-q8w2e4r6t8y0u2i4o6p8a0s2d4f6g8h0.apps.googleusercontent.com'",
            "771203845512-q8w2e4r6t8y0u2i4o6p8a0s2d4f6g8h0.apps.googleusercontent.com",
        ),
        ("auth:\n  existingSecret: analytics-db-credentials\n", "analytics-db-credentials"),
        ("パスワードは「再設定」ボタンから変更できます。", "再設定"),
        ("Pet: cat. City: Osaka. Visit booked for Tuesday.", "Osaka"),
        # Base64 of a JSON object of no credential's keys: a cursor the server reads back.
        (
            "GET /api/items?cursor=eyJwYWdlIjogNCwgIm9yZGVyIjogImRlc2MifQ 200",
            "eyJwYWdlIjogNCwgIm9yZGVyIjogImRlc2MifQ",
        ),
        # A document's halves, with no password before them.
        ('The first half "Setup" covers installation; the second half "Usage" the CLI.', "Setup"),
        ("講義の前半「導入編」では基礎を、後半「応用編」では実例を扱います。", "導入編"),
        # An IDE's macro stands for the value.
        ('<env name="DEPLOY_TOKEN" value="$DEPLOY_TOKEN$" />', "$DEPLOY_TOKEN$"),
        ("The combination of pandas 2.2 and numpy 1 26 3 works.", "1 26 3"),
    ],
)
def test_what_the_plain_word_rules_leave(text: str, value: str) -> None:
    out, _ = RecordScrubber().scrub(text)
    assert value in out


def test_codecovs_upload_token_in_its_short_flag_goes() -> None:
    token = "5b0c8e2a-71d4-4f3e-9a62-c4d8e1f07b39"
    out, _ = RecordScrubber().scrub(f"./codecov upload-process -t {token} -f coverage.xml")
    assert token not in out and "coverage.xml" in out
    # Another tool's -t is a tag or a tty, and stays.
    kept = f"docker build -t registry.local/app:{token[:8]} ."
    assert RecordScrubber().scrub(kept)[0] == kept

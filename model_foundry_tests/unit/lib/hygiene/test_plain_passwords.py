"""Passwords of plain words in prose and in chats (``plain_passwords.py``), and the shapes
heldout13's tuned half showed: a name and its value as two fields of one object, a quoted
passphrase after ``sshpass -p``, ``net user`` with a dotted password, more languages' password
words and verbs, a security question's abbreviated cue. Each value here is written for this
test; what stays is prose about passwords, code and a lock file's hash."""

from __future__ import annotations

import pytest

from model_foundry.lib.hygiene.record import RecordScrubber


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # Joined words or a made-up word after a password's verb, in any language known.
        ("le mot de passe du NAS, c'est renard_écureuil (avec les accents)", "renard_écureuil"),
        ("[19:02] Ola: the guest wifi password is tangerine-otter, enjoy", "tangerine-otter"),
        ("Mikko: saunan salasana on kuusimetsä", "kuusimetsä"),
        # Words with a remark on how to type them; capitalised words.
        ("la password del router è pane e burro, tutto minuscolo", "pane e burro"),
        ("my bank password is Copper Lantern Falls, can you remember it?", "Copper Lantern Falls"),
        # Spelled out after a password's or a code's word.
        ("letter by letter: Q-U-I-N-C-E-4-2 (capitals)", "Q-U-I-N-C-E-4-2"),
        ("ゲートの暗証は 3・7・1・9・0 です", "3・7・1・9・0"),
        # A recovery phrase of a few words after its colon.
        ("Element security phrase: amber walrus pickle drift", "amber walrus pickle drift"),
        # Inflected, no verb, then a remark (Turkish).
        ("wifi şifresi kiraztarlası, büyük harf yok", "kiraztarlası"),
        # Czech verb ``je``, the value in „quotes“.
        ("heslo do skladu je „modrý pes 42“.", "modrý pes 42"),
        # A name and its value as two fields of one object.
        ('{"key": "password", "value": "quietmarsh", "enabled": true}', "quietmarsh"),
        ("env:\n- name: SMTP_PASSWORD\n  value: lanternfish\n- name: SMTP_USER", "lanternfish"),
        ("sshpass -p 'plum cobbler' ssh pi@10.0.0.9 uptime", "plum cobbler"),
        ("net user svc_sync Otter.Harbor8 /add", "Otter.Harbor8"),
        ('"Security Q: first school = Hillcrest Primary",Home', "Hillcrest Primary"),
        ("秘密の質問の答え＝ぽんず", "ぽんず"),
        # Lowercase words ending their line, none a function word; a verb then a colon.
        ("utente: la password del router è tramonto verde ottanta\nok", "tramonto verde ottanta"),
        ("« Votre mot de passe provisoire est : Brioche-Lune-17. Il expire demain. »", "Brioche"),
        # Quoted or bracketed after another language's password word, inflected.
        ("Sunucu şifresi: 'fındık-lokum-58' (yarın değişecek)", "fındık-lokum-58"),
        ("관리자 비밀번호는 '바다소리9' 입니다", "바다소리9"),
        ("パスワードを「ゆきだるま_はる」に変更しました", "ゆきだるま_はる"),
        ("ο κωδικός του router είναι σύκο2029, μην τον αλλάξεις", "σύκο2029"),
        # Set to a value; now, then a dash; digits said as words.
        ("chore: reset admin pw to Marble-Quokka for the demo", "Marble-Quokka"),
        ("The admin password is now tidal kestrel — put it in the vault", "tidal kestrel"),
        ("the alarm code is four nine two seven one, then press set", "four nine two seven one"),
        # A spreadsheet's password column, a config line's quoted value, a flag's phrase.
        ("app\tuser\tpassword\nJira\tops@ex.example\tmarigold canyon\n", "marigold canyon"),
        ('hostname "Friday Scrims"\nrcon_password "catapult99"\nsv_lan 0', "catapult99"),
        ("mosquitto_pub -h broker -u sensor -P 'damp attic 4' -t home/x -m 1", "damp attic 4"),
        # A code word after a dash.
        ("если позвонят из банка, кодовое слово — черника.", "черника"),
        ("共有フォルダのパスワードは電話で伝えたとおり「あおいとり」です", "あおいとり"),
    ],
)
def test_a_plain_password_goes(text: str, value: str) -> None:
    out, _ = RecordScrubber(salt=b"t").scrub(text)
    assert value not in out


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The password is required, and the password is case-sensitive.", "case-sensitive"),
        ("It will be sent as the username/password to authenticate", "authenticate"),
        ("a passphrase of four or more words is preferred over symbols", "preferred"),
        ("Şifrenizi paylaşmayın; destek ekibi şifre sormaz.", "sormaz"),
        ("def login(user: str, password: str) -> None:", "str"),
        ("    password: user_password,", "user_password"),
        ("the password is stored in the vault", "stored"),
        ("the password is the same, all lowercase", "the same"),
        ("the wifi password is on the fridge", "on the fridge"),
        ("the password is not working today", "not working"),
        ("CREATE USER ro WITH PASSWORD :'ro_password';", "ro_password"),
        ("$password = $request->input('password');", "input('password')"),
        ("If you forgot your password, click 'Reset password' on the sign-in page.", "Reset"),
        ("パスワードは「再設定」から変更できます", "再設定"),
        ('Authorization = "Bearer $env:API_TOKEN"', "$env:API_TOKEN"),
        ("Token: ghp_••••••••••••••••••••", "ghp_••••"),
        ("メニュー: 「パスワードを変更」「設定」", "設定"),
        ("service\tlogin\tpassword\nGitHub\t(SSO)\t(in vault)\n", "(in vault)"),
        ('"password": "not-the-real-one"  # test fixture', "not-the-real-one"),
        (
            "NEXT_PUBLIC_SUPABASE_ANON_KEY=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoiYW5vbi"
            "IsImlzcyI6InN1cGFiYXNlIn0.c2lnbmF0dXJlX2hlcmVfeHl6",
            "c2lnbmF0dXJlX2hlcmVfeHl6",
        ),
        ('    "h1:siovGvMeva3FryUgo0TrND+LSIehkCvCCjLeqgWHwTc=",', "siovGvMeva3Fry"),
        ("Pet: cat`` in a vet's form", "cat"),
        ("version 1.2.3.4 of the tool", "1.2.3.4"),
    ],
)
def test_what_the_plain_password_rules_leave(text: str, value: str) -> None:
    out, _ = RecordScrubber(salt=b"t").scrub(text)
    assert value in out

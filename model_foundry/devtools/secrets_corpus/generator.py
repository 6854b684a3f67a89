"""The case generator that the contexts and case families write through."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from model_foundry.devtools.secrets_corpus.kinds import KIND_BY_NAME
from model_foundry.devtools.secrets_corpus.model import HEX, WHERES, Case, Plant, _b64, oracle_scrub
from model_foundry.devtools.secrets_corpus.values import _T, Kind, random_part
from model_foundry.devtools.secrets_corpus.words import (
    _MASK_LIKE,
    DBS,
    HOSTS,
    PHRASES,
    PLACEHOLDERS,
    PLAIN_TEXTS,
    USERS,
    _timestamp,
    _uuid,
)


def _render_kv(fmt: str, key: str, value: str, rng: random.Random) -> str:
    if fmt == "dotenv":
        forms = [f"{key}={value}", f"{key} = {value}", f'{key}="{value}"', f"{key}='{value}'",
                 f"export {key}={value}"]  # fmt: skip
    elif fmt == "yaml":
        forms = [
            f"{key.lower()}: {value}",
            f'{key.lower()}: "{value}"',
            f"{key.lower()}: '{value}'",
        ]
    elif fmt == "toml":
        forms = [f'{key.lower()} = "{value}"', f'{key.lower()}="{value}"']
    elif fmt == "ini":
        forms = [f"{key.lower()} = {value}", f"{key.lower()}={value}", f"{key.lower()}: {value}"]
    else:
        raise ValueError(fmt)
    return rng.choice(forms)


def _comment(fmt: str, text: str) -> str:
    return ("; " if fmt == "ini" and len(text) % 2 else "# ") + text


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.cases: list[Case] = []
        self.seen: list[tuple[Kind, str, str]] = []  # values kept for reuse in env dumps

    # -- pieces ----------------------------------------------------------------------------

    def secret(self, kind: Kind | str) -> tuple[str, str]:
        k = KIND_BY_NAME[kind] if isinstance(kind, str) else kind
        value, part = k.make(self.rng)
        assert part and part in value, (k.name, value, part)
        if k.family == _T:
            self.seen.append((k, value, part))
        return value, part

    def phrases(self, n: int = 2) -> list[str]:
        return self.rng.sample(PHRASES, n)

    def user(self) -> str:
        return self.rng.choice(USERS)

    def host(self) -> str:
        return self.rng.choice(HOSTS)

    def db(self) -> str:
        return self.rng.choice(DBS)

    def negative(self) -> tuple[str, str]:
        """A key and a value a scrubber must keep."""
        rng = self.rng
        pick = rng.randrange(12)
        if pick == 0:
            return "GIT_COMMIT", random_part(rng, HEX, 40)
        if pick == 1:
            return "IMAGE_DIGEST", "sha256:" + random_part(rng, HEX, 64)
        if pick == 2:
            return "REQUEST_ID", _uuid(rng)
        if pick == 3:
            return "APP_VERSION", f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"
        if pick in (4, 5):
            key = rng.choice(["API_TOKEN", "STRIPE_KEY", "DB_PASSWORD", "SECRET_KEY", "AUTH_TOKEN"])
            return key, rng.choice(PLACEHOLDERS)
        if pick == 6:
            return "REPO_URL", rng.choice([
                "https://x-access-token:none@github.com/acme/widgets.git",
                "https://user:none@git.acme.test/platform/infra.git",
                "https://oauth2:none@gitlab.com/acme/mobile.git",
            ])  # fmt: skip
        if pick == 7:
            return "DOCS_URL", rng.choice([
                "https://docs.acme.test/guide/install#step-3",
                "https://pypi.org/simple/requests/",
                "https://registry.npmjs.org/left-pad",
                "https://github.com/acme/widgets/pull/1432",
            ])  # fmt: skip
        if pick == 8:
            return "GREETING_B64", _b64(rng.choice(PLAIN_TEXTS))
        if pick == 9:
            return "BUILD_TIME", _timestamp(rng)
        if pick == 10:
            return "LOG_DIR", rng.choice([
                "/var/log/acme/worker", "/home/dev/projects/acme/api/.venv/bin",
                "/etc/nginx/conf.d/default.conf", "C:\\Users\\dana\\AppData\\Local\\acme",
            ])  # fmt: skip
        return "METRICS_ADDR", rng.choice(["0.0.0.0:9464", "localhost:5432", "127.0.0.1:6379"])

    def negatives(self, fmt: str, n: int) -> tuple[list[str], list[str]]:
        """``n`` negative lines in a key-value format and the strings to record."""
        lines, record = [], []
        used: set[str] = set()
        while len(lines) < n:
            key, value = self.negative()
            if key in used or (fmt != "dotenv" and "\\" in value):
                continue
            used.add(key)
            line = _render_kv(fmt, key, value, self.rng)
            lines.append(line)
            record.append(line.strip() if value in _MASK_LIKE else value)
        return lines, record

    def prose_negative(self) -> tuple[str, str]:
        """A sentence holding something secret-looking but harmless, and that thing."""
        rng = self.rng
        pick = rng.randrange(8)
        if pick == 0:
            sha = random_part(rng, HEX, 40)
            return f"The fix landed in commit {sha} on main.", sha
        if pick == 1:
            digest = "sha256:" + random_part(rng, HEX, 64)
            return f"The image digest is {digest}.", digest
        if pick == 2:
            ident = _uuid(rng)
            return f"Support ticket {ident} has the logs.", ident
        if pick == 3:
            url = "https://x-access-token:none@github.com/acme/widgets.git"
            return f"The runner clones {url} without a token.", url
        if pick == 4:
            text = _b64(rng.choice(PLAIN_TEXTS))
            return f"The test fixture payload is {text} (plain text).", text
        if pick == 5:
            ph = rng.choice(["<your-token>", "YOUR_API_KEY", "${DB_PASSWORD}", "changeme"])
            return f"The template still says {ph} where the value goes.", ph
        if pick == 6:
            ts = _timestamp(rng)
            return f"It last ran at {ts}.", ts
        ver = f"v{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
        return f"We are on {ver} of the client library.", ver

    def add(
        self,
        text: str,
        plants: Sequence[Plant],
        negatives: Iterable[str],
        keep: Iterable[str],
        where: str,
        source: str = "",
    ) -> None:
        assert where in WHERES, where
        case = Case(text, tuple(plants), tuple(dict.fromkeys(negatives)),
                    tuple(dict.fromkeys(keep)), where, source)  # fmt: skip
        for p in case.plants:
            assert p.shown in text, (p.kind, p.context, p.shown[:40], text[:200])
        scrubbed = oracle_scrub(case.plants, text)
        for s in (*case.negatives, *case.keep_words):
            assert s in text, (s, text[:200])
            assert s in scrubbed, ("a negative overlaps a plant", s)
        self.cases.append(case)

    # -- where a text goes -------------------------------------------------------------------

    def file_where(self) -> str:
        return self.rng.choice(["tool_result", "tool_result", "tool_arguments", "user_turn"])

    def wrap_file(self, where: str, path: str, body: str, phrase: str) -> tuple[str, str]:
        """The text of a file as a session meets it, and the case's source."""
        if where == "user_turn":
            return f"Here is my {path}, {phrase}:\n\n{body}\n\nWhy does the job fail?", path
        if where == "tool_result":
            return body, f"cat {path}"
        return body, path


# -- generic contexts for one token --------------------------------------------------------------

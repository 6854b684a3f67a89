"""Personal data in text: e-mail addresses, IP addresses and user names in home paths.

- E-mail addresses become ``[REDACTED:email]``. Kept: the documentation domains
  (``example.com``/``.org``/``.net``, ``*.example``, ``*.test``, ``*.invalid``,
  ``localhost``), ``git@host`` (an SSH login, not a mailbox), the user name of a URL
  (``https://x-access-token:none@github.com``: a login before its host) and
  ``name@2x.png``-style file names.
- IPv4 and IPv6 addresses become ``[REDACTED:ipv4]`` / ``[REDACTED:ipv6]``. Kept: loopback,
  the unspecified address, masks (``255.x``) and the documentation networks
  (``192.0.2.0/24``, ``198.51.100.0/24``, ``203.0.113.0/24``, ``2001:db8::/32``), which name
  nobody. Version strings are not addresses: a dotted quad right after ``v``, ``version``,
  ``python``, ``release``, ``build`` and the like, or inside a longer dotted run
  (``1.2.3.4.5``), stays; ``python 3.11.7`` never looks like one (three parts).
- The user name in ``/home/<name>/``, ``/Users/<name>/`` and ``C:\\Users\\<name>\\`` becomes
  ``user_<hash>``, an HMAC-SHA256 of the name keyed with this installation's salt
  (``settings.hygiene_salt_file()``, created once with 32 random bytes), so the same person
  maps to the same folder across a dataset while nobody without the salt can test a guessed
  name against the hash. Accounts that name no person (``ubuntu``, ``runner``, ``node``,
  ``agent``) stay.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
import secrets
from collections import Counter
from hashlib import sha256
from pathlib import Path

from model_foundry.lib import settings
from model_foundry.lib.hygiene.config import PiiSwitches
from model_foundry.lib.hygiene.placeholders import marker, word_set


def load_salt(path: Path | None = None) -> bytes:
    """This installation's salt, created on first use (readable by its owner only)."""
    path = path or settings.hygiene_salt_file()
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        # Another process created it between our read and our create: use theirs.
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_hex(32) + "\n")
    return bytes.fromhex(path.read_text(encoding="ascii").strip())


_EMAIL = re.compile(
    r"(?<![\w.+%-])(?P<local>[A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@"
    r"(?P<domain>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?P<tld>[A-Za-z]{2,24}))"
    r"(?![\w-])"
)
_KEPT_DOMAINS = re.compile(
    r"(?i)(?:^|\.)(?:example\.(?:com|org|net)|[^.]+\.(?:example|test|invalid|localhost)"
    r"|localhost)$"
)
_FILE_TLDS = word_set("png jpg jpeg gif svg webp ico js ts css py json md txt")
# A URL's user information (``https://user@host``, ``https://user:pw@host``) ends right
# before the match: the "@" there separates a login from a host, it is no mailbox.
_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@\"'<>]*$")

_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\w.])(?:{_OCTET}\.){{3}}{_OCTET}(?![\w]|\.\d)")
_VERSION_CONTEXT = re.compile(
    r"(?i)(?:\bv|\bversion[:= ]*|\bver[:. ]*|\bpython[ =]*|\brelease[ :]*|\bbuild[ :]*"
    r"|\brev[ :]*|==|>=|<=|~=|@)\s*$"
)
_IPV6_CANDIDATE = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
_DOC_NETS = tuple(
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)

# Hints: a part every match of a pattern above holds, opening with a literal: ``re`` jumps
# to a literal, so a hint is searched far faster than the pattern (which opens with a
# lookbehind and is tried at every position). Text without the hint cannot match.
_EMAIL_HINT = re.compile(r"@[A-Za-z0-9]")  # the domain's first character
_IPV4_HINT = re.compile(r"\.\d{1,3}\.")  # the second octet, between its dots
_IPV6_HINT = re.compile(r":[0-9A-Fa-f]{0,4}:")  # two colons of the first groups

_HOME = re.compile(
    r"(?P<root>/home/|/Users/|[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/))"
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?)(?![A-Za-z0-9_-])"
)
# Homes that name no person: placeholders, and the accounts of cloud images, CI runners,
# containers and dev environments (``/home/ubuntu``, ``/home/runner``, ``/home/node``).
_KEPT_HOMES = re.compile(
    r"(?i)user_[0-9a-f]{10}|shared|public|default|all users|user|username|ubuntu|ec2-user"
    r"|admin|runner|vagrant|node|app|agent|codespace|vscode|coder|jenkins|circleci|gitlab-runner"
    r"|www-data|docker|git|ci|build|builder|debian|centos|fedora|opc|azureuser|pi"
)


def _kept_ip(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if address.is_loopback or address.is_unspecified:
        return True
    if isinstance(address, ipaddress.IPv4Address) and str(address).startswith("255."):
        return True
    return any(address in net for net in _DOC_NETS)


class PiiScrubber:
    """Replaces the personal data that ``switches`` turn on; ``salt`` keys the home hashes."""

    def __init__(self, salt: bytes, switches: PiiSwitches | None = None) -> None:
        self.salt = salt
        self.switches = switches or PiiSwitches()

    def user_alias(self, name: str) -> str:
        """``user_<hash>`` for a user name: the same name always gets the same alias."""
        return "user_" + hmac.new(self.salt, name.encode(), sha256).hexdigest()[:10]

    def _email(self, match: re.Match[str], counts: Counter[str]) -> str:
        local, domain = match.group("local"), match.group("domain")
        if local.lower() == "git" or _KEPT_DOMAINS.search(domain):
            return match.group(0)
        if _URL_USERINFO.search(match.string, max(0, match.start() - 300), match.start()):
            return match.group(0)
        if match.group("tld").lower() in _FILE_TLDS:
            return match.group(0)
        counts["email"] += 1
        return marker("email")

    def _ipv4(self, text: str, match: re.Match[str], counts: Counter[str]) -> str:
        before = text[max(0, match.start() - 12) : match.start()]
        if _VERSION_CONTEXT.search(before) or _kept_ip(ipaddress.IPv4Address(match.group(0))):
            return match.group(0)
        counts["ipv4"] += 1
        return marker("ipv4")

    def _ipv6(self, match: re.Match[str], counts: Counter[str]) -> str:
        raw = match.group(0)
        groups = [g for g in raw.split(":") if g]
        if len(groups) < 2 or ("::" not in raw and len(groups) != 8):
            return raw
        try:
            address = ipaddress.IPv6Address(raw)
        except ValueError:
            return raw
        if _kept_ip(address):
            return raw
        counts["ipv6"] += 1
        return marker("ipv6")

    def _home(self, match: re.Match[str], counts: Counter[str]) -> str:
        name = match.group("name")
        if _KEPT_HOMES.fullmatch(name):
            return match.group(0)
        counts["home_path"] += 1
        root = match.group("root")
        if root.startswith(("/Users", "/home")):
            root = "/home/"
        return root + self.user_alias(name)

    def scrub(self, text: str, counts: Counter[str]) -> str:
        """``text`` with the switched-on kinds replaced; ``counts`` gains one per replacement.
        Each pattern runs only where its hint (``_EMAIL_HINT`` and kin) is found."""
        if self.switches.emails and "@" in text and _EMAIL_HINT.search(text):
            text = _EMAIL.sub(lambda m: self._email(m, counts), text)
        if self.switches.ip_addresses:
            if "." in text and _IPV4_HINT.search(text):
                text = _IPV4.sub(lambda m: self._ipv4(m.string, m, counts), text)
            if ":" in text and _IPV6_HINT.search(text):
                text = _IPV6_CANDIDATE.sub(lambda m: self._ipv6(m, counts), text)
        if self.switches.home_paths and ("Users" in text or "/home/" in text):
            text = _HOME.sub(lambda m: self._home(m, counts), text)
        return text


__all__ = ["PiiScrubber", "load_salt"]

"""Credentials out of everything the runner writes: URL user info, secret query values, the
API key and the Basic credential made from the URL, wherever they appear (a server that
echoes the request puts them in its reply)."""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

REDACTED = "REDACTED"
#: Query parameter names that carry a credential (matched case-insensitively, anywhere in
#: the name: ``api_key``, ``access_token``, ``sig``, ``password`` ...).
SECRET_PARAM = re.compile(r"key|token|secret|passw|auth|sig|credential", re.IGNORECASE)

_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<userinfo>[^/?#@\s]+)@", re.I)
_QUERY_PAIR = re.compile(r"(?P<sep>[?&;])(?P<name>[^=&;#\s]+)=(?P<value>[^&;#\s'\"]*)")


def redact_text(text: str) -> str:
    """``text`` with URL user info and secret query values replaced by ``REDACTED``."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)

    def query(m: re.Match[str]) -> str:
        if SECRET_PARAM.search(m["name"]):
            return f"{m['sep']}{m['name']}={REDACTED}"
        return m.group(0)

    return _QUERY_PAIR.sub(query, text)


def redact_url(url: str | None) -> str | None:
    """A URL safe to write: ``https://u:p@h/v1?api_key=k`` -> ``https://REDACTED@h/v1?api_key=REDACTED``."""
    return None if url is None else redact_text(url)


#: Secret values shorter than this are not searched for in what a server sends back (a
#: one- or two-character value would blot out ordinary text).
MIN_SECRET_LENGTH = 4


def basic_credential(user: str, password: str) -> str:
    """The token of ``Authorization: Basic <token>`` for ``user:password``."""
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def url_secrets(url: str) -> list[str]:
    """Every form in which ``url``'s credentials could come back: its user info (as written
    and decoded), user and password, their Basic credential, and the values of its secret
    query parameters (as written and decoded)."""
    parts = urlsplit(url)
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        user, _, password = userinfo.partition(":")
        plain_user, plain_password = unquote(user), unquote(password)
        found += [userinfo, unquote(userinfo), user, plain_user, password, plain_password]
        found.append(basic_credential(plain_user, plain_password))
    for pair in re.split(r"[&;]", parts.query):
        name, _, value = pair.partition("=")
        if value and SECRET_PARAM.search(unquote(name)):
            found += [value, unquote_plus(value)]
    return found


class Redactor:
    """Replaces known secret values (and URL credentials) with ``REDACTED`` in text and in
    JSON values, longest value first."""

    def __init__(self, secrets: list[str]) -> None:
        self.secrets = sorted(
            {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True
        )

    def text(self, value: str) -> str:
        """``value`` with every secret and URL credential replaced."""
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        return redact_text(value)

    def value(self, value: Any) -> Any:
        """A JSON value with every string (keys included) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.value(v) for k, v in value.items()}
        return value

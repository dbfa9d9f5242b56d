"""Credentials out of everything the runner writes: URL user info and secret query values."""

from __future__ import annotations

import re

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

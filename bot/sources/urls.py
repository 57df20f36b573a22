"""Feed URLs as the operator configured them, and as they may be shown.

A feed URL may carry credentials (``https://user:pass@host/feed``, ``?api_key=…``,
``?token=…``). The full URL is only ever sent to the feed's own server; everywhere it is
shown (``/healthz``, metric labels, logs, the ``poll`` summary) it appears as
:func:`redact_url` gives it: scheme, host, port and path. :func:`url_secrets` lists the
credential values, so the log filter can scrub them from any line a library writes.
"""

from __future__ import annotations

import base64
import ipaddress
from pathlib import PurePath
from urllib.parse import parse_qsl, unquote, urlsplit

# Query parameters whose value is a credential, by name (lowercase, '-' read as '_').
SECRET_PARAMS = frozenset(
    {
        "access_token",
        "api_key",
        "apikey",
        "auth",
        "auth_token",
        "client_secret",
        "code",
        "key",
        "password",
        "pass",
        "passwd",
        "private_token",
        "pwd",
        "secret",
        "sig",
        "signature",
        "session",
        "sessionid",
        "token",
    }
)
# Any parameter whose name contains one of these is taken for a credential too.
SECRET_PARAM_PARTS = ("token", "secret", "key", "pass", "auth", "sig", "session", "cred")
# User info without a password is a token when at least this long (``https://TOKEN@host``,
# as git hosts take one); a shorter one is a user name such as ``git``, which is no secret
# and which, redacted from every log line, would garble them.
MIN_TOKEN_USER_CHARS = 16


def is_feed_url(source: str) -> bool:
    """True for an ``http(s)://`` source, which is a feed; anything else is a directory."""
    return source.startswith(("http://", "https://"))


def _is_url(source: str) -> bool:
    """A feed or a git repository (``git+https://…``); a directory is neither."""
    return is_feed_url(source) or source.lower().startswith("git+")


def public_name(source: str) -> str:
    """A source as any chat member may see it (``why``): a feed or a remote git repository
    as :func:`redact_url` shows it; a directory, or a repository on this machine
    (``git+file://``), by the last part of its path (``/srv/wiki`` -> ``wiki``). The
    server's paths are the operator's, shown only to admins (``stats``, ``/healthz``)."""
    if not _is_url(source) or source.lower().startswith("git+file:"):
        path = urlsplit(source).path if _is_url(source) else source
        path = path.split("@", 1)[0] if _is_url(source) else path
        return PurePath(path.replace("\\", "/").rstrip("/")).name or "wiki"
    return redact_url(source)


def redact_url(url: str) -> str:
    """The shown form of a source: a feed URL without credentials, query or fragment.

    ``https://user:pass@feeds.example.org:8443/wiki.atom?token=s3cret`` becomes
    ``https://feeds.example.org:8443/wiki.atom``; a git repository
    ``git+https://token@host/org/wiki.git@main#subdirectory=wiki`` keeps its branch and
    subdirectory and loses the token. A directory source is returned as it is.
    """
    if not _is_url(url):
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # a malformed port or bracket: show the scheme alone
        return url.split("://", 1)[0] + "://[invalid URL]"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    fragment = f"#{parts.fragment}" if url.lower().startswith("git+") and parts.fragment else ""
    return f"{parts.scheme}://{netloc}{parts.path}{fragment}"


def is_secret_param(name: str) -> bool:
    """True for a query parameter whose value is a credential (``api_key``, ``token``...)."""
    folded = name.strip().lower().replace("-", "_")
    return folded in SECRET_PARAMS or any(part in folded for part in SECRET_PARAM_PARTS)


def url_secrets(url: str) -> tuple[str, ...]:
    """The credential values a feed URL carries, as they may appear in any text.

    The password of the user info (raw and percent-decoded), the ``user:pass`` pair and
    its Basic-auth encoding, a user info without password that is long enough to be a
    token (``https://TOKEN@host/…``), and the value of every secret-looking query parameter.
    """
    if not _is_url(url):
        return ()
    try:
        parts = urlsplit(url)
        password = parts.password
        username = parts.username
    except ValueError:
        return ()
    found: set[str] = set()
    if username and not password and parts.scheme.lower() in ("git+https", "git+http"):
        # https://TOKEN@host/org/wiki.git: a Git host's token stands where a user would.
        found.update({username, unquote(username)})
    if password:
        found.update({password, unquote(password)})
        pair = f"{unquote(username or '')}:{unquote(password)}"
        found.update({pair, base64.b64encode(pair.encode()).decode()})
    elif username and len(username) >= MIN_TOKEN_USER_CHARS:
        found.update({username, unquote(username)})
    for raw in parts.query.split("&"):
        name, _, value = raw.partition("=")
        if value and is_secret_param(unquote(name)):
            found.add(value)
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if value and is_secret_param(name):
            found.add(value)
    return tuple(sorted(s for s in found if len(s) >= 3))


def is_internal_address(host: str) -> bool:
    """True for an IP literal that is loopback, link-local, private or otherwise not public.

    A host name is not an address; resolve it first.
    """
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    # Not global: loopback, link-local, private, shared (100.64/10), reserved, unspecified.
    return not address.is_global or address.is_multicast


def scrub(text: str, url: str) -> str:
    """``text`` with source ``url`` (a feed, a git repository) shown redacted and each of
    its credentials removed."""
    if not _is_url(url):
        return text
    text = text.replace(url, redact_url(url))
    for secret in sorted(url_secrets(url), key=len, reverse=True):
        text = text.replace(secret, "[redacted]")
    return text

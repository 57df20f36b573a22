"""URLs of sources: the short form a source is shown by, and which addresses are internal.

A source's credentials are taken apart once, by :mod:`bot.rules.sources`; what reaches this
module is a public identity already. :func:`redact_url` shortens it for display (scheme,
host, port and path), and :func:`is_internal_address` tells the redirect policy which
addresses a public feed may not lead to.
"""

from __future__ import annotations

import ipaddress
from pathlib import PurePath
from urllib.parse import urlsplit

__all__ = ["is_feed_url", "is_internal_address", "public_name", "redact_url"]


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
    """The shown form of a source: a feed URL without user info, query or fragment.

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

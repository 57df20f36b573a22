"""A ``WIKI_SOURCES`` entry taken apart once: its public identity, its credentials apart.

A feed or git URL may carry credentials: user info (``https://user:pass@host/…``,
``https://TOKEN@host/…``) and secret query values (``?token=…``, ``?api_key=…``). They are
split off here, once, into :class:`Credentials` whose values are :class:`Secret` (``str()``
and ``repr()`` say ``[redacted]``). What is left is the source's *public identity*
(:attr:`SourceSpec.public`): the URL without user info and without secret query parameters.
It is all the rest of the bot is given: the store's ``sources.name``, the base relative
links and ids of a feed resolve against (so page keys and links), every message, the
private Atom feed, ``/healthz``, alerts and logs. Only the fetchers unwrap the credentials:
the feed fetcher as an ``httpx.Auth`` flow (:mod:`bot.sources.feed`), the git fetcher as
an ``Authorization`` header it hands git in its environment (:mod:`bot.sources.git`).

Which query values are secret (docs/security.md says why): a parameter whose name, folded
to lower case with ``-`` read as ``_``, is one of :data:`SECRET_PARAMS` or contains one of
:data:`SECRET_PARAM_PARTS`. Other parameters (``format=atom``, ``tag=rl``, ``lang=ko``)
choose what a feed shows, so two feeds of one server differ by them: they stay public.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

__all__ = [
    "REDACTED",
    "Credentials",
    "Secret",
    "SourceSpec",
    "is_secret_param",
    "parse_source",
    "parse_sources",
    "public_identity",
    "source_kind",
    "without_userinfo",
]

REDACTED = "[redacted]"
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
        "jwt",
        "key",
        "password",
        "pass",
        "passwd",
        "private_token",
        "pwd",
        "secret",
        "sid",
        "sig",
        "signature",
        "session",
        "sessionid",
        "token",
    }
)
# Any parameter whose name contains one of these is taken for a credential too.
SECRET_PARAM_PARTS = ("token", "secret", "key", "pass", "auth", "sig", "session", "cred")
# A value shorter than this is not searched for in text (``?key=1`` would garble every line).
MIN_SCRUBBED_CHARS = 3
# User info without a password is a token when at least this long (``https://TOKEN@host``,
# as git hosts take one); shorter, a user name such as ``git``, which is searched for in no
# text (redacted from every log line, it would garble them). It is held apart all the same.
MIN_TOKEN_USER_CHARS = 16
URL_SCHEMES = ("http://", "https://", "git+https://", "git+http://", "git+ssh://", "git+file://")


def is_secret_param(name: str) -> bool:
    """True for a query parameter whose value is a credential (``api_key``, ``token``...)."""
    folded = unquote(name).strip().lower().replace("-", "_")
    return folded in SECRET_PARAMS or any(part in folded for part in SECRET_PARAM_PARTS)


@dataclass(frozen=True, slots=True)
class Secret:
    """A credential's value: ``str()`` and ``repr()`` are redacted; :meth:`reveal` is for
    the fetcher that sends it, and for nothing else."""

    _value: str = field(repr=False)

    def reveal(self) -> str:
        return self._value

    def __str__(self) -> str:
        return REDACTED

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __format__(self, spec: str) -> str:
        return REDACTED


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a configured URL carried that the public identity leaves out.

    ``username`` and ``password`` are percent-decoded, as HTTP Basic sends them;
    ``query`` the secret parameters as configured, still encoded (``("token", "a%2Bb")``).
    """

    username: Secret | None = None
    password: Secret | None = None
    query: tuple[tuple[str, Secret], ...] = ()
    # The user info as configured (still encoded), for the scrubbing of text.
    raw_userinfo: Secret | None = None
    # A user name without password is a token whatever its length (a git host's
    # ``https://TOKEN@host/…``), not a login name.
    token_user: bool = False

    def __bool__(self) -> bool:
        return self.username is not None or self.password is not None or bool(self.query)

    def basic(self) -> tuple[str, str] | None:
        """``(user, password)`` for HTTP Basic, or None; the fetcher's alone to call."""
        if self.username is None and self.password is None:
            return None
        user = self.username.reveal() if self.username else ""
        return user, self.password.reveal() if self.password else ""

    def values(self) -> tuple[str, ...]:
        """Every form in which these credentials may turn up in a text (a library's error,
        a request line at DEBUG), longest first: for the log filter and :meth:`scrub`."""
        found: set[str] = set()
        password = self.password.reveal() if self.password else ""
        username = self.username.reveal() if self.username else ""
        if self.raw_userinfo is not None:
            raw_user, _, raw_password = self.raw_userinfo.reveal().partition(":")
            if password:
                found.update({raw_password, password})
                pair = f"{username}:{password}"
                found.update({pair, base64.b64encode(pair.encode()).decode()})
            elif len(username) >= MIN_TOKEN_USER_CHARS or self.token_user:
                found.update({raw_user, username})
                found.add(base64.b64encode(f"{username}:".encode()).decode())
        for _, value in self.query:
            # A piece kept whole for a secret after a ";" (``1;token=X``): each part's value too.
            for raw in {value.reveal(), *(p.partition("=")[2] for p in value.reveal().split(";"))}:
                found.update({raw, unquote(raw), unquote(raw.replace("+", " "))})
        return tuple(
            sorted((s for s in found if len(s) >= MIN_SCRUBBED_CHARS), key=len, reverse=True)
        )

    def scrub(self, text: str) -> str:
        """``text`` with each of these credentials replaced by ``[redacted]``."""
        for secret in self.values():
            text = text.replace(secret, REDACTED)
        return text


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One configured source: ``public`` is its identity everywhere; ``credentials`` are
    for its fetcher alone. ``kind`` is ``directory``, ``feed`` or ``git``."""

    public: str
    kind: str
    credentials: Credentials = field(default_factory=Credentials)


def source_kind(configured: str) -> str:
    """``git`` (``git+…://``), ``feed`` (``http(s)://``) or ``directory``."""
    lowered = configured.strip().lower()
    if lowered.startswith("git+"):
        return "git"
    if lowered.startswith(("http://", "https://")):
        return "feed"
    return "directory"


def parse_source(configured: str) -> SourceSpec:
    """Split a ``WIKI_SOURCES`` entry into its public identity and its credentials.

    A directory is its own identity. A URL loses its user info (``git+ssh://git@host``
    keeps its user name: ssh takes no credential in a URL, and connects as that user) and
    its secret query parameters; its scheme and host are folded to lower case; the rest
    (path, other parameters in their order and encoding, ``@REF``, fragment) is kept.

    Raises:
        ValueError: a URL whose host or port cannot be read, or a git entry with no ``://``.
    """
    kind = source_kind(configured)
    if kind == "directory":
        return SourceSpec(public=configured, kind=kind)
    text = configured.strip()
    scheme, sep, _ = text.partition("://")
    if not sep:  # "git+" alone, "git+https:/host": a git entry that is no URL yet
        raise ValueError("must be a URL such as git+https://host/org/wiki.git")
    parts = urlsplit(text)
    host = parts.hostname or ""
    port = parts.port  # raises ValueError for a port that is not a number
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    raw_userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else None
    username = password = None
    if raw_userinfo is not None:
        raw_user, has_password, raw_password = raw_userinfo.partition(":")
        if scheme.lower() == "git+ssh" and not has_password:
            netloc = f"{raw_user}@{netloc}"  # a login name, never a credential, for ssh
            raw_userinfo = None
        else:
            username = Secret(unquote(raw_user))
            password = Secret(unquote(raw_password)) if has_password else None
    kept: list[str] = []
    secret: list[tuple[str, Secret]] = []
    for piece in parts.query.split("&") if parts.query else ():
        name, _, value = piece.partition("=")
        # Some servers split a query at ";" too (``?a=1;token=X``): a piece holding a
        # secret parameter after one is kept whole with the credentials, sent as it came.
        hidden = [sub.partition("=")[0] for sub in piece.split(";")[1:]]
        if is_secret_param(name) or any(is_secret_param(sub) for sub in hidden):
            secret.append((name, Secret(value)))
        elif piece:
            kept.append(piece)
    query = f"?{'&'.join(kept)}" if kept else ""
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    public = f"{scheme.lower()}://{netloc}{parts.path}{query}{fragment}"
    credentials = Credentials(
        username=username,
        password=password,
        query=tuple(secret),
        raw_userinfo=Secret(raw_userinfo) if raw_userinfo is not None else None,
        token_user=kind == "git" and password is None,
    )
    return SourceSpec(public=public, kind=kind, credentials=credentials)


def parse_sources(configured: Sequence[str]) -> tuple[SourceSpec, ...]:
    """Each entry parsed (:func:`parse_source`), in order.

    Raises:
        ValueError: a URL cannot be read, or two entries are one source once their
            credentials are set aside (one feed with two tokens: one identity, one history).
    """
    specs = tuple(parse_source(entry) for entry in configured)
    seen: set[str] = set()
    for spec in specs:
        if spec.public in seen:
            raise ValueError(
                f"{spec.public} is listed twice (entries that differ only in their "
                "credentials are one source)"
            )
        seen.add(spec.public)
    return specs


def public_identity(configured: str) -> str:
    """The public identity of a ``WIKI_SOURCES`` entry (:func:`parse_source`); a URL that
    cannot be read is shown by its scheme alone."""
    try:
        return parse_source(configured).public
    except ValueError:
        return configured.split("://", 1)[0] + "://[invalid URL]"


def without_userinfo(url: str) -> str:
    """An http(s) link as it may be kept and shown: without user info (RFC 3986, 3.2.1:
    a password in a URI is deprecated, and ``https://good.example@evil.example/`` is a
    trick). Anything else, or a URL that cannot be read, is returned as it is."""
    if not url.lower().startswith(("http://", "https://")):
        return url
    scheme, _, rest = url.partition("://")
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    if "@" not in authority:
        return url
    return f"{scheme}://{authority.rpartition('@')[2]}{rest[end:]}"

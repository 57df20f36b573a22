"""A WIKI_SOURCES entry split once: its public identity, and credentials held apart that
only the fetchers unwrap (bot.rules.sources, bot.sources.feed.SourceAuth)."""

from __future__ import annotations

import base64
from urllib.parse import quote

import httpx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from bot.errors import ConfigError
from bot.rules.sources import (
    REDACTED,
    Credentials,
    Secret,
    parse_source,
    public_identity,
    without_userinfo,
)
from bot.settings import load_settings
from bot.sources.feed import SourceAuth
from tests.conftest import Settings


@pytest.mark.parametrize(
    ("configured", "public", "kind"),
    [
        (
            "https://user:pass@Feeds.Example.org/wiki.atom",
            "https://feeds.example.org/wiki.atom",
            "feed",
        ),
        (
            "https://feeds.example.org/f?api_key=s3cret&x=1",
            "https://feeds.example.org/f?x=1",
            "feed",
        ),
        (
            "http://h.example:8080/f?token=abc&lang=ko#frag",
            "http://h.example:8080/f?lang=ko#frag",
            "feed",
        ),
        ("https://[::1]:8443/feed?key=k", "https://[::1]:8443/feed", "feed"),
        ("https://h/f?X-Amz-Signature=S&X-Amz-Credential=C&a=b%2Bc", "https://h/f?a=b%2Bc", "feed"),
        ("https://h/f?format=atom&tag=rl&page=2", "https://h/f?format=atom&tag=rl&page=2", "feed"),
        ("https://h/f?page=2;token=T0K3N&lang=ko", "https://h/f?lang=ko", "feed"),
        (
            "git+https://ghp_T0KEN@host/org/wiki.git@main#subdirectory=w",
            "git+https://host/org/wiki.git@main#subdirectory=w",
            "git",
        ),
        ("git+ssh://git@host/org/wiki.git@v1", "git+ssh://git@host/org/wiki.git@v1", "git"),
        ("examples/wiki", "examples/wiki", "directory"),
        ("/srv/wiki?token=x", "/srv/wiki?token=x", "directory"),
    ],
)
def test_the_public_identity_is_the_url_without_credentials(
    configured: str, public: str, kind: str
) -> None:
    spec = parse_source(configured)
    assert (spec.public, spec.kind) == (public, kind)
    assert public_identity(configured) == public


@pytest.mark.parametrize(
    ("url", "secrets"),
    [
        ("https://user:pa55word@h/f", {"pa55word", "user:pa55word"}),
        ("https://h/f?api_key=K3Y1&page=2", {"K3Y1"}),
        ("https://h/f?token=T0K3N&access_token=A11", {"T0K3N", "A11"}),
        ("https://h/f?X-Amz-Signature=SIG99&X-Amz-Credential=CRED9", {"SIG99", "CRED9"}),
        ("https://h/f?myAppSecret=S3CR", {"S3CR"}),
        ("https://h/f?page=2&lang=en", set()),
        ("https://h/f?page=2;token=T0K3N&lang=en", {"T0K3N", "2;token=T0K3N"}),
        ("https://h/f?token=a%2Bb", {"a%2Bb", "a+b"}),
        ("https://ghp_0123456789abcdef@h.example/w", {"ghp_0123456789abcdef"}),
        ("https://git@h.example/w", set()),  # a short user name: held apart, never searched
    ],
)
def test_credentials_list_every_form_a_text_may_show_them_in(url: str, secrets: set[str]) -> None:
    found = set(parse_source(url).credentials.values())
    assert secrets <= found
    if not secrets:
        assert found == set()


def test_the_basic_auth_encoding_of_the_user_info_is_a_secret_too() -> None:
    encoded = base64.b64encode(b"user:pa55word").decode()
    assert encoded in parse_source("https://user:pa55word@h/f").credentials.values()


def test_a_secret_and_a_spec_print_redacted() -> None:
    spec = parse_source("https://reader:pa55word@h.example/f?token=T0K3N")
    for text in (str(spec), repr(spec), f"{spec.credentials}", repr(spec.credentials.username)):
        assert "pa55word" not in text and "T0K3N" not in text and "reader" not in text
    assert str(Secret("x")) == REDACTED and f"{Secret('x')}" == REDACTED
    assert spec.credentials.basic() == ("reader", "pa55word")


def test_scrub_removes_each_credential() -> None:
    credentials = parse_source("https://user:pa55word@h.example/f?token=T0K3N").credentials
    text = "GET https://user:pa55word@h.example/f?token=T0K3N failed; token=T0K3N (pa55word)"
    cleaned = credentials.scrub(text)
    assert "pa55word" not in cleaned and "T0K3N" not in cleaned


def test_settings_list_feed_credentials_among_the_secrets_the_logs_redact() -> None:
    settings = Settings(wiki_sources="examples/wiki,https://u:pa55word@h/f?api_key=K3Y1")  # type: ignore[call-arg]
    assert {"pa55word", "K3Y1"} <= set(settings.secrets())
    assert "pa55word" not in repr(settings) and "K3Y1" not in repr(settings)


@pytest.mark.parametrize(
    ("sources", "said"),
    [
        (
            "https://h.example/f?token=AAAAAAAA,https://h.example/f?token=BBBBBBBB",
            "https://h.example/f is listed twice",
        ),
        (
            "git+https://h.example/w.git?token=SECRETVALUE",
            "not in its query",
        ),
    ],
)
def test_sources_that_cannot_be_told_apart_or_held_are_refused(sources: str, said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(Settings, _env_file=None, wiki_sources=sources)
    message = str(refused.value)
    assert "WIKI_SOURCES" in message and said in message
    assert "AAAAAAAA" not in message and "SECRETVALUE" not in message


@pytest.mark.parametrize(
    ("link", "kept"),
    [
        ("https://u:p@h.example/a?b=c#d", "https://h.example/a?b=c#d"),
        ("https://good.example@evil.example/x", "https://evil.example/x"),
        ("https://h.example/a@b", "https://h.example/a@b"),  # an @ in the path is no user
        ("tag:h.example,2026:1", "tag:h.example,2026:1"),
        ("https://[::1", "https://[::1"),
    ],
)
def test_a_link_loses_its_user_info(link: str, kept: str) -> None:
    assert without_userinfo(link) == kept


NAME = st.sampled_from(["format", "lang", "tag", "page", "q", "view"])
SECRET_NAME = st.sampled_from(
    [
        "token",
        "api_key",
        "apikey",
        "key",
        "access_token",
        "auth",
        "password",
        "sig",
        "signature",
        "X-Amz-Signature",
        "client_secret",
        "session",
    ]
)
VALUE = st.text(
    alphabet="ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789-._~+%/=",
    min_size=1,
    max_size=20,
)
SECRET = st.text(
    alphabet="ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789", min_size=8, max_size=30
)


@given(
    user=st.one_of(st.none(), SECRET),
    password=st.one_of(st.none(), st.text(min_size=8, max_size=20).filter(str.strip)),
    secrets=st.lists(st.tuples(SECRET_NAME, SECRET), max_size=3, unique_by=lambda p: p[0]),
    public_params=st.lists(st.tuples(NAME, VALUE), max_size=3),
    path=st.sampled_from(["/f.json", "/a/b.atom", "", "/"]),
    order=st.randoms(use_true_random=False),
)
def test_a_url_splits_into_a_public_identity_and_credentials_that_rebuild_the_request(
    user: str | None,
    password: str | None,
    secrets: list[tuple[str, str]],
    public_params: list[tuple[str, str]],
    path: str,
    order: object,
) -> None:
    pieces = [f"{name}={value}" for name, value in public_params]
    secret_pieces = [f"{name}={value}" for name, value in secrets]
    query_pieces = pieces + secret_pieces
    order.shuffle(query_pieces)  # type: ignore[attr-defined]
    userinfo = ""
    if user is not None or password is not None:
        userinfo = quote(user or "", safe="")
        if password is not None:
            userinfo += ":" + quote(password, safe="")
        userinfo += "@"
    query = "?" + "&".join(query_pieces) if query_pieces else ""
    configured = f"https://{userinfo}Feeds.Example.org:8443{path}{query}"

    # A secret that is also a piece of what is public (another parameter's value, a name,
    # the words a redacted repr is made of) could not be told apart from it: not drawn.
    public_text = f"https://feeds.example.org:8443{path}?{'&'.join(pieces)}"
    structure = repr(Credentials()) + " ".join(name for name, _ in secrets) + REDACTED
    hidden = [value for _, value in secrets] + [v for v in (user, password) if v]
    assume(not any(v in public_text or v in structure for v in hidden))
    spec = parse_source(configured)
    # The public identity: no user info, no secret value; every public piece, in order.
    assert spec.public.startswith(f"https://feeds.example.org:8443{path}")
    assert "@" not in spec.public
    for _, value in secrets:
        assert value not in spec.public
    kept = [piece for piece in query_pieces if piece in pieces]
    assert spec.public.partition("?")[2] == "&".join(kept)
    # Idempotent: the public identity holds nothing more to take apart.
    again = parse_source(spec.public)
    assert again.public == spec.public and not again.credentials
    assert public_identity(spec.public) == spec.public
    # Nothing of the credentials prints.
    for value in [value for _, value in secrets] + [v for v in (user, password) if v]:
        assert value not in repr(spec.credentials) and value not in str(spec.credentials)
    # The fetcher's auth flow puts back what the server must receive, on its host alone.
    request = httpx.Request("GET", spec.public.split("#", 1)[0])
    flow = SourceAuth(spec.credentials, host="feeds.example.org").auth_flow(request)
    sent = next(flow)
    sent_query = sent.url.query.decode()
    for piece in secret_pieces:
        assert piece in sent_query.split("&")
    if user is not None or password is not None:
        expected = base64.b64encode(f"{user or ''}:{password or ''}".encode()).decode()
        assert sent.headers["Authorization"] == f"Basic {expected}"
    else:
        assert "Authorization" not in sent.headers
    other = httpx.Request("GET", "https://elsewhere.example/x")
    assert (
        "Authorization"
        not in next(SourceAuth(spec.credentials, host="feeds.example.org").auth_flow(other)).headers
    )


@given(st.text(max_size=200), st.sampled_from(["https://", "http://", "git+https://", ""]))
def test_any_entry_parses_or_is_refused_with_a_value_error(text: str, scheme: str) -> None:
    try:
        spec = parse_source(scheme + text)
    except ValueError:
        return
    if spec.kind != "directory":
        authority = spec.public.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]
        assert "@" not in authority.split("#", 1)[0]
        assert parse_source(spec.public).public == spec.public

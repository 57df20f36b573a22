"""``/settings/…``: a chat's settings page, served by ``trendbot run``.

How one gets in: the ``settings`` reply's button opens ``/settings/open/TOKEN``, a link that
names one chat, expires and opens once (:mod:`bot.store.settings_links`); opening it starts
a session of that browser (a cookie holding a random token whose hash alone the store
keeps) and redirects to ``/settings/``, so the link's token stays out of the page's address.
A Telegram Mini App opens ``/settings/app`` instead, whose script posts Telegram's signed
``initData`` (:mod:`bot.channels.telegram.webapp`) for a session of the user's private chat.

The page is HTML rendered here (Jinja2, autoescaped) and works without JavaScript; a small
script adds the tag search and the live preview. A form carries a CSRF token derived from
the session (an attacker's page cannot read the cookie it would need). Every answer says
``Cache-Control: no-store``, ``Referrer-Policy: no-referrer`` and a strict CSP. Addresses
inside the page are relative, so it works under a ``PUBLIC_BASE_URL`` with a path.
Anything that does not open a page answers 403 with a page that says why; a database that
does not answer 503; never 500.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jinja2
from aiohttp import web

from bot import platforms
from bot.channels.telegram import webapp
from bot.channels.telegram.settings import bot_token
from bot.commands import CommandCore, echo
from bot.commands import settings_page as page
from bot.commands.schedule import weekday_name
from bot.i18n import LANGUAGES, language_name, negotiate, t, tn
from bot.matching import transfer
from bot.models import ChatState, Mode, Platform
from bot.render import charts
from bot.rules import filters, schedule
from bot.rules.schedule import zone_label
from bot.settings import Settings
from bot.store import settings_links as link_store
from bot.tags import normalize_tag
from bot.util import utcnow

log = logging.getLogger("bot.settings_page")

COOKIE = "trendbot_settings"
MAX_FORM_BYTES = 64 * 1024  # 50 tags of 64 characters and the rest fit many times over
STATIC = {"settings.js": "text/javascript", "settings.css": "text/css"}
TELEGRAM_SCRIPT = "https://telegram.org/js/telegram-web-app.js"
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Robots-Tag": "noindex",
    "Content-Security-Policy": (
        "default-src 'none'; "
        f"script-src 'self' {TELEGRAM_SCRIPT}; "
        "style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'self' https://web.telegram.org"
    ),
}
TAG_CHOICES = ("off", "any", "required", "excluded")
# Who opened a Mini App: the user id Telegram signed ``initData`` for, or None.
MiniAppCheck = Callable[[str], str | None]

_ASSETS = resources.files("bot.ops") / "settings_assets"


def mini_app_check(settings: Settings) -> MiniAppCheck | None:
    """Who opened the Telegram Mini App, by its ``initData`` (with Telegram configured)."""
    token = bot_token(settings)
    if token is None:
        return None

    def check(init_data: str) -> str | None:
        return webapp.user_of(init_data, bot_token=token.get_secret_value(), now=utcnow())

    return check


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(
            lambda name: (_ASSETS / name).read_text(encoding="utf-8")
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return env


class SettingsPage:
    """The request hook of ``/settings/{tail}`` (see the module's docstring)."""

    def __init__(
        self, *, core: CommandCore, settings: Settings, mini_app: MiniAppCheck | None = None
    ) -> None:
        self._core = core
        self._settings = settings
        self._mini_app = mini_app
        base = settings.public_base_url or ""
        self._secure = base.startswith("https://")
        self._cookie_path = (urlsplit(base).path.rstrip("/") or "") + page.PAGE_PATH
        self._env = _environment()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        tail = request.match_info.get("tail", "")
        try:
            if tail.startswith("open/") and request.method == "GET":
                return await self._open(request, tail.removeprefix("open/"))
            if tail == "" and request.method == "GET":
                return await self._page(request)
            if tail == "" and request.method == "POST":
                return await self._save(request)
            if tail == "feed" and request.method == "POST":
                return await self._new_feed(request)
            if tail == "preview" and request.method == "GET":
                return await self._preview(request)
            if tail == "app" and request.method == "GET":
                return self._html("app.html", lang=self._lang_of(request), base=".")
            if tail == "app" and request.method == "POST":
                return await self._app_session(request)
            if tail.startswith("static/") and request.method == "GET":
                return self._static(tail.removeprefix("static/"))
        except web.HTTPException:
            raise
        except Exception as exc:  # the database is away: unavailable, never a 500
            log.warning("settings page: unavailable: %s", type(exc).__name__)
            return self._refusal(self._lang_of(request), "unavailable", status=503)
        raise web.HTTPNotFound(headers=HEADERS)

    # Getting in --------------------------------------------------------------------------

    async def _open(self, request: web.Request, token: str) -> web.StreamResponse:
        lang = self._lang_of(request)
        if not link_store.well_formed(token):
            return self._refusal(lang, link_store.Refusal.UNKNOWN.value)
        opened = await self._core.open_settings_link(token)
        if isinstance(opened, link_store.Refusal):
            log.info("settings page: a link refused (%s)", opened.value)
            return self._refusal(lang, opened.value)
        # Relative, so the page's address stays under PUBLIC_BASE_URL's path.
        response = web.Response(status=303, headers={**HEADERS, "Location": "../"})
        self._set_cookie(response, opened)
        return response

    async def _app_session(self, request: web.Request) -> web.StreamResponse:
        lang = self._lang_of(request)
        if self._mini_app is None:
            return self._refusal(lang, "unknown")
        body = await _body(request)
        user_id = self._mini_app(body.decode("utf-8", "replace")) if body is not None else None
        if user_id is None:
            return self._refusal(lang, "unknown")
        opened = await self._core.open_settings_app(platform=Platform.TELEGRAM, user_id=user_id)
        if opened is None:
            return self._refusal(lang, "unknown")
        response = web.json_response({"ok": True}, headers=HEADERS)
        self._set_cookie(response, opened)
        return response

    def _set_cookie(self, response: web.StreamResponse, opened: link_store.Opened) -> None:
        response.set_cookie(
            COOKIE,
            opened.session,
            max_age=int(link_store.SESSION_LIFETIME.total_seconds()),
            path=self._cookie_path,
            httponly=True,
            secure=self._secure,
            samesite="Lax",
        )

    async def _chat_of(self, request: web.Request) -> tuple[int, str] | None:
        """The chat the request's session may change, with the session."""
        session = request.cookies.get(COOKIE, "")
        if not link_store.well_formed(session):
            return None
        chat_pk = await self._core.settings_session(session)
        return (chat_pk, session) if chat_pk is not None else None

    # The page ----------------------------------------------------------------------------

    async def _page(self, request: web.Request) -> web.StreamResponse:
        found = await self._chat_of(request)
        if found is None:
            return self._refusal(self._lang_of(request), "session")
        chat_pk, session = found
        view = await self._core.page_view(chat_pk)
        if view is None:
            return self._refusal(self._lang_of(request), "session")
        return await self._form(view, session=session, status=200)

    async def _form(
        self,
        view: page.PageView,
        *,
        session: str,
        status: int,
        values: dict[str, Any] | None = None,
        message: str = "",
        saved: bool = False,
        feed_url: str | None = None,
    ) -> web.Response:
        chat = view.record.chat
        lang = chat.lang
        current = values or _values_of(view)
        chosen: dict[str, str] = current["tags"]
        tags = [(tag, n, chosen.get(tag, "off")) for tag, n in view.tags]
        tags += [(tag, 0, kind) for tag, kind in chosen.items() if tag not in dict(view.tags)]
        preview = await self._core.page_preview(current["filter"], today=utcnow().date())
        zones = sorted(z for z in schedule.ZONE_NAMES_KO) if lang == "ko" else []
        votes = await charts.picture(view.votes) if view.votes is not None else None
        return self._html(
            "page.html",
            lang=lang,
            status=status,
            page_days=page.PREVIEW_DAYS,
            feed_url=feed_url,
            prefix=platforms.rules(chat.platform).prefix(self._settings),
            title=t(lang, "page.title", chat=chat.address),
            csrf=_csrf(session),
            tags=tags,
            values=current,
            message=message,
            saved=saved,
            preview_count=preview.count if isinstance(preview, page.Preview) else 0,
            preview=[i.page.text(lang).title for i in preview.items]
            if isinstance(preview, page.Preview)
            else [],
            zones=[*zones, *_place_zones()],
            weekdays=[(d, weekday_name(lang, n)) for n, d in enumerate(transfer.WEEKDAYS)],
            modes=[(m.value, t(lang, f"cmd.mode.{m.value}")) for m in Mode],
            languages=[(code, language_name(code, lang)) for code in LANGUAGES],
            paused=chat.state == ChatState.PAUSED,
            votes=base64.b64encode(votes).decode() if votes is not None else None,
            votes_alt=view.votes.alt if view.votes is not None else "",
            t=lambda key, **kw: t(lang, key, **kw),
            tn=lambda key, count, **kw: tn(lang, key, count, **kw),
        )

    async def _posted(self, request: web.Request) -> _Posted | web.Response:
        """A form posted by a session's page: its chat, session and fields, or the refusal
        (no session, a body over the bound, a CSRF token that is not the session's)."""
        found = await self._chat_of(request)
        lang = self._lang_of(request)
        if found is None:
            return self._refusal(lang, "session")
        chat_pk, session = found
        body = await _body(request)
        if body is None:
            return self._refusal(lang, "form", status=400)
        form = _form_of(body)
        # Bytes: ``compare_digest`` refuses a str that is not ASCII (it raised: a 503).
        if not hmac.compare_digest(form.get("csrf", "").encode(), _csrf(session).encode()):
            return self._refusal(lang, "form", status=403)
        return _Posted(chat_pk=chat_pk, session=session, form=form, lang=lang)

    async def _save(self, request: web.Request) -> web.StreamResponse:
        posted = await self._posted(request)
        if isinstance(posted, web.Response):
            return posted
        chat_pk, session, form, lang = posted.chat_pk, posted.session, posted.form, posted.lang
        view = await self._core.page_view(chat_pk)
        if view is None:
            return self._refusal(lang, "session")
        values = _values_from(form)
        if values["bad_tags"]:
            chat_lang = view.record.chat.lang
            wrong = t(chat_lang, "page.bad_tag", tag=echo(values["bad_tags"][0]))
            message = wrong + "\n" + t(chat_lang, "dest.import.nothing_changed")
            return await self._form(
                view, session=session, status=400, values=values, message=message
            )
        fields = {
            "filter": values["filter"],
            "mode": values["mode"],
            "time": values["time"],
            "tz": schedule.resolve_zone(values["tz"]) or values["tz"],
            "lang": values["lang"],
            "day": values["day"] if values["mode"] == Mode.WEEKLY.value else "",
            "quiet": values["quiet"],
            "limit": values["limit"],
        }
        platform = view.record.chat.platform
        prefix = platforms.rules(platform).prefix(self._settings)
        result = await self._core.save_page(
            chat_pk, fields=fields, paused=values["paused"], prefix=prefix
        )
        if result is None:
            return self._refusal(lang, "session")
        if isinstance(result, page.Refused):
            return await self._form(
                view, session=session, status=400, values=values, message=result.text
            )
        after = await self._core.page_view(chat_pk)
        return await self._form(
            after or view, session=session, status=200, message=t(result.lang, "page.saved"),
            saved=True,
        )

    async def _new_feed(self, request: web.Request) -> web.StreamResponse:
        """The form's "new feed address": a new private feed URL, shown on the page once."""
        posted = await self._posted(request)
        if isinstance(posted, web.Response):
            return posted
        url = await self._core.page_new_feed(posted.chat_pk)
        view = await self._core.page_view(posted.chat_pk)
        if url is None or view is None:
            return self._refusal(posted.lang, "session")
        return await self._form(view, session=posted.session, status=200, feed_url=url)

    async def _preview(self, request: web.Request) -> web.StreamResponse:
        found = await self._chat_of(request)
        if found is None:
            return web.json_response({"error": "session"}, status=403, headers=HEADERS)
        view = await self._core.page_view(found[0])
        lang = view.record.chat.lang if view is not None else "en"
        text = request.query.get("filter", "")[: transfer.MAX_LINE_CHARS]
        preview = await self._core.page_preview(text, today=utcnow().date())
        if not isinstance(preview, page.Preview):
            return web.json_response({"error": preview.reason}, status=400, headers=HEADERS)
        return web.json_response(
            {
                "count": preview.count,
                "text": tn(lang, "page.preview", preview.count, days=page.PREVIEW_DAYS),
                "titles": [item.page.text(lang).title for item in preview.items],
            },
            headers=HEADERS,
        )

    # Answers -----------------------------------------------------------------------------

    def _html(self, template: str, *, lang: str, status: int = 200, **context: Any) -> web.Response:
        context.setdefault("t", lambda key, **kw: t(lang, key, **kw))
        body = self._env.get_template(template).render(lang=lang, **context)
        return web.Response(
            text=body, status=status, content_type="text/html", charset="utf-8", headers=HEADERS
        )

    def _refusal(self, lang: str, reason: str, *, status: int = 403) -> web.Response:
        return self._html(
            "refused.html",
            lang=lang,
            status=status,
            heading=t(lang, f"page.refused.{reason}.title"),
            reason=t(lang, f"page.refused.{reason}"),
        )

    def _static(self, name: str) -> web.Response:
        if name not in STATIC:
            raise web.HTTPNotFound(headers=HEADERS)
        body = (_ASSETS / name).read_text(encoding="utf-8")
        headers = {**HEADERS, "Cache-Control": "private, max-age=300"}
        return web.Response(text=body, content_type=STATIC[name], charset="utf-8", headers=headers)

    def _lang_of(self, request: web.Request) -> str:
        """The language to refuse in: the browser's first, else the deployment's."""
        accepted = request.headers.get("Accept-Language", "").split(",")[0].split(";")[0]
        return negotiate(accepted or None, default=self._settings.default_language)


@dataclass(frozen=True, slots=True)
class _Posted:
    chat_pk: int
    session: str
    form: dict[str, str]
    lang: str  # the browser's, for a refusal


async def _body(request: web.Request) -> bytes | None:
    if request.content_length is not None and request.content_length > MAX_FORM_BYTES:
        return None
    body = await request.content.read(MAX_FORM_BYTES + 1)
    return body if len(body) <= MAX_FORM_BYTES else None


def _form_of(body: bytes) -> dict[str, str]:
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        return {}
    return dict(pairs)


def _csrf(session: str) -> str:
    return hmac.new(session.encode(), b"settings-form", hashlib.sha256).hexdigest()


def _values_of(view: page.PageView) -> dict[str, Any]:
    """The form's values for the chat as stored."""
    chat = view.record.chat
    tags = {tag: "any" for tag in sorted(chat.filter.any_of)}
    tags |= {tag: "required" for tag in sorted(chat.filter.required)}
    tags |= {tag: "excluded" for tag in sorted(chat.filter.excluded)}
    return {
        "tags": tags,
        "every": chat.filter.everything,
        "filter": filters.format_filter(chat.filter),
        "mode": chat.mode.value,
        "day": transfer.WEEKDAYS[chat.weekday],
        "time": chat.digest_time.strftime("%H:%M"),
        "tz": zone_label(chat.timezone),
        "lang": chat.lang,
        "quiet": str(chat.quiet) if chat.quiet else "",
        "limit": str(chat.limit) if chat.limit else "",
        "paused": chat.state == ChatState.PAUSED,
    }


def _values_from(form: dict[str, str]) -> dict[str, Any]:
    """The form's values as posted: each tag's choice (``tag:NAME`` = off, any, required or
    excluded), ``every`` for ``*``, and the rest by the settings line's names."""
    chosen = {
        name.removeprefix("tag:"): choice
        for name, choice in form.items()
        if name.startswith("tag:") and choice in TAG_CHOICES and choice != "off"
    }
    # A tag's name goes into the filter as one word: anything that is not one tag (a
    # space, a sign, a star) is named back rather than read as several.
    tags = {tag: choice for tag, choice in chosen.items() if normalize_tag(tag) == tag}
    sign = {"any": "", "required": "+", "excluded": "-"}
    every = form.get("every") == "on"
    words = (["*"] if every else []) + [f"{sign[c]}{tag}" for tag, c in tags.items()]
    return {
        "tags": tags,
        "bad_tags": [tag for tag in chosen if tag not in tags],
        "every": every,
        "filter": " ".join(words),
        "mode": form.get("mode", ""),
        "day": form.get("day", ""),
        "time": form.get("time", ""),
        "tz": form.get("tz", ""),
        "lang": form.get("lang", ""),
        "quiet": form.get("quiet", ""),
        "limit": form.get("limit", ""),
        "paused": form.get("paused") == "on",
    }


def _place_zones() -> list[str]:
    return sorted(z for z in zoneinfo.available_timezones() if schedule.is_place_zone(z))

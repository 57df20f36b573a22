"""``/settings/…``: a chat's settings page, served by ``trendbot run``.

How one gets in: the ``settings`` reply's button opens ``/settings/open/TOKEN``, a link that
names one chat, expires and opens once (:mod:`bot.store.settings_links`). Its GET only shows
the chat's name and a button (a link checker or a prefetch may fetch it first and must not
use it up); the button's POST opens it, starting a session of that browser (a cookie
holding a random token whose hash alone the store keeps), and redirects to ``/settings/``,
so the link's token stays out of the page's address.
A Telegram Mini App opens ``/settings/app`` instead, whose script posts Telegram's signed
``initData`` (:mod:`bot.channels.telegram.webapp`) for a session of the user's private chat,
answered with the page itself. Telegram Web shows a Mini App in a cross-site frame, where a
browser neither keeps nor sends a ``SameSite=Lax`` cookie, so that page carries its session
along (a form field, and a header of the preview's requests) instead of relying on one.

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
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

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
from bot.ops import settings_form
from bot.render import charts
from bot.rules import schedule
from bot.settings import Settings
from bot.store import settings_links as link_store
from bot.util import utcnow

log = logging.getLogger("bot.settings_page")

COOKIE = "trendbot_settings"
# Where a page opened without a cookie carries its session: a form's field, the preview's header.
SESSION_FIELD = "session"
SESSION_HEADER = "X-Settings-Session"
INIT_DATA_FIELD = "init_data"  # the Mini App's form: Telegram's initData, as it came
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
        loader=jinja2.FunctionLoader(lambda name: (_ASSETS / name).read_text(encoding="utf-8")),
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
                return await self._door(request, tail.removeprefix("open/"))
            if tail.startswith("open/") and request.method == "POST":
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

    async def _door(self, request: web.Request, token: str) -> web.StreamResponse:
        lang = self._lang_of(request)
        if not link_store.well_formed(token):
            return self._refusal(lang, link_store.Refusal.UNKNOWN.value)
        door = await self._core.peek_settings_link(token)
        if isinstance(door, link_store.Refusal):
            return self._refusal(lang, door.value)
        title = t(door.lang, "page.title", chat=door.address)
        return self._html("door.html", lang=door.lang, title=title)

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
        init_data = settings_form.form_of(body).get(INIT_DATA_FIELD) if body is not None else None
        user_id = self._mini_app(init_data) if init_data else None
        if user_id is None:
            return self._refusal(lang, "unknown")
        opened = await self._core.open_settings_app(platform=Platform.TELEGRAM, user_id=user_id)
        view = await self._core.page_view(opened.chat_pk) if opened is not None else None
        if opened is None or view is None:
            return self._refusal(lang, "unknown")
        # The page itself, carrying its session; the cookie too, for a webview that keeps it.
        session = _Session(chat_pk=opened.chat_pk, token=opened.session, carried=True)
        response = await self._form(view, session=session, status=200)
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

    async def _session_of(
        self, request: web.Request, form: dict[str, str] | None = None
    ) -> _Session | None:
        """The request's live session and the chat it may change: the one its page carried
        (a posted form's field, the preview's header), else its cookie's."""
        carried = (form or {}).get(SESSION_FIELD) or request.headers.get(SESSION_HEADER, "")
        token = carried or request.cookies.get(COOKIE, "")
        if not link_store.well_formed(token):
            return None
        chat_pk = await self._core.settings_session(token)
        if chat_pk is None:
            return None
        return _Session(chat_pk=chat_pk, token=token, carried=bool(carried))

    # The page ----------------------------------------------------------------------------

    async def _page(self, request: web.Request) -> web.StreamResponse:
        session = await self._session_of(request)
        if session is None:
            return self._refusal(self._lang_of(request), "session")
        view = await self._core.page_view(session.chat_pk)
        if view is None:
            return self._refusal(self._lang_of(request), "session")
        return await self._form(view, session=session, status=200)

    async def _form(
        self,
        view: page.PageView,
        *,
        session: _Session,
        status: int,
        values: dict[str, Any] | None = None,
        message: str = "",
        saved: bool = False,
        feed_url: str | None = None,
    ) -> web.Response:
        chat = view.record.chat
        lang = chat.lang
        current = values or settings_form.values_of(view)
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
            csrf=_csrf(session.token),
            carried=session.token if session.carried else None,
            tags=tags,
            values=current,
            message=message,
            saved=saved,
            preview_count=preview.count if isinstance(preview, page.Preview) else 0,
            preview=[i.page.text(lang).title for i in preview.items]
            if isinstance(preview, page.Preview)
            else [],
            zones=[*zones, *settings_form.place_zones()],
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
        lang = self._lang_of(request)
        body = await _body(request)
        form = settings_form.form_of(body) if body is not None else {}
        session = await self._session_of(request, form)
        if session is None:
            return self._refusal(lang, "session")
        if body is None:
            return self._refusal(lang, "form", status=400)
        # Bytes: ``compare_digest`` refuses a str that is not ASCII (it raised: a 503).
        if not hmac.compare_digest(form.get("csrf", "").encode(), _csrf(session.token).encode()):
            return self._refusal(lang, "form", status=403)
        return _Posted(session=session, form=form, lang=lang)

    async def _save(self, request: web.Request) -> web.StreamResponse:
        posted = await self._posted(request)
        if isinstance(posted, web.Response):
            return posted
        session, form, lang = posted.session, posted.form, posted.lang
        chat_pk = session.chat_pk
        view = await self._core.page_view(chat_pk)
        if view is None:
            return self._refusal(lang, "session")
        values = settings_form.values_from(form)
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
            after or view,
            session=session,
            status=200,
            message=t(result.lang, "page.saved"),
            saved=True,
        )

    async def _new_feed(self, request: web.Request) -> web.StreamResponse:
        """The form's "new feed address": a new private feed URL, shown on the page once."""
        posted = await self._posted(request)
        if isinstance(posted, web.Response):
            return posted
        url = await self._core.page_new_feed(posted.session.chat_pk)
        view = await self._core.page_view(posted.session.chat_pk)
        if url is None or view is None:
            return self._refusal(posted.lang, "session")
        return await self._form(view, session=posted.session, status=200, feed_url=url)

    async def _preview(self, request: web.Request) -> web.StreamResponse:
        session = await self._session_of(request)
        if session is None:
            return web.json_response({"error": "session"}, status=403, headers=HEADERS)
        view = await self._core.page_view(session.chat_pk)
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
class _Session:
    chat_pk: int
    token: str
    carried: bool  # by the page itself (a form's field, a header), not by a cookie


@dataclass(frozen=True, slots=True)
class _Posted:
    session: _Session
    form: dict[str, str]
    lang: str  # the browser's, for a refusal


async def _body(request: web.Request) -> bytes | None:
    if request.content_length is not None and request.content_length > MAX_FORM_BYTES:
        return None
    body = await request.content.read(MAX_FORM_BYTES + 1)
    return body if len(body) <= MAX_FORM_BYTES else None


def _csrf(session: str) -> str:
    return hmac.new(session.encode(), b"settings-form", hashlib.sha256).hexdigest()

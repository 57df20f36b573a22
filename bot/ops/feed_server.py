"""``GET /feeds/TOKEN.atom``: a chat's private Atom feed, served by ``trendbot run``.

Anything that is not a live token answers 404 (a malformed name, an unknown or reset
token), and a database that does not answer 503: never 500. The answer is cached by no
one but the reader (``Cache-Control: private``) and carries ETag and Last-Modified; a
conditional GET that matches them gets 304 with no body.
"""

from __future__ import annotations

import logging

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.i18n import t
from bot.render import atom as feeds
from bot.rules import feeds as feed_rules
from bot.rules import filters
from bot.store import feeds as feed_store

log = logging.getLogger("bot.feeds")

CONTENT_TYPE = "application/atom+xml"
# Feed readers poll every few minutes to hours; five minutes of their own cache is harmless.
CACHE_CONTROL = "private, max-age=300"


class FeedServer:
    def __init__(self, *, engine: AsyncEngine, public_base_url: str | None) -> None:
        self._engine = engine
        self._base = public_base_url

    async def handle(self, request: web.Request) -> web.StreamResponse:
        token = feed_rules.token_from_path(request.match_info.get("name", ""))
        if token is None or self._base is None:
            return _not_found()
        try:
            found = await feed_store.document(self._engine, token)
        except Exception as exc:  # the database is away: unavailable, never a 500
            log.warning("feed: database unavailable: %s", type(exc).__name__)
            return web.Response(status=503, headers={"Retry-After": "60"})
        if found is None:
            return _not_found()
        owner, entries, changed = found.owner, found.entries, found.changed
        chat = owner.record.chat
        # The latest moment the store changed in a way that can change this document: any
        # page seen to change or removed, the chat's settings, the token. (Not the pages' own
        # wiki dates: a date ahead of the clock must not make Last-Modified lie.)
        updated = max(changed, owner.created_at, owner.chat_updated_at)
        lang = chat.lang
        body = feeds.render(
            feeds.Feed(
                feed_id=feeds.feed_id(owner.token_hash),
                title=t(lang, "dest.feed.title", filter=filters.format_filter(chat.filter)),
                author=t(lang, "dest.feed.author"),
                self_url=feed_rules.feed_url(self._base, token),
                lang=lang,
                updated=updated,
                entries=tuple(entries),
            )
        )
        tag = feeds.etag(body)
        headers = {
            "ETag": tag,
            "Last-Modified": feeds.http_date(updated),
            "Cache-Control": CACHE_CONTROL,
            "Referrer-Policy": "no-referrer",
            "X-Robots-Tag": "noindex",
        }
        if feeds.not_modified(
            tag=tag,
            last_modified=updated,
            if_none_match=request.headers.get("If-None-Match"),
            if_modified_since=request.headers.get("If-Modified-Since"),
        ):
            return web.Response(status=304, headers=headers)
        return web.Response(body=body, content_type=CONTENT_TYPE, charset="utf-8", headers=headers)


def _not_found() -> web.Response:
    return web.Response(status=404, text="not found", headers={"Cache-Control": "no-store"})

"""The replies of the Telegram channel: sent, edited, answered, their failures logged.

The channel's inbound handlers (:mod:`~bot.channels.telegram.buttons`,
:mod:`~bot.channels.telegram.channel`) build on :class:`ChannelReplies`.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Awaitable, Callable

from telegram import (
    Bot,
    CallbackQuery,
    Chat,
    ChatMember,
    LinkPreviewOptions,
    Message,
)
from telegram import error as tg_error
from telegram.constants import ParseMode

from bot import render
from bot.channels.telegram.client import (
    ADMIN_CACHE_MAX,
    ADMIN_CACHE_SECONDS,
    CHART_FILENAME,
    GROUP_CHAT_INTERVAL,
    MAX_ALERT_CHARS,
    MAX_CAPTION_CHARS,
    PRIVATE_CHAT_INTERVAL,
    is_not_modified,
    log,
    log_extra,
    redact,
    topic_chat_id,
    topic_of,
    translate_error,
)
from bot.channels.telegram.payload import payload
from bot.channels.telegram.sender import keyboard_markup, post_message
from bot.channels.telegram.settings import TelegramSettings
from bot.commands import Caller, CommandCore
from bot.delivery.replies import Replies
from bot.i18n import negotiate
from bot.models import (
    Chart,
    ChatKind,
    Outgoing,
    Platform,
    Reply,
)
from bot.render import charts


class ChannelReplies:
    """What every handler of the channel uses to answer: set up by
    :class:`~bot.channels.telegram.channel.TelegramChannel`."""

    _settings: TelegramSettings
    _replies: Replies
    _core: CommandCore
    _bot: Bot
    _admin_cache: dict[tuple[int, int], tuple[float, bool]]
    _paid: bool

    @property
    def _token(self) -> str | None:
        token = self._settings.telegram_bot_token
        return token.get_secret_value() if token is not None else None

    def _log_failure(self, what: str, chat_id: int) -> None:
        """Log the exception being handled, its traceback redacted here, whatever the
        logging set-up (a library message may carry a request URL)."""
        exc = sys.exception()
        trace = "".join(traceback.format_exception(exc)) if exc is not None else ""
        log.error(
            "telegram: %s failed: %s",
            what,
            redact(f"{type(exc).__name__}: {exc}", self._token),
            extra={**log_extra(chat_id), "error": redact(trace, self._token)},
        )

    def _fallback_lang(self, caller: Caller) -> str:
        return negotiate(caller.language_code, default=self._settings.default_language)

    async def _can_manage(self, chat_id: int, user_id: int) -> bool:
        key = (chat_id, user_id)
        now = time.monotonic()
        cached = self._admin_cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        member = await self._bot.get_chat_member(chat_id, user_id)
        allowed = member.status in (ChatMember.OWNER, ChatMember.ADMINISTRATOR)
        if len(self._admin_cache) >= ADMIN_CACHE_MAX:
            self._admin_cache = {k: v for k, v in self._admin_cache.items() if v[0] > now}
            if len(self._admin_cache) >= ADMIN_CACHE_MAX:
                self._admin_cache.clear()
        self._admin_cache[key] = (now + ADMIN_CACHE_SECONDS, allowed)
        return allowed

    async def _reply(self, chat_id: int, reply: Reply, *, thread_id: int | None) -> None:
        for part in render.reply_messages(Platform.TELEGRAM, reply):
            await self._send_reply(chat_id, part, thread_id=thread_id)
        if reply.chart is not None:
            await self._send_chart(chat_id, reply.chart, thread_id=thread_id)

    async def _send_chart(self, chat_id: int, chart: Chart, *, thread_id: int | None) -> None:
        """The chart of a reply, after its text: a photo (``sendPhoto``, uploaded) captioned
        with the chart's alt text, in plain text. The text went first and says it all; a
        chart that cannot be drawn or sent is logged, once, and nothing else happens."""
        png = await charts.picture(chart)
        if png is None:
            return

        async def post() -> int:
            try:
                message = await self._bot.send_photo(
                    chat_id,
                    photo=png,
                    filename=CHART_FILENAME,
                    caption=chart.alt[:MAX_CAPTION_CHARS],
                    message_thread_id=thread_id,
                )
            except tg_error.TelegramError as exc:
                raise translate_error(exc, token=self._token, method="sendPhoto") from None
            return message.message_id

        interval = PRIVATE_CHAT_INTERVAL if chat_id > 0 else GROUP_CHAT_INTERVAL
        await self._replies.send(post, chat=str(chat_id), interval=interval)

    async def _send_reply(self, chat_id: int, part: Outgoing, *, thread_id: int | None) -> None:
        """Send one part of a reply through the platform's pacing (see ``bot.delivery.pacing``)."""

        async def post() -> int:
            try:
                return await post_message(
                    self._bot, chat_id=chat_id, message=part, thread_id=thread_id, paid=self._paid
                )
            except tg_error.TelegramError as exc:
                raise translate_error(exc, token=self._token, method="sendMessage") from None

        # A user's private chat has the user's (positive) id; groups have negative ids.
        interval = PRIVATE_CHAT_INTERVAL if chat_id > 0 else GROUP_CHAT_INTERVAL
        await self._replies.send(post, chat=str(chat_id), interval=interval)

    async def _edit(self, message: Message, reply: Reply) -> None:
        """Show ``reply`` in place of the message; parts beyond the first follow it."""
        chat_id, message_id = message.chat.id, message.message_id
        parts = render.reply_messages(Platform.TELEGRAM, reply)
        if not parts:
            return
        first, rest = parts[0], parts[1:]
        markup = payload(first).markup if not rest else None
        try:
            await self._bot.edit_message_text(
                first.text,
                chat_id=chat_id,
                message_id=message_id,
                parse_mode=None if first.plain else ParseMode.HTML,
                link_preview_options=LinkPreviewOptions(is_disabled=True),
                reply_markup=keyboard_markup(markup),
            )
        except tg_error.BadRequest as exc:
            if not is_not_modified(exc):
                log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
        except tg_error.TelegramError as exc:
            log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
        for part in rest:
            await self._send_reply(chat_id, part, thread_id=topic_of(message))

    async def _edit_rich(self, message: Message, part: Outgoing) -> bool:
        """A rich message edited in place: ``editMessageText`` takes ``rich_message``
        instead of ``text`` (https://core.telegram.org/bots/api#editmessagetext, Bot API
        10.1: "text ... required if rich_message isn't specified"); the toggle is a buttons
        block inside it. python-telegram-bot 22.8 knows the method but not the field: the
        text is None (it drops None parameters) and the field goes in ``api_kwargs``.

        False when Telegram refused the edit (the chat no longer takes rich messages): the
        caller then sends the digest as new HTML messages."""
        try:
            await self._bot.edit_message_text(
                None,  # type: ignore[arg-type]
                chat_id=message.chat.id,
                message_id=message.message_id,
                api_kwargs={"rich_message": payload(part).rich},
            )
        except tg_error.BadRequest as exc:
            if is_not_modified(exc):
                return True
            log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
            return False
        except tg_error.TelegramError as exc:
            log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
        return True

    async def _edit_parts(self, message: Message, parts: list[Outgoing]) -> None:
        first = parts[0]
        try:
            await self._bot.edit_message_text(
                first.text,
                chat_id=message.chat.id,
                message_id=message.message_id,
                parse_mode=None if first.plain else ParseMode.HTML,
                link_preview_options=LinkPreviewOptions(is_disabled=True),
                reply_markup=keyboard_markup(payload(first).markup),
            )
        except tg_error.BadRequest as exc:
            if not is_not_modified(exc):
                log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
        except tg_error.TelegramError as exc:
            log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))

    async def _answer(
        self, query: CallbackQuery, *, alert: str | None = None, toast: str | None = None
    ) -> None:
        try:
            if alert:
                await query.answer(text=alert[:MAX_ALERT_CHARS], show_alert=True)
            elif toast:
                await query.answer(text=toast[:MAX_ALERT_CHARS])
            else:
                await query.answer()
        except tg_error.TelegramError as exc:
            log.info("telegram: could not answer a button: %s", redact(str(exc), self._token))


def caller_of(
    chat: Chat,
    *,
    topic: int | None,
    user_id: int,
    language_code: str | None,
    can_manage: Callable[[], Awaitable[bool]],
) -> Caller:
    """Who wrote in ``chat`` (or its forum ``topic``) or pressed a button there, for the
    command core; ``can_manage`` is asked only in groups."""
    group = chat.type != Chat.PRIVATE  # group, supergroup or channel
    return Caller(
        platform=Platform.TELEGRAM,
        chat_id=topic_chat_id(chat.id, topic),
        user_id=str(user_id),
        chat_kind=ChatKind.GROUP if group else ChatKind.PRIVATE,
        chat_title=chat.title if group else None,
        language_code=language_code,
        can_manage=can_manage if group else None,
    )

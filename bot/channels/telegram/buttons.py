"""The Telegram channel's buttons (callback queries): votes, the language toggle, the
feedback reset and a broadcast's confirmation."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from telegram import (
    CallbackQuery,
    Message,
    Update,
)

from bot import render
from bot.channels.telegram.client import VOTE_TOAST_WAIT_SECONDS, HandlerContext, topic_of
from bot.channels.telegram.payload import payload
from bot.channels.telegram.replies import ChannelReplies, caller_of
from bot.commands import FEEDBACK_RESET, TOGGLE, Caller
from bot.commands.broadcast import CANCEL as BROADCAST_CANCEL
from bot.commands.broadcast import SEND as BROADCAST_SEND
from bot.commands.settings_page import OPEN_PRIVATELY
from bot.i18n import t
from bot.models import (
    Platform,
    Reply,
    Toast,
)
from bot.render import toggle, votes


class ButtonHandlers(ChannelReplies):
    """The callback queries of :class:`~bot.channels.telegram.channel.TelegramChannel`."""

    async def _on_callback(self, update: Update, _context: HandlerContext) -> None:
        """A button press: answered first, then acted on.

        Telegram shows a spinner until the query is answered and refuses an answer that
        comes too late ("query is too old"), so the answer goes out before any database
        work or edit. A press the user may not make is refused in that answer, as an alert,
        and the message stays as it is: whether they may is asked of Telegram (group
        administrators) or of the settings (broadcast admins), never of the database.
        """
        query = update.callback_query
        if query is None:
            return
        message = query.message
        if query.from_user.is_bot or query.data is None or not isinstance(message, Message):
            await self._answer(query)
            return
        data, chat, user = query.data, message.chat, query.from_user

        async def can_manage() -> bool:
            return await self._can_manage(chat.id, user.id)

        caller = caller_of(
            chat,
            topic=topic_of(message),
            user_id=user.id,
            language_code=user.language_code,
            can_manage=can_manage,
        )
        lang = self._fallback_lang(caller)
        if data.startswith(votes.VOTE):
            await self._on_vote(query, caller, data, chat_id=chat.id, lang=lang)
            return
        if data.startswith(toggle.TOGGLE):
            await self._on_toggle(query, message, caller, data, lang=lang)
            return
        if data == OPEN_PRIVATELY:
            await self._on_open_privately(query, caller, lang=lang)
            return
        try:
            refusal = await self._refusal(caller, data, lang=lang)
        except Exception:
            self._log_failure("button", chat.id)
            await self._answer(query, alert=t(lang, "cmd.error"))
            return
        await self._answer(query, alert=refusal)
        try:
            reply = await self._core.handle_action(caller, data)
        except Exception:
            self._log_failure("button", chat.id)
            await self._reply(
                chat.id, Reply(lang, t(lang, "cmd.error")), thread_id=topic_of(message)
            )
            return
        if reply is None or refusal is not None or isinstance(reply, Toast):
            return  # refused: the core logged it; the message stays exactly as it was
        await self._edit(message, reply)

    async def _on_open_privately(self, query: CallbackQuery, caller: Caller, *, lang: str) -> None:
        """A group's "Open settings": the link goes to the presser's private chat with the
        bot, where nobody else sees it; the toast says where it went, or why it did not."""
        try:
            answer = await self._core.open_page_privately(caller)
        except Exception:
            self._log_failure("settings link", query.message.chat.id if query.message else 0)
            await self._answer(query, alert=t(lang, "cmd.error"))
            return
        if isinstance(answer, Toast):
            await self._answer(query, alert=answer.text)
            return
        await self._reply(int(answer.chat_id), answer.reply, thread_id=None)
        await self._answer(query, toast=answer.toast.text)

    async def _on_vote(
        self, query: CallbackQuery, caller: Caller, data: str, *, chat_id: int, lang: str
    ) -> None:
        """A 👍 or 👎: the answer is the toast saying what the press did ("Noted: more like
        this", or the vote taken back), when the vote is stored within
        ``VOTE_TOAST_WAIT_SECONDS``; otherwise a plain answer goes first and the vote is
        stored after it, so that the press never ends in "query is too old"."""
        vote = asyncio.ensure_future(self._core.handle_action(caller, data))
        done, _ = await asyncio.wait({vote}, timeout=VOTE_TOAST_WAIT_SECONDS)
        if not done:
            await self._answer(query)
        try:
            reply = await vote
        except Exception:
            self._log_failure("vote", chat_id)
            if done:
                await self._answer(query, alert=t(lang, "cmd.error"))
            return
        if not done:
            return
        if isinstance(reply, Toast):
            await self._answer(query, toast=reply.text)
        elif reply is not None:  # refused (a malformed or forged vote): said as an alert
            await self._answer(query, alert=reply.text)
        else:
            await self._answer(query)

    async def _on_toggle(
        self, query: CallbackQuery, message: Message, caller: Caller, data: str, *, lang: str
    ) -> None:
        """The language toggle: the digest in the other language, in place of the message
        (https://core.telegram.org/bots/api#editmessagetext, the same keyboard with the
        toggle back). A digest of several messages in either language cannot be shown in
        one: then its messages in the other language follow as new messages."""
        await self._answer(query)
        try:
            answer = await self._core.toggle_language(caller, data)
        except Exception:
            self._log_failure("toggle", message.chat.id)
            await self._reply(
                message.chat.id, Reply(lang, t(lang, "cmd.error")), thread_id=topic_of(message)
            )
            return
        if isinstance(answer, Reply):
            await self._reply(message.chat.id, answer, thread_id=topic_of(message))
            return
        back = toggle.back(answer.digest, answer.row_id)
        parts = toggle.with_toggle(
            Platform.TELEGRAM, render.digest_messages(Platform.TELEGRAM, answer.digest), back
        )
        # A rich message: all in one.
        rich = message.text is None and payload(parts[0]).rich is not None
        if rich and await self._edit_rich(message, parts[0]):
            return
        if len(parts) == 1 and message.text is not None:
            await self._edit_parts(message, parts)
            return
        for part in parts:
            await self._send_reply(
                message.chat.id,
                replace(part, payload=replace(payload(part), rich=None, rich_covered=False)),
                thread_id=topic_of(message),
            )

    async def _refusal(self, caller: Caller, data: str, *, lang: str) -> str | None:
        """The alert refusing this press, or None when the user may press it."""
        if data.startswith((BROADCAST_SEND, BROADCAST_CANCEL)):
            admins = {str(admin) for admin in self._settings.telegram_admin_ids}
            return None if caller.user_id in admins else t(lang, "cmd.admins_only")
        if data.startswith((TOGGLE, FEEDBACK_RESET)) and caller.can_manage is not None:
            return None if await caller.can_manage() else t(lang, "cmd.group_admins_only")
        return None

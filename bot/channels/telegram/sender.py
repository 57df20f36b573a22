"""Outgoing messages -> the Bot API: the delivery engine's :class:`TelegramSender`, and the
one send of a message that the replies to commands share."""

from __future__ import annotations

import json

import orjson
from telegram import (
    Bot,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
)
from telegram import error as tg_error
from telegram.constants import ParseMode
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from bot.channels.telegram.client import (
    GROUP_CHAT_INTERVAL,
    PRIVATE_CHAT_INTERVAL,
    RESEND_READ_TIMEOUT,
    RICH_REFUSALS_FOR_ALL,
    RichMode,
    is_not_found,
    log,
    redact,
    split_chat_id,
    translate_error,
)
from bot.channels.telegram.payload import payload
from bot.delivery.pacing import Pacing
from bot.delivery.sender import Attempt, BaseSender
from bot.errors import (
    TransientError,
)
from bot.models import (
    ChatKind,
    ChatSettings,
    Outgoing,
    Platform,
)


class TelegramSender(BaseSender):
    """Sends rendered messages to Telegram chats (satisfies ``bot.delivery.engine.Sender``).

    ``rich`` is ``TELEGRAM_RICH_MESSAGES`` (the deployment's default is ``auto``; a sender
    made without it sends HTML only). A re-send of a message whose send had no answer
    waits ``resend_timeout`` for its answer (the bot's read timeout for the rest)."""

    platform = Platform.TELEGRAM

    def __init__(
        self,
        bot: Bot,
        *,
        rate_per_second: float,
        paid_broadcast: bool = False,
        rich: RichMode = "off",
        resend_timeout: float = RESEND_READ_TIMEOUT,
    ) -> None:
        self._bot = bot
        self._resend_timeout = resend_timeout
        self._rate = rate_per_second
        self._paid = paid_broadcast
        # The platform's pace and chats' slots, shared with the replies to commands.
        self.pacing: Pacing = Pacing(rate_per_second)
        # Rich digests (see :meth:`send`). What was learnt lives in this process only: after
        # a restart each refusing chat refuses once more, and then gets HTML again at once.
        self._rich = rich
        self._rich_for_none = rich == "off"  # every chat gets HTML
        self._rich_refused: set[str] = set()  # chats that get HTML ("auto")
        self._refusals_in_a_row: set[str] = set()
        # chat -> whether its latest digest went as a rich message (its covered parts are
        # then not sent); one entry per chat that had a digest with a rich form
        self._went_rich: dict[str, bool] = {}

    def rich_for(self, chat_id: str) -> bool:
        """Whether a digest to ``chat_id`` goes as a rich message, as far as is known now."""
        if self._rich_for_none:
            return False
        return self._rich == "on" or self.slot_key(chat_id) not in self._rich_refused

    @property
    def rate_per_second(self) -> float | None:
        return self._rate

    def interval(self, chat: ChatSettings) -> float:
        return GROUP_CHAT_INTERVAL if chat.kind == ChatKind.GROUP else PRIVATE_CHAT_INTERVAL

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        """Send one message; return its message id. ``thread`` is Slack's: on Telegram a
        forum topic is part of the chat id (:func:`split_chat_id`).

        A digest's first message may carry its rich form (its payload's ``rich``): when the chat
        may get rich messages (:meth:`rich_for`) that goes instead (``sendRichMessage``), and
        the digest's other messages (``rich_covered``) are then not sent (``None``). When
        the server refuses it -- 404, a server without the method, or 400 -- the HTML goes
        at once instead, and the rest of the digest as HTML after it; with ``auto`` the
        refusal is remembered, for the chat (400) or for every chat (404, or
        :data:`RICH_REFUSALS_FOR_ALL` chats refusing in a row).

        Raises:
            DeliveryError: a subclass saying what to do (see :func:`translate_error`); a
                closed or deleted topic is ``ChatGone`` for that topic alone.
        """
        chat_ref, topic = split_chat_id(chat_id)
        key = self.slot_key(chat_id)
        timeout = self._resend_timeout if attempt is not None and attempt.resend else None
        try:
            rich = payload(message)
            if rich.rich_covered:
                # Covered by the digest's rich message if that went; when this process did
                # not send the digest's first message (restarted since), as it would now.
                went_rich = self._went_rich.get(key)
                if went_rich if went_rich is not None else self.rich_for(chat_id):
                    return None
            if rich.rich is not None:
                self._went_rich[key] = False
                if self.rich_for(chat_id):
                    rich_id = await self._send_rich(
                        chat_ref, rich.rich, thread_id=topic, read_timeout=timeout
                    )
                    if rich_id is not None:
                        self._went_rich[key] = True
                        return str(rich_id)
            message_id = await post_message(
                self._bot,
                chat_id=chat_ref,
                message=message,
                thread_id=topic,
                paid=self._paid,
                read_timeout=timeout,
            )
        except tg_error.TelegramError as exc:
            raise translate_error(exc, token=self._bot.token, method="sendMessage") from None
        except RuntimeError as exc:
            if "not initialized" not in str(exc):
                raise
            # The connections were closed (shutting down): the message stays queued.
            raise TransientError(
                "closed: the Telegram connections are shut down", code="closed"
            ) from None
        return str(message_id)

    def slot_key(self, chat_id: str) -> str:
        """The key of the chat's per-chat limit: a forum topic counts as its group."""
        return str(split_chat_id(chat_id)[0])

    async def _send_rich(
        self, chat_ref: int | str, rich: str, *, thread_id: int | None, read_timeout: float | None
    ) -> int | None:
        """``sendRichMessage`` of ``rich`` (the JSON text of an ``InputRichMessage``); the
        message id, or ``None`` when the server refused the method or the message.

        python-telegram-bot 22.8 has no method for it: the request is posted through the
        bot's own request object, as :func:`post_message` posts ``sendMessage`` (its errors
        are python-telegram-bot's own; ``Bot.do_api_request`` cost 5 % of a run's CPU at
        1,000 messages a second on top, to build the same parameters).

        Raises:
            telegram.error.TelegramError: anything but a refusal of the rich message itself
                (a chat gone, a closed topic, a rate limit, the network...).
        """
        parameters = {
            "chat_id": str(chat_ref),
            "rich_message": rich,
            "message_thread_id": None if thread_id is None else str(thread_id),
            "allow_paid_broadcast": "true" if self._paid else None,
        }
        data = RequestData(
            [
                RequestParameter(name, value, None)
                for name, value in parameters.items()
                if value is not None
            ]
        )
        key = str(chat_ref)
        try:
            result = await self._bot.request.post(
                f"{self._bot.base_url}/sendRichMessage", data, **_timeouts(read_timeout)
            )
        except tg_error.BadRequest as exc:
            if translate_error(exc).code != "bad_request":
                raise  # the chat or its topic is gone: no message goes there
            self._refused(key, everywhere=False, reason=redact(str(exc), self._bot.token))
            return None
        except (tg_error.EndPointNotFound, tg_error.InvalidToken) as exc:
            if not is_not_found(exc):
                raise  # 401: the token itself
            self._refused(key, everywhere=True, reason=redact(str(exc), self._bot.token))
            return None
        self._refusals_in_a_row.clear()
        if not isinstance(result, dict):
            raise tg_error.TelegramError(f"sendRichMessage answered {type(result).__name__}")
        return int(result["message_id"])

    def _refused(self, key: str, *, everywhere: bool, reason: str) -> None:
        """Remember a refused rich message (``auto``); log it once."""
        if self._rich != "auto":
            log.info("rich digest refused, sent as HTML: %s", reason)
            return
        self._refusals_in_a_row.add(key)
        if everywhere or len(self._refusals_in_a_row) >= RICH_REFUSALS_FOR_ALL:
            if not self._rich_for_none:
                log.warning("rich digests refused by the server, HTML from now on: %s", reason)
            self._rich_for_none = True
            return
        if key not in self._rich_refused:
            log.info("rich digests refused in a chat, HTML there from now on: %s", reason)
        self._rich_refused.add(key)


async def post_message(
    bot: Bot,
    *,
    chat_id: int | str,
    message: Outgoing,
    thread_id: int | None = None,
    paid: bool = False,
    read_timeout: float | None = None,
) -> int:
    """``sendMessage`` with the parameters :func:`send_outgoing` passes, posted through the
    bot's own request object; returns the message id.

    ``Bot.send_message`` makes a :class:`telegram.Message` of the answer, entities and all,
    and the sender and the replies to commands read only its id: for a digest that object
    cost about a third of the CPU of a whole delivery (``bench/fanout.py``). The request and
    its errors are python-telegram-bot's own (``BaseRequest.post``); a test compares the
    parameters on the wire with those of ``Bot.send_message``. ``paid`` sends
    ``allow_paid_broadcast`` (past 30 messages a second, charged in Stars); ``read_timeout``
    replaces the bot's own (None: the bot's).

    Raises:
        telegram.error.TelegramError: as ``Bot.send_message`` raises it.
    """
    # Every value goes as the text python-telegram-bot would make of it (a number's digits,
    # ``true``, the JSON of the keyboard and of the link preview options). Parsing the
    # keyboard into an InlineKeyboardMarkup only to turn it back into a dict cost a third of
    # the CPU of a delivery (``bench/fanout.py``); ``RequestParameter.from_input`` checked
    # each value against a dozen types, and the body encoded the numbers once more.
    markup = payload(message).markup
    parameters = {
        "chat_id": str(chat_id),
        "text": message.text,
        "parse_mode": None if message.plain else ParseMode.HTML.value,
        "link_preview_options": _NO_PREVIEW_JSON,
        "reply_markup": orjson.dumps(markup).decode() if markup else None,
        "message_thread_id": None if thread_id is None else str(thread_id),
        "allow_paid_broadcast": "true" if paid else None,
    }
    data = RequestData(
        [
            RequestParameter(name, value, None)
            for name, value in parameters.items()
            if value is not None
        ]
    )
    result = await bot.request.post(f"{bot.base_url}/sendMessage", data, **_timeouts(read_timeout))
    if not isinstance(result, dict):
        raise tg_error.TelegramError(f"sendMessage answered {type(result).__name__}")
    return int(result["message_id"])


async def send_outgoing(
    bot: Bot, *, chat_id: int | str, message: Outgoing, thread_id: int | None = None
) -> Message:
    """``sendMessage`` of one :class:`Outgoing`: HTML unless plain, no link previews."""
    return await bot.send_message(
        chat_id,
        message.text,
        parse_mode=None if message.plain else ParseMode.HTML,
        link_preview_options=_NO_PREVIEW,
        reply_markup=keyboard_markup(payload(message).markup),
        message_thread_id=thread_id,
    )


_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
_NO_PREVIEW_JSON = json.dumps(_NO_PREVIEW.to_dict())


def _timeouts(read_timeout: float | None) -> dict[str, float]:
    """The keyword that replaces the request's read timeout, when there is one (PTB reads
    ``read_timeout=None`` as no timeout at all)."""
    return {} if read_timeout is None else {"read_timeout": read_timeout}


def keyboard_markup(markup: dict[str, object] | None) -> InlineKeyboardMarkup | None:
    """A payload's ``markup`` as python-telegram-bot's keyboard; None when there is none."""
    return InlineKeyboardMarkup.de_json(markup, None) if markup else None


__all__ = [
    "TelegramSender",
    "keyboard_markup",
    "post_message",
    "send_outgoing",
]

"""Telegram updates -> the command core: long polling or the webhook, commands, the
menus, a group's migration and the bot's removal."""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from telegram import (
    Bot,
    BotCommand,
    BotCommandScope,
    BotCommandScopeAllChatAdministrators,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    ChatMember,
    Message,
    MessageEntity,
    Update,
)
from telegram import error as tg_error
from telegram.ext import (
    Application,
    ApplicationBuilder,
    BaseUpdateProcessor,
    CallbackQueryHandler,
    ChatMemberHandler,
    MessageHandler,
    filters,
)

from bot.channels.telegram.buttons import ButtonHandlers
from bot.channels.telegram.client import (
    ALLOWED_UPDATES,
    COMMAND_NAME_RE,
    CONCURRENT_UPDATES,
    LONG_POLL_SECONDS,
    MAX_COMMAND_DESCRIPTION,
    SEEN_UPDATES_MAX,
    HandlerContext,
    log,
    log_extra,
    redact,
    topic_of,
    translate_error,
)
from bot.channels.telegram.replies import caller_of
from bot.channels.telegram.settings import TelegramSettings
from bot.commands import Caller, CommandCore, registry
from bot.delivery.pacing import Pacing
from bot.delivery.replies import Replies
from bot.errors import (
    ConfigError,
)
from bot.i18n import LANGUAGES, SOURCE, t
from bot.keyed import KeyedLocks, SeenKeys
from bot.models import (
    Platform,
    Reply,
)

_App: TypeAlias = Application[Any, Any, Any, Any, Any, Any]

# ---------------------------------------------------------------------------- inbound


class _PerChatProcessor(BaseUpdateProcessor):
    """Updates of different chats run concurrently; updates of one chat run in order.

    Two taps on a tag picker must not both read the filter before either writes it.
    """

    def __init__(self, max_concurrent_updates: int) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: KeyedLocks[int] = KeyedLocks()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None:
            await coroutine
            return
        async with self._locks.hold(chat.id):
            await coroutine

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None


class TelegramChannel(ButtonHandlers):
    """Telegram updates -> the command core -> replies in the chat.

    Long polling when ``TELEGRAM_WEBHOOK_URL`` is unset; otherwise the webhook is registered
    with Telegram and the HTTP server hands each request to :meth:`process_webhook`.

    The :class:`telegram.Bot` is shared with :class:`TelegramSender`; :meth:`stop` closes its
    connections, so stop the channel after the delivery engine (a send after that stays
    queued as a transient failure).
    """

    def __init__(
        self,
        *,
        settings: TelegramSettings,
        core: CommandCore,
        bot: Bot,
        pacing: Pacing | None = None,
    ) -> None:
        self._settings = settings
        # Replies share the sender's pacing (``TelegramSender.pacing``) when given it.
        self._replies = Replies(
            pacing or Pacing(settings.telegram_rate_per_second), platform=Platform.TELEGRAM.value
        )
        self._core = core
        self._bot = bot
        self._username = ""
        self._admin_cache: dict[tuple[int, int], tuple[float, bool]] = {}
        self._webhook_mode = settings.telegram_webhook_url is not None
        self._seen_updates: SeenKeys[int] = SeenKeys(ttl=None, limit=SEEN_UPDATES_MAX)
        self._paid = settings.telegram_paid_broadcast
        builder = (
            ApplicationBuilder()
            .bot(bot)
            .job_queue(None)
            .concurrent_updates(_PerChatProcessor(CONCURRENT_UPDATES))
        )
        if self._webhook_mode:
            builder = builder.updater(None)
        self.application: _App = builder.build()
        on_message = filters.UpdateType.MESSAGE
        self.application.add_handler(MessageHandler(on_message & filters.COMMAND, self._on_command))
        self.application.add_handler(
            MessageHandler(
                on_message & filters.TEXT & ~filters.COMMAND & filters.ChatType.PRIVATE,
                self._on_text,
            )
        )
        self.application.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self._on_migrate))
        self.application.add_handler(CallbackQueryHandler(self._on_callback))
        self.application.add_handler(
            ChatMemberHandler(self._on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER)
        )
        self.application.add_error_handler(self._on_error)

    @property
    def username(self) -> str:
        """The bot's @username without the @, known after :meth:`start`."""
        return self._username

    # Lifecycle --------------------------------------------------------------------------

    async def start(self, *, poll: bool = True) -> None:
        """Connect (getMe), set the command menu, then poll or register the webhook.

        With ``poll`` false in polling mode, updates are not fetched until
        :meth:`start_polling` (only the leader of several replicas long-polls).

        Raises:
            ConfigError: Telegram rejected the token.
            DeliveryError: Telegram could not be reached (a ``TransientError``) or refused a
                call; the reason says which, never with the token.
        """
        try:
            await self.application.initialize()
        except tg_error.TelegramError as exc:
            await self._bot.shutdown()
            if isinstance(exc, tg_error.InvalidToken):
                raise ConfigError(
                    "TELEGRAM_BOT_TOKEN", "was rejected by Telegram; check it with @BotFather"
                ) from None
            raise translate_error(exc, token=self._token) from None
        self._username = self._bot.username
        await self._set_commands()
        try:
            await self.application.start()
            if self._webhook_mode:
                await self._bot.set_webhook(
                    url=self._settings.telegram_webhook_url or "",
                    secret_token=self._secret,
                    allowed_updates=list(ALLOWED_UPDATES),
                )
                log.info("telegram: webhook mode as @%s", self._username)
            elif poll:
                await self.start_polling()
        except tg_error.TelegramError as exc:
            await self.stop()
            raise translate_error(exc, token=self._token) from None

    @property
    def polling(self) -> bool:
        updater = self.application.updater
        return updater is not None and updater.running

    async def start_polling(self) -> None:
        """Fetch updates by long polling (no-op in webhook mode or when already polling)."""
        updater = self.application.updater
        if updater is None or updater.running:
            return
        await updater.start_polling(
            timeout=LONG_POLL_SECONDS,
            allowed_updates=list(ALLOWED_UPDATES),
            drop_pending_updates=False,
            error_callback=self._on_polling_error,
        )
        log.info("telegram: long polling as @%s", self._username)

    async def stop_polling(self) -> None:
        """Stop fetching updates; sending and webhooks go on."""
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()
            log.info("telegram: stopped long polling")

    async def stop(self) -> None:
        """Stop fetching updates, finish the ones being handled, close the connections."""
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()
        if self.application.running:
            await self.application.stop()
        await self.application.shutdown()

    async def process_webhook(self, body: bytes, secret_header: str | None) -> int:
        """One webhook request: the HTTP status to answer. Never raises.

        401 when the ``X-Telegram-Bot-Api-Secret-Token`` header does not match the secret
        (nothing is processed; settings make the secret required in webhook mode); 400 when
        the body is not an update, whatever is wrong with it (not UTF-8, not JSON, nested too
        deeply to parse, not an object, no integer ``update_id``, fields of the wrong type);
        503 when the channel is not running (Telegram retries later); 200 once the update is
        queued for the handlers, or when its ``update_id`` was already queued by this process
        (Telegram sends an update again when it did not see an answer: it is acted on once).
        The update ids seen are kept in memory, the last :data:`SEEN_UPDATES_MAX` of them, per
        process: a restart or another replica does not know them.
        """
        secret = self._secret
        if secret is None or not hmac.compare_digest(
            (secret_header or "").encode(), secret.encode()
        ):
            return 401
        update = self._parse_update(body)
        if update is None:
            return 400
        if not self.application.running:
            return 503
        if not self._seen_updates.add(update.update_id, now=time.monotonic()):
            log.info("telegram: update %d seen before; not acted on again", update.update_id)
            return 200
        await self.application.update_queue.put(update)
        return 200

    def _parse_update(self, body: bytes) -> Update | None:
        """The update in a webhook body, or None (logged, one line, no traceback)."""
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or type(data.get("update_id")) is not int:
                raise ValueError("not an update object")
            return Update.de_json(data, self._bot)
        except RecursionError:
            reason = "nested too deeply"
        except Exception as exc:  # any malformed body is the sender's error, never a 500
            reason = type(exc).__name__
        log.warning("telegram: webhook body is not an update (%s); answered 400", reason)
        return None

    @property
    def _secret(self) -> str | None:
        secret = self._settings.telegram_webhook_secret
        return secret.get_secret_value() if secret is not None else None

    async def _set_commands(self) -> None:
        """The command menus: every command in private chats and for group administrators,
        the read-only ones (``Menu.GROUP`` in :mod:`bot.commands.registry`) for other group
        members; one menu per language of the catalogues, the source language's for users of
        any other."""
        for lang in LANGUAGES:
            language_code = None if lang == SOURCE else lang
            for scope, commands in menu_scopes(lang):
                try:
                    await self._bot.set_my_commands(
                        commands, scope=scope, language_code=language_code
                    )
                except tg_error.TelegramError as exc:
                    log.warning(
                        "telegram: could not set the command menu (%s, %s): %s",
                        lang,
                        scope.type,
                        redact(str(exc), self._token),
                    )
                    break  # the other scopes would fail alike

    def _on_polling_error(self, exc: tg_error.TelegramError) -> None:
        log.warning("telegram: polling failed, retrying: %s", redact(str(exc), self._token))

    # Handlers ---------------------------------------------------------------------------

    async def _on_command(self, update: Update, _context: HandlerContext) -> None:
        message = update.message
        if message is None or message.text is None or not self._from_person(message):
            return
        if message.forward_origin is not None:
            return  # a forwarded command is someone else's words
        text = self._own_command(message)
        if text is None:
            return
        await self._run(message, lambda caller: self._core.handle(caller, text))

    async def _on_text(self, update: Update, _context: HandlerContext) -> None:
        message = update.message
        if message is None or not self._from_person(message):
            return
        await self._run(message, lambda caller: self._core.hint(caller))

    async def _run(self, message: Message, command: Callable[[Caller], Awaitable[Reply]]) -> None:
        chat, user = message.chat, message.from_user
        topic = topic_of(message)
        if user is None or user.is_bot:  # an anonymous administrator: the group itself

            async def group_itself() -> bool:
                return True

            caller = caller_of(
                chat, topic=topic, user_id=chat.id, language_code=None, can_manage=group_itself
            )
        else:
            user_id = user.id

            async def can_manage() -> bool:
                return await self._can_manage(chat.id, user_id)

            caller = caller_of(
                chat,
                topic=topic,
                user_id=user_id,
                language_code=user.language_code,
                can_manage=can_manage,
            )
        with self._replies.pacing.chats.expect(str(chat.id)):  # the reply goes first
            try:
                reply = await command(caller)
            except Exception:
                self._log_failure("command", chat.id)
                lang = self._fallback_lang(caller)
                reply = Reply(lang, t(lang, "cmd.error"))
            await self._reply(chat.id, reply, thread_id=topic)

    async def _on_migrate(self, update: Update, _context: HandlerContext) -> None:
        """A group became a supergroup: its chat moves to the new id at once.

        Telegram posts two service messages, ``migrate_to_chat_id`` in the old group and
        ``migrate_from_chat_id`` in the new supergroup (https://core.telegram.org/bots/api#message);
        either one moves the chat, the second finds nothing left to move.
        """
        message = update.message
        if message is None:
            return
        if message.migrate_to_chat_id is not None:
            old, new = message.chat.id, message.migrate_to_chat_id
        elif message.migrate_from_chat_id is not None:
            old, new = message.migrate_from_chat_id, message.chat.id
        else:
            return
        if await self._core.chat_moved(
            platform=Platform.TELEGRAM, old_chat_id=str(old), new_chat_id=str(new)
        ):
            log.info("telegram: group became supergroup %s; chat moved", new, extra=log_extra(old))

    async def _on_my_chat_member(self, update: Update, _context: HandlerContext) -> None:
        change = update.my_chat_member
        if change is None:
            return
        status = change.new_chat_member.status
        if status not in (ChatMember.BANNED, ChatMember.LEFT):
            return  # (re-)added: a later subscribe or resume makes the chat active again
        chat_id = str(change.chat.id)
        if await self._core.removed_from_chat(platform=Platform.TELEGRAM, chat_id=chat_id):
            log.info(
                "telegram: bot removed from chat; chat is now inactive", extra=log_extra(chat_id)
            )

    async def _on_error(self, update: object, context: HandlerContext) -> None:
        exc = context.error
        log.error(
            "telegram: unhandled error: %s: %s",
            type(exc).__name__,
            redact(str(exc), self._token),
            extra={"platform": "telegram"},
        )

    # Helpers ----------------------------------------------------------------------------

    def _from_person(self, message: Message) -> bool:
        user = message.from_user
        if user is None:
            return False
        if not user.is_bot:
            return True
        # An anonymous group administrator writes as the group itself.
        sender = message.sender_chat
        return sender is not None and sender.id == message.chat.id

    def _own_command(self, message: Message) -> str | None:
        """The command text without ``@ThisBot``; None when addressed to another bot."""
        text = message.text or ""
        entity = (message.entities or (None,))[0]
        if entity is None or entity.type != MessageEntity.BOT_COMMAND or entity.offset != 0:
            return None
        head = message.parse_entity(entity)
        name, at, target = head.partition("@")
        if at and target.lower() != self._username.lower():
            return None
        return name + text[len(head) :]


def menu_scopes(lang: str) -> list[tuple[BotCommandScope, list[BotCommand]]]:
    """Each menu scope with its commands in ``lang`` (Bot API setMyCommands: the narrowest
    scope that applies to a chat and user wins)."""
    everything = menu_commands(lang)
    reading = menu_commands(lang, group_member=True)
    return [
        (BotCommandScopeAllPrivateChats(), everything),
        (BotCommandScopeAllGroupChats(), reading),
        (BotCommandScopeAllChatAdministrators(), everything),
    ]


def menu_commands(lang: str, *, group_member: bool = False) -> list[BotCommand]:
    """The command menu in ``lang``, from the registry of commands help also lists
    (:mod:`bot.commands.registry`): each command's description is its help line's."""
    commands = []
    for command in registry.menu(group_member=group_member):
        if not COMMAND_NAME_RE.match(command.name):
            continue
        _usage, _, description = t(lang, command.line_key, p="/").partition(" — ")
        commands.append(BotCommand(command.name, description[:MAX_COMMAND_DESCRIPTION]))
    return commands


__all__ = ["TelegramChannel", "menu_commands", "menu_scopes"]

"""The console channel: chat with the bot in a terminal, and see what it would post.

One local chat, ``console:local``, speaks the same commands as Telegram and Slack through
the same core. Messages the delivery engine sends to console chats are printed as plain
text, so digests look as they would in a chat, without markup.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from bot import render
from bot.commands import Caller, CommandCore
from bot.i18n import t
from bot.models import ChatSettings, Outgoing, Platform

LOCAL_CHAT = "local"
PROMPT = "you> "
RULE = "─" * 60


class ConsoleSender:
    """Prints messages for console chats (satisfies ``bot.delivery.Sender``)."""

    platform = Platform.CONSOLE

    def __init__(self, *, out: TextIO | None = None) -> None:
        self._out = out or sys.stdout

    @property
    def rate_per_second(self) -> float | None:
        return None

    def interval(self, chat: ChatSettings) -> float:
        return 0.0

    async def send(self, chat_id: str, message: Outgoing, *, thread: str | None) -> str | None:
        self._out.write(f"\n{RULE}\n[to console:{chat_id}]\n{message.text}\n{RULE}\n")
        self._out.flush()
        return None


class ConsoleChannel:
    """A line-by-line chat on standard input and output."""

    def __init__(
        self,
        *,
        core: CommandCore,
        on_command: Callable[[], None] | None = None,
        stdin: TextIO | None = None,
        out: TextIO | None = None,
    ) -> None:
        self._core = core
        self._on_command = on_command
        self._in = stdin or sys.stdin
        self._out = out or sys.stdout
        self._caller = Caller(platform=Platform.CONSOLE, chat_id=LOCAL_CHAT, user_id=LOCAL_CHAT)

    async def run(self) -> None:
        """Read commands until end of input or ``/quit``."""
        reply = await self._core.handle(self._caller, "/start")
        self._print(render.reply_messages(Platform.CONSOLE, reply))
        self._out.write(t(reply.lang, "console.hint") + "\n")
        while True:
            self._out.write(PROMPT)
            self._out.flush()
            line = await self._readline()
            if not line:
                self._out.write("\n")
                return
            text = line.strip()
            if not text:
                continue
            if text.lstrip("/").lower() in ("quit", "exit"):
                return
            if not text.startswith("/"):
                text = "/" + text
            reply = await self._core.handle(self._caller, text)
            self._print(render.reply_messages(Platform.CONSOLE, reply))
            if self._on_command is not None:
                self._on_command()

    async def _readline(self) -> str:
        """The next line of input ("" at its end), read on a daemon thread.

        A daemon thread, not the loop's executor: a blocked ``readline`` must not keep the
        process alive when the service stops on a signal.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()

        def read() -> None:
            try:
                line = self._in.readline()
            except (OSError, ValueError):
                line = ""
            with contextlib.suppress(RuntimeError):  # the loop may be gone at exit
                loop.call_soon_threadsafe(_settle, future, line)

        threading.Thread(target=read, name="console-input", daemon=True).start()
        return await future

    def _print(self, messages: list[Outgoing]) -> None:
        for message in messages:
            self._out.write(f"bot> {message.text}\n")
        self._out.flush()


def _settle(future: asyncio.Future[str], line: str) -> None:
    if not future.done():
        future.set_result(line)

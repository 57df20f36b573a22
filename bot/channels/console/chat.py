"""The console's chat window and printer (see :mod:`bot.channels.console`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shutil
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from bot import render
from bot.channels.console.render import payload
from bot.commands import Caller, CommandCore, registry
from bot.delivery.sender import Attempt, BaseSender
from bot.i18n import t, tn
from bot.models import Button, ChatSettings, Outgoing, Platform, Reply, Toast
from bot.render import votes
from bot.store import files

LOCAL_CHAT = "local"
PROMPT = "you> "
RULE = "─" * 60
LOG_FILE = Path("data") / "trendbot.log"
MIN_WIDTH = 40  # narrower terminals are wrapped as if this wide
EXTRA_COMMANDS = ("press", "quit")
COMPLETION_TAGS = 200  # tags offered after /subscribe and /unsubscribe
log = logging.getLogger("bot.console")
# A vote typed at the prompt: +3 likes page 3 of the last pages shown, -3 dislikes it.
VOTE_RE = re.compile(r"[+-][1-9][0-9]{0,2}")


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes: Hangul, CJK and wide emoji take two,
    combining marks and zero-width characters none."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Cf", "Mn", "Me"):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def wrap(text: str, width: int) -> str:
    """``text`` wrapped at spaces to ``width`` terminal columns (wide characters count
    two), each line's own indent kept on its continuation lines; a word wider than a line
    is cut."""
    width = max(width, MIN_WIDTH)
    out: list[str] = []
    for line in text.split("\n"):
        if columns(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        current, used = indent, columns(indent)
        room = width - columns(indent)
        for word in line.split():
            size = columns(word)
            if used > columns(indent) and used + 1 + size <= width:
                current, used = f"{current} {word}", used + 1 + size
                continue
            if used > columns(indent):
                out.append(current)
                current, used = indent, columns(indent)
            while size > room:  # a word wider than the line: cut it
                cut, taken = 0, 0
                while cut < len(word) and taken + columns(word[cut]) <= room:
                    taken += columns(word[cut])
                    cut += 1
                out.append(indent + word[:cut])
                word = word[cut:]
                size = columns(word)
            current, used = indent + word, columns(indent) + size
        out.append(current)
    return "\n".join(out)


def indent_entries(text: str) -> str:
    """A digest as plain text with each entry's lines after the title indented, so the
    TL;DR reads under its title."""
    blocks = text.split("\n\n")
    shaped = [blocks[0]]
    for block in blocks[1:]:
        first, *rest = block.split("\n")
        shaped.append("\n".join([first, *("   " + line for line in rest)]))
    return "\n\n".join(shaped)


BOLD, NORMAL = "\x1b[1m", "\x1b[22m"  # ECMA-48 SGR 1 and 22: bold on, bold off


def embolden(text: str, *, header: bool) -> str:
    """Bold where the chat platforms bold: a digest's header (``header``) and each entry's
    title, that is the lines of a block before its indented ones. For a terminal only."""
    blocks = text.split("\n\n")
    shaped = []
    for index, block in enumerate(blocks):
        lines = block.split("\n")
        if index == 0 and not header:
            shaped.append(block)
            continue
        if index > 0 and lines[0].startswith("["):  # a row of buttons
            shaped.append(block)
            continue
        bold = True
        out = []
        for line in lines:
            bold = bold and not line.startswith("   ")
            out.append(f"{BOLD}{line}{NORMAL}" if bold and line else line)
        shaped.append("\n".join(out))
    return "\n\n".join(shaped)


def numbered(buttons: Iterable[Button], *, start: int = 1) -> str:
    """``[1 Send] [2 Cancel]``."""
    return " ".join(f"[{n} {b.label}]" for n, b in enumerate(buttons, start=start))


class ConsoleSender(BaseSender):
    """Prints messages for console chats (satisfies ``bot.delivery.engine.Sender``)."""

    platform = Platform.CONSOLE

    def __init__(self, *, out: TextIO | None = None) -> None:
        self._out = out
        # Set by the console channel: told the vote buttons of each message printed.
        self.on_buttons: Callable[[Sequence[Button]], None] | None = None

    @property
    def rate_per_second(self) -> float | None:
        return None

    def interval(self, chat: ChatSettings) -> float:
        return 0.0

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        # Looked up at each send: while the prompt is open, sys.stdout is its proxy, which
        # prints above the prompt and redraws it.
        out = self._out or sys.stdout
        body = message.text if message.plain else indent_entries(message.text)
        if sys.__stdout__ is not None and sys.__stdout__.isatty() and self._out is None:
            body = wrap(body, shutil.get_terminal_size().columns)
            if not message.plain:
                body = embolden(body, header=True)
        out.write(f"\n{RULE}\n[to console:{chat_id}]\n{body}\n{RULE}\n")
        out.flush()
        buttons = payload(message).buttons
        if buttons and self.on_buttons is not None:
            self.on_buttons(buttons)
        return None


class ConsoleChannel:
    """A chat on standard input and output: a prompt on a terminal, lines otherwise."""

    def __init__(
        self,
        *,
        core: CommandCore,
        on_command: Callable[[], None] | None = None,
        stdin: TextIO | None = None,
        out: TextIO | None = None,
        interactive: bool | None = None,
    ) -> None:
        self._core = core
        self._on_command = on_command
        self._in = stdin or sys.stdin
        self._out = out or sys.stdout
        self._interactive = (
            interactive
            if interactive is not None
            else stdin is None and out is None and sys.stdin.isatty() and sys.stdout.isatty()
        )
        self._caller = Caller(platform=Platform.CONSOLE, chat_id=LOCAL_CHAT, user_id=LOCAL_CHAT)
        self._buttons: list[Button] = []  # the buttons of the last reply that had any
        # Replies shown since that one: its buttons are pressed by number only while it is
        # the latest reply, so a number never presses a button scrolled far out of sight.
        self._replies_since_buttons = 0
        # "+N" and "-N" -> the vote actions of page N of the last pages shown
        self._votes: dict[str, str] = {}
        self._lang = "en"

    async def run(self) -> None:
        """Read commands until end of input or ``/quit``."""
        if self._interactive:
            await self._run_prompt()
        else:
            await self._run_lines()

    async def _run_lines(self) -> None:
        await self._greet()
        while True:
            self._out.write(PROMPT)
            self._out.flush()
            line = await self._readline()
            if not line:
                self._out.write("\n")
                return
            if not await self._one(line):
                return

    async def _run_prompt(self) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import InMemoryHistory
        from prompt_toolkit.patch_stdout import patch_stdout

        # Replies are printed while no prompt is shown, straight to the terminal; what
        # prints while the prompt is shown (deliveries, log lines) goes through the proxy
        # patch_stdout puts in sys.stdout, which prints above the prompt and redraws it.
        with logs_to_file(LOG_FILE) as moved, patch_stdout(raw=True):
            await self._greet()
            if moved:
                self._out.write(t(self._lang, "console.log_file", path=str(LOG_FILE)) + "\n")
            # Completion on Tab only: a menu popping up while typing would cover the chat,
            # and Tab then completes what is typed at once, whatever the machine's speed.
            session: PromptSession[str] = PromptSession(
                history=InMemoryHistory(), complete_while_typing=False
            )
            while True:
                completer = _Completer(await self._tags())
                try:
                    line = await session.prompt_async(PROMPT, completer=completer)
                except EOFError:
                    return
                except KeyboardInterrupt:
                    continue
                if not await self._one(line):
                    return

    async def _greet(self) -> None:
        reply = await self._core.handle(self._caller, "/start")
        self._show(reply)
        self._out.write(t(reply.lang, "console.hint") + "\n")
        self._out.flush()

    async def _one(self, line: str) -> bool:
        """Handle one line; False when the user leaves."""
        text = line.strip()
        if not text:
            return True
        if text.lstrip("/").lower() in ("quit", "exit"):
            return False
        word, _, rest = text.lstrip("/").partition(" ")
        if VOTE_RE.fullmatch(text):
            await self._vote(text)
        elif text.isdigit() or word.lower() == "press":
            await self._press(text if text.isdigit() else rest.strip())
        else:
            if not text.startswith("/"):
                text = "/" + text
            self._show(await self._core.handle(self._caller, text))
        if self._on_command is not None:
            self._on_command()
        return True

    def offer_votes(self, buttons: Sequence[Button]) -> None:
        """The 👍 and 👎 of the pages just shown (``bot.render.vote_buttons``, labelled
        ``3 👍``): ``+3`` and ``-3`` press page 3's."""
        if not buttons:
            return
        self._votes = {}
        for button in buttons:
            number, _, mark = button.label.partition(" ")
            sign = "+" if mark == votes.UP_MARK else "-"
            self._votes[f"{sign}{number}"] = button.action

    async def _vote(self, text: str) -> None:
        action = self._votes.get(text)
        if action is None:
            self._say(t(self._lang, "console.no_such_vote", vote=text))
            return
        reply = await self._core.handle_action(self._caller, action)
        if isinstance(reply, Toast):
            self._say(reply.text)
        elif reply is not None:
            self._show(reply)

    async def _press(self, number: str) -> None:
        lang = self._lang
        if not number.isdigit():
            self._say(t(lang, "console.press_usage"))
            return
        if not self._buttons:
            self._say(t(lang, "console.no_buttons"))
            return
        index = int(number)
        if self._replies_since_buttons:
            self._say(tn(lang, "console.buttons_gone", self._replies_since_buttons, number=index))
            return
        if not 1 <= index <= len(self._buttons):
            self._say(t(lang, "console.no_such_button", number=index, last=len(self._buttons)))
            return
        reply = await self._core.handle_action(self._caller, self._buttons[index - 1].action)
        if isinstance(reply, Toast):  # a vote: acknowledged, what is shown stays
            self._say(reply.text)
        elif reply is not None:
            self._show(reply)

    async def _tags(self) -> list[str]:
        """Known tags, most used first, for completion."""
        try:
            return await self._core.tag_names(limit=COMPLETION_TAGS)
        except Exception:  # completion is a convenience: it never ends the console
            log.debug("no tags for completion", exc_info=True)
            return []

    def _show(self, reply: Reply) -> None:
        self._lang = reply.lang
        # A link button is its address, printed for the terminal to open; the rest are
        # pressed by number.
        links = [b for row in reply.buttons for b in row if b.url is not None]
        pressable = tuple(tuple(b for b in row if b.url is None) for row in reply.buttons)
        reply = replace(reply, buttons=tuple(row for row in pressable if row))
        buttons = [b for row in reply.buttons for b in row]
        if buttons:
            self._buttons = buttons
            self._replies_since_buttons = 0
        elif self._buttons:
            self._replies_since_buttons += 1
        self.offer_votes(render.vote_buttons(reply.items))
        plain = replace_buttons(reply)
        for message in render.reply_messages(Platform.CONSOLE, plain):
            body = message.text
            if buttons:
                rows, n = [], 1
                for row in reply.buttons:
                    rows.append(numbered(row, start=n))
                    n += len(row)
                keys = "\n".join(rows)
                body = f"{body}\n\n{keys}" if body else keys
            if links:
                shown = "\n".join(f"{b.label}: {b.url}" for b in links)
                body = f"{body}\n\n{shown}" if body else shown
            self._say(indent_entries(body) if reply.items else body, entries=bool(reply.items))

    def _say(self, text: str, *, entries: bool = False) -> None:
        if not self._interactive:
            self._out.write(f"bot> {text}\n")
        else:
            shaped = wrap(f"bot> {text}", shutil.get_terminal_size().columns)
            self._out.write((embolden(shaped, header=False) if entries else shaped) + "\n")
        self._out.flush()

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


def complete(text: str, tags: Sequence[str]) -> list[str]:
    """What may follow ``text`` (what is typed before the cursor): the rest of a command
    name (``/subsc`` -> ``/subscribe``), of a tag after ``subscribe`` or ``unsubscribe``
    (signs kept: ``-rob`` -> ``-robotics``), or of a command name after ``help``. Each
    candidate is the whole word that replaces the last one typed."""
    words = text.split(" ")
    last = words[-1]
    if len(words) == 1:
        slash = "/" if last.startswith("/") else ""
        stem = last.removeprefix("/").lower()
        names = (*registry.NAMES, *EXTRA_COMMANDS)
        return [f"{slash}{name}" for name in names if name.startswith(stem)]
    command = words[0].removeprefix("/").lower()
    if command == "help" and len(words) == 2:
        return [name for name in registry.NAMES if name.startswith(last.lower())]
    if command in ("subscribe", "unsubscribe"):
        sign = last[:1] if last[:1] in "+-" else ""
        stem = last.removeprefix(sign).lower()
        return [f"{sign}{tag}" for tag in tags if tag.startswith(stem)]
    return []


class _Completer(Completer):
    """Command names and known tags, for the prompt (see :func:`complete`)."""

    def __init__(self, tags: Sequence[str]) -> None:
        self._tags = tags

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        last = text.split(" ")[-1]
        for word in complete(text, self._tags):
            yield Completion(word, start_position=-len(last))


def replace_buttons(reply: Reply) -> Reply:
    """``reply`` without its buttons: the console prints them numbered itself."""
    return Reply(reply.lang, reply.text, items=reply.items)


@contextlib.contextmanager
def logs_to_file(path: Path = LOG_FILE) -> Iterator[bool]:
    """While the console is open: records below WARNING go to ``path`` instead of the
    terminal (WARNING and above still show). Yields whether they were moved.

    The service moves them before it starts (its first lines, such as the leader's, come
    before the prompt); the prompt moves them again, which then changes nothing."""
    root = logging.getLogger()
    target = str(path.resolve())
    if any(isinstance(h, logging.FileHandler) and h.baseFilename == target for h in root.handlers):
        yield True
        return
    screen = [
        h
        for h in root.handlers
        if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)
    ]
    try:
        files.private_dirs(path.parent)  # the data directory
        files.private_append(path)  # the log is the owner's alone, as the database
        file_handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        yield False
        return
    if screen:
        file_handler.setFormatter(screen[0].formatter)
        for flt in screen[0].filters:
            file_handler.addFilter(flt)
    levels = [h.level for h in screen]
    root.addHandler(file_handler)
    for handler in screen:
        handler.setLevel(max(handler.level, logging.WARNING))
    try:
        yield True
    finally:
        root.removeHandler(file_handler)
        file_handler.close()
        for handler, level in zip(screen, levels, strict=True):
            handler.setLevel(level)


def _settle(future: asyncio.Future[str], line: str) -> None:
    if not future.done():
        future.set_result(line)

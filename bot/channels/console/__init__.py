"""The console channel: chat with the bot in a terminal, and see what it would post.

One local chat, ``console:local``, speaks the same commands as Telegram and Slack through
the same core. Messages the delivery engine sends to console chats are printed as plain
text, so digests look as they would in a chat, without markup.

On a terminal the console is a chat window (prompt_toolkit): the prompt stays at the
bottom, with history and completion of command names and known tags, while replies,
deliveries and log lines print above it, wrapped to the terminal's width. Every button a
reply carries is shown numbered (``[1 Send] [2 Cancel]``) and pressed by typing its number
or ``/press N`` while its message is the latest reply (an older one is refused, with
the reason); the pages of the last digest or ``latest`` shown are voted on by typing
``+N`` (👍) or ``-N`` (👎) for page N. Without a terminal (pipes, a service) it reads and
writes plain lines.

The chat window and the printer are in :mod:`.chat` (prompt_toolkit), loaded where the
console is used; this package declares the platform (:mod:`.spec`, :mod:`.render`).
"""

from __future__ import annotations

from bot.channels.console.spec import PLATFORM as PLATFORM

__all__ = ["PLATFORM"]  # what bot.channels.registry loads

"""A command area is a module, and nothing else: one the command core never names,
declared through the registry as the package's own areas are, is dispatched by the core
(its command, with the permission check its declaration asks for, and its button).

The new area runs in an interpreter of its own, so its declarations stay out of the
registry every other test reads.
"""

from __future__ import annotations

import ast
from pathlib import Path

from bot.i18n import t
from tests.beside import ROOT, run_beside

# The new area: a module outside the package, importing only what every area imports.
AREA = '''
"""``ping``: says where it was asked, and a button that says which one was pressed."""

from bot.commands.base import Caller, Context, Ports, chat_record
from bot.commands.registry import MANAGERS, action, command
from bot.models import Reply, Toast
from bot.store import chats as chat_store

PING = "ping:"


@command("ping", order=10_000, audience=MANAGERS, writes=True)
async def ping_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    return Reply(record.chat.lang, f"pong {args} in {record.chat.chat_id}, {ctx.prefix}")


@action(PING)
async def press_ping(ports: Ports, caller: Caller, action: str, *, prefix: str) -> Toast:
    record = await ports.in_chat(caller, chat_record, write=False)
    return Toast(record.chat.lang, f"pressed {action.removeprefix(PING)}")
'''

RUN = """
import asyncio, json, pkgutil, sys

import bot.commands

# Importing the package imports every module of it: each area has declared its commands.
unimported = [
    m.name
    for m in pkgutil.iter_modules(bot.commands.__path__)
    if f"bot.commands.{m.name}" not in sys.modules
]

import ping_area  # noqa: E402, F401  (declares its command and its button)

from bot.commands import Caller, CommandCore, Defaults  # noqa: E402
from bot.models import ChatKind, Platform  # noqa: E402
from bot.store.engine import create_engine, upgrade  # noqa: E402


async def no() -> bool:
    return False


async def main(url: str) -> None:
    engine = create_engine(url)
    await upgrade(engine)
    core = CommandCore(engine=engine, defaults=Defaults())
    own = Caller(platform=Platform.CONSOLE, chat_id="7", user_id="7")
    member = Caller(
        platform=Platform.TELEGRAM,
        chat_id="-100",
        user_id="8",
        chat_kind=ChatKind.GROUP,
        can_manage=no,
    )
    try:
        found = {
            "unimported": unimported,
            "ping": (await core.handle(own, "/ping hello", prefix="!")).text,
            "member": (await core.handle(member, "/ping")).text,
            "press": (await core.handle_action(own, "ping:42")).text,
            "vote": (await core.handle_action(own, "vote:x")).text,
        }
    finally:
        await engine.dispose()
    print(json.dumps(found))


asyncio.run(main(sys.argv[1]))
"""


def test_a_new_area_is_dispatched_without_an_edit_to_the_core(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/areas.db"
    found = run_beside(tmp_path, "ping_area", AREA, RUN, url)
    assert found["unimported"] == []
    assert found["ping"] == "pong hello in 7, !"
    # The declaration's audience holds for a command the core never named.
    assert found["member"] == t("en", "cmd.group_admins_only", p="/")
    assert found["press"] == "pressed 42"
    # The package's own buttons still answer beside the new one.
    assert found["vote"] == t("en", "digestq.vote.invalid")


def test_the_core_imports_no_area() -> None:
    """The core takes its commands and buttons from the registry: of the package it imports
    the registry, the shared plumbing, and the settings page whose web calls it passes on."""
    tree = ast.parse((ROOT / "bot" / "commands" / "core.py").read_text(encoding="utf-8"))
    taken = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "bot.commands":
            taken |= {f"bot.commands.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bot.commands."):
            taken.add(node.module or "")
        elif isinstance(node, ast.Import):
            taken |= {a.name for a in node.names if a.name.startswith("bot.commands")}
    assert taken == {"bot.commands.registry", "bot.commands.base", "bot.commands.settings_page"}

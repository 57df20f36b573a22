"""The admin module's parts, each built alone from what it uses and run on a real store
through what it serves: the broadcast part's command and buttons, the stats part's command
and figures, and who the admins are. A part declared outside the package is dispatched by
the admin module as the package's own are.

The admin module (``Admin``) and the channels are not involved, but in the last test:
its parts need neither.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands.admin_parts import Admins
from bot.commands.base import Caller
from bot.commands.broadcast import CANCEL, SEND, Broadcasts
from bot.commands.stats import Statistics
from bot.i18n import t, tn
from bot.models import ChatKind, Platform
from bot.sources import SourceSet
from bot.store import admin as admin_store
from tests.beside import run_beside
from tests.conftest import Settings
from tests.integration.test_admin import ADMIN, USER, audit_actions, subscribers

SLACK_TEAM = "T0001"


def admins() -> Admins:
    settings = Settings(
        telegram_bot_token="123456789:AAHfakeTokenForTests_0123456789abcdef",
        telegram_admin_ids=(ADMIN,),
    )
    return Admins.of(settings)


def telegram(user: int, *, kind: ChatKind = ChatKind.PRIVATE, chat: int | None = None) -> Caller:
    return Caller(
        platform=Platform.TELEGRAM,
        chat_id=str(user if chat is None else chat),
        user_id=str(user),
        chat_kind=kind,
    )


def test_admins_are_who_the_settings_name() -> None:
    who = admins()
    assert who.is_admin(telegram(ADMIN)) and who.alert_admin_id(telegram(ADMIN)) == str(ADMIN)
    assert not who.is_admin(telegram(USER)) and who.alert_admin_id(telegram(USER)) is None
    console = Caller(platform=Platform.CONSOLE, chat_id="local", user_id="local")
    assert who.is_deployment_admin(console) and who.alert_admin_id(console) is None
    installer = Caller(
        platform=Platform.SLACK,
        chat_id="D1",
        user_id="U1",
        workspace=SLACK_TEAM,
        workspace_admin=True,
    )
    assert who.is_admin(installer) and not who.is_deployment_admin(installer)
    assert who.workspace_only(installer) == SLACK_TEAM
    assert who.workspace_only(telegram(ADMIN)) is None


async def test_the_broadcast_part_alone_previews_sends_once_and_cancels(
    engine: AsyncEngine,
) -> None:
    await subscribers(engine, 3)
    await subscribers(engine, 1, start=20_000, state="paused")
    part = Broadcasts(engine=engine, admins=admins())
    assert set(part.commands) == {"broadcast"}
    assert set(part.presses) == {SEND, CANCEL}
    assert {press.command for press in part.presses.values()} == {"broadcast"}
    caller = telegram(ADMIN)

    preview = await part.commands["broadcast"](caller, args="--tag rl Hello", lang="en", prefix="/")
    assert "3 chats" in preview.text and "1 paused or inactive" in preview.text
    send, cancel = (button.action for button in preview.buttons[0])
    assert send.startswith(SEND) and cancel.startswith(CANCEL)
    async with engine.connect() as conn:
        assert await admin_store.in_progress(conn) == []  # nothing queued before Send

    pressed = await part.presses[SEND].run(caller, action=send, lang="en")
    queued = tn("en", "admin.broadcast.queued", 3, id=int(send.rsplit(":", 1)[1]))
    assert pressed.text == queued
    again = await part.presses[SEND].run(caller, action=send, lang="en")
    assert "not waiting for confirmation" in again.text
    async with engine.connect() as conn:
        (going,) = await admin_store.in_progress(conn)
    assert (going.total, going.pending) == (3, 3)

    other = await part.commands["broadcast"](caller, args="Never mind", lang="en", prefix="/")
    _, cancel = (button.action for button in other.buttons[0])
    assert "cancelled" in (await part.presses[CANCEL].run(caller, action=cancel, lang="en")).text
    assert [action for _, action, _ in await audit_actions(engine)] == [
        "broadcast.previewed",
        "broadcast.confirmed",
        "broadcast.repeated",
        "broadcast.previewed",
        "broadcast.cancelled",
    ]


async def test_the_stats_part_alone_answers_by_who_reads_and_counts(engine: AsyncEngine) -> None:
    await subscribers(engine, 4)
    part = Statistics(engine=engine, admins=admins(), sources=SourceSet(()))
    assert set(part.commands) == {"stats"} and dict(part.presses) == {}

    alone = await part.commands["stats"](telegram(ADMIN), args="", lang="en", prefix="/")
    assert "Chats: Telegram 4 active" in alone.text and alone.chart is not None
    group = telegram(ADMIN, kind=ChatKind.GROUP, chat=-100)
    in_group = await part.commands["stats"](group, args="", lang="en", prefix="/")
    assert t("en", "admin.stats.chat_only", p="/") in in_group.text
    assert "Chats:" not in in_group.text and in_group.chart is None

    async with engine.connect() as conn:
        figures = await part.figures(conn)
    assert figures.chats == [("telegram", "active", 4)]
    assert figures.as_json()["chats"] == {"telegram": {"active": 4}}
    assert await audit_actions(engine) == [
        (f"telegram:{ADMIN}", "stats.viewed", True),
        (f"telegram:{ADMIN}", "stats.viewed", True),
    ]


# A part of the admin module declared outside the package: its builder takes the store
# alone, and it answers a command and a button.
PART = '''
"""``ping`` for the admins: answers where it was asked; its button says which was pressed."""

from bot.commands.admin_parts import Needs, Press, part
from bot.commands.base import Caller
from bot.models import Reply

PING = "aping:"


class Pings:
    def __init__(self, *, engine: object) -> None:
        self.engine = engine
        self.commands = {"ping": self.ping}
        self.presses = {PING: Press("ping", self.press)}

    async def ping(self, caller: Caller, *, args: str, lang: str, prefix: str) -> Reply:
        return Reply(lang, f"pong {args} in {caller.chat_id}, {prefix}")

    async def press(self, caller: Caller, *, action: str, lang: str) -> Reply:
        return Reply(lang, f"pressed {action.removeprefix(PING)}")


@part
def pings(needs: Needs) -> Pings:
    return Pings(engine=needs.engine)
'''

RUN = """
import asyncio, json, sys

import ping_part  # noqa: F401  (declares its builder)

from bot.channels.registry import settings_class
from bot.commands import Caller
from bot.commands.operator import Admin
from bot.models import Platform
from bot.store.engine import create_engine, upgrade
from bot.store.schema import audit_log


async def main(url: str) -> None:
    engine = create_engine(url)
    await upgrade(engine)
    settings = settings_class()(_env_file=None, telegram_bot_token=None)
    admin = Admin(engine=engine, settings=settings)
    operator = Caller(platform=Platform.CONSOLE, chat_id="7", user_id="7")
    stranger = Caller(platform=Platform.TELEGRAM, chat_id="8", user_id="8")

    async def command(name: str, args: str, prefix: str) -> str:
        reply = await admin.handle(operator, name=name, args=args, lang="en", prefix=prefix)
        return reply.text

    async def press(caller: Caller, action: str) -> str | None:
        reply = await admin.handle_action(caller, action=action, lang="en")
        return None if reply is None else reply.text

    try:
        found = {
            "ping": await command("ping", "hi", "!"),
            "press": await press(operator, "aping:42"),
            "refused": await press(stranger, "aping:42"),
            "stats": (await command("stats", "", "/")).startswith("Bot statistics"),
            "none": await press(operator, "nobody:1"),
        }
        async with engine.connect() as conn:
            found["audit"] = [r.action for r in await conn.execute(audit_log.select())]
    finally:
        await engine.dispose()
    print(json.dumps(found))


asyncio.run(main(sys.argv[1]))
"""


def test_a_new_admin_part_is_dispatched_without_an_edit_to_the_admin_module(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/parts.db"
    found = run_beside(tmp_path, "ping_part", PART, RUN, url)
    assert found["ping"] == "pong hi in 7, !"
    assert found["press"] == "pressed 42"
    # The admin module checks who may press, for a part it never named, and audits it.
    assert found["refused"] == t("en", "cmd.admins_only")
    assert found["stats"] is True  # the package's own parts still answer beside it
    assert found["none"] is None
    assert found["audit"] == ["ping.refused", "stats.viewed"]

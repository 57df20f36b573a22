"""The command registry walked: every declared command appears in every list derived from
it (help, ``help COMMAND``, the Telegram menus per scope and language, the console's
completion, "did you mean", the Slack manifest's usage hint and the commands reference),
in English and Korean, on Telegram, Slack and the console; and the core enforces who may
use each one as its declaration says."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import (
    BotCommandScopeAllChatAdministrators,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
)

from bot.channels.console.chat import complete
from bot.channels.telegram.channel import menu_scopes
from bot.channels.telegram.client import COMMAND_NAME_RE
from bot.commands import (
    FEEDBACK_RESET,
    TOGGLE,
    Caller,
    CommandCore,
    Defaults,
    help_text,
    registry,
    suggest_command,
)
from bot.commands.registry import Audience, Command, Menu
from bot.i18n import has, t
from bot.models import ChatKind, Platform
from bot.render import votes
from bot.store.engine import create_engine, upgrade
from scripts import gen_docs
from tests.scratch import scratch_database

COMMANDS = registry.commands()
LANGS = ("en", "ko")
# How each channel spells a command in its texts (the Slack channel's default command).
CHANNELS = {Platform.TELEGRAM: "/", Platform.SLACK: "/trend ", Platform.CONSOLE: "/"}
MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "slack-app-manifest.yml"


def _ids(commands: tuple[Command, ...]) -> list[str]:
    return [c.name for c in commands]


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    async with scratch_database(None, directory=tmp_path) as url:
        engine = create_engine(url)
        await upgrade(engine)
        try:
            yield engine
        finally:
            await engine.dispose()


def test_the_registry_holds_every_command_once_in_one_order() -> None:
    names = _ids(COMMANDS)
    assert len(names) == len(set(names)) and len(names) >= 24
    assert list(registry.NAMES) == names
    assert [c.order for c in COMMANDS] == sorted({c.order for c in COMMANDS})


@pytest.mark.parametrize("command", COMMANDS, ids=_ids(COMMANDS))
def test_every_handler_takes_what_the_core_passes_it(command: Command) -> None:
    # The core calls a handler in the chat's transaction with (record, args, ctx), one on
    # its own with (ports, caller, *, name, args, prefix): a handler of another shape, or
    # one that is not a coroutine, could never run.
    assert inspect.iscoroutinefunction(command.handler), command.name
    params = inspect.signature(command.handler).parameters.values()
    positional = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
    keywords = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
    if command.alone:
        assert (len(positional), keywords) == (2, {"name", "args", "prefix"})
    else:
        assert (len(positional), keywords) == (3, set())
    assert command.handler.__module__.startswith("bot.commands."), command.name


def test_every_button_the_areas_make_has_a_declared_handler() -> None:
    # The picker's tags, the 👍/👎 under a page and ``feedback reset``'s question; the
    # broadcast's buttons go to the admin module, which is no area.
    assert registry.action_prefixes() == tuple(sorted((TOGGLE, votes.VOTE, FEEDBACK_RESET)))
    for prefix in registry.action_prefixes():
        handler = registry.find_action(prefix + "x")
        assert handler is not None and inspect.iscoroutinefunction(handler)
        params = inspect.signature(handler).parameters.values()
        assert [p.kind for p in params] == [
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.KEYWORD_ONLY,
        ]
    assert registry.find_action("bc:send:1") is None


def test_a_button_prefix_that_overlaps_another_is_refused_at_import() -> None:
    async def handler() -> None: ...

    for prefix in (TOGGLE, TOGGLE + "x", TOGGLE[:-1]):
        with pytest.raises(ValueError, match="overlaps"):
            registry.action(prefix)(handler)
    assert registry.find_action(TOGGLE + "x") is not handler


def test_a_name_or_an_order_declared_twice_is_refused_at_import() -> None:
    async def handler() -> None: ...

    with pytest.raises(ValueError, match="declared twice"):
        registry.command("help", order=10_000, audience=Audience.EVERYONE)(handler)
    with pytest.raises(ValueError, match="order 20 is taken"):
        registry.command("a-new-one", order=20, audience=Audience.EVERYONE)(handler)
    assert registry.find("a-new-one") is None


@pytest.mark.parametrize("command", COMMANDS, ids=_ids(COMMANDS))
@pytest.mark.parametrize("lang", LANGS)
def test_every_command_is_in_help_and_the_reference(command: Command, lang: str) -> None:
    assert has(command.line_key) and has(command.help_key), command.name
    for prefix in set(CHANNELS.values()):
        line = t(lang, command.line_key, p=prefix)
        assert line.startswith(f"{prefix}{command.name}")
        admins = help_text(lang, prefix=prefix, bot_admin=True).splitlines()
        members = help_text(lang, prefix=prefix, bot_admin=False).splitlines()
        assert line in admins
        assert (line in members) == (command.audience != Audience.BOT_ADMINS)
    section = gen_docs.commands_page().split(f"## `{command.name}`\n", 1)[1]
    assert t(lang, command.help_key, p="/") in section.split("\n## ", 1)[0]


@pytest.mark.parametrize("command", COMMANDS, ids=_ids(COMMANDS))
@pytest.mark.parametrize("lang", LANGS)
def test_every_command_is_in_the_telegram_menus_its_declaration_names(
    command: Command, lang: str
) -> None:
    scopes = {type(scope): [c.command for c in cmds] for scope, cmds in menu_scopes(lang)}
    in_menu = command.audience != Audience.BOT_ADMINS and command.menu != Menu.NONE
    everywhere = in_menu and command.menu == Menu.GROUP
    assert (command.name in scopes[BotCommandScopeAllPrivateChats]) == in_menu
    assert (command.name in scopes[BotCommandScopeAllChatAdministrators]) == in_menu
    assert (command.name in scopes[BotCommandScopeAllGroupChats]) == everywhere
    if in_menu:
        assert COMMAND_NAME_RE.match(command.name)
        descriptions = {
            c.command: c.description
            for _, cmds in menu_scopes(lang)
            for c in cmds
            if c.command == command.name
        }
        expected = t(lang, command.line_key, p="/").partition(" — ")[2]
        assert descriptions == {command.name: expected} and expected


def test_every_menu_follows_the_registry_order() -> None:
    order = _ids(COMMANDS)
    for lang in LANGS:
        for _, commands in menu_scopes(lang):
            names = [c.command for c in commands]
            assert names == sorted(names, key=order.index)


@pytest.mark.parametrize("command", COMMANDS, ids=_ids(COMMANDS))
def test_every_command_is_completed_and_suggested(command: Command) -> None:
    name = command.name
    assert f"/{name}" in complete(f"/{name[:2]}", ())
    assert name in complete(f"/help {name[:2]}", ())
    assert suggest_command(f"{name}x") == name


def test_the_slow_commands_are_those_slack_acknowledges_first() -> None:
    # Reading many pages or planning a digest can take longer than Slack's 3 s.
    assert {c.name for c in COMMANDS if c.slow} == {"latest", "tags", "digest"}


def test_the_slack_manifest_hint_is_the_registry_s() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    hint = manifest["features"]["slash_commands"][0]["usage_hint"]
    assert hint == registry.usage_hint()
    shown = [part.split()[0] for part in hint.split(" | ")]
    assert shown == [c.name for c in COMMANDS if c.usage is not None]
    assert {"help", "subscribe", "latest", "settings"} <= set(shown)


@pytest.mark.parametrize("platform", list(CHANNELS), ids=[p.value for p in CHANNELS])
@pytest.mark.parametrize("lang", LANGS)
async def test_help_and_help_command_answer_every_command_on_every_channel(
    engine: AsyncEngine, platform: Platform, lang: str
) -> None:
    core = CommandCore(engine=engine, defaults=Defaults(lang=lang))
    prefix = CHANNELS[platform]
    caller = Caller(platform=platform, chat_id=f"help-{lang}", user_id="7")
    listing = (await core.handle(caller, "help", prefix=prefix)).text
    for command in COMMANDS:
        line = t(lang, command.line_key, p=prefix)
        assert (line in listing) == (command.audience != Audience.BOT_ADMINS), command.name
        answer = await core.handle(caller, f"help {command.name}", prefix=prefix)
        assert answer.lang == lang
        assert answer.text == t(lang, command.help_key, p=prefix)
        typo = await core.handle(caller, f"{command.name}x", prefix=prefix)
        expected = t(
            lang, "cmd.did_you_mean", command=f"{command.name}x", suggestion=command.name, p=prefix
        )
        assert typo.text == expected


@pytest.mark.parametrize("platform", [Platform.TELEGRAM, Platform.SLACK])
async def test_a_group_member_may_use_exactly_the_commands_declared_for_everyone(
    engine: AsyncEngine, platform: Platform
) -> None:
    core = CommandCore(engine=engine, defaults=Defaults())

    async def no() -> bool:
        return False

    member = Caller(
        platform=platform, chat_id="-100", user_id="8", chat_kind=ChatKind.GROUP, can_manage=no
    )
    for command in COMMANDS:
        reply = await core.handle(member, command.name)
        refused = reply.text == t("en", command.group_refusal, p="/")
        assert refused == (command.audience == Audience.MANAGERS), command.name
        if command.audience == Audience.BOT_ADMINS:
            assert reply.text == t("en", "cmd.admins_only"), command.name

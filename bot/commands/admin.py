"""The deployment admins' commands: ``broadcast`` and ``stats`` (served by the admin
module, :mod:`bot.commands.operator`, which dispatches them to its parts by name) and
``alerts``. A new admin area's command is declared here, on :func:`admin_command`."""

from __future__ import annotations

from bot import platforms
from bot.commands.base import Caller, Context, Ports, chat_record
from bot.commands.registry import BOT_ADMINS, command
from bot.i18n import t
from bot.models import (
    ChatKind,
    Reply,
)
from bot.store import admin as admin_store
from bot.store import alerts as alert_store
from bot.store import chats as chat_store
from bot.store import pages as page_store


@command("broadcast", order=220, audience=BOT_ADMINS, alone=True)
@command("stats", order=230, audience=BOT_ADMINS, alone=True)
async def admin_command(
    ports: Ports, caller: Caller, *, name: str, args: str, prefix: str
) -> Reply:
    """``broadcast`` and ``stats``, handed to the admin module for the admins alone."""
    record = await ports.in_chat(caller, chat_record, write=False)
    lang = record.chat.lang
    admin = ports.admin
    if admin is None or not admin.is_admin(caller):
        if admin is not None:
            await admin.refused(caller, name=name)
        return Reply(lang, t(lang, "cmd.admins_only"))
    return await admin.handle(caller, name=name, args=args, lang=lang, prefix=prefix)


@command("alerts", order=240, audience=BOT_ADMINS, writes=True)
async def alerts_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    """``alerts on|off``: an admin's operator alerts, in their private chat."""
    lang = record.chat.lang
    caller = ctx.caller
    admin = ctx.ports.admin
    if admin is None or not admin.is_admin(caller):
        await _refuse_alerts(record, ctx)
        return Reply(lang, t(lang, "cmd.admins_only"))
    admin_id = admin.alert_admin_id(caller)
    if admin_id is None:
        # Alerts go to the deployment's admins on Telegram and Slack; saying "on" to
        # anyone else would confirm what never happens.
        workspace = platforms.rules(caller.platform).workspace_admins
        reason = "workspace" if workspace else "console"
        await _refuse_alerts(record, ctx)
        text = t(lang, f"dest.alerts.none_for_{reason}")
        if args.strip():  # asked to change something: say that nothing was
            text = f"{text} {t(lang, 'dest.alerts.unchanged')}"
        return Reply(lang, text)
    if caller.chat_kind != ChatKind.PRIVATE:
        return Reply(lang, t(lang, "dest.alerts.private_only", p=ctx.prefix))
    choice = args.strip().lower()
    if choice not in ("on", "off"):
        choices = await alert_store.admin_choices(ctx.conn)
        current = choices.get((caller.platform.value, admin_id))
        state = "on" if current is None or current.enabled else "off"
        text = t(
            lang, "dest.alerts.usage", p=ctx.prefix, state=t(lang, f"dest.alerts.state.{state}")
        )
        return Reply(lang, text)
    await alert_store.choose(
        ctx.conn,
        platform=caller.platform.value,
        user_id=admin_id,
        chat_pk=record.pk,
        enabled=choice == "on",
        now=page_store.utcnow(),
    )
    return Reply(lang, t(lang, f"dest.alerts.{choice}", p=ctx.prefix))


async def _refuse_alerts(record: chat_store.ChatRecord, ctx: Context) -> None:
    """Audit an ``alerts`` that is not for this caller: not an admin, or one alerts never
    reach."""
    caller = ctx.caller
    await admin_store.audit(
        ctx.conn,
        actor=f"{caller.platform.value}:{caller.user_id}",
        chat=record.chat.address,
        action="alerts.refused",
        allowed=False,
    )

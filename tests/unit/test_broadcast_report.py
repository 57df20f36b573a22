"""The report of a finished broadcast: its numbers add up, the held messages counted apart,
in the admin's language."""

from __future__ import annotations

import pytest

from bot.commands.broadcast import report_lines
from bot.i18n import t, tn
from bot.store.admin import Progress


def progress(*, sent: int, failed: int = 0, held: int = 0) -> Progress:
    failures = (("bot was blocked by the user", failed),) if failed else ()
    return Progress(
        broadcast_id=7,
        total=sent + failed + held,
        sent=sent,
        failed=failed,
        pending=0,
        failures=failures,
        held=held,
    )


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_report_names_what_was_held_only_when_something_was(lang: str) -> None:
    plain = report_lines(lang, progress(sent=5), skipped=2)
    assert plain == [t(lang, "admin.broadcast.report", id=7, sent=5, failed=0, skipped=2)]

    lines = report_lines(lang, progress(sent=3, failed=1, held=2), skipped=0)
    assert lines == [
        t(lang, "admin.broadcast.report", id=7, sent=3, failed=1, skipped=0),
        tn(lang, "admin.broadcast.report_held", 2),
        t(lang, "admin.broadcast.report_failures", reasons="bot was blocked by the user (1)"),
    ]


def test_the_held_line_reads_in_both_languages() -> None:
    assert report_lines("en", progress(sent=0, held=1), skipped=0)[1] == (
        "1 message had no answer twice: it may have arrived, and is not sent again."
    )
    assert report_lines("ko", progress(sent=0, held=3), skipped=0)[1] == (
        "메시지 3개는 두 번 모두 응답이 없었습니다. 도착했을 수 있어 다시 보내지 않습니다."
    )

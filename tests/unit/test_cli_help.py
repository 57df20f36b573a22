"""``trendbot COMMAND --help`` says what each command does, not only its usage line."""

from __future__ import annotations

import pytest

from bot.__main__ import HANDLERS, main
from bot.cli.parser import DESCRIPTIONS


@pytest.mark.parametrize("command", sorted(HANDLERS))
def test_every_subcommand_has_a_description(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    usage, _, rest = out.partition("\n\n")
    assert usage.startswith(f"usage: trendbot {command}")
    description = rest.split("\n\n", 1)[0]
    assert not description.startswith(("options:", "positional arguments:"))
    assert " ".join(description.split()) == DESCRIPTIONS[command]

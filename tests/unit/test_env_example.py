"""`.env.example` lists every variable of the settings, with its real default."""

from __future__ import annotations

import re

from bot.channels.registry import settings_class
from bot.settings import SAMPLE_WIKI
from tests.conftest import ROOT

LINE = re.compile(r"^# ([A-Z_]+)=(.*)$")


def test_every_variable_is_listed_once_with_its_default() -> None:
    listed: dict[str, str] = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = LINE.match(line)
        if match:
            assert match[1] not in listed, f"{match[1]} listed twice"
            listed[match[1]] = match[2]
    fields = settings_class().model_fields  # the platforms' own sections included
    assert set(listed) == {name.upper() for name in fields}
    for name, field in fields.items():
        default = field.default
        if name == "wiki_sources":  # the sample wiki inside the package, wherever installed
            assert default == (str(SAMPLE_WIKI),)
            default = None
        if default is None or default == ():
            expected = ""
        elif isinstance(default, bool):
            expected = str(default).lower()
        elif isinstance(default, tuple):
            expected = ",".join(str(x) for x in default)
        elif isinstance(default, float) and default.is_integer():
            expected = str(int(default))
        else:
            expected = str(default)
        assert listed[name.upper()] == expected, name

"""Discord's variables: a section of the settings of its own, each bad value one clear line
naming the variable, the token redacted."""

from __future__ import annotations

import pytest

from bot.channels.discord.settings import DiscordSettings, enabled
from bot.channels.registry import settings_class
from bot.errors import ConfigError
from bot.settings import load_settings
from tests.fakes.discord_api import DEFAULT_TOKEN, TEST_PUBLIC_KEY

GOOD = {
    "discord_bot_token": DEFAULT_TOKEN,
    "discord_application_id": "1100000000000000001",
    "discord_public_key": TEST_PUBLIC_KEY,
}


def load(**values: str) -> DiscordSettings:
    found = load_settings(settings_class(), _env_file=None, **values)
    assert isinstance(found, DiscordSettings)
    return found


def test_the_cli_reads_discords_section_with_the_rest() -> None:
    settings = load(**GOOD, discord_admin_ids="80351110224678912, 80351110224678913")
    assert enabled(settings)
    assert settings.discord_admin_ids == ("80351110224678912", "80351110224678913")
    assert settings.discord_api_base_url == "https://discord.com/api/v10"
    assert DEFAULT_TOKEN in settings.secrets()  # what the logs redact
    assert DEFAULT_TOKEN not in repr(settings)
    assert not enabled(load())


@pytest.mark.parametrize(
    ("values", "variable"),
    [
        ({"discord_bot_token": DEFAULT_TOKEN}, "DISCORD_APPLICATION_ID"),
        ({**GOOD, "discord_public_key": "not-hex"}, "DISCORD_PUBLIC_KEY"),
        ({**GOOD, "discord_application_id": "app"}, "DISCORD_APPLICATION_ID"),
        ({**GOOD, "discord_bot_token": "short"}, "DISCORD_BOT_TOKEN"),
        ({**GOOD, "discord_admin_ids": "someone"}, "DISCORD_ADMIN_IDS"),
        ({**GOOD, "discord_api_base_url": "ftp://x"}, "DISCORD_API_BASE_URL"),
        ({"discord_public_key": TEST_PUBLIC_KEY}, "DISCORD_BOT_TOKEN"),
    ],
)
def test_a_bad_value_names_its_variable(values: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load(**values)
    assert raised.value.variable == variable
    assert DEFAULT_TOKEN not in str(raised.value)

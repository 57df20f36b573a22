"""Cut the Bot API description down to what the fake serves: ``python cut.py API_JSON``.

``API_JSON`` is ``api.json`` of https://github.com/PaulSonOfLars/telegram-bot-api-spec (MIT,
see LICENSE here). The methods FakeTelegram answers are kept, with every type their
parameters name (and those types' fields and subtypes, transitively); descriptions are
dropped. The result is written to ``api.json`` beside this file.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

METHODS = (
    "getMe", "getUpdates", "sendMessage", "sendRichMessage", "sendPhoto", "editMessageText",
    "editMessageReplyMarkup", "answerCallbackQuery", "setMyCommands", "deleteMyCommands",
    "getMyCommands", "getChatMember", "getChat", "setWebhook", "deleteWebhook",
    "getWebhookInfo",
)  # fmt: skip


def _named(types: list[str]) -> set[str]:
    return {re.sub(r"^(Array of )+", "", name) for name in types}


def cut(spec: dict) -> dict:
    types = spec["types"]
    wanted: set[str] = set()
    todo = [
        n for m in METHODS for f in spec["methods"][m].get("fields", []) for n in _named(f["types"])
    ]
    while todo:
        name = todo.pop()
        if name in wanted or name not in types:
            continue
        wanted.add(name)
        todo += [n for f in types[name].get("fields", []) for n in _named(f["types"])]
        todo += types[name].get("subtypes", [])

    def fields(entry: dict) -> list[dict]:
        return [
            {"name": f["name"], "types": f["types"], "required": f["required"]}
            for f in entry.get("fields", [])
        ]

    return {
        "version": spec["version"],
        "release_date": spec["release_date"],
        "changelog": spec["changelog"],
        "methods": {
            m: {"href": spec["methods"][m]["href"], "fields": fields(spec["methods"][m])}
            for m in METHODS
        },
        "types": {
            n: {
                "href": types[n]["href"],
                "fields": fields(types[n]),
                "subtypes": types[n].get("subtypes", []),
            }
            for n in sorted(wanted)
        },
    }


if __name__ == "__main__":
    source = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    out = Path(__file__).with_name("api.json")
    out.write_text(json.dumps(cut(source), indent=1, sort_keys=False) + "\n", encoding="utf-8")

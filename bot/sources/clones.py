"""Clones of git sources made by earlier builds, which kept a token in their config.

Earlier builds named a git source's clone by a hash of the URL as configured and wrote
that URL, token included, into the clone's config. A clone is now named by the source's
public identity and its config holds the public URL (:mod:`bot.sources.git`), so the old
folder is never used again; this removes it, so that no credential stays on disk. Only a
folder under the bot's ``git`` directory whose ``origin`` has user info and is, without
it, the remote of the source being polled is removed; anything else is left alone.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from bot.rules.sources import without_userinfo

log = logging.getLogger("bot.sources")

URL_LINE = "url = "
MAX_CONFIG_BYTES = 64 * 1024  # a clone's config is a few hundred bytes


def forget_earlier_clones(root: Path, *, remote: str, keep: Path) -> int:
    """Remove the clones under ``root`` (other than ``keep``) whose origin is ``remote``
    with user info in it; returns how many. Never raises: a folder that cannot be read or
    removed is left as it is."""
    removed = 0
    try:
        folders = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return 0
    for folder in folders:
        if folder == keep:
            continue
        origin = _origin(folder / "config")
        if origin is None or origin == without_userinfo(origin):
            continue
        if without_userinfo(origin) != remote:
            continue
        try:
            shutil.rmtree(folder)
        except OSError:
            continue
        removed += 1
    if removed:
        log.info("git: removed %d clone(s) of an earlier build that kept credentials", removed)
    return removed


def _origin(config: Path) -> str | None:
    try:
        with config.open("rb") as file:
            text = file.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    in_origin = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_origin = stripped == '[remote "origin"]'
        elif in_origin and stripped.startswith(URL_LINE):
            value = stripped[len(URL_LINE) :].strip()
            if value.startswith('"') and value.endswith('"'):
                value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            return value
    return None

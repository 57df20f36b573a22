"""Every package under ``bot/`` shows a deliberate face: its ``__init__`` declares ``__all__``.

``__all__`` names what other packages take from the package itself (``from bot.render import
register``); a package whose modules are imported by name declares an empty one. Each name
in it must exist, so the face never promises what the package does not have.
"""

from __future__ import annotations

import importlib

import pytest

from tests.bot_modules import bot_packages

PACKAGES = bot_packages()


@pytest.mark.parametrize("name", PACKAGES)
def test_every_package_declares_its_face(name: str) -> None:
    package = importlib.import_module(name)
    face = getattr(package, "__all__", None)
    assert isinstance(face, list | tuple), f"{name}/__init__.py declares no __all__"
    assert all(isinstance(item, str) for item in face)
    assert len(set(face)) == len(face), f"{name}.__all__ names something twice"
    missing = [item for item in face if not hasattr(package, item)]
    assert missing == [], f"{name}.__all__ names what it does not have"

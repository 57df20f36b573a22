"""A git source's URL in pip's form, taken apart and checked before git ever sees it.

``WIKI_SOURCES`` names a repository as pip names one (``pip install git+https://…``)::

    git+https://host/org/wiki.git@main#subdirectory=wiki
    git+ssh://git@host/org/wiki.git@feature/x
    git+file:///srv/wiki.git

A malformed one stops start-up with a line naming ``WIKI_SOURCES`` (bot/settings.py); the
git fetcher (bot/sources/git.py) reads a valid one the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from bot.rules.urls import redact_url

__all__ = [
    "SCHEMES",
    "GitUrl",
    "is_git",
    "parse_git_url",
    "valid_ref",
]

SCHEMES = ("git+https", "git+http", "git+ssh", "git+file")
# What git's check-ref-format(1) refuses in a branch or tag name, beside control characters.
_REF_FORBIDDEN = frozenset(" ~^:?*[\\")
_SUBDIRECTORY_FORBIDDEN = frozenset("*?[\\")  # pathspec globs and a Windows separator
_CONTROL_RE = re.compile("[\\x00-\\x1f\\x7f]")


def is_git(source: str) -> bool:
    """Whether a ``WIKI_SOURCES`` entry names a git repository (``git+…://``)."""
    return source.strip().lower().startswith(tuple(f"{scheme}://" for scheme in SCHEMES))


@dataclass(frozen=True, slots=True)
class GitUrl:
    """A repository in pip's form, taken apart."""

    remote: str  # what git fetches from: the URL without ``git+``, ``@REF`` and fragment
    ref: str | None  # a branch or tag; None for the remote's default branch
    subdirectory: str  # the wiki's folder inside the repository, "" for its root

    @property
    def shown(self) -> str:
        """The repository without its credentials, for logs, replies and errors."""
        return redact_url(self.remote)


def parse_git_url(source: str) -> GitUrl:
    """``git+https://host/org/wiki.git@main#subdirectory=wiki`` -> its parts, as pip reads it.

    pip's rule (``VersionControl.get_url_rev_and_auth``): the revision is what follows the
    last ``@`` of the URL's path, slashes included (``wiki.git@feature/x`` is the branch
    ``feature/x``), and an ``@`` with nothing after it is an error. The subdirectory is a
    folder path (percent-decoded), read by git as a path, never as a pattern.

    Raises:
        ValueError: not a git URL of an accepted scheme, a control character anywhere, an
            empty path, a branch or tag that is no valid name, or a subdirectory that is
            not a plain folder inside the repository.
    """
    text = source.strip()
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise ValueError("must be git+https://, git+ssh:// or git+file:// (pip's form)")
    if _CONTROL_RE.search(text):
        raise ValueError("holds a control character")
    parts = urlsplit(f"{scheme[4:].lower()}://{rest}")
    _ = parts.port  # a malformed port is a ValueError here, not in git
    path, ref = parts.path, None
    if "@" in path:
        path, ref = path.rsplit("@", 1)
        if not ref:
            raise ValueError("has an @ with no branch or tag after it; name one, or drop the @")
        if not valid_ref(ref):
            raise ValueError(f"@{ref[:60]} is not a valid branch or tag name")
    if not path.strip("/") and parts.scheme != "file":
        raise ValueError("names no repository path")
    subdirectory = ""
    for field in parts.fragment.split("&"):
        name, _, value = field.partition("=")
        if name == "subdirectory":
            subdirectory = unquote(value, errors="strict").strip("/")
    if _CONTROL_RE.search(subdirectory):
        raise ValueError("#subdirectory= holds a control character")
    if subdirectory.startswith(":") or _SUBDIRECTORY_FORBIDDEN & set(subdirectory):
        raise ValueError("#subdirectory= must be a folder path, without : at its start or * ? [ \\")
    if subdirectory and any(part in ("", ".", "..") for part in subdirectory.split("/")):
        raise ValueError("#subdirectory= must be a folder inside the repository")
    remote = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
    return GitUrl(remote=remote, ref=ref, subdirectory=subdirectory)


def valid_ref(ref: str) -> bool:
    """Whether ``ref`` is a branch or tag name git accepts (check-ref-format(1)), and no
    option: not ``-…``, nothing git would read as a range or a refspec."""
    components = ref.split("/")
    return not (
        ref in ("", "@")
        or ref.startswith(("-", "/"))
        or ref.endswith(("/", "."))
        or ".." in ref
        or "@{" in ref
        or _CONTROL_RE.search(ref)
        or _REF_FORBIDDEN & set(ref)
        or any(not c or c.startswith(".") or c.endswith(".lock") for c in components)
    )

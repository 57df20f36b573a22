"""A paper's one identity across sources and names (pure).

The wiki page of a paper and a feed entry that links to it are one paper: a chat gets it
once. Its identity is, in this order:

- ``arxiv:ID``: its arXiv id without the version (``2608.27351v2`` is ``2608.27351``;
  old-style ids such as ``hep-th/9901001`` too), from the page's ``arxiv`` field or a link
  to ``arxiv.org/abs|pdf|html/ID``;
- ``doi:DOI``: its DOI, lowercased (DOIs are case-insensitive), from a ``doi`` field or a
  ``doi.org`` link;
- ``path:KEY``: else the page's path (a feed entry's id) when it was first seen; a rename
  keeps the page and so its identity.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

MAX_PAPER_CHARS = 1000  # pages.paper; a longer identity is cut (the key already is bounded)

# New-style ids (since 2007): YYMM.NNNN or YYMM.NNNNN; old-style: archive[.SUBJ]/YYMMNNN.
_NEW_ID = r"\d{4}\.\d{4,5}"
_OLD_ID = r"[a-z][a-z\-]*(?:\.[a-z]{2})?/\d{7}"
_ARXIV_ID = re.compile(rf"(?:arxiv:)?({_NEW_ID}|{_OLD_ID})(?:v\d+)?", re.IGNORECASE)
_ARXIV_URL = re.compile(
    rf"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/({_NEW_ID}|{_OLD_ID})"
    r"(?:v\d+)?(?:\.pdf)?/?$",
    re.IGNORECASE,
)
# A DOI: "10." registrant "/" suffix (the suffix may hold any printable character).
_DOI = re.compile(r"(?:doi:\s*)?(10\.\d{4,9}/\S+)", re.IGNORECASE)
_DOI_HOSTS = frozenset({"doi.org", "dx.doi.org", "www.doi.org"})


def arxiv_id(value: object) -> str | None:
    """The arXiv id ``value`` names, without version, or None.

    Takes ``2608.27351``, ``2608.27351v2``, ``arXiv:2608.27351``, ``hep-th/9901001v1`` and
    a link to its abstract, PDF or HTML page; an old-style archive name is lowercased.
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    whole = _ARXIV_ID.fullmatch(text)
    if whole is None:
        whole = _ARXIV_URL.match(text.split("?", 1)[0].split("#", 1)[0])
    if whole is None:
        return None
    found = whole.group(1)
    return found.lower() if "/" in found else found


def doi(value: object) -> str | None:
    """The DOI ``value`` names, lowercased, or None: ``10.1000/XYZ``, ``doi:10.1000/xyz``,
    ``https://doi.org/10.1000/xyz``."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.lower().startswith(("http://", "https://")):
        try:
            parts = urlsplit(text)
        except ValueError:
            return None
        if (parts.hostname or "").lower() not in _DOI_HOSTS:
            return None
        text = unquote(parts.path).lstrip("/")
    whole = _DOI.fullmatch(text)
    return whole.group(1).lower() if whole else None


def paper_id(*, arxiv: str | None, doi_value: str | None, key: str) -> str:
    """The identity of a page with these fields: ``arxiv:…``, else ``doi:…``, else ``path:KEY``."""
    found = arxiv_id(arxiv)
    if found:
        return f"arxiv:{found}"
    named = doi(doi_value)
    if named:
        return f"doi:{named}"[:MAX_PAPER_CHARS]
    return path_id(key)


def path_id(key: str) -> str:
    """The identity of a page known by its path alone."""
    return f"path:{key}"[:MAX_PAPER_CHARS]


def is_path_id(paper: str) -> bool:
    return paper.startswith("path:")


def from_links(links: list[str]) -> tuple[str | None, str | None]:
    """``(arXiv id, DOI)`` the first links that name one give (a feed entry's links)."""
    found_arxiv = next((a for a in map(arxiv_id, links) if a), None)
    found_doi = next((d for d in map(doi, links) if d), None)
    return found_arxiv, found_doi

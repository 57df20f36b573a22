"""The one vocabulary of tags, shared by the page side (front matter, feeds) and the filter
side (``subscribe``, ``broadcast --tag``).

Pure. A tag is 1-64 characters of letters, digits, ``-``, ``_`` and ``.`` (CONTRACT.md).
"Letters" means letters of any script (Unicode category ``L*``, so Korean tags such as
``강화학습`` work), each optionally followed by its combining marks (``M*``, needed by
scripts such as Devanagari); "digits" means decimal digits (``Nd``). A tag may not begin
with ``-``: in a filter ``--x`` would otherwise read as "exclude ``-x``". Tags are stored
and compared after Unicode compatibility normalisation and case folding (NFKC + casefold),
so ``Post-Training``, ``post-training`` and ``ＰＯＳＴ-training`` are one tag, on a page
and in a filter alike.
"""

from __future__ import annotations

import unicodedata

MAX_TAG_LENGTH = 64  # characters, after normalisation (CONTRACT.md)

_PUNCTUATION = frozenset("-_.")


def fold_tag(text: str) -> str:
    """The form tags are compared in: NFKC, casefolded, NFKC again.

    Total (any text has a folded form); :func:`normalize_tag` also validates.
    """
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def valid_chars(tag: str) -> bool:
    """Whether ``tag`` is made only of the characters a tag may hold, in a valid order."""
    if tag.startswith("-"):
        return False
    previous_is_letter = False
    for ch in tag:
        category = unicodedata.category(ch)
        if category.startswith("L"):
            previous_is_letter = True
        elif category.startswith("M"):
            if not previous_is_letter:
                return False
        elif category == "Nd" or ch in _PUNCTUATION:
            previous_is_letter = False
        else:
            return False
    return True


def is_stored_form(tag: str) -> bool:
    """Whether ``tag`` is a valid tag already in its stored (folded) form."""
    return 0 < len(tag) <= MAX_TAG_LENGTH and valid_chars(tag) and fold_tag(tag) == tag


def normalize_tag(value: object) -> str | None:
    """A tag in its stored form, or None when ``value`` is not a valid tag.

    A leading ``#`` is dropped (``#rl`` is ``rl``); numbers are accepted as text
    (``2026``); the text is folded (:func:`fold_tag`) and then must be a valid tag whose
    folded form is a fixed point, so ``normalize_tag(normalize_tag(x)) == normalize_tag(x)``.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        return None
    tag = fold_tag(value.strip().removeprefix("#"))
    return tag if is_stored_form(tag) else None

"""Labels used by the digest renderers."""

MESSAGES: dict[str, dict[str, str]] = {"en": {}, "ko": {}}

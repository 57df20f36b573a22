"""The pure rules, below the store: data in, data out, no I/O; they import only the ground
(``models``, ``errors``, ``tags``, the standard library).

``filters`` (the filter syntax; a filter x a page -> bool), ``digest`` (pages x a chat -> a
digest), ``ranking`` (votes -> tag weights), ``schedule`` (a chat's quiet hours and next
digest), ``alerts`` (the operators' alert rules), ``sources`` (a ``WIKI_SOURCES`` entry
taken apart: its public identity, its credentials), ``giturl`` (a git source's URL in
pip's form, taken apart and checked), ``urls`` (a source's address: redacted,
public, internal or not), ``feeds`` (a private feed's token, address and entries).
"""

# Nothing is taken from the package itself: its modules are imported by name.
__all__: list[str] = []

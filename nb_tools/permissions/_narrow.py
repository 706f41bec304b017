"""The narrowest rule that covers a call: what the approval card's "Always allow" offers
and adds (``bash(git log:*)``, ``edit_file(notebooks/**)``, ``web_fetch(domain:example.com)``).

``None`` means no rule narrower than "everything this tool does" covers the call (a shell
script the parser cannot read as literal words, a path outside the workspace, a patch
spread over the workspace root): then "Always allow" is not offered, since a broader rule
would allow more than the card showed.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Any

from nb_tools.permissions._hosts import HostError, url_host
from nb_tools.permissions._rules import _FILE_TOOLS, _patch_paths
from nb_tools.permissions._shell_rules import bash_rule_for

__all__ = ["narrowest_rule"]

_GLOB_SPECIAL = re.compile(r"[*?\[\]\\!#]")


def narrowest_rule(name: str, arguments: dict[str, Any] | None, root: Path) -> str | None:
    """The rule text "Always allow" adds for this call, or ``None`` (see the module)."""
    args = arguments or {}
    if name == "bash":
        command = args.get("command")
        return bash_rule_for(command) if isinstance(command, str) else None
    if name == "web_fetch":
        url = args.get("url")
        if not isinstance(url, str):
            return None
        try:
            return f"web_fetch(domain:{url_host(url)})"
        except HostError:
            return None
    if name == "apply_patch":
        patch = args.get("input")
        if not isinstance(patch, str):
            return None
        return _folder_rule(name, _patch_paths(patch), root)
    if name in _FILE_TOOLS:
        path = args.get(_FILE_TOOLS[name][0])
        return _folder_rule(name, [path], root) if isinstance(path, str) else None
    return name


def _folder_rule(name: str, paths: list[Any], root: Path) -> str | None:
    """``tool(folder/**)`` for the folder holding every path (relative to ``root``), or
    ``tool(/file)`` for one file at the root; ``None`` when a path is outside the root,
    odd (glob characters, control characters) or the only common folder is the root."""
    rels: list[str] = []
    root_s = posixpath.normpath(str(root).replace(os.sep, "/"))
    for path in paths:
        if not isinstance(path, str) or not path or path.startswith("~"):
            return None
        if any(ord(c) < 32 or c in "\x7f\u2028\u2029" for c in path):
            return None
        full = path if os.path.isabs(path) else posixpath.join(root_s, path.replace(os.sep, "/"))
        norm = posixpath.normpath(full)
        if norm == root_s or not norm.startswith(root_s.rstrip("/") + "/"):
            return None
        rel = posixpath.relpath(norm, root_s)
        if _GLOB_SPECIAL.search(rel) or rel != rel.strip():
            return None
        rels.append(rel)
    if not rels:
        return None
    folders = {posixpath.dirname(r) for r in rels}
    if len(rels) == 1 and folders == {""}:
        return f"{name}(/{rels[0]})"
    common = posixpath.commonpath(sorted(folders)) if "" not in folders else ""
    if not common:
        return None
    return f"{name}({common}/**)"

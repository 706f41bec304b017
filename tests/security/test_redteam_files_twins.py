"""Red team: two identical calls in one turn share one binding.

A card binds its call to the path it resolved (``_binding``), keyed by the call's
arguments. The loop makes every card of a turn before running any call; two calls with
the same arguments made the same key, and the first to run *took* the binding away, so
the second ran unbound: whatever the path resolved to by then was written. Between the
two, anything that runs in the turn (an approved shell command in the sandbox, which may
make links in the workspace but may not write ``.ipython/`` or ``.git/``) turns
``new.txt`` into a dangling link to a protected file that does not exist yet, and the
second call creates it: an IPython start-up script (runs in the next kernel, unsandboxed),
a shell rc file, ``.nb_tools/settings.json`` (the permission rules), a git hook.

The disk is checked: the protected file must not exist.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from files_attack import WRITERS, args_json, make_world, preview, read_all, tools

TARGETS = [
    ".ipython/profile_default/startup/00-x.py",
    ".bashrc",
    ".nb_tools/settings.json",
    ".git/hooks/post-checkout",
]
# Writers that can create a file that does not exist (the dangling link's target).
CREATORS = ["write_file", "patch_add", "create"]


def _link(root: Path, name: str, target: str) -> None:
    (root / name).unlink(missing_ok=True)
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    (root / name).symlink_to(root / target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("writer", CREATORS)
async def test_the_second_of_two_identical_calls_is_still_bound(
    tmp_path: Path, writer: str, target: str
) -> None:
    root = make_world(tmp_path) / "root"
    (root / ".nb_tools" / "settings.json").unlink()
    t = tools(root)
    key, make = WRITERS[writer]
    args: dict[str, Any] = make("new.txt")
    preview(t[key], args)  # the first call's card
    preview(t[key], args)  # the second's: same arguments, same key
    first = await t[key].call(args_json(args))
    assert not first.is_error, first.content
    await read_all(t, "new.txt")
    _link(root, "new.txt", target)  # made by a call that ran between the two
    second = await t[key].call(args_json(args))
    assert second.is_error, second.content
    assert not (root / target).exists()


async def test_control_two_identical_calls_on_an_unchanged_path_both_run(
    tmp_path: Path,
) -> None:
    root = make_world(tmp_path) / "root"
    t = tools(root)
    await read_all(t, "notes.txt")
    args = {"file_path": "notes.txt", "old_string": "secret", "new_string": "secret!"}
    preview(t["edit_file"], args)
    preview(t["edit_file"], args)
    assert not (await t["edit_file"].call(args_json(args))).is_error
    # The second sees the file the first wrote (its card's file is gone): refused by the
    # card check, or (no card seen) applied again. Either way the path held.
    await t["edit_file"].call(args_json(args))
    assert (root / "notes.txt").read_text().startswith("secret!")

"""A workspace for the glob and grep tests: ignore files at several levels, hidden files,
a nested git repository, binary, unicode, CRLF and symlinks."""

from __future__ import annotations

import os
from pathlib import Path

FILES: dict[str, bytes | str] = {
    # The folder above the workspace: rg reads its ignore files too.
    "../.gitignore": "parent_ignored.txt\n",
    ".gitignore": "*.log\n!keep.log\nbuild/\nsecret*.txt\n/anchored.txt\n!.github/\n",
    ".ignore": "ignored_by_ignore.txt\n",
    "a.py": "import os\n\ndef main():\n    print('hello world')\n    return 0\n",
    "b.txt": "Hello\nhello\nHELLO there\nnothing\n",
    "keep.log": "hello from keep\n",
    "debug.log": "hello from debug\n",
    "build/out.txt": "hello build\n",
    "anchored.txt": "hello anchored\n",
    "secret1.txt": "hello secret\n",
    "ignored_by_ignore.txt": "hello ignored\n",
    "parent_ignored.txt": "hello parent\n",
    ".hidden.txt": "hello hidden\n",
    ".hiddendir/x.txt": "hello hidden dir\n",
    ".github/workflow.yml": "name: hello ci\n",
    ".git/HEAD": "ref: hello\n",
    ".git/config": "[core]\nhello = 1\n",
    "sub/.gitignore": "*.md\n!README.md\n",
    "sub/notes.md": "hello notes\n",
    "sub/README.md": "hello readme\n",
    "sub/anchored.txt": "hello sub anchored\n",
    "sub/deep/c.py": "x = 'hello'\ny = x\n",
    "nested/.git/HEAD": "ref: hello\n",
    "nested/.git/info/exclude": "excluded.txt\n",
    "nested/excluded.txt": "hello excluded\n",
    "nested/kept.txt": "hello kept\nbye\n",
    "nested/trace.log": "hello log in nested repo\n",
    "bin.dat": b"hello\x00world\n",
    "uni/\u00fcn\u00ef.txt": "h\u00e9llo w\u00f6rld\n\u03c7\u03b1\u03af\u03c1\u03b5\u03c4\u03b5 hello\n",
    "crlf.txt": b"hello\r\nworld\r\n",
    "noeol.txt": "last hello",
    "empty.txt": "",
    "long.txt": "hello " + "x" * 1000 + "\n",
    "multi.txt": "ab\nab\nab\nxx\nfoo foo\nfoo\nbar\n",
}

# What rg lists in the workspace (checked against real rg in the tests).
VISIBLE = sorted(
    [
        ".github/workflow.yml",
        "a.py",
        "b.txt",
        "keep.log",
        "sub/README.md",
        "sub/anchored.txt",
        "sub/deep/c.py",
        "nested/kept.txt",
        "bin.dat",
        "uni/\u00fcn\u00ef.txt",
        "crlf.txt",
        "noeol.txt",
        "empty.txt",
        "long.txt",
        "multi.txt",
    ]
)


def make_tree(base: Path) -> Path:
    """Write the tree under ``base/ws`` (its parent gets a .gitignore); returns the root."""
    root = base / "ws"
    root.mkdir()
    for rel, content in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_bytes(content.encode("utf-8"))
        else:
            path.write_bytes(content)
    os.symlink("a.py", root / "link.py")
    os.symlink("sub", root / "linkdir")
    return root

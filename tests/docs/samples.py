"""Extract the code samples of the documentation: fenced ``python`` blocks (run as one
script per page) and ``ipython`` blocks (run as the cells of one notebook per page)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_FENCE = re.compile(
    r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$", re.M | re.S
)


@dataclass(frozen=True)
class Sample:
    page: str
    line: int
    lang: str
    code: str


def pages() -> list[Path]:
    return [
        *sorted(p for p in DOCS.rglob("*.md") if "reference" not in p.parts),
        ROOT / "README.md",
    ]


def samples(page: Path) -> list[Sample]:
    text = page.read_text(encoding="utf-8")
    found = []
    for m in _FENCE.finditer(text):
        indent = len(m.group("indent"))
        body = "\n".join(line[indent:] for line in m.group("body").splitlines())
        found.append(
            Sample(
                page=str(page.relative_to(ROOT)),
                line=text.count("\n", 0, m.start()) + 1,
                lang=m.group("lang"),
                code=body + "\n",
            )
        )
    return found

"""Loading the extension stays cheap: no SDK, no widgets, no agent loop until a run."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_extension_imports_nothing_heavy() -> None:
    code = (
        "import sys, nb_tools, nb_tools.jupyter, nb_tools.jupyter._magics\n"
        "heavy = ('anthropic', 'ipywidgets', 'nb_tools.agent', 'nb_tools.agent._agent')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names() -> None:
    import nb_tools.jupyter as j

    assert j.__all__ == sorted(j.__all__)
    assert j.TRANSCRIPT_MIME == "application/vnd.nbtools.transcript+json"
    from nb_tools.transcript._recorder import TRANSCRIPT_MIME

    assert TRANSCRIPT_MIME == j.TRANSCRIPT_MIME
    for name in j.__all__:
        assert getattr(j, name) is not None

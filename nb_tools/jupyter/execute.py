"""Run a notebook headless in a real kernel and print what its agent runs did.

``python -m nb_tools.jupyter.execute notebooks/quickstart.ipynb [--output OUT]`` executes
every cell with nbclient (the kernel starts in the notebook's folder), writes the executed
notebook, and prints each transcript's plain-text form. Exits non-zero when a cell fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

TRANSCRIPT_MIME = "application/vnd.nbtools.transcript+json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nb_tools.jupyter.execute")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--output", type=Path, help="where to write the executed notebook")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)

    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(args.notebook, as_version=4)
    client = NotebookClient(
        nb,
        timeout=args.timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(args.notebook.resolve().parent)}},
    )
    started = time.perf_counter()
    failed: str | None = None
    try:
        client.execute()
    except CellExecutionError as exc:
        failed = str(exc)
    elapsed = time.perf_counter() - started
    if args.output:
        nbformat.write(nb, args.output)

    runs = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if TRANSCRIPT_MIME in data:
                runs += 1
                print(f"--- agent run {runs} ---")
                print(data.get("text/plain", ""))
    print(f"{args.notebook}: {len(nb.cells)} cells, {runs} agent runs, {elapsed:.1f} s")
    if args.output:
        print(f"executed notebook written to {args.output}")
    if failed:
        print(failed, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

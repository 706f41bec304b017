"""Suite-wide guards: no test reaches a real model, whatever the environment holds."""

from __future__ import annotations

import os

# Before anything imports the SDK: no real key, and a provider built without an explicit
# base URL points at a closed loopback port instead of the real API.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
os.environ["NB_TOOLS_BLOCK_REAL_MODELS"] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")

"""Suite-wide guards: no test reaches a real model, whatever the environment holds."""

from __future__ import annotations

import os

# Before anything imports the SDK: no real key or endpoint from the environment, and the
# Anthropic provider refuses any base URL that is not on loopback (NB_TOOLS_BLOCK_REAL_MODELS).
# Kernels and servers started by tests inherit this environment.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)
os.environ["NB_TOOLS_BLOCK_REAL_MODELS"] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")

from nb_tools.testing._guard import block_real_models  # noqa: F401  (autouse fixture)

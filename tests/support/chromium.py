"""Debian's headless Chromium, as the browser tests and the website test launch it."""

from __future__ import annotations

import os
from pathlib import Path

# Debian's Chromium by default; CHROMIUM names another Chromium-based browser (the GitHub
# workflow uses the Google Chrome that GitHub's Ubuntu runners come with).
CHROMIUM = Path(os.environ.get("CHROMIUM") or "/usr/bin/chromium")
# Without the background-networking flags Chromium's own connections (updates, sync, field
# trials) are refused by the closed network here, many at a time.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

"""``biovqa report``: turn scored runs into markdown, HTML and PNGs."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def report_command(runs: list[Path], out: Path) -> dict:
    """Write the report for ``runs`` into ``out``; returns the written paths."""
    from biovqa.report.build import write_report

    command = "biovqa report " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if len(sys.argv) > 2 else ""
    return write_report(runs, out, command=command or f"biovqa report {' '.join(map(str, runs))} --out {out}")

#!/usr/bin/env python3
"""Print the most recent git tag reachable from HEAD, or nothing when there is none."""
import subprocess
import sys

result = subprocess.run(
    ["git", "describe", "--tags", "--abbrev=0"], capture_output=True, text=True
)
if result.returncode == 0:
    print(result.stdout.strip())
else:
    sys.exit(0)

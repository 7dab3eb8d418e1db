"""MCP's skills extension as `skillctl mcp` serves it, sent as raw requests through the
official MCP Python SDK (`mcp` on PyPI): `skills/list`, `skills/get`,
`resources/directory/read` and `resources/read`, every file's digest and size checked
against the bytes read. Over stdio and streamable HTTP.

Run by `cargo xtask mcp-interop`, which installs the pinned SDK under target/ and passes
PYTHONPATH. Usage: skills_ext_raw.py --skillctl PATH --transport stdio|http

Each check prints one line; the script exits non-zero at the first that fails.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import httpx2 as httpx
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

DEADLINE = 20.0


def check(condition, message, transport):
    if not condition:
        raise AssertionError(message)
    print(f"python raw client over {transport}: {message}: ok")


def write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as f:
        f.write(content)


def fixture(root):
    write(os.path.join(root, "notes", "SKILL.md"),
          "---\nname: notes\ndescription: Notes for the interop run; use them when it asks.\n"
          "version: 1.0\nmetadata:\n  release: '2'\n---\nRead references/guide.md.\n")
    write(os.path.join(root, "notes", "references", "guide.md"), "The guide.\n")
    write(os.path.join(root, "notes", "assets", "logo.bin"), bytes([0, 159, 146, 150, 255]))
    write(os.path.join(root, "runner", "SKILL.md"),
          "---\nname: runner\ndescription: Runs a script; use it when asked.\n---\nRun it.\n")
    write(os.path.join(root, "runner", "scripts", "run.sh"), "echo run\n")


async def raw(session, method, params):
    return await session._dispatcher.send_raw_request(method, params)


async def scenario(session, transport):
    init = await session.initialize()
    caps = init.capabilities.model_dump(by_alias=True, exclude_none=True)
    check(caps.get("extensions", {}).get("io.modelcontextprotocol/skills") == {"directoryRead": True},
          f"capabilities.extensions at {init.protocol_version}", transport)
    listed = await raw(session, "skills/list", {})
    check(listed.get("ttlMs") == 60000 and listed.get("cacheScope") == "private",
          "skills/list carries ttlMs and cacheScope", transport)
    skills = listed["skills"]
    check([s["uri"] for s in skills] == ["skill://personal/notes/SKILL.md"],
          "skills/list lists notes alone (runner has scripts)", transport)
    entry = skills[0]
    check(entry["frontmatter"] == {"name": "notes",
                                   "description": "Notes for the interop run; use them when it asks.",
                                   "version": 1.0, "metadata": {"release": "2"}},
          "the frontmatter is its YAML 1.2 core-schema value", transport)
    got = await raw(session, "skills/get", {"uri": entry["uri"]})
    check(got["skill"] == entry and got.get("ttlMs") == 60000, "skills/get returns the listed entry", transport)
    for file in entry["resources"]:
        read = await raw(session, "resources/read", {"uri": file["uri"]})
        contents = read["contents"][0]
        data = contents["text"].encode() if "text" in contents else base64.b64decode(contents["blob"])
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        check(len(data) == file["size"] and digest == file["digest"],
              f"{file['uri']}: {file['size']} bytes, {file['digest'][:15]}... as read", transport)
    try:
        await raw(session, "skills/get", {"uri": "skill://personal/runner/SKILL.md"})
        code = None
    except MCPError as e:
        code = e.error.code
    check(code == -32602, "skills/get of a skill not served answers -32602", transport)
    top = await raw(session, "resources/directory/read", {"uri": "skill://personal/notes"})
    shown = sorted((r["name"], r.get("mimeType")) for r in top["resources"])
    check(shown == [("SKILL.md", "text/markdown"), ("assets", "inode/directory"),
                    ("references", "inode/directory")],
          "resources/directory/read of the skill's root", transport)
    refs = await raw(session, "resources/directory/read", {"uri": "skill://personal/notes/references"})
    check([r["uri"] for r in refs["resources"]] == ["skill://personal/notes/references/guide.md"],
          "resources/directory/read of references/", transport)
    try:
        await raw(session, "resources/directory/read", {"uri": "skill://personal/notes/SKILL.md"})
        code = None
    except MCPError as e:
        code = e.error.code
    check(code == -32602, "resources/directory/read of a file answers -32602", transport)


async def run_stdio(skillctl, root):
    params = StdioServerParameters(command=skillctl, args=["mcp", "--no-defaults", "--root", f"personal={root}"])
    async with stdio_client(params) as (read, write_):
        async with ClientSession(read, write_) as session:
            await scenario(session, "stdio")


async def run_http(skillctl, root):
    proc = subprocess.Popen(
        [skillctl, "mcp", "--no-defaults", "--root", f"personal={root}", "--http", "127.0.0.1:0"],
        stderr=subprocess.PIPE, text=True)
    try:
        address = json.loads(proc.stderr.readline())["listening"]
        async with httpx.AsyncClient(timeout=DEADLINE) as client:
            async with streamable_http_client(f"http://{address}/mcp", http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await scenario(session, "http")
    finally:
        proc.terminate()
        proc.wait(timeout=DEADLINE)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skillctl", required=True)
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "skills")
        fixture(root)
        run = run_stdio if options.transport == "stdio" else run_http
        asyncio.run(run(options.skillctl, root))
    print(f"python raw client over {options.transport}: every check passed")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - report any failure plainly
        print(f"skills_ext_raw.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)

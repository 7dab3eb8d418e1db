"""Interoperability of `skillctl mcp` with the official MCP Python SDK (`mcp` on PyPI).

Run by `cargo xtask mcp-interop`, which installs the pinned SDK under target/ and passes
PYTHONPATH. Usage: mcp_client.py --skillctl PATH --transport stdio|http

Each step is an assertion; the script exits non-zero at the first one that fails.
"""

import argparse
import asyncio
import json
import logging
import os
import subprocess
import sys
import tempfile

import httpx2 as httpx
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

DEADLINE = 20.0
RUNTIME_TOOLS = {"skills_list", "skills_search", "skills_load", "skills_unload", "skills_read", "skills_run_script", "skill"}


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def skill(root, name, body, extra=""):
    write(os.path.join(root, name, "SKILL.md"),
          f"---\nname: {name}\ndescription: The {name} skill; use it when the interop test asks.\n{extra}---\n{body}")


def text_of(result):
    return "".join(getattr(block, "text", "") for block in result.content)


def is_error(result):
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


async def scenario(session, personal, changed, fifo):
    init = await session.initialize()
    instructions = getattr(init, "instructions", "") or ""
    check("<available_skills>" in instructions, f"instructions: {instructions[:200]}")

    tools = await session.list_tools()
    names = {t.name for t in tools.tools}
    check(names == RUNTIME_TOOLS, f"tools: {sorted(names)}")

    found = await session.call_tool("skills_search", {"query": "reporter"})
    check(not is_error(found) and "reporter" in text_of(found), f"search: {text_of(found)}")

    loaded = await session.call_tool("skills_load", {"names": ["reporter"]})
    check(not is_error(loaded), f"load: {text_of(loaded)}")
    check("reporter" in text_of(loaded), "the receipt names the skill")

    read = await session.call_tool("skills_read", {"path": "references/guide.md"})
    check(not is_error(read) and "Guide text." in text_of(read), f"read: {text_of(read)}")

    outside = await session.call_tool("skills_read", {"path": "../../../etc/passwd"})
    check(is_error(outside) and text_of(outside).startswith("SKILL_PATH_INVALID"),
          f"outside: {text_of(outside)}")

    ran = await session.call_tool("skills_run_script", {"path": "scripts/report.sh", "args": ["x"]})
    check(not is_error(ran) and "report x" in text_of(ran), f"run: {text_of(ran)}")

    await session.call_tool("skills_load", {"names": ["local-tool"], "mode": "add"})
    untrusted = await session.call_tool("skills_run_script", {"skill": "local-tool", "path": "scripts/local.sh"})
    check(is_error(untrusted) and text_of(untrusted).startswith("SKILL_UNTRUSTED"),
          f"untrusted: {text_of(untrusted)}")

    resources = await session.list_resources()
    uris = {str(r.uri) for r in resources.resources}
    check("skill://personal/reporter/SKILL.md" in uris, f"resources: {sorted(uris)}")
    check(not any("/scripts/" in u for u in uris), "scripts are never resources")
    contents = await session.read_resource("skill://personal/reporter/references/guide.md")
    check(any("Guide text." in getattr(c, "text", "") for c in contents.contents), "resource text")

    prompts = await session.list_prompts()
    check("reporter" in {p.name for p in prompts.prompts}, "prompts")
    prompt = await session.get_prompt("reporter", {"arguments": "weekly"})
    prompt_text = "".join(getattr(m.content, "text", "") for m in prompt.messages)
    check("Write the report." in prompt_text and "weekly" in prompt_text, f"prompt: {prompt_text[:200]}")

    await cancelled_script_dies(session, fifo)

    skill(personal, "newcomer", "New.\n")
    await asyncio.wait_for(changed.wait(), DEADLINE)


async def cancelled_script_dies(session, fifo):
    """A cancelled call kills the script and its children: the FIFO they hold open for
    writing reaches end of file only when every one of them is dead."""
    loop = asyncio.get_running_loop()
    call = asyncio.create_task(
        session.call_tool("skills_run_script", {"skill": "reporter", "path": "scripts/long.sh", "args": [fifo]}))
    reader = await asyncio.wait_for(loop.run_in_executor(None, lambda: open(fifo, "rb")), DEADLINE)
    call.cancel()
    try:
        await call
    except asyncio.CancelledError:
        pass
    data = await asyncio.wait_for(loop.run_in_executor(None, reader.read), DEADLINE)
    reader.close()
    check(data == b"", f"the FIFO held data: {data!r}")


async def run_stdio(skillctl, personal, project, fifo):
    changed = asyncio.Event()

    async def on_message(message):
        if type(message).__name__ == "ToolListChangedNotification":
            changed.set()

    params = StdioServerParameters(
        command=skillctl,
        args=["mcp", "--no-defaults", "--root", f"personal={personal}", "--root", f"project={project}"],
    )
    async with stdio_client(params) as (read, write_):
        async with ClientSession(read, write_, message_handler=on_message) as session:
            await scenario(session, personal, changed, fifo)

    # Trusted, the same project script runs.
    params = StdioServerParameters(
        command=skillctl,
        args=["mcp", "--no-defaults", "--root", f"project={project}", "--trust", "project"],
    )
    async with stdio_client(params) as (read, write_):
        async with ClientSession(read, write_) as session:
            await session.initialize()
            await session.call_tool("skills_load", {"names": ["local-tool"]})
            ran = await session.call_tool("skills_run_script", {"path": "scripts/local.sh"})
            check(not is_error(ran) and "local ran" in text_of(ran), f"trusted: {text_of(ran)}")


class Terminations(logging.Handler):
    """Keeps the warnings the client logs when the server refuses its session's DELETE."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.failed = []

    def emit(self, record):
        message = record.getMessage()
        if message.startswith("Session termination failed"):
            self.failed.append(message)
        # With a handler of its own the logger no longer falls back to stderr: keep the
        # client's other warnings where a reader of the run can see them.
        elif logging.lastResort is not None:
            logging.lastResort.handle(record)


async def run_http(skillctl, personal, project, workdir, fifo):
    token_file = os.path.join(workdir, "token")
    write(token_file, "s3cret\n")
    proc = subprocess.Popen(
        [skillctl, "mcp", "--no-defaults", "--root", f"personal={personal}", "--root", f"project={project}",
         "--http", "127.0.0.1:0", "--token-file", token_file],
        stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        address = json.loads(line)["listening"]
        url = f"http://{address}/mcp"
        async with httpx.AsyncClient() as plain:
            refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            check(refused.status_code == 401, f"without the token: {refused.status_code}")
        changed = asyncio.Event()

        async def on_message(message):
            if type(message).__name__ == "ToolListChangedNotification":
                changed.set()

        # The client ends its session with a DELETE when it closes, and logs a warning when
        # the server's answer is not one it takes for success. (Its other warnings are its
        # own: one about a message still arriving as it closes comes and goes with timing.)
        terminations = Terminations()
        logging.getLogger("mcp.client.streamable_http").addHandler(terminations)
        client = httpx.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=DEADLINE)
        async with client:
            async with streamable_http_client(url, http_client=client) as streams:
                read, write_ = streams[0], streams[1]
                async with ClientSession(read, write_, message_handler=on_message) as session:
                    await scenario(session, personal, changed, fifo)
        check(not terminations.failed, f"ending the session: {terminations.failed}")
    finally:
        proc.terminate()
        proc.wait(timeout=DEADLINE)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skillctl", required=True)
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        personal = os.path.join(tmp, "personal")
        project = os.path.join(tmp, "project")
        skill(personal, "reporter", "Write the report.\n", "argument-hint: the period\n")
        write(os.path.join(personal, "reporter", "references", "guide.md"), "Guide text.\n")
        write(os.path.join(personal, "reporter", "scripts", "report.sh"), 'echo "report $1"\n')
        # Holds the FIFO open for writing in itself and in a child that left its group.
        write(os.path.join(personal, "reporter", "scripts", "long.sh"),
              'exec 3>"$1"\nsetsid sleep 1000 &\nsleep 1000\n')
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        skill(project, "local-tool", "Local.\n")
        write(os.path.join(project, "local-tool", "scripts", "local.sh"), "echo local ran\n")
        if options.transport == "stdio":
            asyncio.run(run_stdio(options.skillctl, personal, project, fifo))
        else:
            asyncio.run(run_http(options.skillctl, personal, project, tmp, fifo))
    print(f"python mcp client over {options.transport}: every step passed")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - report any failure plainly
        print(f"mcp_client.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)

"""skillctl's MCP source against a server that is not ours: `ext_skills_server.mjs`,
written with the `@olaservo/ext-skills` server SDK. Run by `cargo xtask mcp-interop`.
Usage: mcp_source_check.py --skillctl PATH --node PATH (NODE_PATH names the packages)

The checks run twice: with the server over stdio (`--mcp-server ext=COMMAND`), then over
streamable HTTP on loopback (`--mcp-server ext=http://127.0.0.1:PORT/mcp`).

A skill tampered with after the listing must fail verification at its load; a skill that
changes must be published anew by the index (`skills_changed`) and load as its new version.
Each check prints one line; the script exits non-zero at the first that fails.
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading

DEADLINE = 20.0
HERE = os.path.dirname(os.path.abspath(__file__))


TRANSPORT = ["stdio"]


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"mcp source over {TRANSPORT[0]}: {message}: ok")


def skill(root, name, description, body):
    os.makedirs(os.path.join(root, name))
    with open(os.path.join(root, name, "SKILL.md"), "w", encoding="utf-8") as f:
        f.write(f"---\nname: {name}\ndescription: {description}\n---\n{body}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skillctl", required=True)
    parser.add_argument("--node", required=True)
    options = parser.parse_args()
    for transport in ["stdio", "http"]:
        TRANSPORT[0] = transport
        run(options, transport)
        print(f"mcp source over {transport}: every check passed")


def run(options, transport):
    with tempfile.TemporaryDirectory() as tmp:
        skill(tmp, "tampered", "A skill tampered with after the listing; use it when asked.", "Original.\n")
        skill(tmp, "changing", "The first version of a skill that changes; use it when asked.", "Version one.\n")
        command = [options.node, os.path.join(HERE, "ext_skills_server.mjs"), tmp]
        http = None
        if transport == "http":
            http = subprocess.Popen(command + ["--http"], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, text=True)
            address = json.loads(http.stdout.readline())["listening"]
            server = f"ext=http://{address}/mcp"
        else:
            server = "ext=" + " ".join(command)
        proc = subprocess.Popen(
            [options.skillctl, "session", "--no-defaults", "--events", "--mcp-server", server],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout], daemon=True).start()
        pending = []

        def call(id_, tool, input_):
            proc.stdin.write(json.dumps({"id": id_, "tool": tool, "input": input_}) + "\n")
            proc.stdin.flush()
            while True:
                line = json.loads(lines.get(timeout=DEADLINE))
                if line.get("id") == id_:
                    return line
                pending.append(line)

        def event(predicate):
            while True:
                line = pending.pop(0) if pending else json.loads(lines.get(timeout=DEADLINE))
                if "event" in line and predicate(line):
                    return line

        try:
            listed = call(1, "skills_list", {})
            names = sorted(s["qualified_name"] for s in listed["output"]["skills"])
            check(names == ["ext:changing", "ext:tampered"], f"both skills listed from their entries: {names}")
            loaded = call(2, "skills_load", {"names": ["ext:tampered"]})
            message = loaded.get("error", {}).get("message", "")
            check(not loaded["ok"] and "failed verification" in message,
                  f"the skill tampered with after the listing fails verification ({message[:110]}...)")
            changed = event(lambda e: e["event"] == "skills_changed" and "ext:changing" in e.get("changed", []))
            check(True, f"the index published the changed skill (generation {changed['generation']})")
            loaded = call(3, "skills_load", {"names": ["ext:changing"]})
            body = loaded["output"]["active_skills"][0]["body"] if loaded["ok"] else loaded
            check(body == "Version two.\n", f"the changed skill loads as its new version: {body!r}")
        finally:
            proc.stdin.close()
            proc.wait(timeout=DEADLINE)
            if http is not None:
                http.kill()
                http.wait(timeout=DEADLINE)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - report any failure plainly
        print(f"mcp_source_check.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)

#!/usr/bin/env python3
"""A minimal agent host in Python, standard library only, written from PROTOCOL.md alone.

It starts `skillctl session --events`, drives it the way a host does around a model
(hello, tool definitions, the model's tool calls, check_tool before the host's own tools,
plugins, live changes), checks every answer, and exits non-zero at the first surprise.
`cargo xtask host-example` builds skillctl and runs it; CI runs that.

Usage: host.py --skillctl PATH
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading

DEADLINE = 20.0  # seconds for any one answer or event


class Session:
    """One `skillctl session`: requests out, responses and events in."""

    def __init__(self, skillctl, args, cwd):
        self.proc = subprocess.Popen(
            [skillctl, "session", "--no-defaults", "--events", *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.responses = queue.Queue()
        self.events = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            message = json.loads(line)
            # Lines without an id are events (PROTOCOL.md, "Event lines").
            (self.events if "id" not in message else self.responses).put(message)
        self.responses.put(None)

    def call(self, request, /, **input):
        request_id = self.next_id
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": request_id, "tool": request, "input": input}) + "\n")
        self.proc.stdin.flush()
        response = self.responses.get(timeout=DEADLINE)
        check(response is not None, "the session ended early")
        check(response["id"] == request_id, f"id mismatch: {response}")
        return response

    def ok(self, request, /, **input):
        response = self.call(request, **input)
        check(response["ok"], f"{request} failed: {response}")
        return response["output"]

    def error(self, request, /, **input):
        response = self.call(request, **input)
        check(not response["ok"], f"{request} should have failed: {response}")
        return response["error"]["code"]

    def event(self, name):
        while True:
            event = self.events.get(timeout=DEADLINE)
            if event["event"] == name:
                return event

    def close(self):
        self.proc.stdin.close()
        code = self.proc.wait(timeout=DEADLINE)
        check(code == 0, f"skillctl exited with {code}")


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def skill(root, name, description, body, extra=""):
    write(
        os.path.join(root, name, "SKILL.md"),
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}",
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skillctl", required=True)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "skills")
        skill(root, "release-notes", "Writes release notes; use when asked for a changelog.",
              "Run scripts/version.sh, then write the notes.\n",
              "allowed-tools: Read Bash(git log:*) Bash(git tag:*)\n")
        write(os.path.join(root, "release-notes", "scripts", "version.sh"), "echo 1.2.3\n")
        write(os.path.join(root, "release-notes", "references", "style.md"), "Short lines.\n")
        audit = os.path.join(tmp, "audit.jsonl")
        s = Session(options.skillctl, [f"--root=personal={root}", f"--audit={audit}"], tmp)

        hello = s.ok("hello")
        check(hello["protocol"] == "1", f"protocol {hello}")
        tools = {t["name"]: t for t in s.ok("tool_definitions")}
        check(set(tools) == {"skills_list", "skills_search", "skills_load", "skills_unload",
                             "skills_read", "skills_run_script", "skill"}, f"tools {sorted(tools)}")
        check("register_plugin" not in tools, "a host-only request was offered to the model")
        check("release-notes" in tools["skill"]["description"], "the skill tool lists skills")

        # The model loads the skill, reads a reference and runs its script.
        receipt = s.ok("skills_load", names=["release-notes"])
        check(receipt["active_skills"][0]["body"].startswith("Run scripts/version.sh"), "body")
        check(s.ok("skills_read", path="references/style.md")["content"] == "Short lines.\n", "read")
        check(s.error("skills_read", path="scripts/version.sh") == "SKILL_SCRIPT_NOT_READABLE",
              "scripts are not read")
        check(s.ok("skills_run_script", path="scripts/version.sh")["stdout"] == "1.2.3\n", "run")

        # The host asks before running its own tools.
        def bash(command):
            return s.ok("check_tool", tool="Bash", input={"command": command})["decision"]
        check(bash("git log --oneline") == "allow", "git log is allowed")
        check(bash("rm -rf /") == "deny", "rm is denied")

        # A skill created while the session runs appears.
        skill(root, "triage", "Triages bug reports; use when a new issue arrives.", "Label it.\n")
        changed = s.event("skills_changed")
        check("personal:triage" in changed["added"], f"added: {changed}")
        names = [k["name"] for k in s.ok("skills_list")["skills"]]
        check(names == ["release-notes", "triage"], f"listed: {names}")

        # An edit to the active skill: the pinned version stays in force until loaded again.
        skill(root, "release-notes", "Writes release notes; use when asked for a changelog.",
              "Only read.\n", "allowed-tools: Read\n")
        outdated = s.event("active_skill_outdated")
        check(outdated["skill"] == "personal:release-notes", f"outdated: {outdated}")
        check(bash("git log") == "allow", "the pinned rules stay in force")
        s.ok("skills_load", names=["release-notes"])
        check(bash("git log") == "deny", "loading again pins the new rules")

        # A plugin manager registers a folder at run time; over the wire it is untrusted.
        plugin = os.path.join(tmp, "plugin")
        skill(plugin, "deploy", "Deploys the service; use when asked to ship.", "Ship it.\n")
        write(os.path.join(plugin, "deploy", "scripts", "ship.sh"), "echo shipped\n")
        check(s.ok("register_plugin", id="acme", root=plugin)["skills"] == 1, "registered")
        # release-notes now restricts tools to Read; a replace-mode load is the runtime
        # spec's skill switching: it ends release-notes (as unloading it would) and loads
        # the plugin's skill in its place.
        switched = s.ok("skills_load", names=["acme:deploy"])
        check([k["name"] for k in switched["active_skills"]] == ["deploy"], f"switched: {switched}")
        check(s.error("skills_run_script", skill="acme:deploy", path="scripts/ship.sh")
              == "SKILL_UNTRUSTED", "protocol-registered plugins are untrusted")
        check(s.ok("unregister_plugin", id="acme")["removed"] == 1, "unregistered")
        active = [k["name"] for k in s.ok("skills_list")["skills"] if k["active"]]
        check(active == [], f"the plugin's skill was deactivated: {active}")
        s.close()

        with open(audit, encoding="utf-8") as f:
            events = [json.loads(line)["event"] for line in f]
        for expected in ["skill_activated", "skill_file_read", "script_read_blocked",
                         "script_executed", "tool_execution_in_skill",
                         "tool_restriction_violated", "plugin_registered",
                         "plugin_unregistered", "skill_deactivated"]:
            check(expected in events, f"{expected} missing from the audit: {events}")
    print("host.py: every step answered as PROTOCOL.md says")


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, queue.Empty) as e:
        print(f"host.py: {e or 'no answer within the deadline'}", file=sys.stderr)
        sys.exit(1)

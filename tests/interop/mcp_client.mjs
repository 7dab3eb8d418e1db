// Interoperability of `skillctl mcp` with the official MCP TypeScript SDK
// (`@modelcontextprotocol/sdk` on npm). Run by `cargo xtask mcp-interop`, which installs the
// pinned SDK under target/ and passes NODE_PATH.
// Usage: node mcp_client.mjs --skillctl PATH --transport stdio|http

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.env.NODE_PATH ?? ".", "x.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ToolListChangedNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");

const DEADLINE_MS = 20000;
const RUNTIME_TOOLS = ["skill", "skills_list", "skills_load", "skills_read", "skills_run_script", "skills_search", "skills_unload"];

function check(condition, message) {
  if (!condition) throw new Error(message);
}

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function skill(root, name, body, extra = "") {
  write(path.join(root, name, "SKILL.md"),
    `---\nname: ${name}\ndescription: The ${name} skill; use it when the interop test asks.\n${extra}---\n${body}`);
}

const textOf = (result) => result.content.map((c) => c.text ?? "").join("");

function withDeadline(promise, what) {
  return Promise.race([
    promise,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} within the deadline`)), DEADLINE_MS).unref()),
  ]);
}

async function scenario(client, personal, fifo) {
  let changed;
  const listChanged = new Promise((resolve) => { changed = resolve; });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());

  const instructions = client.getInstructions() ?? "";
  check(instructions.includes("<available_skills>"), `instructions: ${instructions.slice(0, 200)}`);

  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  check(JSON.stringify(tools) === JSON.stringify(RUNTIME_TOOLS), `tools: ${tools}`);

  const found = await client.callTool({ name: "skills_search", arguments: { query: "reporter" } });
  check(!found.isError && textOf(found).includes("reporter"), `search: ${textOf(found)}`);

  const loaded = await client.callTool({ name: "skills_load", arguments: { names: ["reporter"] } });
  check(!loaded.isError && textOf(loaded).includes("reporter"), `load: ${textOf(loaded)}`);

  const read = await client.callTool({ name: "skills_read", arguments: { path: "references/guide.md" } });
  check(!read.isError && textOf(read).includes("Guide text."), `read: ${textOf(read)}`);

  const outside = await client.callTool({ name: "skills_read", arguments: { path: "../../../etc/passwd" } });
  check(outside.isError && textOf(outside).startsWith("SKILL_PATH_INVALID"), `outside: ${textOf(outside)}`);

  const ran = await client.callTool({ name: "skills_run_script", arguments: { path: "scripts/report.sh", args: ["x"] } });
  check(!ran.isError && textOf(ran).includes("report x"), `run: ${textOf(ran)}`);

  await client.callTool({ name: "skills_load", arguments: { names: ["local-tool"], mode: "add" } });
  const untrusted = await client.callTool({
    name: "skills_run_script", arguments: { skill: "local-tool", path: "scripts/local.sh" },
  });
  check(untrusted.isError && textOf(untrusted).startsWith("SKILL_UNTRUSTED"), `untrusted: ${textOf(untrusted)}`);

  const uris = (await client.listResources()).resources.map((r) => r.uri);
  check(uris.includes("skill://personal/reporter/SKILL.md"), `resources: ${uris}`);
  check(!uris.some((u) => u.includes("/scripts/")), "scripts are never resources");
  const contents = await client.readResource({ uri: "skill://personal/reporter/references/guide.md" });
  check(contents.contents.some((c) => (c.text ?? "").includes("Guide text.")), "resource text");

  const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  check(prompts.includes("reporter"), `prompts: ${prompts}`);
  const prompt = await client.getPrompt({ name: "reporter", arguments: { arguments: "weekly" } });
  const promptText = prompt.messages.map((m) => m.content.text ?? "").join("");
  check(promptText.includes("Write the report.") && promptText.includes("weekly"), `prompt: ${promptText.slice(0, 200)}`);

  await cancelledScriptDies(client, fifo);

  skill(personal, "newcomer", "New.\n");
  await withDeadline(listChanged, "tools/list_changed");
}

// A cancelled call kills the script and its children: the FIFO they hold open for writing
// reaches end of file only when every one of them is dead.
async function cancelledScriptDies(client, fifo) {
  const abort = new AbortController();
  const call = client.callTool(
    { name: "skills_run_script", arguments: { skill: "reporter", path: "scripts/long.sh", args: [fifo] } },
    undefined,
    { signal: abort.signal },
  ).catch(() => "cancelled");
  const reader = await withDeadline(fs.promises.open(fifo, "r"), "the script opening the FIFO");
  abort.abort();
  await call;
  const stream = reader.createReadStream();
  let data = "";
  stream.on("data", (chunk) => { data += chunk; });
  await withDeadline(new Promise((resolve) => stream.on("close", resolve)), "end of file on the FIFO");
  check(data === "", `the FIFO held data: ${data}`);
}

async function runStdio(skillctl, personal, project, fifo) {
  const client = new Client({ name: "interop", version: "1.0.0" });
  await client.connect(new StdioClientTransport({
    command: skillctl,
    args: ["mcp", "--no-defaults", "--root", `personal=${personal}`, "--root", `project=${project}`],
  }));
  try {
    await scenario(client, personal, fifo);
  } finally {
    await client.close();
  }
  const trusted = new Client({ name: "interop", version: "1.0.0" });
  await trusted.connect(new StdioClientTransport({
    command: skillctl,
    args: ["mcp", "--no-defaults", "--root", `project=${project}`, "--trust", "project"],
  }));
  try {
    await trusted.callTool({ name: "skills_load", arguments: { names: ["local-tool"] } });
    const ran = await trusted.callTool({ name: "skills_run_script", arguments: { path: "scripts/local.sh" } });
    check(!ran.isError && textOf(ran).includes("local ran"), `trusted: ${textOf(ran)}`);
  } finally {
    await trusted.close();
  }
}

async function runHttp(skillctl, personal, project, tmp, fifo) {
  const tokenFile = path.join(tmp, "token");
  write(tokenFile, "s3cret\n");
  const server = spawn(skillctl, [
    "mcp", "--no-defaults", "--root", `personal=${personal}`, "--root", `project=${project}`,
    "--http", "127.0.0.1:0", "--token-file", tokenFile,
  ], { stdio: ["ignore", "ignore", "pipe"] });
  try {
    const address = await withDeadline(new Promise((resolve) => {
      let buffered = "";
      server.stderr.on("data", (chunk) => {
        buffered += chunk;
        const line = buffered.split("\n")[0];
        if (buffered.includes("\n")) resolve(JSON.parse(line).listening);
      });
    }), "listening line");
    const url = `http://${address}/mcp`;
    const refused = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    check(refused.status === 401, `without the token: ${refused.status}`);
    const client = new Client({ name: "interop", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: "Bearer s3cret" } },
    }));
    try {
      await scenario(client, personal, fifo);
    } finally {
      await client.close();
    }
  } finally {
    server.kill("SIGTERM");
  }
}

async function main() {
  const args = process.argv.slice(2);
  const arg = (name) => args[args.indexOf(name) + 1];
  const skillctl = arg("--skillctl");
  const transport = arg("--transport");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-interop-"));
  try {
    const personal = path.join(tmp, "personal");
    const project = path.join(tmp, "project");
    skill(personal, "reporter", "Write the report.\n", "argument-hint: the period\n");
    write(path.join(personal, "reporter", "references", "guide.md"), "Guide text.\n");
    write(path.join(personal, "reporter", "scripts", "report.sh"), 'echo "report $1"\n');
    // Holds the FIFO open for writing in itself and in a child that left its group.
    write(path.join(personal, "reporter", "scripts", "long.sh"), 'exec 3>"$1"\nsetsid sleep 1000 &\nsleep 1000\n');
    const fifo = path.join(tmp, "fifo");
    const made = spawnSync("mkfifo", [fifo]);
    check(made.status === 0, "mkfifo");
    skill(project, "local-tool", "Local.\n");
    write(path.join(project, "local-tool", "scripts", "local.sh"), "echo local ran\n");
    if (transport === "stdio") await runStdio(skillctl, personal, project, fifo);
    else await runHttp(skillctl, personal, project, tmp, fifo);
    console.log(`typescript mcp client over ${transport}: every step passed`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(`mcp_client.mjs: ${e.stack ?? e}`);
  process.exit(1);
});

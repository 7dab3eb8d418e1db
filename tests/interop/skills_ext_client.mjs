// MCP's skills extension as `skillctl mcp` serves it, checked by a client this project did
// not write: the `@olaservo/ext-skills` client SDK (0.14 on npm) over the v2 TypeScript
// SDK's client. Run by `cargo xtask mcp-interop`, which installs both under target/ and
// passes NODE_PATH. Usage: skills_ext_client.mjs --skillctl PATH
//
// Each check prints one line; the script exits non-zero at the first that fails.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.NODE_PATH ?? "node_modules";
const load = (file) => import(pathToFileURL(path.join(modules, file)).href);
const { Client } = await load("@modelcontextprotocol/client/dist/index.mjs");
const { StdioClientTransport } = await load("@modelcontextprotocol/client/dist/stdio.mjs");
const ext = await load("@olaservo/ext-skills/dist/client/index.js");

const skillctl = process.argv[process.argv.indexOf("--skillctl") + 1];

function check(condition, message) {
  if (!condition) throw new Error(message);
  console.log(`ext-skills client: ${message}: ok`);
}

function write(file, content) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "skills-ext-"));
const root = path.join(tmp, "skills");
write(path.join(root, "notes/SKILL.md"),
  "---\nname: notes\ndescription: Notes for the interop run; use them when it asks.\nlicense: MIT\nmetadata:\n  version: '1.0'\n---\nRead references/guide.md.\n");
write(path.join(root, "notes/references/guide.md"), "The guide.\n");
write(path.join(root, "notes/references/deep/more.md"), "More.\n");
write(path.join(root, "notes/assets/logo.bin"), Buffer.from([0, 159, 146, 150, 255]));
write(path.join(root, "notes/LICENSE.txt"), "MIT\n");
write(path.join(root, "notes/.env"), "TOKEN=never-served\n");
write(path.join(root, "runner/SKILL.md"),
  "---\nname: runner\ndescription: Runs a script; use it when asked.\n---\nRun it.\n");
write(path.join(root, "runner/scripts/run.sh"), "echo run\n");

const client = new Client({ name: "ext-skills-interop", version: "1.0.0" });
await client.connect(new StdioClientTransport({
  command: skillctl,
  args: ["mcp", "--no-defaults", "--root", `personal=${root}`],
}));
try {
  check(ext.serverSupportsSkills(client), "the server declares io.modelcontextprotocol/skills");
  check(ext.serverSupportsDirectoryRead(client), "the server declares directoryRead");
  const skills = await ext.listSkills(client);
  check(skills.length === 1 && skills[0].uri === "skill://personal/notes/SKILL.md",
    `skills/list lists notes alone (runner has scripts): ${skills.map((s) => s.uri)}`);
  const entry = await ext.getSkill(client, "skill://personal/notes/SKILL.md");
  check(JSON.stringify(entry) === JSON.stringify(skills[0]), "skills/get returns the listed entry");
  const limits = ext.checkSkillLimits(entry);
  check(limits.withinLimits && limits.resourceCount === 5, `the entry is within the extension's limits (${limits.resourceCount} files, ${limits.totalSize} bytes)`);
  check(ext.manifestOf(entry).some((r) => r.uri.endsWith("/notes/LICENSE.txt"))
    && !ext.manifestOf(entry).some((r) => r.uri.includes("/.")),
    "the manifest lists LICENSE.txt and no dot-file");
  const content = await ext.readSkill(client, entry);
  check(String(content.text ?? content).includes("Read references/guide.md."),
    "readSkill verifies SKILL.md's digest and size and its frontmatter against the entry");
  for (const file of ext.manifestOf(entry)) {
    if (file.uri.endsWith("/SKILL.md")) continue;
    await ext.readSkillResource(client, entry, file.uri);
    check(true, `readSkillResource verifies ${file.uri} (${file.size} bytes, ${file.digest.slice(0, 15)}...)`);
  }
  let refused = false;
  try {
    await ext.readSkillResource(client, entry, "skill://personal/notes/references/unlisted.md");
  } catch {
    refused = true;
  }
  check(refused, "a file the entry does not list is refused by the client");
  let missing = false;
  try {
    await ext.getSkill(client, "skill://personal/runner/SKILL.md");
  } catch (e) {
    missing = String(e.code ?? e.message).includes("32602");
  }
  check(missing, "skills/get of a skill not served answers -32602");
  const top = await ext.readDirectory(client, "skill://personal/notes");
  const names = top.resources.map((r) => `${r.name}${r.mimeType === "inode/directory" ? "/" : ""}`).sort();
  check(JSON.stringify(names) === JSON.stringify(["LICENSE.txt", "SKILL.md", "assets/", "references/"]),
    `resources/directory/read of the skill's root: ${names}`);
  const walked = await ext.walkDirectory(client, "skill://personal/notes");
  const files = walked.filter((r) => r.mimeType !== "inode/directory").map((r) => r.uri).sort();
  const listed = ext.manifestOf(entry).map((r) => r.uri).sort();
  check(JSON.stringify(files) === JSON.stringify(listed), "walking the directories finds exactly the manifest's files");
} finally {
  await client.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log("ext-skills client: every check passed");

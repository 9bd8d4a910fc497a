// Copies the agent JSON Schema from the Go module (schema/agent.schema.json)
// into schemas/, where package.json's yamlValidation and jsonValidation point.
// It fails when the source is missing: a package without its schema is broken.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const src = process.env.AGENT_LS_SCHEMA
  ? resolve(process.env.AGENT_LS_SCHEMA)
  : resolve(here, "../../../schema/agent.schema.json");
const dst = resolve(here, "../schemas/agent.schema.json");

if (!existsSync(src)) {
  console.error(`copy-schema: ${src} does not exist (it is written by the Go schema package)`);
  process.exit(1);
}
try {
  JSON.parse(readFileSync(src, "utf8"));
} catch (err) {
  console.error(`copy-schema: ${src}: not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
mkdirSync(dirname(dst), { recursive: true });
copyFileSync(src, dst);
console.log(`copy-schema: ${src} -> ${dst}`);

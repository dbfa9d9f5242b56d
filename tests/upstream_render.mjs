// Renders scenario files with upstream's own pipeline and prints the user messages as JSON.
//
//   node tests/upstream_render.mjs UPSTREAM_DIR FILE...
//
// For each file: upstream's reshapeToLegacy and buildModelInputFor (src/canonical-runner.mjs)
// on the parsed file, prefixed with the "scenario_id: <id>" header the runner sends. Prints
// one JSON object, file -> {"user_input": text} or {"error": message} where upstream throws.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [upstreamDir, ...files] = process.argv.slice(2);
const runner = await import(pathToFileURL(path.join(upstreamDir, "src", "canonical-runner.mjs")).href);

const out = {};
for (const file of files) {
  try {
    const json = JSON.parse(fs.readFileSync(file, "utf8"));
    const { model_input } = runner.buildModelInputFor(runner.reshapeToLegacy(json));
    out[file] = { user_input: `scenario_id: ${json.id}\n\n${model_input}` };
  } catch (error) {
    out[file] = { error: String(error && error.message) };
  }
}
process.stdout.write(JSON.stringify(out));

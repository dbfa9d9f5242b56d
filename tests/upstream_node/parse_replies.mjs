// Upstream's response parser on a list of replies: node parse_replies.mjs UPSTREAM_SRC CASES.json
// prints the list of parseAndNormalize results as JSON.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [upstream, casesPath] = process.argv.slice(2);
const schema = await import(pathToFileURL(path.join(upstream, "src", "schema.mjs")).href);
const cases = JSON.parse(fs.readFileSync(casesPath, "utf8"));
process.stdout.write(JSON.stringify(cases.map((text) => schema.parseAndNormalize(text))));

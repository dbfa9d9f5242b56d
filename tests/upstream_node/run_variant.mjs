// Upstream's runner on one planned variant: node --import route.mjs run_variant.mjs SPEC.json
// SPEC: { upstream, runRoot, runId, scenarioSet, scenarioSetDir (absolute), scenarioIds,
//         variantKey, variant, prompt, trials, maxAttempts }
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const load = (name) => import(pathToFileURL(path.join(spec.upstream, "src", name)).href);
const { writeRunPlan } = await load("run-plan.mjs");
const { initRunState } = await load("run-state.mjs");
const { runVariant } = await load("canonical-runner.mjs");
const { CANONICAL_SCORING_MAPPING } = await load("scorer.mjs");

writeRunPlan({
  runRoot: spec.runRoot,
  runId: spec.runId,
  scenarioSet: spec.scenarioSet,
  scenarioSetDir: spec.scenarioSetDir,
  scenarioFilter: new Set(spec.scenarioIds),
  plannedVariants: [spec.variantKey],
  variants: { [spec.variantKey]: spec.variant },
  prompt: spec.prompt,
  nTrialsPerCell: spec.trials,
  scoringField: "commit_permission",
  passKLevels: [spec.trials],
  mode: "smoke",
  scoringMapping: CANONICAL_SCORING_MAPPING
});
initRunState({ runRoot: spec.runRoot, runId: spec.runId, mode: "smoke", plannedVariants: [spec.variantKey] });
const result = await runVariant({
  runRoot: spec.runRoot,
  variantKey: spec.variantKey,
  scenarioFilter: new Set(spec.scenarioIds),
  apiKey: "upstream-test-key",
  retryOptions: { maxAttempts: spec.maxAttempts, backoffBaseMs: 1 }
});
process.stdout.write(JSON.stringify({ status: result.status }));

// Plans one run root with upstream's own writeRunPlan and runs every variant through
// upstream's own runVariant (its fetch answered by fake_fetch.mjs, preloaded).
//
// Usage (from the root of an assembled upstream tree):
//   STEERBENCH_REPLIES=replies.json node --import ./<dir>/fake_fetch.mjs <dir>/drive_runs.mjs plan.json
import fs from "node:fs";
import path from "node:path";

import { writeRunPlan } from "../src/run-plan.mjs";
import { initRunState } from "../src/run-state.mjs";
import { runVariant, CANONICAL_SCORING_MAPPING } from "../src/canonical-runner.mjs";
import { STEERBENCH_STEERING_SYSTEM_PROMPT } from "../src/prompts.mjs";

const plan = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const runRoot = path.resolve(plan.run_root);
const plannedVariants = Object.keys(plan.variants);

writeRunPlan({
  runRoot,
  runId: plan.run_id,
  scenarioSet: plan.scenario_set,
  scenarioSetDir: plan.scenario_set_dir,
  scenarioSetDirAbsolute: path.resolve(plan.scenario_set_dir),
  scenarioFilter: plan.scenario_filter ? new Set(plan.scenario_filter) : null,
  plannedVariants,
  variants: plan.variants,
  prompt: STEERBENCH_STEERING_SYSTEM_PROMPT,
  nTrialsPerCell: plan.n_trials_per_cell,
  scoringField: "commit_permission",
  passKLevels: [plan.n_trials_per_cell],
  mode: "reported-run",
  scoringMapping: CANONICAL_SCORING_MAPPING
});
initRunState({ runRoot, runId: plan.run_id, mode: "reported-run", plannedVariants });

for (const variantKey of plannedVariants) {
  globalThis.__steerbenchVariant = variantKey;
  const result = await runVariant({
    runRoot,
    variantKey,
    apiKey: "scripted",
    resume: false,
    retryOptions: { maxAttempts: 1, backoffBaseMs: 0 }
  });
  if (result.status !== "completed") {
    throw new Error(`variant ${variantKey} ended ${result.status}`);
  }
}
console.log(`ran ${plannedVariants.length} variant(s) into ${runRoot}`);

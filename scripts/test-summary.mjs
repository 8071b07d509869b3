// Prints the closing line CI reads: "N passed, N failed" (and skipped, when any).
import { existsSync, readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file || !existsSync(file)) {
  console.log('0 passed, 1 failed');
  console.error(`test-summary: no results at ${file}: the test runner did not finish`);
  process.exit(1);
}
const r = JSON.parse(readFileSync(file, 'utf8'));
const failed = r.numFailedTests + (r.numFailedTestSuites > 0 && r.numFailedTests === 0 ? r.numFailedTestSuites : 0);
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
console.log(`${r.numPassedTests} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));

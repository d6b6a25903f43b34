// Prints one plain closing line, "N passed, N failed, N skipped", so CI logs state the count unambiguously.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests: p, numFailedTests: f, numPendingTests: s, numTodoTests: t } = results;
    process.stdout.write(`\n${p} passed, ${f} failed, ${s + t} skipped\n`);
  }
}
module.exports = SummaryReporter;

// A node:test reporter that prints nothing while the suite runs and, at the end, one line per
// failed test (file, name, the start of the error), so the tail of a long CI log says which test
// failed. run-tests.mjs adds it beside the usual reporter (tap off a terminal, spec on one).
// Suites that failed only because a subtest failed are left out: their failing subtest is listed.
export default async function* failures(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    const error = details?.error;
    if (error?.failureType === 'subtestsFailed') continue;
    const cause = error?.cause ?? error;
    const lines = String(cause?.message ?? cause ?? 'failed').split('\n').map((line) => line.trim()).filter(Boolean);
    failed.push({ file: file ?? '?', name, message: lines.slice(0, 3).join(' ').slice(0, 300) || 'failed' });
  }
  if (failed.length === 0) return;
  yield `\n# ${failed.length} failed test${failed.length === 1 ? '' : 's'}:\n`;
  for (const { file, name, message } of failed) {
    yield `#   ${file.replace(process.cwd() + '/', '')}: ${name}\n#       ${message}\n`;
  }
}

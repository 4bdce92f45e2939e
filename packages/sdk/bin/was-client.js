#!/usr/bin/env node
// The was-client command: a committed launcher, so npm links the command at install time, before
// the package is built (the root `npm run build`, or `npm start`, builds dist/).
try {
  await import('../dist/cli/main.js');
} catch (err) {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
    process.stderr.write('was-client is not built yet: run `npm run build` in the service repository\n');
    process.exit(1);
  }
  throw err;
}

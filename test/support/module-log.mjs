// Preload (`node --import`) that records every ES module the process loads, one URL per line, in
// the file MODULE_LOG names: how a test sees which code a command line loaded. Only ES modules
// pass through these hooks (a CommonJS package's own requires do not), which is enough to see
// which of the service's modules and which packages' ESM entry points were loaded.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
    import { appendFileSync } from 'node:fs';
    export async function load(url, context, next) {
      if (process.env.MODULE_LOG) appendFileSync(process.env.MODULE_LOG, url + '\\n');
      return next(url, context);
    }
  `)}`,
);

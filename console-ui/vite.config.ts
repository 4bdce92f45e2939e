/**
 * Builds the console (console-ui/) into dist/console-ui/, served by the service under /console
 * (src/console/static.ts). Run by `npm run build`. Prints the initial JavaScript's gzipped size and
 * fails the build above the budget of issue 35 (150 KB).
 */
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const BUDGET_BYTES = 150 * 1024;

function reportInitialJs(): Plugin {
  return {
    name: 'console-initial-js-size',
    apply: 'build',
    generateBundle(_options, bundle) {
      let gzipped = 0;
      let raw = 0;
      for (const chunk of Object.values(bundle)) {
        if (chunk.type !== 'chunk' || !(chunk.isEntry || chunk.isImplicitEntry)) continue;
        const code = Buffer.from(chunk.code);
        raw += code.length;
        gzipped += gzipSync(code, { level: 9 }).length;
      }
      const kb = (n: number) => (n / 1024).toFixed(1);
      process.stdout.write(`console: initial JavaScript ${kb(gzipped)} KB gzipped (${kb(raw)} KB raw; budget ${kb(BUDGET_BYTES)} KB)\n`);
      if (gzipped > BUDGET_BYTES) this.error(`the console's initial JavaScript (${kb(gzipped)} KB gzipped) is over its budget of ${kb(BUDGET_BYTES)} KB`);
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  publicDir: false,
  plugins: [reportInitialJs()],
  build: {
    outDir: fileURLToPath(new URL('../dist/console-ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No inline assets: the Content-Security-Policy allows only same-origin files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});

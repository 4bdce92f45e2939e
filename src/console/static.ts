/**
 * Serves the console's built front end (console-ui/, built by `npm run build` into
 * dist/console-ui/) under /console, with a strict Content-Security-Policy: scripts, styles and
 * connections from the service's own origin only, nothing inline, no framing.
 *
 * Only the files the build wrote are served: their list is read once (at the first request) into
 * a map, so no request path ever reaches the file system. Any other path under /console (the
 * front end's own routes, /console/sign-in among them) gets index.html; nothing is consumed or
 * changed by a GET, so a link scanner that follows a sign-in link burns nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../http/errors.js';

/** The build output, the same from src/console (tests) and dist/console (the built server). */
export const CONSOLE_BUILD_DIR = fileURLToPath(new URL('../../dist/console-ui/', import.meta.url));

/**
 * The pages' Content-Security-Policy. `mediaOrigins`: where signed media URLs point when that is
 * not the service itself (the S3 bucket's origin), for the Media page's image, audio and video
 * previews; nothing else may come from there.
 */
export function consoleCsp(mediaOrigins: readonly string[] = []): string {
  const extra = mediaOrigins.map((o) => ` ${o}`).join('');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data:${extra}`,
    // Audio and video previews of workspace media (signed URLs: same origin, or the bucket's).
    `media-src 'self'${extra}`,
    "connect-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy with the local media store (signed URLs on the service's own origin). */
export const CONSOLE_CSP = consoleCsp();

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

interface BuiltFile {
  body: Buffer;
  type: string;
}

function readBuild(dir: string): Map<string, BuiltFile> | undefined {
  if (!existsSync(join(dir, 'index.html'))) return undefined;
  const files = new Map<string, BuiltFile>();
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.set(relative(dir, path).split(sep).join('/'), { body: readFileSync(path), type: TYPES[extname(entry.name)] ?? 'application/octet-stream' });
    }
  };
  walk(dir);
  return files;
}

function securityHeaders(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .header('Content-Security-Policy', csp)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY');
}

export async function consoleStaticRoutes(app: FastifyInstance, buildDir = CONSOLE_BUILD_DIR, csp = CONSOLE_CSP): Promise<void> {
  let files: Map<string, BuiltFile> | undefined;
  const meta = { code: 'CONSOLE_PAGE', message: 'Console page.', auth: 'none' as const };

  function send(reply: FastifyReply, path: string): FastifyReply {
    files ??= readBuild(buildDir);
    if (!files) throw new AppError('UNAVAILABLE', { message: 'The console is not built; run `npm run build`.', retryAfter: 60 });
    const file = files.get(path);
    const index = files.get('index.html')!;
    const found = file ?? index;
    const immutable = file !== undefined && path.startsWith('assets/');
    return securityHeaders(reply, csp)
      .header('Content-Type', found.type)
      .header('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .send(found.body);
  }

  app.get('/console', { schema: { hide: true }, config: { meta } }, async (_request, reply) => send(reply, 'index.html'));
  app.get<{ Params: { '*': string } }>('/console/*', { schema: { hide: true }, config: { meta } }, async (request, reply) => {
    const path = request.params['*'];
    // Unknown console API paths and missing assets are 404s in the envelope, not the page.
    if (path === 'api' || path.startsWith('api/')) throw new AppError('NOT_FOUND');
    if (path.startsWith('assets/') && !(files ??= readBuild(buildDir))?.has(path)) throw new AppError('NOT_FOUND');
    return send(reply, path === '' ? 'index.html' : path);
  });
}

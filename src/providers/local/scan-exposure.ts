/**
 * The exposed-files check: well-known files that must never be served (version-control metadata,
 * environment files, password files, server status pages). A path counts as exposed only when it
 * answers 200 with content that looks like that file (a site answering 200 with its home page for
 * every path exposes nothing). Evidence names the path, status and size, never the content.
 */
import { headerValue, ScanNetworkError, type Check } from './scan-session.js';

/** Bytes read of each path: every file below is small, and its signature is at its start. */
const MAX_BYTES = 64 * 1024;

interface WellKnownFile {
  path: string;
  what: string;
  looksLike(text: string, bytes: Buffer, contentType: string): boolean;
}

const notHtml = (text: string, contentType: string) => !/html/i.test(contentType) && !/^\s*</.test(text);

export const WELL_KNOWN_FILES: readonly WellKnownFile[] = [
  { path: '/.git/HEAD', what: 'Git repository metadata', looksLike: (t) => /^(ref: refs\/\S+|[0-9a-f]{40}|[0-9a-f]{64})\s*$/.test(t) },
  { path: '/.git/config', what: 'Git repository configuration', looksLike: (t, _b, ct) => notHtml(t, ct) && /^\s*\[core\]/m.test(t) },
  {
    path: '/.env',
    what: 'environment file (typically secrets)',
    looksLike: (t, _b, ct) => {
      if (!notHtml(t, ct)) return false;
      const first = t.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
      return first !== undefined && /^\s*(export\s+)?[A-Za-z_][A-Za-z0-9_.]*\s*=/.test(first);
    },
  },
  { path: '/.htpasswd', what: 'password file', looksLike: (t, _b, ct) => notHtml(t, ct) && /^[^:\s]+:(\$apr1\$|\$2[aby]\$|\{SHA\}|\$[156]\$)/m.test(t) },
  { path: '/.DS_Store', what: 'macOS folder listing', looksLike: (_t, b) => b.subarray(0, 8).equals(Buffer.from([0, 0, 0, 1, 0x42, 0x75, 0x64, 0x31])) },
  { path: '/server-status', what: 'Apache server status page', looksLike: (t) => /<title>\s*Apache Status\s*<\/title>|Apache Server Status for/i.test(t) },
];

export const exposedFiles: Check = async (session) => {
  const origin = session.target.url.origin;
  const exposed: { path: string; what: string; status: number; bytes: number }[] = [];
  const checked: { path: string; status: number | null }[] = [];
  for (const file of WELL_KNOWN_FILES) {
    let res;
    try {
      res = await session.request(`${origin}${file.path}`, { method: 'GET', maxBytes: MAX_BYTES });
    } catch (err) {
      // Larger than any such file: not one.
      if (err instanceof ScanNetworkError && err.egressCode === 'EGRESS_TOO_LARGE') {
        checked.push({ path: file.path, status: null });
        continue;
      }
      throw err;
    }
    checked.push({ path: file.path, status: res.status });
    if (res.status === 200 && file.looksLike(res.body.toString('utf8'), res.body, headerValue(res.headers, 'content-type') ?? '')) {
      exposed.push({ path: file.path, what: file.what, status: res.status, bytes: res.body.length });
    }
  }
  if (exposed.length === 0) return { status: 'pass', summary: `None of ${WELL_KNOWN_FILES.length} well-known sensitive paths is served.`, evidence: { checked } };
  return {
    status: 'fail',
    summary: `Sensitive files are served: ${exposed.map((e) => `${e.path} (${e.what})`).join(', ')}.`,
    evidence: { exposed, checked },
    remedy: 'Remove these files from the web root (deploy build output, not a working copy) and deny dot-files in the server configuration; rotate any secret they held.',
  };
};

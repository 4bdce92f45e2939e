/**
 * The HTTP→HTTPS redirect check: what `http://host/` (port 80, where a browser goes when the
 * scheme is left out) answers. Port 80 is always the one asked, whatever port the https URL
 * names: a browser knows no other, so no other port tells what its users get.
 */
import { firstValue, ScanNetworkError, type Check } from './scan-session.js';

const REMEDY = 'Answer every plain-HTTP request with a 301 (or 308) redirect to the same host over https.';

export const httpsRedirect: Check = async (session) => {
  const { hostname } = session.target;
  const url = `http://${hostname}/`;
  let res;
  try {
    res = await session.request(url, { method: 'GET', discardBody: true, maxBytes: 64 * 1024 });
  } catch (err) {
    // Nothing listening (or answering) on port 80: nothing is served in plain text. A failure of
    // the scan's own deadline or bound is not this check's verdict and ends the attempt.
    if (!(err instanceof ScanNetworkError) || err.code === 'SCAN_TARGET_BLOCKED') throw err;
    return {
      status: 'pass',
      summary: `Port 80 does not answer (${err.egressCode}): nothing is served over plain HTTP.`,
      evidence: { url, error: err.egressCode },
    };
  }
  const location = firstValue(res.headers.location);
  const evidence: Record<string, unknown> = { url, status: res.status, ...(location !== undefined ? { location } : {}) };
  if (res.status < 300 || res.status >= 400 || location === undefined) {
    return { status: 'fail', summary: `http://${hostname}/ answers ${res.status} over plain HTTP instead of redirecting to https.`, evidence, remedy: REMEDY };
  }
  let next: URL;
  try {
    next = new URL(location, url);
  } catch {
    return { status: 'fail', summary: `http://${hostname}/ redirects to an invalid location.`, evidence, remedy: REMEDY };
  }
  if (next.protocol !== 'https:') {
    return { status: 'fail', summary: `http://${hostname}/ redirects to ${next.href}, which is not https.`, evidence, remedy: REMEDY };
  }
  if (next.hostname.toLowerCase().replace(/\.$/, '') !== hostname) {
    return {
      status: 'warn',
      summary: `http://${hostname}/ redirects to another host (${next.hostname}) rather than to itself over https.`,
      evidence,
      remedy: 'Redirect to the same host over https first, so its HSTS header is seen, then to the other host.',
    };
  }
  return { status: 'pass', summary: `http://${hostname}/ redirects to https (${res.status}).`, evidence };
};

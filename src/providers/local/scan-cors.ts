/**
 * The CORS check: how the target page answers a request from a foreign origin (the page is
 * fetched with `Origin: https://security-scan.invalid`, a name no real site can have). Letting
 * any origin read answers sent with the user's cookies is the exploitable case.
 */
import { FOREIGN_ORIGIN, clip, firstValue, type Check } from './scan-session.js';

export const cors: Check = async (session) => {
  const page = await session.targetPage();
  const allowOrigin = firstValue(page.headers['access-control-allow-origin'])?.trim();
  const allowCredentials = firstValue(page.headers['access-control-allow-credentials'])?.trim().toLowerCase() === 'true';
  const evidence = { url: page.url, requestOrigin: FOREIGN_ORIGIN, allowOrigin: allowOrigin === undefined ? null : clip(allowOrigin, 200), allowCredentials };
  const remedy = 'Answer CORS requests only for a fixed list of trusted origins, and allow credentials only for those.';
  if (allowOrigin === undefined) return { status: 'pass', summary: 'A foreign origin is not allowed to read the page.', evidence };
  const anyOrigin = allowOrigin === '*' || allowOrigin === FOREIGN_ORIGIN || allowOrigin === 'null';
  if (anyOrigin && allowCredentials) {
    return {
      status: 'fail',
      summary:
        allowOrigin === '*'
          ? 'CORS allows any origin (*) together with credentials: the policy means to let every site read answers made with the user’s cookies.'
          : `CORS allows the foreign origin ${allowOrigin} with credentials: any site can read answers made with the user’s cookies.`,
      evidence,
      remedy,
    };
  }
  if (anyOrigin) {
    return { status: 'warn', summary: 'CORS lets any origin read the page (acceptable for public content only).', evidence, remedy };
  }
  return { status: 'pass', summary: `CORS allows only ${clip(allowOrigin, 100)}, not a foreign origin.`, evidence };
};

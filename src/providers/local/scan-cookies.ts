/**
 * The cookie check: the attributes of every cookie the target page sets (Secure, HttpOnly,
 * SameSite). Evidence names cookies and their attributes, never their values (a session token
 * must not end up in a job result).
 */
import type { Check } from './scan-session.js';

const MAX_REPORTED = 20;

interface CookieReport {
  name: string;
  secure: boolean;
  httpOnly: boolean;
  sameSite: string | null;
  problems: string[];
}

/** One Set-Cookie line, read as RFC 6265 section 5.2 does (attribute names without case). */
export function readCookie(line: string): CookieReport {
  const [pair = '', ...attributes] = line.split(';');
  const eq = pair.indexOf('=');
  const name = (eq === -1 ? '' : pair.slice(0, eq)).trim();
  let secure = false;
  let httpOnly = false;
  let sameSite: string | null = null;
  for (const attribute of attributes) {
    const [key = '', ...rest] = attribute.split('=');
    const k = key.trim().toLowerCase();
    if (k === 'secure') secure = true;
    else if (k === 'httponly') httpOnly = true;
    else if (k === 'samesite') sameSite = rest.join('=').trim().toLowerCase() || null;
  }
  const problems: string[] = [];
  if (!secure) problems.push('not Secure: sent over plain HTTP too');
  if (sameSite === 'none' && !secure) problems.push('SameSite=None without Secure: browsers refuse it');
  if (!httpOnly) problems.push('not HttpOnly: readable by scripts');
  if (sameSite === null) problems.push('no SameSite: the browser’s default applies');
  return { name: name.slice(0, 100), secure, httpOnly, sameSite, problems };
}

export const cookies: Check = async (session) => {
  const page = await session.targetPage();
  const raw = page.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (lines.length === 0) return { status: 'pass', summary: 'The page sets no cookies.', evidence: { url: page.url, cookies: [] } };
  const reports = lines.map(readCookie);
  const insecure = reports.filter((c) => !c.secure);
  const weak = reports.filter((c) => c.secure && (!c.httpOnly || c.sameSite === null));
  const evidence = { url: page.url, cookies: reports.slice(0, MAX_REPORTED), ...(reports.length > MAX_REPORTED ? { more: reports.length - MAX_REPORTED } : {}) };
  const remedy = 'Set cookies with Secure, HttpOnly (unless scripts must read them) and SameSite=Lax or Strict.';
  if (insecure.length > 0) {
    return { status: 'fail', summary: `${insecure.length} of ${reports.length} cookies lack Secure (${insecure.slice(0, 5).map((c) => c.name).join(', ')}).`, evidence, remedy };
  }
  if (weak.length > 0) {
    return { status: 'warn', summary: `${weak.length} of ${reports.length} cookies lack HttpOnly or SameSite (${weak.slice(0, 5).map((c) => c.name).join(', ')}).`, evidence, remedy };
  }
  return { status: 'pass', summary: `All ${reports.length} cookies are Secure, HttpOnly and SameSite.`, evidence };
};

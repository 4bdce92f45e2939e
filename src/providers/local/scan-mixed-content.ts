/**
 * The mixed-content check: subresources of the target page loaded over plain HTTP. Active ones
 * (scripts, stylesheets, frames, plugins, form targets, a `<base>`) can rewrite or leak the whole
 * page when intercepted: fail. Passive ones (images, media) only leak and can be swapped: warn.
 * A Content-Security-Policy with `upgrade-insecure-requests` makes browsers fetch them over https.
 */
import { Parser } from 'htmlparser2';
import { decodeHtml, parseContentType } from '../link-preview-charset.js';
import { PAGE_MAX_BYTES, clip, headerValue, type Check } from './scan-session.js';

const MAX_REPORTED = 10;
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
/** URL attributes of each element, and whether what they load is active content. */
const LOADS: Record<string, { attributes: string[]; active: boolean }> = {
  script: { attributes: ['src'], active: true },
  iframe: { attributes: ['src'], active: true },
  frame: { attributes: ['src'], active: true },
  object: { attributes: ['data'], active: true },
  embed: { attributes: ['src'], active: true },
  form: { attributes: ['action'], active: true },
  base: { attributes: ['href'], active: true },
  img: { attributes: ['src', 'srcset'], active: false },
  audio: { attributes: ['src'], active: false },
  video: { attributes: ['src', 'poster'], active: false },
  source: { attributes: ['src', 'srcset'], active: false },
  input: { attributes: ['src'], active: false },
};
/** `<link rel>` values that load something, and whether it is active. */
const LINK_RELS: Record<string, boolean> = { stylesheet: true, preload: true, modulepreload: true, icon: false, 'apple-touch-icon': false };

interface Insecure {
  tag: string;
  attribute: string;
  url: string;
  active: boolean;
}

/** Plain-HTTP URLs the page's markup loads (srcset candidates one by one). */
export function insecureLoads(html: string): Insecure[] {
  const found: Insecure[] = [];
  const add = (tag: string, attribute: string, value: string, active: boolean) => {
    const urls = attribute === 'srcset' ? value.split(',').map((c) => c.trim().split(/\s+/)[0] ?? '') : [value.trim()];
    for (const url of urls) if (/^http:/i.test(url)) found.push({ tag, attribute, url: clip(url, 200), active });
  };
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'link') {
          const rels = (attribs.rel ?? '').toLowerCase().split(/\s+/);
          const loaded = rels.filter((r) => Object.hasOwn(LINK_RELS, r));
          if (loaded.length > 0 && attribs.href !== undefined) add(name, 'href', attribs.href, loaded.some((r) => LINK_RELS[r]));
          return;
        }
        const loads = Object.hasOwn(LOADS, name) ? LOADS[name] : undefined;
        if (!loads) return;
        for (const attribute of loads.attributes) {
          const value = attribs[attribute];
          if (value !== undefined) add(name, attribute, value, loads.active);
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return found;
}

export const mixedContent: Check = async (session) => {
  const page = await session.targetPage();
  const type = parseContentType(headerValue(page.headers, 'content-type')).essence;
  const evidence: Record<string, unknown> = { url: page.url, contentType: type || null };
  if (page.body === null) {
    return { status: 'warn', summary: `The page is larger than ${PAGE_MAX_BYTES} bytes and was not inspected for mixed content.`, evidence, remedy: 'Check the page’s subresources by hand, or scan a smaller page of the site.' };
  }
  if (!HTML_TYPES.has(type)) return { status: 'pass', summary: 'The page is not HTML: it loads no subresources.', evidence };
  const found = insecureLoads(decodeHtml(page.body, headerValue(page.headers, 'content-type')));
  const active = found.filter((f) => f.active);
  const upgraded = /(^|[;,])\s*upgrade-insecure-requests\s*($|[;,])/i.test(headerValue(page.headers, 'content-security-policy') ?? '');
  Object.assign(evidence, { active: active.length, passive: found.length - active.length, upgradeInsecureRequests: upgraded, resources: found.slice(0, MAX_REPORTED) });
  const remedy = 'Load every subresource over https (or send Content-Security-Policy: upgrade-insecure-requests).';
  if (found.length === 0) return { status: 'pass', summary: 'The page loads nothing over plain HTTP.', evidence };
  if (upgraded) {
    return active.length > 0
      ? { status: 'warn', summary: `${active.length} scripts, styles or frames are referenced over plain HTTP; upgrade-insecure-requests makes browsers fetch them over https.`, evidence, remedy: 'Reference them over https in the markup too.' }
      : { status: 'pass', summary: 'Images or media referenced over plain HTTP are upgraded to https by upgrade-insecure-requests.', evidence };
  }
  if (active.length > 0) return { status: 'fail', summary: `${active.length} scripts, styles, frames or forms are loaded over plain HTTP: anyone on the path can rewrite the page.`, evidence, remedy };
  return { status: 'warn', summary: `${found.length} images or media are loaded over plain HTTP.`, evidence, remedy };
};

/**
 * Pure metadata extraction for link previews: bytes of an answer in, `LinkMetadata` out.
 *
 * Invariant: `extractMetadata` never throws and always returns exactly the six `LinkMetadata` keys;
 * every value is null or a non-empty, whitespace-collapsed, length-capped string, and every URL
 * field other than `url` is null or an absolute http(s) URL of at most 2048 characters (`url` falls
 * back to the page URL it was given, unchanged).
 */
import { Parser } from 'htmlparser2';
import { decodeHtml, looksLikeImage, parseContentType } from './link-preview-charset.js';

export interface LinkMetadata {
  title: string | null;
  description: string | null;
  image: string | null;
  url: string;
  siteName: string | null;
  favicon: string | null;
}

export const LINK_PREVIEW_LIMITS = { title: 300, description: 1000, siteName: 300, url: 2048 } as const;

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
/** Bytes handed to the parser per write; parsing stops at the first chunk boundary after </head>. */
const PARSE_CHUNK = 16 * 1024;
/** Candidates kept per source (first usable wins, so a few are plenty). */
const MAX_CANDIDATES = 16;
/** Meta keys (from `property` or `name`, lower-cased) that feed a field. */
const META_KEYS = new Set([
  'og:title',
  'twitter:title',
  'og:description',
  'twitter:description',
  'description',
  'og:image',
  'og:image:url',
  'og:image:secure_url',
  'twitter:image',
  'twitter:image:src',
  'og:site_name',
  'application-name',
  'og:url',
]);
const FOREIGN_CONTENT = new Set(['svg', 'math']);

interface Icon {
  href: string;
  /** Largest edge from `sizes` (Infinity for "any", 0 when absent or unreadable). */
  size: number;
  touch: boolean;
}

interface OgImage {
  url?: string;
  secureUrl?: string;
}

/** Everything the parser collects, raw (not yet normalised or resolved). */
interface Collected {
  meta: Map<string, string[]>;
  ogImages: OgImage[];
  title: string | null;
  base: string | null;
  canonical: string[];
  imageSrc: string[];
  icons: Icon[];
}

function push(list: string[], value: string): void {
  if (list.length < MAX_CANDIDATES) list.push(value);
}

function attr(attribs: Record<string, string>, name: string): string | undefined {
  return Object.hasOwn(attribs, name) ? attribs[name] : undefined;
}

function iconSize(sizes: string | undefined): number {
  let best = 0;
  for (const token of (sizes ?? '').toLowerCase().split(/\s+/)) {
    if (token === 'any') return Infinity;
    const match = /^(\d{1,5})x(\d{1,5})$/.exec(token);
    if (match) best = Math.max(best, Number(match[1]), Number(match[2]));
  }
  return best;
}

function addOgImage(images: OgImage[], key: string, value: string): void {
  if (images.length >= MAX_CANDIDATES) return;
  const last = images[images.length - 1];
  if (key === 'og:image:secure_url') {
    // A secure_url describes the og:image before it; a second one starts a new image.
    if (last && last.secureUrl === undefined) last.secureUrl = value;
    else images.push({ secureUrl: value });
  } else if (last && last.url === undefined) {
    last.url = value;
  } else {
    images.push({ url: value });
  }
}

function onMeta(found: Collected, attribs: Record<string, string>): void {
  const content = attr(attribs, 'content');
  if (content === undefined) return;
  const keys = new Set<string>();
  for (const name of ['property', 'name']) {
    const key = attr(attribs, name)?.trim().toLowerCase();
    if (key && META_KEYS.has(key)) keys.add(key);
  }
  for (const key of keys) {
    if (key === 'og:image' || key === 'og:image:url' || key === 'og:image:secure_url') {
      addOgImage(found.ogImages, key, content);
    } else {
      let list = found.meta.get(key);
      if (!list) found.meta.set(key, (list = []));
      push(list, content);
    }
  }
}

function onLink(found: Collected, attribs: Record<string, string>): void {
  const href = attr(attribs, 'href');
  if (href === undefined) return;
  const rel = new Set((attr(attribs, 'rel') ?? '').toLowerCase().split(/\s+/));
  if (rel.has('canonical')) push(found.canonical, href);
  if (rel.has('image_src')) push(found.imageSrc, href);
  const touch = rel.has('apple-touch-icon') || rel.has('apple-touch-icon-precomposed');
  if ((rel.has('icon') || touch) && found.icons.length < MAX_CANDIDATES) {
    found.icons.push({ href, size: iconSize(attr(attribs, 'sizes')), touch: touch && !rel.has('icon') });
  }
}

/** Runs the HTML tokenizer over the document until the head is over (or the text ends). */
function collect(html: string): Collected {
  const found: Collected = { meta: new Map(), ogImages: [], title: null, base: null, canonical: [], imageSrc: [], icons: [] };
  let done = false;
  let foreignDepth = 0;
  let titleText: string[] | null = null;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (done) return;
        if (FOREIGN_CONTENT.has(name)) foreignDepth++;
        else if (foreignDepth > 0) return;
        else if (name === 'meta') onMeta(found, attribs);
        else if (name === 'link') onLink(found, attribs);
        else if (name === 'base' && found.base === null) found.base = attr(attribs, 'href') ?? null;
        else if (name === 'title' && found.title === null && titleText === null) titleText = [];
      },
      ontext(text) {
        if (!done && titleText !== null && titleText.length < 4096) titleText.push(text);
      },
      onclosetag(name) {
        if (done) return;
        if (FOREIGN_CONTENT.has(name)) foreignDepth = Math.max(0, foreignDepth - 1);
        else if (name === 'title' && titleText !== null) {
          found.title = titleText.join('');
          titleText = null;
        } else if (name === 'head') done = true; // also fires when <body> implies the end of <head>
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  for (let i = 0; i < html.length && !done; i += PARSE_CHUNK) parser.write(html.slice(i, i + PARSE_CHUNK));
  if (!done) parser.end();
  // An unterminated <title> still names the page. (The cast undoes TS's narrowing to `null`: the
  // parser callbacks above assign it.)
  const pendingTitle = titleText as string[] | null;
  if (found.title === null && pendingTitle !== null) found.title = pendingTitle.join('');
  return found;
}

/** Collapses whitespace, drops control characters, trims and caps; empty → null. */
export function cleanText(value: string | null | undefined, max: number): string | null {
  if (typeof value !== 'string') return null;
  let text = value.replace(/[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f\u200b\ufeff]/g, '').replace(/\s+/g, ' ').trim();
  if (text === '') return null;
  if (text.length > max) {
    let cut = max - 1;
    const code = text.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut--; // never split a surrogate pair
    text = `${text.slice(0, cut).trimEnd()}…`;
  }
  return text;
}

function parseUrl(value: string, base?: URL): URL | null {
  try {
    return base ? new URL(value, base) : new URL(value);
  } catch {
    return null;
  }
}

function isHttp(url: URL | null): url is URL {
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:');
}

/** Resolves a (possibly relative) reference; only http(s) results within the URL cap survive. */
export function resolveHttpUrl(value: string | undefined, base: URL | null): string | null {
  const trimmed = value?.trim();
  if (!trimmed) return null;
  const url = parseUrl(trimmed, base ?? undefined);
  if (!isHttp(url) || url.href.length > LINK_PREVIEW_LIMITS.url) return null;
  return url.href;
}

function firstText(found: Collected, keys: string[], max: number): string | null {
  for (const key of keys) {
    for (const value of found.meta.get(key) ?? []) {
      const text = cleanText(value, max);
      if (text !== null) return text;
    }
  }
  return null;
}

function firstUrl(values: Iterable<string | undefined>, base: URL | null, httpsOnly = false): string | null {
  for (const value of values) {
    const url = resolveHttpUrl(value, base);
    if (url !== null && (!httpsOnly || url.startsWith('https:'))) return url;
  }
  return null;
}

function pickImage(found: Collected, base: URL | null): string | null {
  for (const image of found.ogImages) {
    const url = firstUrl([image.secureUrl], base, true) ?? firstUrl([image.url], base);
    if (url !== null) return url;
  }
  const meta = (key: string): string[] => found.meta.get(key) ?? [];
  return firstUrl([...meta('twitter:image'), ...meta('twitter:image:src'), ...found.imageSrc], base);
}

function pickFavicon(found: Collected, base: URL | null, page: URL | null): string | null {
  let best: { url: string; size: number } | null = null;
  for (const touch of [false, true]) {
    for (const icon of found.icons) {
      if (icon.touch !== touch) continue;
      const url = resolveHttpUrl(icon.href, base);
      if (url !== null && (best === null || icon.size > best.size)) best = { url, size: icon.size };
    }
    if (best !== null) return best.url;
  }
  return isHttp(page) ? `${page.origin}/favicon.ico` : null;
}

function pickUrl(found: Collected, base: URL | null, pageUrl: string): string {
  for (const value of found.meta.get('og:url') ?? []) {
    const url = parseUrl(value.trim());
    if (isHttp(url) && url.href.length <= LINK_PREVIEW_LIMITS.url) return url.href;
  }
  return firstUrl(found.canonical, base) ?? pageUrl;
}

/** Metadata for an answer that is not HTML: only the URL, and for an image, the image itself. */
function nonHtmlMetadata(pageUrl: string, isImage: boolean): LinkMetadata {
  const image = isImage ? resolveHttpUrl(pageUrl, null) : null;
  return { title: null, description: null, image, url: pageUrl, siteName: null, favicon: null };
}

/**
 * Extracts link metadata from an answer's body. `pageUrl` is the final URL that served it (the
 * base for relative references and the fallback `url`); `contentType` is the answer's
 * Content-Type header, used for the charset and to recognise non-HTML answers (an absent type is
 * sniffed: image signatures count as images, anything else is parsed as HTML).
 */
export function extractMetadata(html: Buffer | Uint8Array, pageUrl: string, contentType?: string): LinkMetadata {
  const { essence } = parseContentType(contentType);
  if (essence === '' ? looksLikeImage(html) : !HTML_TYPES.has(essence)) {
    return nonHtmlMetadata(pageUrl, essence === '' || essence.startsWith('image/'));
  }

  const found = collect(decodeHtml(html, contentType));
  const page = parseUrl(pageUrl);
  const declaredBase = found.base === null ? null : parseUrl(found.base.trim(), page ?? undefined);
  const base = isHttp(declaredBase) ? declaredBase : page;
  const { title, description, siteName } = LINK_PREVIEW_LIMITS;

  return {
    title: firstText(found, ['og:title', 'twitter:title'], title) ?? cleanText(found.title, title),
    description: firstText(found, ['og:description', 'twitter:description', 'description'], description),
    image: pickImage(found, base),
    url: pickUrl(found, base, pageUrl),
    siteName: firstText(found, ['og:site_name', 'application-name'], siteName),
    favicon: pickFavicon(found, base, page),
  };
}

/**
 * Tests for the link.preview provider (src/providers/link-preview*.ts). Invariant under test: a
 * preview either yields six metadata fields (null or normalised strings, URL fields absolute
 * http(s)) read from the right sources in the right priority, or fails with a LinkPreviewError
 * code — and the page is only ever fetched through the guarded egress. Only loopback traffic: a
 * real HTTP server on 127.0.0.1 and `createEgress` allowing exactly that address.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import fc from 'fast-check';
import { createEgress } from '../../src/egress/client.js';
import type { Egress } from '../../src/egress/types.js';
import { extractMetadata, fetchLinkPreview, LinkPreviewError, type LinkMetadata } from '../../src/providers/link-preview.js';

// ---------------------------------------------------------------------------------------------
// helpers

interface Page {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

const HTML = 'text/html; charset=utf-8';
const html = (body: string, headers: Record<string, string> = { 'content-type': HTML }): Page => ({ headers, body });
/** PNG signature plus a few bytes: enough to be recognised, not a real picture. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

/** Encodes a string whose characters all exist in windows-1252 (ASCII + é, €, …). */
function cp1252(text: string): Buffer {
  const special: Record<string, number> = { '€': 0x80, '…': 0x85, '’': 0x92 };
  return Buffer.from([...text].map((ch) => special[ch] ?? ch.charCodeAt(0)).map((b) => (b > 0xff ? 0x3f : b)));
}

/** "日本語のページ" in Shift_JIS. */
const SJIS_TITLE = Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x79, 0x81, 0x5b, 0x83, 0x57]);

interface Server {
  origin: string;
  lastHeaders(): http.IncomingHttpHeaders | undefined;
  close(): Promise<void>;
}

async function startServer(pages: Record<string, Page | ((origin: string) => Page)>): Promise<Server> {
  let last: http.IncomingHttpHeaders | undefined;
  let origin = '';
  const server = http.createServer((req, res) => {
    last = req.headers;
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/slow') return; // never answers
    const entry = pages[path];
    const page = typeof entry === 'function' ? entry(origin) : entry;
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<title>Not found</title>');
      return;
    }
    res.writeHead(page.status ?? 200, page.headers ?? {});
    res.end(page.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    origin,
    lastHeaders: () => last,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof LinkPreviewError, `expected LinkPreviewError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

const KEYS = ['description', 'favicon', 'image', 'siteName', 'title', 'url'];

function assertShape(meta: LinkMetadata): void {
  assert.deepEqual(Object.keys(meta).sort(), KEYS);
  for (const key of KEYS) {
    const value = meta[key as keyof LinkMetadata];
    if (key === 'url') assert.equal(typeof value, 'string'); // the page URL as given, whatever it is
    else assert.ok(value === null || (typeof value === 'string' && value !== ''), `${key}: ${String(value)}`);
  }
  for (const key of ['image', 'favicon'] as const) {
    const value = meta[key];
    if (value !== null) {
      assert.match(value, /^https?:\/\//, key);
      assert.ok(value.length <= 2048, key);
    }
  }
  if (meta.title !== null) assert.ok(meta.title.length <= 300 && meta.title === meta.title.trim());
  if (meta.description !== null) assert.ok(meta.description.length <= 1000);
  for (const key of ['title', 'description', 'siteName'] as const) {
    if (meta[key] !== null) assert.doesNotMatch(meta[key]!, /\s\s|[\n\t\r]/, key);
  }
}

// ---------------------------------------------------------------------------------------------
// pages

const FULL_OG = `<!doctype html><html><head>
<title>Plain title</title>
<meta property="og:title" content="  OG   title ">
<meta name="twitter:title" content="Twitter title">
<meta property="og:description" content="OG description">
<meta name="description" content="Plain description">
<meta property="og:image" content="http://images.example.com/a.jpg">
<meta property="og:image:secure_url" content="https://images.example.com/a.jpg">
<meta property="og:image:width" content="1200">
<meta property="og:image" content="https://images.example.com/second.jpg">
<meta name="twitter:image" content="https://images.example.com/twitter.jpg">
<meta property="og:site_name" content="Example Site">
<meta name="application-name" content="Example App">
<meta property="og:url" content="https://www.example.com/article">
<link rel="canonical" href="https://www.example.com/canonical">
<link rel="icon" href="/small.png" sizes="16x16">
<link rel="icon" href="/big.png" sizes="32x32 192x192">
<link rel="apple-touch-icon" href="/touch.png" sizes="512x512">
</head><body><h1>Hello</h1></body></html>`;

const TWITTER_ONLY = `<html><head>
<META NAME="Twitter:Title" CONTENT="Card title">
<meta name="twitter:description" content="Card description">
<meta name="twitter:image:src" content="https://pbs.example.com/card.png">
</head><body></body></html>`;

const PLAIN = `<html><head><title>
  Plain   page
</title><meta name="description" content="A plain description.">
<link rel="shortcut icon" href="/static/icon.png"></head><body>text</body></html>`;

const RELATIVE = `<html><head><title>Rel</title>
<meta property="og:image" content="img/a.png">
<link rel="icon" href="../fav.ico">
<link rel="canonical" href="/canon?x=1">
</head></html>`;

const BASED = `<html><head><base href="https://cdn.example.com/assets/">
<meta property="og:url" content="/relative-og-url">
<meta property="og:image" content="img/a.png">
<link rel="icon" href="fav.ico">
<link rel="canonical" href="page">
</head></html>`;

const ENTITIES = `<html><head><title>Fish &amp; Chips &mdash; &#x1F41F; &lt;b&gt;</title>
<meta name="description" content="He said &quot;hi&quot;&nbsp;&amp;
   left.">
<meta property="og:site_name" content="Caf&eacute; &#169;">
</head></html>`;

// ---------------------------------------------------------------------------------------------
// against a real server

describe('fetchLinkPreview against a local server', () => {
  let server: Server;
  let egress: Egress;
  before(async () => {
    server = await startServer({
      '/og': html(FULL_OG),
      '/twitter': html(TWITTER_ONLY),
      '/plain': html(PLAIN),
      '/empty': html('<html><head></head><body><p>nothing here</p></body></html>'),
      '/dir/relative': html(RELATIVE),
      '/dir/based': html(BASED),
      '/entities': html(ENTITIES),
      '/cp1252-header-raw': {
        headers: { 'content-type': 'text/html; charset=windows-1252' },
        body: cp1252('<html><head><title>Caf\u00e9 \u20ac5</title><meta name="description" content="d\u00e9j\u00e0 vu\u2026"></head></html>'),
      },
      '/cp1252-meta': {
        headers: { 'content-type': 'text/html' },
        body: cp1252('<html><head><meta charset="windows-1252"><title>Caf\u00e9 \u20ac5</title></head></html>'),
      },
      '/latin-http-equiv': {
        headers: { 'content-type': 'text/html' },
        body: cp1252('<html><head><META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=ISO-8859-1"><title>Caf\u00e9 \u20ac5</title></head></html>'),
      },
      '/sjis': {
        headers: { 'content-type': 'text/html; charset=Shift_JIS' },
        body: Buffer.concat([Buffer.from('<html><head><title>'), SJIS_TITLE, Buffer.from('</title></head></html>')]),
      },
      '/sjis-meta': {
        headers: { 'content-type': 'text/html' },
        body: Buffer.concat([Buffer.from('<html><head><meta charset="shift_jis"><title>'), SJIS_TITLE, Buffer.from('</title></head></html>')]),
      },
      '/redirect': { status: 301, headers: { location: '/plain' } },
      '/loop': { status: 302, headers: { location: '/loop' } },
      '/missing': { status: 404, headers: { 'content-type': 'text/html' }, body: '<title>Gone</title>' },
      '/error': { status: 500, headers: { 'content-type': 'text/html' }, body: '<title>Oops</title>' },
      '/logo.png': { headers: { 'content-type': 'image/png' }, body: PNG },
      '/untyped': { body: PNG },
      '/data.json': { headers: { 'content-type': 'application/json' }, body: '{"title":"no"}' },
      '/big': html(`<html><head><title>Big</title></head><body>${'x'.repeat(3 * 1024 * 1024)}</body></html>`),
      '/medium': html(`<html><head><title>Medium</title></head><body>${'x'.repeat(10_000)}</body></html>`),
    });
    egress = createEgress({ allowCidrs: ['127.0.0.1/32'] });
  });
  after(async () => {
    await egress.close();
    await server.close();
  });

  const preview = (path: string, options?: Parameters<typeof fetchLinkPreview>[2]) =>
    fetchLinkPreview(egress, `${server.origin}${path}`, options).then((r) => r.metadata);

  test('full Open Graph page: og sources win, secure image, largest icon', async () => {
    const meta = await preview('/og');
    assertShape(meta);
    assert.deepEqual(meta, {
      title: 'OG title',
      description: 'OG description',
      image: 'https://images.example.com/a.jpg',
      url: 'https://www.example.com/article',
      siteName: 'Example Site',
      favicon: `${server.origin}/big.png`,
    });
  });

  test('sends a GET with an HTML-first accept header', async () => {
    await preview('/plain');
    assert.equal(server.lastHeaders()?.accept, 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1');
  });

  test('Twitter card only, attribute names and values in any case', async () => {
    const meta = await preview('/twitter');
    assertShape(meta);
    assert.deepEqual(meta, {
      title: 'Card title',
      description: 'Card description',
      image: 'https://pbs.example.com/card.png',
      url: `${server.origin}/twitter`,
      siteName: null,
      favicon: `${server.origin}/favicon.ico`,
    });
  });

  test('plain HTML: <title>, meta description, shortcut icon', async () => {
    const meta = await preview('/plain');
    assert.deepEqual(meta, {
      title: 'Plain page',
      description: 'A plain description.',
      image: null,
      url: `${server.origin}/plain`,
      siteName: null,
      favicon: `${server.origin}/static/icon.png`,
    });
  });

  test('no metadata: nulls, /favicon.ico at the origin, the fetched URL', async () => {
    const meta = await preview('/empty?q=1');
    assert.deepEqual(meta, {
      title: null,
      description: null,
      image: null,
      url: `${server.origin}/empty?q=1`,
      siteName: null,
      favicon: `${server.origin}/favicon.ico`,
    });
  });

  test('relative image, favicon and canonical resolve against the page URL', async () => {
    const meta = await preview('/dir/relative');
    assert.equal(meta.image, `${server.origin}/dir/img/a.png`);
    assert.equal(meta.favicon, `${server.origin}/fav.ico`);
    assert.equal(meta.url, `${server.origin}/canon?x=1`);
  });

  test('with <base href>, references resolve against the base; a relative og:url is ignored', async () => {
    const meta = await preview('/dir/based');
    assert.equal(meta.image, 'https://cdn.example.com/assets/img/a.png');
    assert.equal(meta.favicon, 'https://cdn.example.com/assets/fav.ico');
    assert.equal(meta.url, 'https://cdn.example.com/assets/page');
  });

  test('entities decoded, whitespace collapsed', async () => {
    const meta = await preview('/entities');
    assert.equal(meta.title, 'Fish & Chips \u2014 \u{1F41F} <b>');
    assert.equal(meta.description, 'He said "hi" & left.');
    assert.equal(meta.siteName, 'Caf\u00e9 \u00a9');
  });

  test('windows-1252 declared by the header (é and € bytes)', async () => {
    const meta = await preview('/cp1252-header-raw');
    assert.equal(meta.title, 'Caf\u00e9 \u20ac5');
    assert.equal(meta.description, 'd\u00e9j\u00e0 vu\u2026');
  });

  test('windows-1252 declared only by <meta charset>', async () => {
    assert.equal((await preview('/cp1252-meta')).title, 'Caf\u00e9 \u20ac5');
  });

  test('iso-8859-1 declared by <meta http-equiv> decodes as windows-1252', async () => {
    assert.equal((await preview('/latin-http-equiv')).title, 'Caf\u00e9 \u20ac5');
  });

  test('Shift_JIS by header and by <meta charset>', async () => {
    assert.equal((await preview('/sjis')).title, '日本語のページ');
    assert.equal((await preview('/sjis-meta')).title, '日本語のページ');
  });

  test('a 301 is followed and the final URL reported', async () => {
    const meta = await preview('/redirect');
    assert.equal(meta.url, `${server.origin}/plain`);
    assert.equal(meta.title, 'Plain page');
    assert.equal(meta.favicon, `${server.origin}/static/icon.png`);
  });

  test('a redirect loop fails with LINK_TOO_MANY_REDIRECTS', async () => {
    await rejectsWithCode(preview('/loop'), 'LINK_TOO_MANY_REDIRECTS');
  });

  test('404 and 500 fail with LINK_HTTP_ERROR', async () => {
    await rejectsWithCode(preview('/missing'), 'LINK_HTTP_ERROR');
    await rejectsWithCode(preview('/error'), 'LINK_HTTP_ERROR');
  });

  test('an image answer: image is the URL itself, everything else null', async () => {
    assert.deepEqual(await preview('/logo.png'), {
      title: null,
      description: null,
      image: `${server.origin}/logo.png`,
      url: `${server.origin}/logo.png`,
      siteName: null,
      favicon: null,
    });
    assert.equal((await preview('/untyped')).image, `${server.origin}/untyped`, 'image sniffed without a content type');
  });

  test('a JSON answer: url only', async () => {
    assert.deepEqual(await preview('/data.json'), {
      title: null,
      description: null,
      image: null,
      url: `${server.origin}/data.json`,
      siteName: null,
      favicon: null,
    });
  });

  test('a page larger than maxBytes fails with LINK_TOO_LARGE (default 2 MiB and explicit)', async () => {
    await rejectsWithCode(preview('/big'), 'LINK_TOO_LARGE');
    await rejectsWithCode(preview('/medium', { maxBytes: 1024 }), 'LINK_TOO_LARGE');
    assert.equal((await preview('/medium')).title, 'Medium');
  });

  test('a silent server fails with LINK_TIMEOUT', async () => {
    await rejectsWithCode(preview('/slow', { timeoutMs: 200 }), 'LINK_TIMEOUT');
  });

  test('a caller abort propagates the abort reason unchanged', async () => {
    const controller = new AbortController();
    const pending = preview('/slow', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    await assert.rejects(pending, /caller gave up/);
  });

  test('a private address without an allow list fails with LINK_BLOCKED', async () => {
    const strict = createEgress({ allowCidrs: [] });
    try {
      await rejectsWithCode(fetchLinkPreview(strict, `${server.origin}/og`), 'LINK_BLOCKED');
      await rejectsWithCode(fetchLinkPreview(strict, `http://localhost:${new URL(server.origin).port}/og`), 'LINK_BLOCKED');
      await rejectsWithCode(fetchLinkPreview(strict, 'ftp://example.com/file'), 'LINK_BLOCKED');
    } finally {
      await strict.close();
    }
  });

  test('a closed port fails with LINK_UNREACHABLE', async () => {
    const spare = net.createServer();
    await new Promise<void>((resolve) => spare.listen(0, '127.0.0.1', () => resolve()));
    const port = (spare.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => spare.close(() => resolve()));
    await rejectsWithCode(fetchLinkPreview(egress, `http://127.0.0.1:${port}/`), 'LINK_UNREACHABLE');
  });
});

// ---------------------------------------------------------------------------------------------
// extractMetadata, pure

describe('extractMetadata', () => {
  const PAGE = 'https://site.example/a/b';
  const extract = (doc: string | Buffer, contentType = 'text/html', pageUrl = PAGE): LinkMetadata => {
    const meta = extractMetadata(typeof doc === 'string' ? Buffer.from(doc) : doc, pageUrl, contentType);
    assertShape(meta);
    return meta;
  };

  test('og:image:secure_url only when https; unusable candidates fall through', () => {
    assert.equal(
      extract('<meta property="og:image" content="https://x.example/1.png"><meta property="og:image:secure_url" content="http://x.example/1.png">').image,
      'https://x.example/1.png',
    );
    assert.equal(
      extract('<meta property="og:image" content="javascript:alert(1)"><meta property="og:image:url" content="data:image/png;base64,AA"><meta name="twitter:image" content="//cdn.example/t.png">').image,
      'https://cdn.example/t.png',
    );
    assert.equal(extract('<link rel="image_src" href="/i.png">').image, 'https://site.example/i.png');
  });

  test('property and name are both accepted; one meta can feed two keys', () => {
    const meta = extract('<meta name="og:title" property="twitter:title" content="T"><meta property="description" name="og:description" content="D">');
    assert.equal(meta.title, 'T');
    assert.equal(meta.description, 'D');
  });

  test('favicon preference: rel=icon largest (sizes=any wins), then apple-touch-icon, data: dropped', () => {
    assert.equal(
      extract('<link rel="icon" href="/a.png" sizes="48x48"><link rel="ICON" href="/b.svg" sizes="any"><link rel="icon" href="/c.png" sizes="96x96">').favicon,
      'https://site.example/b.svg',
    );
    assert.equal(extract('<link rel="apple-touch-icon" href="/t.png"><link rel="mask-icon" href="/m.svg">').favicon, 'https://site.example/t.png');
    assert.equal(extract('<link rel="apple-touch-icon" href="/t.png"><link rel="icon" href="/i.png">').favicon, 'https://site.example/i.png');
    assert.equal(extract('<link rel="icon" href="data:image/png;base64,AA">').favicon, 'https://site.example/favicon.ico');
  });

  test('og:url must be absolute http(s); canonical is the fallback, then the page URL', () => {
    assert.equal(extract('<meta property="og:url" content="ftp://x.example/"><link rel="canonical" href="c">').url, 'https://site.example/a/c');
    assert.equal(extract('<meta property="og:url" content="javascript:void(0)">').url, PAGE);
  });

  test('<title> in inline SVG and metadata after </head> are ignored', () => {
    const meta = extract('<html><head><svg><title>icon</title></svg></head><body><title>late</title><meta property="og:title" content="late"></body></html>');
    assert.equal(meta.title, null);
    const headless = extract('<p>hi</p><svg><title>x</title></svg><title>Real</title><meta name="description" content="found">');
    assert.equal(headless.title, 'Real');
    assert.equal(headless.description, 'found');
  });

  test('lengths are capped without splitting characters', () => {
    const meta = extract(`<title>${'\u{1F600}'.repeat(400)}</title><meta name="description" content="${'word '.repeat(500)}">`);
    assert.ok(meta.title!.length <= 300 && meta.title!.endsWith('…'));
    assert.ok(!/[\ud800-\udbff]…$/.test(meta.title!), 'no lone high surrogate before the ellipsis');
    assert.ok(meta.description!.length <= 1000);
    const longUrl = `https://x.example/${'a'.repeat(3000)}`;
    assert.equal(extract(`<meta property="og:image" content="${longUrl}">`).image, null);
  });

  test('charset precedence: BOM, then header, then meta', () => {
    const bytes = cp1252('<meta charset="utf-8"><title>Caf\u00e9</title>');
    assert.equal(extract(bytes, 'text/html; charset=windows-1252').title, 'Caf\u00e9', 'header beats meta');
    assert.equal(extract(bytes, 'text/html; charset="bogus-label"').title, 'Caf\uFFFD', 'unknown header label: meta (utf-8) used');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<title>Caf\u00e9</title>')]);
    assert.equal(extract(bom, 'text/html; charset=windows-1252').title, 'Caf\u00e9', 'a UTF-8 BOM wins');
    assert.equal(extract(Buffer.from('<title>\u00e9</title>'), 'text/html').title, '\u00e9', 'default UTF-8');
    const c1 = Buffer.from([0x3c, 0x74, 0x69, 0x74, 0x6c, 0x65, 0x3e, 0x80, 0x82, 0x85, 0x8a, 0x92, 0x93, 0x94, 0x99, 0x9f]);
    assert.equal(extract(c1, 'text/html; charset=windows-1252').title, '\u20ac\u201a\u2026\u0160\u2019\u201c\u201d\u2122\u0178', 'cp1252 0x80-0x9F');
    assert.equal(extract(c1, 'text/html; charset=iso-8859-1').title, '\u20ac\u201a\u2026\u0160\u2019\u201c\u201d\u2122\u0178', 'latin1 label = cp1252');
    const gbk = Buffer.concat([Buffer.from('<meta http-equiv="content-type" content="text/html;charset=gbk"><title>'), Buffer.from([0xc4, 0xe3, 0xba, 0xc3]), Buffer.from('</title>')]);
    assert.equal(extract(gbk).title, '你好');
  });

  test('an invalid page URL is kept as url, with no favicon fallback', () => {
    const meta = extract('<link rel="icon" href="/x.png">', 'text/html', 'not a url');
    assert.equal(meta.url, 'not a url');
    assert.equal(meta.favicon, null);
  });

  test('property: never throws, always six keys of string|null, URL fields http(s)', () => {
    const fragment = fc.oneof(
      fc.string(),
      fc.constantFrom('<title>', '</title>', '<head>', '</head>', '<body>', '<svg>', '</svg>', '<base href="', '<!--', '-->', '<script>', '&amp;', '&#0;', '&#xD800;', '"', "'", '>', '\u0000', '\ufeff'),
      fc
        .tuple(
          fc.constantFrom('meta property', 'meta name', 'link rel', 'link href', 'base href', 'meta charset', 'meta http-equiv'),
          fc.constantFrom('og:title', 'og:image', 'og:image:secure_url', 'og:url', 'twitter:image', 'description', 'icon', 'canonical', 'content-type', 'apple-touch-icon'),
          fc.oneof(fc.string(), fc.webUrl(), fc.constantFrom('javascript:x', 'data:,x', '//h/x', '../x', 'shift_jis', 'utf-16', 'text/html;charset=euc-kr')),
        )
        .map(([tag, key, value]) => `<${tag}="${key}" content="${value}" href="${value}" sizes="${value}">`),
    );
    const body = fc.oneof(
      fc.array(fragment, { maxLength: 30 }).map((parts) => Buffer.from(parts.join(''))),
      fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ unit: 'binary', maxLength: 500 }).map((s) => Buffer.from(s)),
    );
    const contentType = fc.oneof(
      fc.constant(undefined),
      fc.constantFrom('text/html', 'text/html; charset=shift_jis', 'text/html;charset="utf-16"', 'application/xhtml+xml', 'image/png', 'application/json', ''),
      fc.string(),
    );
    const pageUrl = fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string(), fc.constant(PAGE));
    fc.assert(
      fc.property(body, pageUrl, contentType, (bytes, url, type) => {
        const meta = extractMetadata(bytes, url, type);
        assertShape(meta);
      }),
      { numRuns: 500 },
    );
  });
});

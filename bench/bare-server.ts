/**
 * The baseline of the bench: a bare Fastify server with one route returning a small JSON
 * object, no hooks, no logger; and `/bare-page`, a page shaped like a complete-output page (an
 * 8192-byte fragment) for the floor of the (je) bench. Listens on 127.0.0.1 (PORT, default ephemeral) and prints
 * `{"port":N}` on stdout once listening.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/bare', async () => ({ success: true, code: 'BARE', message: 'ok', data: { status: 'ok' } }));
const fragment = 'x'.repeat(8192);
app.get('/bare-page', async () => ({ success: true, code: 'BARE', message: 'ok', data: { fragment, offsetBytes: 0, nextCursor: 'c'.repeat(120) } }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
const stop = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

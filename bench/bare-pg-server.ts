/**
 * The PostgreSQL baseline of the job benches: a bare Fastify route that does one pg read (a row
 * by primary key from a small table) and returns it as JSON; no hooks, no logger. DATABASE_URL
 * names the database; PORT the port on 127.0.0.1.
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
await pool.query('create table if not exists bench_bare (id int primary key, status text not null, payload text not null)');
await pool.query("insert into bench_bare values (1, 'completed', 'ok') on conflict do nothing");
const app = Fastify({ logger: false });
app.get('/bare', async () => {
  const { rows } = await pool.query({ name: 'bare', text: 'select id, status, payload from bench_bare where id = $1', values: [1] });
  return { success: true, code: 'BARE', message: 'ok', data: rows[0] };
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const stop = () => void app.close().then(() => pool.end()).then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

/**
 * The floor of (i5): the least any Node server can hold in memory while it receives a 100 MB
 * upload. A bare `node:http` server that streams the request body through a SHA-256 into a file
 * (what the service's upload receiver does, without multipart, checks or a database), and answers
 * with its own VmRSS before the body and at its peak (sampled every 20 ms). Listens on
 * 127.0.0.1:PORT; files go to FLOOR_DIR.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const rssMB = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
const dir = process.env.FLOOR_DIR!;

createServer((req, res) => {
  if (req.method !== 'POST') {
    res.end('ok');
    return;
  }
  const before = rssMB();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMB())), 20);
  const hash = createHash('sha256');
  const file = join(dir, 'floor-upload.bin');
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  pipeline(req, meter, createWriteStream(file)).then(
    () => {
      clearInterval(sampler);
      peak = Math.max(peak, rssMB());
      rmSync(file, { force: true });
      res.end(JSON.stringify({ before, peak, sha256: hash.digest('hex') }));
    },
    (err: unknown) => {
      clearInterval(sampler);
      res.statusCode = 500;
      res.end(String(err));
    },
  );
}).listen(Number(process.env.PORT), '127.0.0.1');

// Preloaded (`node --import`) into a BUILT server started by a test, so that `*.localhost` names
// resolve to 127.0.0.1 in that process as they do in the test process (https-receiver.ts's
// useLocalhostNames): webhook hostnames need two labels, and the system resolver may not know
// such names. Other names resolve as usual. Test-only: the service never loads this file.
import dns from 'node:dns';
import dnsPromises from 'node:dns/promises';
import { syncBuiltinESMExports } from 'node:module';

const original = dns.lookup;
const originalPromise = dnsPromises.lookup;
const local = (hostname) => typeof hostname === 'string' && hostname.endsWith('.localhost');

dns.lookup = function lookup(hostname, options, callback) {
  if (typeof options === 'function') return local(hostname) ? process.nextTick(options, null, '127.0.0.1', 4) : original.call(dns, hostname, options);
  if (!local(hostname)) return original.call(dns, hostname, options, callback);
  const all = typeof options === 'object' && options !== null && options.all;
  process.nextTick(() => (all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)));
};

dnsPromises.lookup = async function lookup(hostname, options) {
  if (!local(hostname)) return originalPromise.call(dnsPromises, hostname, options);
  const all = typeof options === 'object' && options !== null && options.all;
  return all ? [{ address: '127.0.0.1', family: 4 }] : { address: '127.0.0.1', family: 4 };
};
dns.promises.lookup = dnsPromises.lookup;
syncBuiltinESMExports();

/**
 * The `scanner` engine of security.scan (decisions.md section 5): a real passive scan of a site
 * the workspace has verified, through the egress client, one checkpointed step per check (in the
 * order of SECURITY_CHECKS), each ending pass, warn or fail with evidence and a remedy.
 *
 * Invariants:
 * - Only a hostname verified in the job's workspace is contacted, and it is asked again before
 *   every check (verification can be withdrawn after admission): withdrawn, the job fails
 *   DOMAIN_NOT_VERIFIED and nothing more is charged.
 * - A completed check is checkpointed with its result in the job's state: a retry resumes after
 *   it and never charges it again. The run's price is spread over the checks so that after k of n
 *   checks the job has paid ceil(price·k/n); what is left always fits the retry's reservation
 *   (ceil(price·(n−k)/n), jobs/service.ts), and each step is also capped at what this attempt may
 *   still charge.
 * - The target failing (unreachable, blocked, too slow) fails the job SCAN_TARGET_UNREACHABLE,
 *   SCAN_TARGET_BLOCKED or SCAN_TARGET_TIMEOUT, charging the checks completed so far: a check
 *   whose subject cannot be observed has no honest verdict. (Port 80 not answering is itself a
 *   verdict of https-redirect.)
 *
 * Price: `perRunMillicents` (the only parameter of a scan). The attempt's deadline is the route's
 * `timeoutSeconds`; each request also has its own (at most 10 s), see scan-session.ts.
 */
import { SECURITY_CHECKS, type SecurityCheckId } from '../../operations/security-scan.js';
import type { LocalContext } from '../types.js';
import { ProviderError, type Provider, type ProviderRun } from '../types.js';
import { contentSecurityPolicy, contentTypeOptions, frameProtection, hsts, referrerPolicy } from './scan-headers.js';
import { cookies } from './scan-cookies.js';
import { cors } from './scan-cors.js';
import { exposedFiles } from './scan-exposure.js';
import { httpsRedirect } from './scan-redirect.js';
import { scanTarget, ScanSession, type Check, type CheckOutcome } from './scan-session.js';
import { certificateExpiry, certificateHostname, certificateTrust, tlsProtocol } from './scan-tls.js';

const CHECKS: Readonly<Record<SecurityCheckId, Check>> = {
  'tls-protocol': tlsProtocol,
  'certificate-trust': certificateTrust,
  'certificate-expiry': certificateExpiry,
  'certificate-hostname': certificateHostname,
  'https-redirect': httpsRedirect,
  hsts,
  'content-security-policy': contentSecurityPolicy,
  'content-type-options': contentTypeOptions,
  'frame-protection': frameProtection,
  'referrer-policy': referrerPolicy,
  cookies,
  cors,
  // The HTML tokenizer it reads pages with loads on the first scan, not with the service.
  'mixed-content': async (session) => (await import('./scan-mixed-content.js')).mixedContent(session),
  'exposed-files': exposedFiles,
};

export type CheckResult = { id: SecurityCheckId } & CheckOutcome;

const DEFAULT_TIMEOUT_SECONDS = 600;

/** Cost of check `step` (1-based) of `steps` when the scan costs `total` (see the header). */
export function checkCost(total: number, steps: number, step: number): number {
  return Math.ceil((total * step) / steps) - Math.ceil((total * (step - 1)) / steps);
}

/** The results earlier attempts checkpointed, which must be exactly the first `stepsDone` checks. */
function savedResults(job: ProviderRun): CheckResult[] {
  const saved = job.state.checks;
  const results = Array.isArray(saved) ? (saved as CheckResult[]) : [];
  const consistent = job.stepsTotal === SECURITY_CHECKS.length && results.length === job.stepsDone && results.every((r, i) => r?.id === SECURITY_CHECKS[i]);
  if (!consistent) throw new ProviderError('PROVIDER_ERROR', 'The saved progress of this scan does not match its checks.');
  return [...results];
}

async function runScan(job: ProviderRun, ctx: LocalContext) {
  const target = scanTarget(String(job.input.url));
  const results = savedResults(job);
  const timeoutSeconds = job.route.spec?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const session = new ScanSession(ctx.egress, target, Date.now() + timeoutSeconds * 1000, job.signal);
  const steps = SECURITY_CHECKS.length;
  const price = job.route.price(job.input).maximumMillicents;
  let charged = 0;
  for (let step = results.length + 1; step <= steps; step++) {
    if (!(await job.isVerifiedHost(target.hostname))) {
      throw new ProviderError('DOMAIN_NOT_VERIFIED', `${target.hostname} is no longer a verified domain of this workspace; the scan stopped.`);
    }
    const id = SECURITY_CHECKS[step - 1]!;
    results.push({ id, ...(await CHECKS[id](session)) });
    const cost = Math.max(0, Math.min(checkCost(price, steps, step), job.maximumMillicents - charged));
    charged += cost;
    await job.checkpoint({ stepsDone: step, costMillicents: cost, state: { checks: results } });
    await job.progress((step / steps) * 100);
  }
  ctx.log.debug({ jobId: job.jobId, requests: session.requests }, 'security scan finished');
  return {
    data: { url: String(job.input.url), checks: results, provider: job.route.providerName, model: job.route.model },
    files: [],
    costMillicents: 0,
  };
}

export function scannerEngine(ctx: LocalContext): Provider {
  return {
    name: 'local',
    // One step per check, whatever the input.
    steps: () => SECURITY_CHECKS.length,
    run: (job) => runScan(job, ctx),
  };
}

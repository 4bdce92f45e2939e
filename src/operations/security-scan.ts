/**
 * security.scan: passive checks of an HTTPS site (decisions.md section 5, "security.scan"), one
 * checkpointed step per check, in the order of SECURITY_CHECKS. Each check ends pass, warn or
 * fail with its evidence, and a short remedy when it is not a pass.
 */
import type { TSchema } from 'typebox';
import { resultObject, inputObject, noQuantities, type OperationContract } from './contract.js';

/** The checks of a scan, in the order they run (each one a checkpointed step). */
export const SECURITY_CHECKS = [
  'tls-protocol',
  'certificate-trust',
  'certificate-expiry',
  'certificate-hostname',
  'https-redirect',
  'hsts',
  'content-security-policy',
  'content-type-options',
  'frame-protection',
  'referrer-policy',
  'cookies',
  'cors',
  'mixed-content',
  'exposed-files',
] as const;

export type SecurityCheckId = (typeof SECURITY_CHECKS)[number];
export type CheckStatus = 'pass' | 'warn' | 'fail';

export const securityScan: OperationContract = {
  id: 'security.scan',
  toolSlug: 'security',
  summaryKey: 'tools.security.scan.summary',
  title: 'Scan a verified HTTPS site for security issues',
  points: 80,
  typicalInput: { summary: 'one site', input: { url: 'https://example.com/' } },
  asynchronous: true,
  inputSchema: inputObject(
    { url: { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]://', maxLength: 2048, description: 'https address of a site' } as unknown as TSchema },
    ['url'],
  ),
  resultSchema: resultObject(
    {
      url: { type: 'string' },
      checks: {
        type: 'array',
        maxItems: SECURITY_CHECKS.length,
        items: {
          type: 'object',
          properties: {
            id: { enum: [...SECURITY_CHECKS] },
            status: { enum: ['pass', 'warn', 'fail'] },
            summary: { type: 'string' },
            /** What was observed (header values, certificate fields, paths); never cookie values or file contents. */
            evidence: { type: 'object' },
            /** What to change, for a warn or a fail. */
            remedy: { type: 'string' },
          },
          required: ['id', 'status', 'summary'],
          additionalProperties: false,
        },
      },
    },
    ['url', 'checks'],
  ),
  mediaFields: [],
  verifiedHostField: 'url',
  produces: null,
  price: () => ({ estimatedMillicents: 15_000, maximumMillicents: 15_000 }),
  quantities: noQuantities,
  priceParams: [],
  steps: () => SECURITY_CHECKS.length,
  mainText: () => undefined,
};

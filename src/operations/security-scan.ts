/** security.scan: passive checks of an HTTPS site, one checkpointed step per check. */
import type { TSchema } from 'typebox';
import { resultObject, inputObject, str, type OperationContract } from './contract.js';

export const SECURITY_CHECKS = ['tls', 'headers', 'cookies', 'cors', 'mixed-content', 'exposure'] as const;

export const securityScan: OperationContract = {
  id: 'security.scan',
  toolSlug: 'security',
  summaryKey: 'tools.security.scan.summary',
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
        items: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            status: { enum: ['pass', 'warn', 'fail'] },
            summary: { type: 'string' },
            evidence: {},
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
  produces: null,
  price: () => ({ estimatedMillicents: 15_000, maximumMillicents: 15_000 }),
  steps: () => SECURITY_CHECKS.length,
  mainText: () => undefined,
};

/**
 * Turns the service's /openapi.json into the SDK's generated/openapi.ts with openapi-typescript.
 * Shared by the generation script and the drift test (test/sdk/sdk-types.test.ts), so both produce
 * byte-identical text from the same document.
 */
import openapiTS, { astToString } from 'openapi-typescript';

export const GENERATED_HEADER = [
  '/**',
  ' * Generated from the service\'s /openapi.json by openapi-typescript; do not edit.',
  ' * Regenerate with `npm run generate -w workspace-automation-sdk` (after `npm run build`);',
  ' * test/sdk/sdk-types.test.ts fails when this file and the served document disagree.',
  ' */',
  '',
].join('\n');

export async function generateTypes(document: Record<string, unknown>): Promise<string> {
  // The servers entry names the address of whichever instance served the document; the types do not depend on it.
  const { servers: _servers, ...rest } = document;
  const ast = await openapiTS(rest as unknown as Parameters<typeof openapiTS>[0], { alphabetize: true, defaultNonNullable: false });
  return GENERATED_HEADER + astToString(ast);
}

/** A providers file (docs/providers.md) written as DIR/NAME for PROVIDERS_FILE; returns its path. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function writeProvidersFile(dir: string, name: string, json: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
}

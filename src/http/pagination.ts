/** Query schema and cursor handling shared by every `limit`/`cursor` list (spec Size and paging bounds). */
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import { AppError } from './errors.js';

export const PageQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuerySchema>;

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

/** Reads a keyset position (the last id seen) from a cursor of `list` in `workspaceId`. */
export function readCursor(deps: Deps, list: string, workspaceId: string, cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const value = deps.cursors.decode<{ after: string }>(list, workspaceId, cursor);
  if (!value || typeof value.after !== 'string') throw new AppError('INVALID_CURSOR');
  return value.after;
}

/** Fetches limit+1 rows to know whether another page exists; returns the page and its cursor. */
export async function keysetPage<T extends { id: string }>(
  deps: Deps,
  list: string,
  workspaceId: string,
  page: PageRequest,
  fetch: (position: string | undefined, limit: number) => Promise<T[]>,
): Promise<{ items: T[]; nextCursor: string | null }> {
  const position = readCursor(deps, list, workspaceId, page.cursor);
  const rows = await fetch(position, page.limit + 1);
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  const nextCursor = rows.length > page.limit && last ? deps.cursors.encode(list, workspaceId, { after: last.id }) : null;
  return { items, nextCursor };
}

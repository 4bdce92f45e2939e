/**
 * CSV exports (RFC 4180: comma-separated, CRLF line ends, a header row, fields quoted when they
 * hold a comma, quote, CR or LF). Streamed: rows are produced chunk by chunk as the client reads,
 * never the whole export in memory. A field that a spreadsheet would read as a formula (starting
 * with =, +, -, @, tab or CR) and is not a number is prefixed with a single quote.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isInternalMcpRequest, MCP_INTERNAL_HEADER } from '../../mcp/internal.js';

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

const NUMBER = /^-?\d+$/;

export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (typeof value !== 'number' && !NUMBER.test(s) && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRow(fields: readonly (string | number | null | undefined)[]): string {
  return fields.map(csvField).join(',') + '\r\n';
}

/**
 * Whether the request asks for CSV: `format=csv`, or an Accept header preferring text/csv to JSON
 * (`format=json` wins over the header). MCP tool calls always answer JSON (a tool result).
 */
export function wantsCsv(request: FastifyRequest, format: string | undefined): boolean {
  if (isInternalMcpRequest(request.headers[MCP_INTERNAL_HEADER])) return false;
  if (format !== undefined) return format === 'csv';
  const accept = request.headers.accept;
  if (!accept) return false;
  let csv = -1;
  let json = -1;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    if (type === 'text/csv') csv = Math.max(csv, q);
    else if (type === 'application/json' || type === 'application/*' || type === '*/*') json = Math.max(json, type === 'application/json' ? q : q - 0.001);
  }
  return csv > 0 && csv >= json;
}

/** Sends the rows `chunks` yields (each an array of CSV lines) after `header`, as a streamed CSV body. */
export function sendCsv(reply: FastifyReply, filename: string, header: readonly string[], chunks: AsyncIterable<string[]>): FastifyReply {
  async function* body() {
    yield csvRow(header);
    for await (const lines of chunks) if (lines.length > 0) yield lines.join('');
  }
  reply.type(CSV_CONTENT_TYPE);
  reply.header('content-disposition', `attachment; filename="${filename}"`);
  return reply.send(Readable.from(body(), { objectMode: false }));
}

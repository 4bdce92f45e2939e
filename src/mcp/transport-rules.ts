/**
 * Rules of the Streamable HTTP transport (MCP specification, "Transports") checked before a
 * message reaches the SDK:
 *
 * - Origin: a browser page on another site can reach a server on loopback or a private network
 *   through DNS rebinding; a request carrying an Origin outside the allow list is refused with 403
 *   before the key is even read. Requests without Origin (agents, CLIs, server-side clients) pass.
 * - Protocol revision: `MCP-Protocol-Version` must name a revision this server speaks; otherwise a
 *   400 whose JSON-RPC error lists the supported ones (the SDK's own refusal does not say which
 *   were asked for). Without the header a client is taken to speak 2025-03-26, as the
 *   specification says.
 * - Batches: JSON-RPC batching was removed in 2025-06-18; a batch from a client that negotiated
 *   that revision or a later one is refused whole (400, -32600). 2025-03-26 and older clients may
 *   still batch.
 */
import { ErrorCode, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

/** The revision assumed for a request without MCP-Protocol-Version (specification, 2025-06-18 onwards). */
export const DEFAULT_NEGOTIATED_REVISION = '2025-03-26';
/** The first revision without JSON-RPC batches. */
export const BATCHES_REMOVED_IN = '2025-06-18';

export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  return allowed.includes(origin.trim().toLowerCase().replace(/\/$/, ''));
}

export interface JsonRpcRefusal {
  status: number;
  body: { jsonrpc: '2.0'; id: null; error: { code: number; message: string; data?: unknown } };
}

function refusal(status: number, message: string, data?: unknown): JsonRpcRefusal {
  return { status, body: { jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message, ...(data !== undefined ? { data } : {}) } } };
}

/**
 * The revision a request speaks: its MCP-Protocol-Version header, else the one an initialize in
 * the body proposes, else the default of clients that send no header.
 */
export function requestRevision(header: string | string[] | undefined, body: unknown): string {
  if (typeof header === 'string') return header.trim();
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    if (message !== null && typeof message === 'object' && (message as { method?: unknown }).method === 'initialize') {
      const proposed = (message as { params?: { protocolVersion?: unknown } }).params?.protocolVersion;
      if (typeof proposed === 'string') return proposed;
    }
  }
  return DEFAULT_NEGOTIATED_REVISION;
}

/** Why the request is refused before the SDK sees it, if it is: an unknown revision, or a batch its revision does not allow. */
export function transportRefusal(header: string | string[] | undefined, body: unknown): JsonRpcRefusal | undefined {
  if (header !== undefined && (typeof header !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(header.trim()))) {
    const asked = Array.isArray(header) ? header.join(', ') : header;
    return refusal(400, `Unsupported MCP-Protocol-Version "${asked}"; this server supports ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}.`, {
      requested: asked,
      supported: SUPPORTED_PROTOCOL_VERSIONS,
    });
  }
  if (!Array.isArray(body)) return undefined;
  const revision = requestRevision(header, body);
  // Revisions are dates: string order is time order.
  if (revision >= BATCHES_REMOVED_IN) {
    return refusal(400, `JSON-RPC batches are not part of MCP ${revision} (removed in ${BATCHES_REMOVED_IN}); send one message per request.`);
  }
  return undefined;
}

/** The official SDK client against the in-process app listening on loopback, for the MCP tests. */
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestContext } from './harness.js';
import { baseUrl } from './base-url.js';

/** A connected client that has listed the tools (so the SDK checks results against each tool's outputSchema). */
export async function connectClient(ctx: TestContext, secret: string, options: ClientOptions = {}): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' }, options);
  const transport = new StreamableHTTPClientTransport(new URL(`${await baseUrl(ctx)}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } });
  await client.connect(transport);
  await client.listTools();
  return client;
}

export interface ToolOutcome {
  body: any;
  isError: boolean;
  status: number;
  retryAfter: number | undefined;
  content: { type: string; text?: string; uri?: string; name?: string; mimeType?: string; size?: number }[];
  structured: any;
}

/** Calls a tool; the body is the JSON of the first (text) content block. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>, options?: Parameters<Client['callTool']>[2]): Promise<ToolOutcome> {
  const res = (await client.callTool({ name, arguments: args }, undefined, options)) as {
    content: ToolOutcome['content'];
    structuredContent?: unknown;
    isError?: boolean;
    _meta?: Record<string, unknown>;
  };
  return {
    body: JSON.parse(res.content[0]!.text!),
    isError: res.isError === true,
    status: res._meta?.httpStatus as number,
    retryAfter: res._meta?.retryAfter as number | undefined,
    content: res.content,
    structured: res.structuredContent,
  };
}

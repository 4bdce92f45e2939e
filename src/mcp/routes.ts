/**
 * The MCP module as endpoint.ts loads it, on the first request to `/mcp`: the handlers of
 * POST /mcp (JSON-RPC, jsonrpc-post.ts) and GET /mcp (the standing task stream,
 * task-stream-route.ts), and the process's task notification hub. Nothing loaded at start-up
 * imports this file or what it imports, so a service no agent talks to never holds the MCP SDK.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { listRoutes } from '../http/route-catalogue.js';
import { answerPost } from './jsonrpc-post.js';
import { taskHubs, TaskNotificationHub } from './task-notifications.js';
import { openTaskStream } from './task-stream-route.js';
import { buildToolTable, type ToolTable } from './tool-table.js';

/** What the /mcp routes (endpoint.ts) hand each request to, once this module is loaded. */
export interface McpHandlers {
  post(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  openStream(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  hub: TaskNotificationHub;
}

/**
 * The handlers of POST /mcp (JSON-RPC) and GET /mcp (the standing task stream). `root` is the app
 * built by buildApp: its route catalog gives the tools, and tool calls are injected into it.
 */
export function mcpHandlers(deps: Deps, root: FastifyInstance): McpHandlers {
  // Built at the first call, when every route is registered (the tools come from the route catalog).
  let tools: ToolTable | undefined;
  const toolTable = () => (tools ??= buildToolTable(listRoutes(root)));
  // The standing stream: task status notifications (task-notifications.ts).
  const hub = new TaskNotificationHub(deps, deps.streamSettings);
  taskHubs.set(root, hub);
  return {
    post: (request, reply) => answerPost(deps, root, toolTable, request, reply),
    openStream: (request, reply) => openTaskStream(deps, hub, request, reply),
    hub,
  };
}

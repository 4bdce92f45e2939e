/**
 * Driving the owners' console over HTTP (src/console/): issuing a sign-in link through the admin
 * API, signing in with it, and calls with the session cookie, the console's Origin and the CSRF
 * token, each of which a test can leave out or replace.
 */
import assert from 'node:assert/strict';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import * as accounts from '../../src/modules/accounts/service.js';
import { admin, type TestContext } from './harness.js';
import { uniqueEmail } from './seed.js';

export interface ConsoleLogin {
  /** `name=value` for a Cookie header. */
  cookie: string;
  csrfToken: string;
  /** The Set-Cookie header the sign-in answered with. */
  setCookie: string;
}

/** The origin the console accepts changes from: that of PUBLIC_BASE_URL. */
export function consoleOrigin(ctx: TestContext): string {
  return new URL(ctx.config.publicBaseUrl).origin;
}

/** Issues a link through the admin API; returns its token (from the URL's fragment) and the answer. */
export async function issueLink(ctx: TestContext, userId: string): Promise<{ token: string; url: string; expiresAt: string }> {
  const res = await admin(ctx, `/admin/v1/users/${userId}/sign-in-links`);
  assert.equal(res.statusCode, 200, res.body);
  const { url, expiresAt } = res.json().data as { url: string; expiresAt: string };
  const token = new URL(url).hash.replace(/^#token=/, '');
  return { token, url, expiresAt };
}

export async function postSignIn(ctx: TestContext, token: unknown, headers: Record<string, string> = { origin: consoleOrigin(ctx) }, remoteAddress?: string): Promise<LightMyRequestResponse> {
  return ctx.app.inject({ method: 'POST', url: '/console/api/sign-in', headers, payload: { token } as object, ...(remoteAddress ? { remoteAddress } : {}) });
}

let signIns = 0;

/**
 * Signs `userId` in through a fresh link, each time from another client address (198.18.0.0/15,
 * the benchmarking range), as different people do: sign-in attempts are limited per address.
 */
export async function signInAs(ctx: TestContext, userId: string): Promise<ConsoleLogin> {
  const { token } = await issueLink(ctx, userId);
  signIns += 1;
  const res = await postSignIn(ctx, token, undefined, `198.18.${(signIns >> 8) & 255}.${signIns & 255}`);
  assert.equal(res.statusCode, 200, res.body);
  const setCookie = String(res.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0]!, csrfToken: res.json().data.csrfToken, setCookie };
}

export interface ConsoleCallOptions {
  body?: unknown;
  /** Default: the console's origin on POST; null leaves the header out. */
  origin?: string | null;
  /** Default: the login's token on POST; null leaves the header out. */
  csrfToken?: string | null;
  headers?: Record<string, string>;
}

/** A console API call as the page makes it. */
export async function consoleCall(ctx: TestContext, login: ConsoleLogin | undefined, method: 'GET' | 'POST', url: string, o: ConsoleCallOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...o.headers };
  if (login) headers.cookie = login.cookie;
  if (method === 'POST') {
    const origin = o.origin === undefined ? consoleOrigin(ctx) : o.origin;
    if (origin !== null) headers.origin = origin;
    const csrf = o.csrfToken === undefined ? login?.csrfToken : o.csrfToken;
    if (csrf != null) headers['x-csrf-token'] = csrf;
  }
  const options: InjectOptions = { method, url, headers };
  if (o.body !== undefined) options.payload = o.body as object;
  return ctx.app.inject(options);
}

/** The body of a key every console test can create: REST only, two scopes, one operation. */
export const SMALL_KEY_BODY = { scopes: ['workspaces:read', 'jobs:read'], operations: ['link.preview'], transports: ['rest'] };

type User = Awaited<ReturnType<typeof accounts.createUser>>;

/**
 * The organization "Acme", owned by a new user "Owner", with a new "Admin" (unless `admin: false`)
 * and a new "Member", and its workspace "Acme prod" (plan pro).
 */
export async function seedOrganization(ctx: TestContext, { admin: withAdmin = true } = {}) {
  const user = (name: string) => accounts.createUser(ctx.deps, { email: uniqueEmail(), name });
  const owner = await user('Owner');
  const adminUser: User | undefined = withAdmin ? await user('Admin') : undefined;
  const member = await user('Member');
  const org = await accounts.createOrganization(ctx.deps, { name: 'Acme', ownerUserId: owner.id });
  if (adminUser) await accounts.setMember(ctx.deps, org.id, { userId: adminUser.id, role: 'admin' });
  await accounts.setMember(ctx.deps, org.id, { userId: member.id, role: 'member' });
  const workspace = await accounts.createWorkspace(ctx.deps, { name: 'Acme prod', plan: 'pro', organizationId: org.id });
  return { org, workspace, owner, adminUser, member };
}

/** seedOrganization with an admin, and its owner, admin and member each signed in. */
export async function seedSignedInOrganization(ctx: TestContext) {
  const o = await seedOrganization(ctx);
  const adminUser = o.adminUser!;
  return { org: o.org, workspace: o.workspace, adminUser, owner: await signInAs(ctx, o.owner.id), admin: await signInAs(ctx, adminUser.id), member: await signInAs(ctx, o.member.id) };
}

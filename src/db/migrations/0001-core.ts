/** Core tables: accounts, keys, credits ledger, usage counters, domains, provider keys. */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await accounts(db);
  await keys(db);
  await credits(db);
  await limits(db);
}

/** Users, organizations and their members, workspaces. */
async function accounts(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('organization_members')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_members_pk', ['organization_id', 'user_id'])
    .execute();
  await db.schema.createIndex('organization_members_user_idx').on('organization_members').column('user_id').execute();

  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('owner_user_id', 'text', (c) => c.references('users.id'))
    .addColumn('organization_id', 'text', (c) => c.references('organizations.id'))
    .addColumn('limits_json', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('budget_daily_mc', 'bigint')
    .addColumn('budget_weekly_mc', 'bigint')
    .addColumn('budget_monthly_mc', 'bigint')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .addCheckConstraint('workspaces_one_owner', sql`(owner_user_id is null) <> (organization_id is null)`)
    .execute();
}

/** API keys and the workspaces each may use. */
async function keys(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('scopes_json', 'text', (c) => c.notNull())
    .addColumn('operations_json', 'text', (c) => c.notNull())
    .addColumn('transports_json', 'text', (c) => c.notNull())
    .addColumn('ip_ranges_json', 'text', (c) => c.notNull())
    .addColumn('expires_at_ms', 'bigint')
    .addColumn('budget_daily_mc', 'bigint')
    .addColumn('budget_weekly_mc', 'bigint')
    .addColumn('budget_monthly_mc', 'bigint')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at_ms', 'bigint')
    .addColumn('suspended_until_ms', 'bigint')
    .execute();

  await db.schema
    .createTable('api_key_workspaces')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addPrimaryKeyConstraint('api_key_workspaces_pk', ['key_id', 'workspace_id'])
    .execute();
  await db.schema.createIndex('api_key_workspaces_ws_idx').on('api_key_workspaces').column('workspace_id').execute();
}

/** Credit allocations, the ledger and holds. */
async function credits(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('credit_allocations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('amount_mc', 'bigint', (c) => c.notNull())
    .addColumn('remaining_mc', 'bigint', (c) => c.notNull())
    .addColumn('expires_at_ms', 'bigint')
    .addColumn('provenance', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addCheckConstraint('credit_allocations_remaining_ok', sql`remaining_mc >= 0 and remaining_mc <= amount_mc`)
    .execute();
  await db.schema.createIndex('credit_allocations_ws_idx').on('credit_allocations').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('credit_transactions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('amount_mc', 'bigint', (c) => c.notNull())
    .addColumn('allocation_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('tool_slug', 'text')
    .addColumn('job_id', 'text')
    .addColumn('execution_origin', 'text')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('credit_transactions_ws_idx').on('credit_transactions').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('credit_transactions_ws_time_idx').on('credit_transactions').columns(['workspace_id', 'created_at_ms']).execute();
  await db.schema.createIndex('credit_transactions_key_time_idx').on('credit_transactions').columns(['key_id', 'created_at_ms']).execute();

  // Reservations of a job's bounded maximum cost; open while released_at_ms is null.
  await db.schema
    .createTable('credit_holds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('amount_mc', 'bigint', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('released_at_ms', 'bigint')
    .addCheckConstraint('credit_holds_amount_ok', sql`amount_mc >= 0`)
    .execute();
  await sql`create index credit_holds_open_idx on credit_holds (workspace_id) where released_at_ms is null`.execute(db);
  await db.schema.createIndex('credit_holds_job_idx').on('credit_holds').column('job_id').execute();
}

/** Usage counters, verified domains, workspaces' own provider keys and cache epochs. */
async function limits(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('usage_counters')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('window_kind', 'text', (c) => c.notNull())
    .addColumn('window_start_ms', 'bigint', (c) => c.notNull())
    .addColumn('used', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_counters_pk', ['workspace_id', 'window_kind', 'window_start_ms'])
    .execute();

  await db.schema
    .createTable('domains')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('verification_token', 'text', (c) => c.notNull())
    .addColumn('verified_method', 'text')
    .addColumn('verified_at_ms', 'bigint')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('domains_pk', ['workspace_id', 'hostname'])
    .execute();
  // A hostname is verified in at most one workspace at a time.
  await sql`create unique index domains_verified_hostname_idx on domains (hostname) where status = 'verified'`.execute(db);

  await db.schema
    .createTable('provider_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('sealed_key', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('provider_keys_ws_provider_uq', ['workspace_id', 'provider'])
    .execute();

  await db.schema
    .createTable('cache_epochs')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('cache_epochs').values({ name: 'auth', epoch: 0 }).execute();
}

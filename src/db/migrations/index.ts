/** The one ordered list of migrations, shared by SQLite and PostgreSQL. Append only. */
import type { Migration } from 'kysely';
import * as core from './0001-core.js';
import * as jobs from './0002-jobs.js';
import * as media from './0003-media.js';
import * as webhooks from './0004-webhooks.js';
import * as creditExpiry from './0005-credit-expiry.js';
import * as workspaceTotals from './0006-workspace-totals.js';
import * as eventRetention from './0007-event-retention.js';
import * as allocationHotUpdates from './0008-allocation-hot-updates.js';
import * as retryCostBound from './0009-retry-cost-bound.js';
import * as streamSlotsByKey from './0010-stream-slots-by-key.js';
import * as keyRollAndAdjustments from './0011-key-roll-and-adjustments.js';
import * as alerts from './0012-alerts.js';
import * as mcpStreamSlots from './0013-mcp-stream-slots.js';
import * as consoleSessions from './0014-console-sessions.js';
import * as costRollups from './0015-cost-rollups.js';
import * as testMode from './0016-test-mode.js';
import * as voices from './0017-voices.js';

export const migrations: Record<string, Migration> = {
  '0001-core': core,
  '0002-jobs': jobs,
  '0003-media': media,
  '0004-webhooks': webhooks,
  '0005-credit-expiry': creditExpiry,
  '0006-workspace-totals': workspaceTotals,
  '0007-event-retention': eventRetention,
  '0008-allocation-hot-updates': allocationHotUpdates,
  '0009-retry-cost-bound': retryCostBound,
  '0010-stream-slots-by-key': streamSlotsByKey,
  '0011-key-roll-and-adjustments': keyRollAndAdjustments,
  '0012-alerts': alerts,
  '0013-mcp-stream-slots': mcpStreamSlots,
  '0014-console-sessions': consoleSessions,
  '0015-cost-rollups': costRollups,
  '0016-test-mode': testMode,
  '0017-voices': voices,
};

/**
 * Generated from the service's /openapi.json by openapi-typescript; do not edit.
 * Regenerate with `npm run generate -w workspace-automation-sdk` (after `npm run build`);
 * test/sdk/sdk-types.test.ts fails when this file and the served document disagree.
 */
export interface paths {
    "/v1/balance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Credit balance and allocations
         * @description Scope: `billing:read`. Costs 2 usage points. Success code: `PUBLIC_BALANCE_GET`.
         */
        get: operations["PUBLIC_BALANCE_GET"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/costs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Costs per UTC bucket, grouped by operation, key or execution origin
         * @description Spending from the ledger in whole UTC buckets (at most 744 hours, 366 days or 36 months), exact to the millicent: the totals equal minus the sum of the ledger entries of the range other than purchases. Refunds, debits and expirations are lines of their own. `Accept: text/csv` or `format=csv` answers the lines as CSV.
         *
         *     Scope: `billing:read`. Costs 2 usage points. Success code: `PUBLIC_COSTS_GET`.
         */
        get: operations["PUBLIC_COSTS_GET"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/estimates": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Estimate the cost of an operation without reserving credits
         * @description Scope: `tools:run`. Costs 4 usage points. Success code: `PUBLIC_TOOLS_ESTIMATE`.
         */
        post: operations["PUBLIC_TOOLS_ESTIMATE"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace event feed, oldest first
         * @description Pages through the events of the selected workspace (job.completed, job.failed, job.cancelled, media.created, budget.threshold_crossed, credits.low, allocation.expiring, key.expiring, key.suspended, webhook.failing). Events appear once the change that caused them is committed; a position never moves past an event that could still appear.
         *
         *     Scope: `jobs:read`. Costs 2 usage points. Success code: `PUBLIC_EVENTS_LIST`.
         */
        get: operations["PUBLIC_EVENTS_LIST"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Jobs of the workspace, newest first (metadata only)
         * @description Scope: `jobs:read`. Costs 2 usage points. Success code: `PUBLIC_JOBS_LIST`.
         */
        get: operations["PUBLIC_JOBS_LIST"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{jobId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Job snapshot
         * @description Scope: `jobs:read`. Costs 1 usage point. Success code: `PUBLIC_JOBS_GET`.
         */
        get: operations["PUBLIC_JOBS_GET"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{jobId}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a pending or processing job
         * @description Scope: `jobs:write`. Costs 2 usage points. Success code: `PUBLIC_JOBS_CANCEL`.
         */
        post: operations["PUBLIC_JOBS_CANCEL"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{jobId}/output": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Complete job output, in fragments
         * @description Scope: `jobs:read`. Costs 2 usage points. Success code: `PUBLIC_JOBS_OUTPUT`.
         */
        get: operations["PUBLIC_JOBS_OUTPUT"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{jobId}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Retry a failed job (new Idempotency-Key required)
         * @description Scope: `jobs:write`. Costs usage points that depend on the operation. Success code: `PUBLIC_JOBS_RETRY`.
         */
        post: operations["PUBLIC_JOBS_RETRY"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{jobId}/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Job updates as server-sent events (Pro plan)
         * @description Server-sent events (`text/event-stream`). Frames: `event: job` with `id: <job version>` and `data: <job snapshot JSON>` (first the current snapshot, then one frame per change, in order; older versions resent on resume carry `output: {}`); `event: gap` with `data: {"jobId","lastEventId"}` when the history after Last-Event-ID is gone, followed by the current snapshot; `: keep-alive` comments every 15 s. The stream closes after the terminal status (completed, failed, cancelled), when the key loses access, and on server shutdown. Workspaces without streams: 403 PLAN_REQUIRED; more open streams than the plan allows: 429 CONCURRENCY_LIMITED (details.limit STREAMS).
         *
         *     Scope: `jobs:read`. Costs 3 usage points. Success code: `PUBLIC_JOBS_STREAM`.
         */
        get: operations["PUBLIC_JOBS_STREAM"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/media": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the media library, newest first
         * @description Scope: `media:read`. Costs 2 usage points. Success code: `PUBLIC_MEDIA_LIST`.
         */
        get: operations["PUBLIC_MEDIA_LIST"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/media/{mediaId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read one media item
         * @description Scope: `media:read`. Costs 1 usage point. Success code: `PUBLIC_MEDIA_GET`.
         */
        get: operations["PUBLIC_MEDIA_GET"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/media/{mediaId}/download": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A temporary signed download URL
         * @description The URL needs no API key and stops working at expiresAt (after MEDIA_URL_TTL_S, default 15 minutes); request a new one then.
         *
         *     Scope: `media:read`. Costs 2 usage points. Success code: `PUBLIC_MEDIA_DOWNLOAD`.
         */
        get: operations["PUBLIC_MEDIA_DOWNLOAD"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/media/upload": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Upload a media file
         * @description multipart/form-data with exactly one file part named `file`. Accepted: PNG, JPEG, WebP, GIF, MP3, WAV, Ogg audio, MP4, WebM, GLB; the content must match the declared type. Largest upload and storage quota depend on the plan (free 25 MiB / 500 MiB, starter 100 MiB / 10 GiB, pro 250 MiB / 100 GiB).
         *
         *     Scope: `media:write`. Costs 10 usage points. Success code: `PUBLIC_MEDIA_UPLOAD`.
         */
        post: operations["PUBLIC_MEDIA_UPLOAD"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Running and waiting jobs of the workspace
         * @description Scope: `jobs:read`. Costs 1 usage point. Success code: `PUBLIC_QUEUE_GET`.
         */
        get: operations["PUBLIC_QUEUE_GET"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a Tool operation (synchronous: 200 with the result; queued: 202 with the job)
         * @description Scope: `tools:run`. Costs usage points that depend on the operation. Success code: `PUBLIC_TOOLS_RUN`.
         */
        post: operations["PUBLIC_TOOLS_RUN"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/lookup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Find the run or retry made with an Idempotency-Key (same key and workspace, last 24 hours)
         * @description Scope: `jobs:read`. Costs 1 usage point. Success code: `PUBLIC_RUNS_LOOKUP`.
         */
        get: operations["PUBLIC_RUNS_LOOKUP"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/test/webhook-events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a sample event to the test webhooks (test keys only)
         * @description Stores a sample event of `type` in test mode, as `stripe trigger` does: it appears in the test event feed and is delivered, signed like any other, to every test webhook subscribed to its type. The ids in its data are made for the sample. Live keys get 403 TEST_MODE_ONLY.
         *
         *     Scope: `webhooks:write`. Costs 5 usage points. Success code: `PUBLIC_TEST_WEBHOOK_EVENTS_CREATE`.
         */
        post: operations["PUBLIC_TEST_WEBHOOK_EVENTS_CREATE"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Tool operations this key may run, with their input contracts
         * @description Scope: `tools:read`. Costs 2 usage points. Success code: `PUBLIC_TOOLS_LIST`.
         */
        get: operations["PUBLIC_TOOLS_LIST"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/transactions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Credit transaction ledger, newest first
         * @description `Accept: text/csv` or `format=csv` streams every entry of the range (`from`, `to`) as CSV, oldest first.
         *
         *     Scope: `billing:read`. Costs 2 usage points. Success code: `PUBLIC_TRANSACTIONS_LIST`.
         */
        get: operations["PUBLIC_TRANSACTIONS_LIST"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Usage points, budgets and streams
         * @description Scope: `usage:read`. Costs 1 usage point. Success code: `PUBLIC_USAGE_GET`.
         */
        get: operations["PUBLIC_USAGE_GET"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/usage/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Usage points and 429s per UTC minute, hour or day, by key or operation
         * @description Scope: `usage:read`. Costs 1 usage point. Success code: `PUBLIC_USAGE_HISTORY_GET`.
         */
        get: operations["PUBLIC_USAGE_HISTORY_GET"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/voices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the workspace voices, newest first
         * @description Voices made by voice.clone runs in this workspace and mode (deleted ones are left out). speech.generate speaks with one as `voiceId` where its provider takes reference voices.
         *
         *     Scope: `media:read`. Costs 2 usage points. Success code: `PUBLIC_VOICES_LIST`.
         */
        get: operations["PUBLIC_VOICES_LIST"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/voices/{voiceId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read one voice
         * @description Scope: `media:read`. Costs 1 usage point. Success code: `PUBLIC_VOICES_GET`.
         */
        get: operations["PUBLIC_VOICES_GET"];
        put?: never;
        post?: never;
        /**
         * Delete a voice
         * @description For good: runs naming it are refused (400 INVALID_INPUT on voiceId) and queued jobs that name it fail VOICE_DELETED before they reach a provider, charged nothing. Its reference audio stays a media item of the workspace.
         *
         *     Scope: `media:write`. Costs 2 usage points. Success code: `PUBLIC_VOICES_DELETE`.
         */
        delete: operations["PUBLIC_VOICES_DELETE"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Webhooks of the workspace (never a secret)
         * @description Scope: `webhooks:read`. Costs 2 usage points. Success code: `PUBLIC_WEBHOOKS_LIST`.
         */
        get: operations["PUBLIC_WEBHOOKS_LIST"];
        put?: never;
        /**
         * Create a webhook; the signing secret is returned once
         * @description Scope: `webhooks:write`. Costs 5 usage points. Success code: `PUBLIC_WEBHOOKS_CREATE`.
         */
        post: operations["PUBLIC_WEBHOOKS_CREATE"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhookId}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook's deliveries, newest first
         * @description Scope: `webhooks:read`. Costs 2 usage points. Success code: `PUBLIC_WEBHOOKS_DELIVERIES`.
         */
        get: operations["PUBLIC_WEBHOOKS_DELIVERIES"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhookId}/deliveries/{deliveryId}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replay a failed delivery (same event id; at most 3 replays per event)
         * @description Scope: `webhooks:write`. Costs 10 usage points. Success code: `PUBLIC_WEBHOOKS_REPLAY`.
         */
        post: operations["PUBLIC_WEBHOOKS_REPLAY"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhookId}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke a webhook for good; its unfinished deliveries are abandoned
         * @description No body. Revoking a revoked webhook returns it again.
         *
         *     Scope: `webhooks:write`. Costs 2 usage points. Success code: `PUBLIC_WEBHOOKS_REVOKE`.
         */
        post: operations["PUBLIC_WEBHOOKS_REVOKE"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhookId}/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace the signing secret; the old one stops at once
         * @description No body. The new secret is returned once.
         *
         *     Scope: `webhooks:write`. Costs 5 usage points. Success code: `PUBLIC_WEBHOOKS_ROTATE`.
         */
        post: operations["PUBLIC_WEBHOOKS_ROTATE"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhookId}/update": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Change url, eventTypes or enabled
         * @description Scope: `webhooks:write`. Costs 5 usage points. Success code: `PUBLIC_WEBHOOKS_UPDATE`.
         */
        post: operations["PUBLIC_WEBHOOKS_UPDATE"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workspaces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the workspaces this key may use
         * @description Scope: `workspaces:read`. Costs 2 usage points. Success code: `PUBLIC_WORKSPACES_LIST`.
         */
        get: operations["PUBLIC_WORKSPACES_LIST"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        "background.remove.input": {
            /** Format: uuid */
            mediaId: string;
        };
        /** background.remove request */
        "background.remove.request": {
            input: components["schemas"]["background.remove.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "background.remove";
        };
        "background.remove.result": {
            image: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
        };
        "chat.generate.input": {
            /** @default 512 */
            maxTokens?: number;
            messages: {
                content: string;
                /** @enum {string} */
                role: "system" | "user" | "assistant";
            }[];
            temperature?: number;
        };
        /** chat.generate request */
        "chat.generate.request": {
            input: components["schemas"]["chat.generate.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "chat.generate";
        };
        "chat.generate.result": {
            finishReason?: string | null;
            message: {
                content: string;
                /** @enum {unknown} */
                role: "assistant";
            };
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
            usage?: {
                inputTokens: number;
                outputTokens: number;
            };
        };
        "headshot.generate.input": {
            /** @default 1 */
            count?: number;
            /** @description style */
            prompt?: string;
            referenceMediaIds: string[];
        };
        /** headshot.generate request */
        "headshot.generate.request": {
            input: components["schemas"]["headshot.generate.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "headshot.generate";
        };
        "headshot.generate.result": {
            images: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            }[];
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
        };
        "image.generate.input": {
            /** @default 1 */
            count?: number;
            /** @default 1024 */
            height?: number;
            prompt: string;
            referenceMediaIds?: string[];
            /** @default 1024 */
            width?: number;
        };
        /** image.generate request */
        "image.generate.request": {
            input: components["schemas"]["image.generate.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "image.generate";
        };
        "image.generate.result": {
            images: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            }[];
            imageSize?: {
                generated: string;
                requested: string;
                requests: number;
                /** @enum {string} */
                resize: "none" | "cover";
            };
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
        };
        "link.preview.input": {
            /**
             * Format: uri
             * @description http or https address of a web page
             */
            url: string;
        };
        /** link.preview request */
        "link.preview.request": {
            input: components["schemas"]["link.preview.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "link.preview";
        };
        "link.preview.result": {
            metadata: {
                description: string | null;
                favicon: string | null;
                image: string | null;
                siteName: string | null;
                title: string | null;
                url: string | null;
            };
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
        };
        "music.generate.input": {
            /** @default 30 */
            durationSeconds?: number;
            /**
             * @default mp3
             * @enum {string}
             */
            format?: "mp3" | "wav";
            prompt: string;
        };
        /** music.generate request */
        "music.generate.request": {
            input: components["schemas"]["music.generate.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "music.generate";
        };
        "music.generate.result": {
            audio: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
            durationSeconds?: number;
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
        };
        "security.scan.input": {
            /**
             * Format: uri
             * @description https address of a site
             */
            url: string;
        };
        /** security.scan request */
        "security.scan.request": {
            input: components["schemas"]["security.scan.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "security.scan";
        };
        "security.scan.result": {
            checks: {
                evidence?: Record<string, never>;
                /** @enum {unknown} */
                id: "tls-protocol" | "certificate-trust" | "certificate-expiry" | "certificate-hostname" | "https-redirect" | "hsts" | "content-security-policy" | "content-type-options" | "frame-protection" | "referrer-policy" | "cookies" | "cors" | "mixed-content" | "exposed-files";
                remedy?: string;
                /** @enum {unknown} */
                status: "pass" | "warn" | "fail";
                summary: string;
            }[];
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
            url: string;
        };
        "speech.generate.input": {
            /**
             * @default mp3
             * @enum {string}
             */
            format?: "mp3" | "wav";
            text: string;
            voice?: string;
            /**
             * Format: uuid
             * @description A workspace voice (made by voice.clone, listed by GET /v1/voices) to speak with.
             */
            voiceId?: string;
        };
        /** speech.generate request */
        "speech.generate.request": {
            input: components["schemas"]["speech.generate.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "speech.generate";
        };
        "speech.generate.result": {
            audio: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
            characters?: number;
            durationSeconds?: number;
            format?: string;
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
            /**
             * Format: uuid
             * @description The workspace voice it spoke with, when the input named one.
             */
            voiceId?: string;
        };
        "sprite.generate.input": {
            engines?: ("godot" | "unity" | "phaser" | "generic")[];
            /** @default 64 */
            frameHeight?: number;
            /** @default 8 */
            frames?: number;
            /** @default 64 */
            frameWidth?: number;
            /**
             * @description Transparent pixels between two frames of the atlas.
             * @default 2
             */
            padding?: number;
            /**
             * @description Make the atlas width and height powers of two.
             * @default false
             */
            powerOfTwo?: boolean;
            prompt: string;
        };
        /** sprite.generate request */
        "sprite.generate.request": {
            input: components["schemas"]["sprite.generate.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "sprite.generate";
        };
        "sprite.generate.result": {
            atlas: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
            /** @description Per engine asked for: each frame's place in the atlas and the complete export file (`content`, saved as `fileName` beside the atlas saved as `imageFileName`). */
            exports: {
                generic?: {
                    /** @description The complete export: a JSON object (phaser, unity, generic) or the text of a Godot 4 SpriteFrames resource (godot). */
                    content?: Record<string, never> | string;
                    /** @description The name to save `content` under. */
                    fileName?: string;
                    /** @enum {string} */
                    format: "godot" | "unity" | "phaser" | "generic";
                    frameHeight: number;
                    frames: {
                        durationMs: number;
                        height?: number;
                        index: number;
                        width?: number;
                        x: number;
                        y: number;
                    }[];
                    frameWidth: number;
                    /** @description The name the export expects the atlas PNG to be saved under, beside it. */
                    imageFileName?: string;
                    mediaType?: string;
                };
                godot?: {
                    /** @description The complete export: a JSON object (phaser, unity, generic) or the text of a Godot 4 SpriteFrames resource (godot). */
                    content?: Record<string, never> | string;
                    /** @description The name to save `content` under. */
                    fileName?: string;
                    /** @enum {string} */
                    format: "godot" | "unity" | "phaser" | "generic";
                    frameHeight: number;
                    frames: {
                        durationMs: number;
                        height?: number;
                        index: number;
                        width?: number;
                        x: number;
                        y: number;
                    }[];
                    frameWidth: number;
                    /** @description The name the export expects the atlas PNG to be saved under, beside it. */
                    imageFileName?: string;
                    mediaType?: string;
                };
                phaser?: {
                    /** @description The complete export: a JSON object (phaser, unity, generic) or the text of a Godot 4 SpriteFrames resource (godot). */
                    content?: Record<string, never> | string;
                    /** @description The name to save `content` under. */
                    fileName?: string;
                    /** @enum {string} */
                    format: "godot" | "unity" | "phaser" | "generic";
                    frameHeight: number;
                    frames: {
                        durationMs: number;
                        height?: number;
                        index: number;
                        width?: number;
                        x: number;
                        y: number;
                    }[];
                    frameWidth: number;
                    /** @description The name the export expects the atlas PNG to be saved under, beside it. */
                    imageFileName?: string;
                    mediaType?: string;
                };
                unity?: {
                    /** @description The complete export: a JSON object (phaser, unity, generic) or the text of a Godot 4 SpriteFrames resource (godot). */
                    content?: Record<string, never> | string;
                    /** @description The name to save `content` under. */
                    fileName?: string;
                    /** @enum {string} */
                    format: "godot" | "unity" | "phaser" | "generic";
                    frameHeight: number;
                    frames: {
                        durationMs: number;
                        height?: number;
                        index: number;
                        width?: number;
                        x: number;
                        y: number;
                    }[];
                    frameWidth: number;
                    /** @description The name the export expects the atlas PNG to be saved under, beside it. */
                    imageFileName?: string;
                    mediaType?: string;
                };
            };
            /**
             * @description How the frames were kept alike: each frame after the first drawn from the first one as its reference image, or each drawn on its own (the provider takes no reference images).
             * @enum {string}
             */
            frameMode?: "first-frame-reference" | "independent";
            frames: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            }[];
            model?: string | null;
            predictionId?: string;
            provider?: string;
            strips: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            }[];
            text?: string;
        };
        "three-d.generate.input": {
            prompt?: string;
            referenceMediaIds?: string[];
        } | unknown | unknown;
        /** three-d.generate request */
        "three-d.generate.request": {
            input: components["schemas"]["three-d.generate.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "three-d.generate";
        };
        "three-d.generate.result": {
            glb: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
        };
        "three-d.rig.input": {
            /** Format: uuid */
            mediaId: string;
            prompt?: string;
        };
        /** three-d.rig request */
        "three-d.rig.request": {
            input: components["schemas"]["three-d.rig.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "three-d.rig";
        };
        "three-d.rig.result": {
            glb: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
            /** @description How many joints the skeleton has (the local rigger reports it). */
            joints?: number;
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
        };
        "video.edit.input": {
            edits?: ({
                endSeconds: number;
                startSeconds: number;
                /** @enum {unknown} */
                type: "trim";
            } | {
                /**
                 * @default contain
                 * @enum {string}
                 */
                fit?: "contain" | "cover" | "fill";
                height: number;
                /** @enum {unknown} */
                type: "resize";
                width: number;
            } | {
                height: number;
                /** @enum {unknown} */
                type: "crop";
                width: number;
                x: number;
                y: number;
            } | {
                /** @enum {unknown} */
                type: "mute";
            } | {
                factor: number;
                /** @enum {unknown} */
                type: "speed";
            } | {
                /** @enum {string} */
                container: "mp4" | "webm" | "gif";
                /** @enum {unknown} */
                type: "format";
            } | {
                /** Format: uuid */
                mediaId: string;
                /** @enum {unknown} */
                type: "concat";
            })[];
            /** Format: uuid */
            mediaId: string;
            prompt?: string;
        } | unknown | unknown;
        /** video.edit request */
        "video.edit.request": {
            input: components["schemas"]["video.edit.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "video.edit";
        };
        "video.edit.result": {
            durationSeconds?: number;
            hasAudio?: boolean;
            height?: number;
            model?: string | null;
            predictionId?: string;
            provider?: string;
            /** @description The edit steps that ran, in order: the `edits` given, or the plan the chat model made of the `prompt`. */
            steps?: ({
                endSeconds: number;
                startSeconds: number;
                /** @enum {unknown} */
                type: "trim";
            } | {
                /**
                 * @default contain
                 * @enum {string}
                 */
                fit?: "contain" | "cover" | "fill";
                height: number;
                /** @enum {unknown} */
                type: "resize";
                width: number;
            } | {
                height: number;
                /** @enum {unknown} */
                type: "crop";
                width: number;
                x: number;
                y: number;
            } | {
                /** @enum {unknown} */
                type: "mute";
            } | {
                factor: number;
                /** @enum {unknown} */
                type: "speed";
            } | {
                /** @enum {string} */
                container: "mp4" | "webm" | "gif";
                /** @enum {unknown} */
                type: "format";
            } | {
                /** Format: uuid */
                mediaId: string;
                /** @enum {unknown} */
                type: "concat";
            })[];
            text?: string;
            video: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
            width?: number;
        };
        "video.generate.input": {
            /**
             * @default 16:9
             * @enum {string}
             */
            aspectRatio?: "16:9" | "9:16" | "1:1";
            /** @default 5 */
            durationSeconds?: number;
            prompt: string;
            referenceMediaIds?: string[];
        };
        /** video.generate request */
        "video.generate.request": {
            input: components["schemas"]["video.generate.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "video.generate";
        };
        "video.generate.result": {
            durationSeconds?: number;
            model?: string | null;
            predictionId?: string;
            provider?: string;
            text?: string;
            video: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
        };
        "voice.clone.input": {
            name: string;
            referenceMediaIds: string[];
            sampleText?: string;
        };
        /** voice.clone request */
        "voice.clone.request": {
            input: components["schemas"]["voice.clone.input"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            operationId: "voice.clone";
        };
        "voice.clone.result": {
            model?: string | null;
            predictionId?: string;
            provider?: string;
            sample?: {
                /** Format: uuid */
                mediaId: string;
                mimeType: string;
                name?: string;
                sha256?: string;
                sizeBytes: number;
                url: string;
                urlExpiresAt?: string;
            };
            text?: string;
            voice: {
                /**
                 * Format: uuid
                 * @description The workspace voice made (GET /v1/voices/{id}): speech.generate speaks with it as voiceId.
                 */
                id: string;
                name: string;
            };
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    PUBLIC_BALANCE_GET: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Balance read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            allocations: {
                                /** Format: date-time */
                                createdAt: string;
                                expiresAt: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                provenance: string;
                                /** @description Integer millicents (1 cent = 1000 millicents). */
                                remainingMillicents: number;
                            }[];
                            /** @description false for an object of test mode (made with a test key), true otherwise. */
                            livemode: boolean;
                            nextCursor: string | null;
                            /** @description Integer millicents (1 cent = 1000 millicents). */
                            reservedMillicents: number;
                            /** @description Integer millicents (1 cent = 1000 millicents). */
                            spendableMillicents: number;
                            /** @description Integer millicents (1 cent = 1000 millicents). */
                            totalMillicents: number;
                            /** Format: uuid */
                            workspaceId: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_COSTS_GET: {
        parameters: {
            query?: {
                /** @description UTC bucket width (default day). */
                bucket?: "hour" | "day" | "month";
                /** @description csv: the lines as CSV (same as Accept: text/csv). */
                format?: "json" | "csv";
                /** @description Start of the range (inclusive); default the bucket width times 24 (hours), 31 (days) or 12 (months) before `to`: an RFC 3339 date-time or a date (YYYY-MM-DD, midnight UTC), rounded out to whole UTC buckets. */
                from?: string;
                /** @description Repeatable: operationId, keyId, executionOrigin. Every line is also split by type. */
                groupBy?: ("operationId" | "keyId" | "executionOrigin")[];
                /** @description End of the range (exclusive); default the end of the current bucket: an RFC 3339 date-time or a date (YYYY-MM-DD, midnight UTC), rounded out to whole UTC buckets. */
                to?: string;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Costs read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            bucket: string;
                            buckets: {
                                costMillicents: number;
                                /** Format: date-time */
                                end: string;
                                lines: {
                                    /** @description Minus the sum of the ledger entries of the line: positive for spending, negative for refunds. */
                                    costMillicents: number;
                                    /** @description Ledger entries summed. */
                                    entries: number;
                                    executionOrigin?: string | null;
                                    keyId?: string | null;
                                    operationId?: string | null;
                                    /** @description usage (spending by jobs), refund (an operator adjustment adding credits), debit (an operator adjustment taking credits), expiration (credits expired unused). */
                                    type: "usage" | "refund" | "debit" | "expiration";
                                }[];
                                /** Format: date-time */
                                start: string;
                            }[];
                            /** Format: date-time */
                            from: string;
                            groupBy: string[];
                            /** @description true: the live spending; false: the test mode spending (a test key reads its own mode). */
                            livemode: boolean;
                            /** Format: date-time */
                            to: string;
                            totals: {
                                byType: {
                                    debit: number;
                                    expiration: number;
                                    refund: number;
                                    usage: number;
                                };
                                costMillicents: number;
                                lines: {
                                    /** @description Minus the sum of the ledger entries of the line: positive for spending, negative for refunds. */
                                    costMillicents: number;
                                    /** @description Ledger entries summed. */
                                    entries: number;
                                    executionOrigin?: string | null;
                                    keyId?: string | null;
                                    operationId?: string | null;
                                    /** @description usage (spending by jobs), refund (an operator adjustment adding credits), debit (an operator adjustment taking credits), expiration (credits expired unused). */
                                    type: "usage" | "refund" | "debit" | "expiration";
                                }[];
                            };
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_TOOLS_ESTIMATE: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description `operationId` selects the input contract; exactly these two properties. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["link.preview.request"] | components["schemas"]["chat.generate.request"] | components["schemas"]["speech.generate.request"] | components["schemas"]["image.generate.request"] | components["schemas"]["headshot.generate.request"] | components["schemas"]["background.remove.request"] | components["schemas"]["video.generate.request"] | components["schemas"]["video.edit.request"] | components["schemas"]["music.generate.request"] | components["schemas"]["three-d.generate.request"] | components["schemas"]["three-d.rig.request"] | components["schemas"]["sprite.generate.request"] | components["schemas"]["voice.clone.request"] | components["schemas"]["security.scan.request"];
            };
        };
        responses: {
            /** @description Estimate computed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            estimatedCostMillicents: number;
                            maximumCostMillicents: number;
                            operationId: string;
                            usagePoints: number;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST, INVALID_INPUT (details.errors: JSON pointers and messages), UNKNOWN_OPERATION, OPERATION_UNAVAILABLE (no provider is configured for the operation), UNSUPPORTED_MEDIA. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the request body is over the size limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_EVENTS_LIST: {
        parameters: {
            query?: {
                /** @description nextCursor of an earlier page. */
                cursor?: string;
                limit?: number;
                /** @description Comma-separated event types to return: job.completed, job.failed, job.cancelled, media.created, budget.threshold_crossed, credits.low, allocation.expiring, key.expiring, key.suspended, webhook.failing. */
                types?: string;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Events listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** @description True when more events are available now. */
                            hasMore: boolean;
                            /** @description Oldest first. */
                            items: ({
                                /** Format: date-time */
                                createdAt: string;
                                /** @description The job snapshot at the change, without output. */
                                data: {
                                    job: {
                                        completedAt: string | null;
                                        costMillicents: number;
                                        /** Format: date-time */
                                        createdAt: string;
                                        errorCode: string | null;
                                        executionOrigin: string | null;
                                        /** Format: uuid */
                                        id: string;
                                        /** @description false for an object of test mode (made with a test key), true otherwise. */
                                        livemode: boolean;
                                        maximumCostMillicents: number;
                                        operationId: string;
                                        progress: {
                                            percentage: number;
                                        };
                                        startedAt: string | null;
                                        status: "pending" | "processing" | "completed" | "failed" | "cancelled";
                                        toolSlug: string;
                                        version: number;
                                        /** Format: uuid */
                                        workspaceId: string;
                                    };
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                type: "job.completed" | "job.failed" | "job.cancelled";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                /** @description The new media item. */
                                data: {
                                    /**
                                     * Format: uuid
                                     * @description The job that produced the item; absent for uploads.
                                     */
                                    jobId?: string;
                                    media: {
                                        /** Format: date-time */
                                        createdAt: string;
                                        /** @description Always null here; use the download endpoint. */
                                        downloadUrl: string | null;
                                        /** Format: uuid */
                                        id: string;
                                        /** @description false for an object of test mode (made with a test key), true otherwise. */
                                        livemode: boolean;
                                        mimeType: string;
                                        /** @description The uploaded filename, stripped of any path and control characters. */
                                        name: string;
                                        /** @description Hex SHA-256 of the stored bytes. */
                                        sha256: string;
                                        sizeBytes: number;
                                        /** Format: uuid */
                                        workspaceId: string;
                                    };
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "media.created";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    budget: {
                                        /** Format: uuid */
                                        keyId?: string;
                                        period: "day" | "week" | "month";
                                        scope: "key" | "workspace";
                                    };
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    limitMillicents: number;
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    reservedMillicents: number;
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    spentMillicents: number;
                                    thresholdPercent: 50 | 80 | 100;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "budget.threshold_crossed";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    spendableMillicents: number;
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    thresholdMillicents: number;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "credits.low";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    allocation: {
                                        /** Format: date-time */
                                        createdAt: string;
                                        expiresAt: string | null;
                                        /** Format: uuid */
                                        id: string;
                                        provenance: string;
                                        /** @description Integer millicents (1 cent = 1000 millicents). */
                                        remainingMillicents: number;
                                    };
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "allocation.expiring";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    /** Format: date-time */
                                    expiresAt: string;
                                    /** Format: uuid */
                                    keyId: string;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "key.expiring";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    /** Format: uuid */
                                    keyId: string;
                                    /** Format: date-time */
                                    until: string;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "key.suspended";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    attempts: number;
                                    /** Format: uuid */
                                    deliveryId: string;
                                    /** Format: uuid */
                                    eventId: string;
                                    /** @description True when the delivery gave up; false while it is still retried. */
                                    final: boolean;
                                    hostname: string;
                                    lastErrorCode: string;
                                    lastStatusCode: number | null;
                                    /** Format: uuid */
                                    webhookId: string;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "webhook.failing";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    [key: string]: unknown;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                type: string;
                                /** Format: uuid */
                                workspaceId: string;
                            })[];
                            /** @description Never null: where to continue. After an empty page it is the position to poll again from; persist it only after processing the page. */
                            nextCursor: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_CURSOR (forged, or from another workspace or list) or INVALID_REQUEST (bad limit or an unknown type). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_JOBS_LIST: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Jobs listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            items: {
                                completedAt: string | null;
                                costMillicents: number;
                                /** Format: date-time */
                                createdAt: string;
                                errorCode: string | null;
                                executionOrigin: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                maximumCostMillicents: number;
                                operationId: string;
                                progress: {
                                    percentage: number;
                                };
                                startedAt: string | null;
                                status: "pending" | "processing" | "completed" | "failed" | "cancelled";
                                toolSlug: string;
                                version: number;
                                /** Format: uuid */
                                workspaceId: string;
                            }[];
                            nextCursor: string | null;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_JOBS_GET: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                jobId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Job read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            completedAt: string | null;
                            costMillicents: number;
                            /** Format: date-time */
                            createdAt: string;
                            errorCode: string | null;
                            executionOrigin: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @description false for an object of test mode (made with a test key), true otherwise. */
                            livemode: boolean;
                            maximumCostMillicents: number;
                            operationId: string;
                            output: {
                                [key: string]: unknown;
                            };
                            progress: {
                                percentage: number;
                            };
                            startedAt: string | null;
                            status: "pending" | "processing" | "completed" | "failed" | "cancelled";
                            toolSlug: string;
                            version: number;
                            /** Format: uuid */
                            workspaceId: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_JOBS_CANCEL: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                jobId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Job cancelled. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            completedAt: string | null;
                            costMillicents: number;
                            /** Format: date-time */
                            createdAt: string;
                            errorCode: string | null;
                            executionOrigin: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @description false for an object of test mode (made with a test key), true otherwise. */
                            livemode: boolean;
                            maximumCostMillicents: number;
                            operationId: string;
                            output: {
                                [key: string]: unknown;
                            };
                            progress: {
                                percentage: number;
                            };
                            startedAt: string | null;
                            status: "pending" | "processing" | "completed" | "failed" | "cancelled";
                            toolSlug: string;
                            version: number;
                            /** Format: uuid */
                            workspaceId: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description JOB_NOT_CANCELLABLE: the job already completed or failed. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_JOBS_OUTPUT: {
        parameters: {
            query?: {
                cursor?: string;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                jobId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Output fragment read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** @enum {string} */
                            encoding: "json";
                            fragment: string;
                            /** Format: uuid */
                            jobId: string;
                            nextCursor: string | null;
                            offsetBytes: number;
                            sha256: string;
                            /** Format: date-time */
                            snapshotExpiresAt: string;
                            totalBytes: number;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description OUTPUT_CHANGED: the result changed since the cursor was issued; restart without a cursor. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description CURSOR_EXPIRED: the cursor is older than its lifetime (thirty minutes); restart without a cursor. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: try again after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_JOBS_RETRY: {
        parameters: {
            query?: never;
            header: {
                "idempotency-key": string;
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                jobId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Job queued again. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** Format: uuid */
                            jobId: string;
                            /** @enum {string} */
                            kind: "job";
                            maximumCostMillicents: number;
                            status: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description IDEMPOTENCY_KEY_REQUIRED, OPERATION_UNAVAILABLE (the deployment no longer offers the job’s operation). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description INSUFFICIENT_CREDITS: spendable credits are below the maximum cost of the steps still to do. */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description JOB_NOT_RETRYABLE (only failed queued jobs), PERSONAL_PROVIDER_KEY (a job funded by the workspace’s own provider key), IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points), BUDGET_EXCEEDED (a key or workspace budget), QUEUE_FULL (waiting jobs); details.limit names the limit, Retry-After says when to retry. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_JOBS_STREAM: {
        parameters: {
            query?: never;
            header: {
                /** @description Must accept `text/event-stream` (400 INVALID_REQUEST otherwise). */
                accept?: string;
                /** @description Resume after this job version: every later stored version is sent, or `event: gap` and the current snapshot. */
                "last-event-id"?: string;
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                jobId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event stream. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description Last-Event-ID is the job’s terminal version: nothing more will come (EventSource stops reconnecting). */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_MEDIA_LIST: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Media listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            items: {
                                /** Format: date-time */
                                createdAt: string;
                                /** @description Always null here; use the download endpoint. */
                                downloadUrl: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                mimeType: string;
                                /** @description The uploaded filename, stripped of any path and control characters. */
                                name: string;
                                /** @description Hex SHA-256 of the stored bytes. */
                                sha256: string;
                                sizeBytes: number;
                                /** Format: uuid */
                                workspaceId: string;
                            }[];
                            nextCursor: string | null;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_MEDIA_GET: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                mediaId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Media item read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** Format: date-time */
                            createdAt: string;
                            /** @description Always null here; use the download endpoint. */
                            downloadUrl: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @description false for an object of test mode (made with a test key), true otherwise. */
                            livemode: boolean;
                            mimeType: string;
                            /** @description The uploaded filename, stripped of any path and control characters. */
                            name: string;
                            /** @description Hex SHA-256 of the stored bytes. */
                            sha256: string;
                            sizeBytes: number;
                            /** Format: uuid */
                            workspaceId: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such media item in the selected workspace (also for another workspace's id). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_MEDIA_DOWNLOAD: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                mediaId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Download URL issued. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** Format: date-time */
                            expiresAt: string;
                            /** Format: uuid */
                            mediaId: string;
                            /** @description Signed URL; works without the API key until expiresAt. */
                            url: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such media item in the selected workspace (also for another workspace's id). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_MEDIA_UPLOAD: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /**
                     * Format: binary
                     * @description The file. Its Content-Type must match the content.
                     */
                    file: string;
                };
            };
        };
        responses: {
            /** @description Media uploaded. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** Format: date-time */
                            createdAt: string;
                            /** @description Always null here; use the download endpoint. */
                            downloadUrl: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @description false for an object of test mode (made with a test key), true otherwise. */
                            livemode: boolean;
                            mimeType: string;
                            /** @description The uploaded filename, stripped of any path and control characters. */
                            name: string;
                            /** @description Hex SHA-256 of the stored bytes. */
                            sha256: string;
                            sizeBytes: number;
                            /** Format: uuid */
                            workspaceId: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description UNSUPPORTED_MEDIA (details.reason: EMPTY, TYPE_NOT_ALLOWED, TYPE_MISMATCH, SVG_NOT_ALLOWED, EXECUTABLE, MALFORMED, TRAILING_DATA, EMBEDDED_MARKUP, PIXEL_LIMIT) or INVALID_REQUEST (not exactly one file part named file). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE (over the plan's largest upload) or STORAGE_QUOTA_EXCEEDED. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. Retry once the operator has freed space. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_QUEUE_GET: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Queue read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            items: {
                                /** Format: date-time */
                                createdAt: string;
                                /** Format: uuid */
                                jobId: string;
                                operationId: string;
                                position: number;
                                status: string;
                                toolSlug: string;
                            }[];
                            /** @description false for an object of test mode (made with a test key), true otherwise. */
                            livemode: boolean;
                            running: number;
                            runningLimit: number;
                            waiting: number;
                            waitingLimit: number;
                            /** Format: uuid */
                            workspaceId: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_TOOLS_RUN: {
        parameters: {
            query?: never;
            header: {
                /** @description JSON unless `text/event-stream` is preferred to it (then a chat.generate run streams its reply; see the 200 response). A request that accepts only `text/event-stream` for an operation that does not stream is 400 INVALID_REQUEST. */
                accept?: string;
                /** @description 1 to 128 characters; required. */
                "idempotency-key": string;
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description `operationId` selects the input contract; exactly these two properties. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["link.preview.request"] | components["schemas"]["chat.generate.request"] | components["schemas"]["speech.generate.request"] | components["schemas"]["image.generate.request"] | components["schemas"]["headshot.generate.request"] | components["schemas"]["background.remove.request"] | components["schemas"]["video.generate.request"] | components["schemas"]["video.edit.request"] | components["schemas"]["music.generate.request"] | components["schemas"]["three-d.generate.request"] | components["schemas"]["three-d.rig.request"] | components["schemas"]["sprite.generate.request"] | components["schemas"]["voice.clone.request"] | components["schemas"]["security.scan.request"];
            };
        };
        responses: {
            /** @description Run accepted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            costMillicents: number;
                            errorCode: string | null;
                            /** Format: uuid */
                            jobId: string;
                            /** @enum {string} */
                            kind: "result";
                            /** @description The result of the synchronous operation (link.preview, chat.generate); null when it failed (see errorCode). */
                            result: components["schemas"]["link.preview.result"] | components["schemas"]["chat.generate.result"] | null;
                            status: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                    "text/event-stream": string;
                };
            };
            /** @description Run accepted. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** Format: uuid */
                            jobId: string;
                            /** @enum {string} */
                            kind: "job";
                            maximumCostMillicents: number;
                            status: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST, INVALID_INPUT (details.errors: JSON pointers and messages), UNKNOWN_OPERATION, OPERATION_UNAVAILABLE (no provider is configured for the operation), IDEMPOTENCY_KEY_REQUIRED, UNSUPPORTED_MEDIA. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description INSUFFICIENT_CREDITS: spendable credits are below the operation’s maximum cost. */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the request body is over the size limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points), BUDGET_EXCEEDED (a key or workspace budget), QUEUE_FULL (waiting jobs); details.limit names the limit, Retry-After says when to retry. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_RUNS_LOOKUP: {
        parameters: {
            query?: never;
            header: {
                /** @description 1 to 128 characters; required. */
                "idempotency-key": string;
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Idempotency-Key found. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            expiresAt: string;
                            idempotencyKey: string;
                            jobId: string | null;
                            /** @description The data the request answered, as a replay returns it. */
                            response: {
                                [key: string]: unknown;
                            } | null;
                            /** @description in_progress: the first request is still running; ask again shortly. */
                            state: "completed" | "in_progress";
                            /** @description The HTTP status the request answered (200 or 202), null while in progress. */
                            statusCode: number | null;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description IDEMPOTENCY_KEY_REQUIRED. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: the key was not used by this API key in this workspace in the last 24 hours. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_TEST_WEBHOOK_EVENTS_CREATE: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The event type to send a sample of. */
                    type: "job.completed" | "job.failed" | "job.cancelled" | "media.created" | "budget.threshold_crossed" | "credits.low" | "allocation.expiring" | "key.expiring" | "key.suspended" | "webhook.failing";
                };
            };
        };
        responses: {
            /** @description Sample event sent. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** @description Test webhooks the event was queued for. */
                            deliveries: number;
                            event: {
                                /** Format: date-time */
                                createdAt: string;
                                /** @description The job snapshot at the change, without output. */
                                data: {
                                    job: {
                                        completedAt: string | null;
                                        costMillicents: number;
                                        /** Format: date-time */
                                        createdAt: string;
                                        errorCode: string | null;
                                        executionOrigin: string | null;
                                        /** Format: uuid */
                                        id: string;
                                        /** @description false for an object of test mode (made with a test key), true otherwise. */
                                        livemode: boolean;
                                        maximumCostMillicents: number;
                                        operationId: string;
                                        progress: {
                                            percentage: number;
                                        };
                                        startedAt: string | null;
                                        status: "pending" | "processing" | "completed" | "failed" | "cancelled";
                                        toolSlug: string;
                                        version: number;
                                        /** Format: uuid */
                                        workspaceId: string;
                                    };
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                type: "job.completed" | "job.failed" | "job.cancelled";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                /** @description The new media item. */
                                data: {
                                    /**
                                     * Format: uuid
                                     * @description The job that produced the item; absent for uploads.
                                     */
                                    jobId?: string;
                                    media: {
                                        /** Format: date-time */
                                        createdAt: string;
                                        /** @description Always null here; use the download endpoint. */
                                        downloadUrl: string | null;
                                        /** Format: uuid */
                                        id: string;
                                        /** @description false for an object of test mode (made with a test key), true otherwise. */
                                        livemode: boolean;
                                        mimeType: string;
                                        /** @description The uploaded filename, stripped of any path and control characters. */
                                        name: string;
                                        /** @description Hex SHA-256 of the stored bytes. */
                                        sha256: string;
                                        sizeBytes: number;
                                        /** Format: uuid */
                                        workspaceId: string;
                                    };
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "media.created";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    budget: {
                                        /** Format: uuid */
                                        keyId?: string;
                                        period: "day" | "week" | "month";
                                        scope: "key" | "workspace";
                                    };
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    limitMillicents: number;
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    reservedMillicents: number;
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    spentMillicents: number;
                                    thresholdPercent: 50 | 80 | 100;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "budget.threshold_crossed";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    spendableMillicents: number;
                                    /** @description Integer millicents (1 cent = 1000 millicents). */
                                    thresholdMillicents: number;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "credits.low";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    allocation: {
                                        /** Format: date-time */
                                        createdAt: string;
                                        expiresAt: string | null;
                                        /** Format: uuid */
                                        id: string;
                                        provenance: string;
                                        /** @description Integer millicents (1 cent = 1000 millicents). */
                                        remainingMillicents: number;
                                    };
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "allocation.expiring";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    /** Format: date-time */
                                    expiresAt: string;
                                    /** Format: uuid */
                                    keyId: string;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "key.expiring";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    /** Format: uuid */
                                    keyId: string;
                                    /** Format: date-time */
                                    until: string;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "key.suspended";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    attempts: number;
                                    /** Format: uuid */
                                    deliveryId: string;
                                    /** Format: uuid */
                                    eventId: string;
                                    /** @description True when the delivery gave up; false while it is still retried. */
                                    final: boolean;
                                    hostname: string;
                                    lastErrorCode: string;
                                    lastStatusCode: number | null;
                                    /** Format: uuid */
                                    webhookId: string;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @enum {string} */
                                type: "webhook.failing";
                                /** Format: uuid */
                                workspaceId: string;
                            } | {
                                /** Format: date-time */
                                createdAt: string;
                                data: {
                                    [key: string]: unknown;
                                };
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                type: string;
                                /** Format: uuid */
                                workspaceId: string;
                            };
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description TEST_MODE_ONLY (a live key), or the usual key refusals. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the request body is over the size limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_TOOLS_LIST: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Tools listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            items: {
                                description: string;
                                name: string;
                                operations: {
                                    asynchronous: boolean;
                                    inputSchema: {
                                        [key: string]: unknown;
                                    };
                                    operationId: string;
                                    summaryKey: string;
                                    usagePoints: number;
                                }[];
                                slug: string;
                            }[];
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_TRANSACTIONS_LIST: {
        parameters: {
            query?: {
                cursor?: string;
                /** @description csv: every entry of the range, oldest first, as streamed CSV (same as Accept: text/csv); limit and cursor do not apply. */
                format?: "json" | "csv";
                /** @description Only entries created at or after this time (RFC 3339 date-time or YYYY-MM-DD, UTC). */
                from?: string;
                limit?: number;
                /** @description Only entries created before this time (RFC 3339 date-time or YYYY-MM-DD, UTC). */
                to?: string;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Transactions listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            items: {
                                /** @description Signed; negative for spending. */
                                amountMillicents: number;
                                /** Format: date-time */
                                createdAt: string;
                                executionOrigin: string | null;
                                /** Format: uuid */
                                id: string;
                                jobId: string | null;
                                /** @description The API key whose job the entry belongs to; null for entries of no job. */
                                keyId: string | null;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @description The operation the job ran; null for entries of no job. */
                                operationId: string | null;
                                toolSlug: string | null;
                                /** @description purchase, usage, expiration or adjustment (an operator correction) */
                                type: string;
                            }[];
                            nextCursor: string | null;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_USAGE_GET: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Usage read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            budgets: {
                                /** @description Integer millicents (1 cent = 1000 millicents). */
                                limitMillicents: number;
                                period: "day" | "week" | "month";
                                /** @description Integer millicents (1 cent = 1000 millicents). */
                                reservedMillicents: number;
                                /** Format: date-time */
                                resetsAt: string;
                                scope: "key" | "workspace";
                                /** @description Integer millicents (1 cent = 1000 millicents). */
                                spentMillicents: number;
                            }[];
                            /** @description false for an object of test mode (made with a test key), true otherwise. */
                            livemode: boolean;
                            plan: string;
                            points: {
                                minuteLimit: number;
                                /** Format: date-time */
                                minuteResetsAt: string;
                                minuteUsed: number;
                                monthlyLimit: number;
                                /** Format: date-time */
                                monthlyResetsAt: string;
                                monthlyUsed: number;
                            };
                            streams: {
                                enabled: boolean;
                                maximum: number;
                            };
                            /** Format: uuid */
                            workspaceId: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_USAGE_HISTORY_GET: {
        parameters: {
            query?: {
                /** @description minute (the last 24 hours), hour (the last 61 days; default) or day. */
                bucket?: "minute" | "hour" | "day";
                /** @description Start (inclusive); default 60 minutes, 24 hours or 31 days before `to`: an RFC 3339 date-time or a date (YYYY-MM-DD, midnight UTC), rounded out to whole UTC buckets. */
                from?: string;
                /** @description Repeatable: keyId, operation. */
                groupBy?: ("keyId" | "operation")[];
                /** @description End (exclusive); default the end of the current bucket: an RFC 3339 date-time or a date (YYYY-MM-DD, midnight UTC), rounded out to whole UTC buckets. */
                to?: string;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Usage history read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            bucket: string;
                            buckets: {
                                /** Format: date-time */
                                end: string;
                                lines: {
                                    keyId?: string;
                                    /** @description The operation of a run or retry; `replay` and `refusal` for their one point; else the endpoint (`GET /v1/balance`). */
                                    operation?: string;
                                    points: number;
                                    /** @description 429 answers by their details.limit (POINTS_MINUTE, POINTS_MONTH, BUDGET_…, WAITING_JOBS, STREAMS …). */
                                    refused: {
                                        [key: string]: number;
                                    };
                                }[];
                                points: number;
                                /** @description 429 answers by their details.limit (POINTS_MINUTE, POINTS_MONTH, BUDGET_…, WAITING_JOBS, STREAMS …). */
                                refused: {
                                    [key: string]: number;
                                };
                                /** Format: date-time */
                                start: string;
                            }[];
                            /** Format: date-time */
                            from: string;
                            groupBy: string[];
                            /** @description true: live usage; false: test mode usage (a test key reads its own mode). */
                            livemode: boolean;
                            /** Format: date-time */
                            to: string;
                            totals: {
                                lines: {
                                    keyId?: string;
                                    /** @description The operation of a run or retry; `replay` and `refusal` for their one point; else the endpoint (`GET /v1/balance`). */
                                    operation?: string;
                                    points: number;
                                    /** @description 429 answers by their details.limit (POINTS_MINUTE, POINTS_MONTH, BUDGET_…, WAITING_JOBS, STREAMS …). */
                                    refused: {
                                        [key: string]: number;
                                    };
                                }[];
                                points: number;
                                /** @description 429 answers by their details.limit (POINTS_MINUTE, POINTS_MONTH, BUDGET_…, WAITING_JOBS, STREAMS …). */
                                refused: {
                                    [key: string]: number;
                                };
                            };
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_VOICES_LIST: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Voices listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            items: {
                                /** Format: date-time */
                                createdAt: string;
                                /** Format: uuid */
                                id: string;
                                /**
                                 * Format: uuid
                                 * @description The voice.clone job that made it.
                                 */
                                jobId: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                model: string | null;
                                name: string;
                                /** @description The provider (its name in the providers file, or simulated) that cloned the voice. */
                                provider: string;
                                /**
                                 * Format: uuid
                                 * @description The reference audio: the first sample voice.clone was given, a media item of the workspace.
                                 */
                                referenceMediaId: string;
                                /** @description Hex SHA-256 of the reference audio; a provider that speaks with the voice is sent exactly these bytes. */
                                referenceSha256: string;
                                /** Format: uuid */
                                workspaceId: string;
                            }[];
                            nextCursor: string | null;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_VOICES_GET: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                voiceId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Voice read. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: uuid */
                            id: string;
                            /**
                             * Format: uuid
                             * @description The voice.clone job that made it.
                             */
                            jobId: string;
                            /** @description false for an object of test mode (made with a test key), true otherwise. */
                            livemode: boolean;
                            model: string | null;
                            name: string;
                            /** @description The provider (its name in the providers file, or simulated) that cloned the voice. */
                            provider: string;
                            /**
                             * Format: uuid
                             * @description The reference audio: the first sample voice.clone was given, a media item of the workspace.
                             */
                            referenceMediaId: string;
                            /** @description Hex SHA-256 of the reference audio; a provider that speaks with the voice is sent exactly these bytes. */
                            referenceSha256: string;
                            /** Format: uuid */
                            workspaceId: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such voice in the selected workspace and mode (also for another workspace's or mode's id, and a deleted one). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_VOICES_DELETE: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                voiceId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Voice deleted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** @enum {boolean} */
                            deleted: true;
                            /** Format: uuid */
                            id: string;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such voice in the selected workspace and mode (also for another workspace's or mode's id, and a deleted one). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_WEBHOOKS_LIST: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Webhooks listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** @description Every webhook of the workspace, revoked ones included, oldest first. */
                            items: {
                                /** Format: date-time */
                                createdAt: string;
                                enabled: boolean;
                                eventTypes: ("job.completed" | "job.failed" | "job.cancelled" | "media.created" | "budget.threshold_crossed" | "credits.low" | "allocation.expiring" | "key.expiring" | "key.suspended" | "webhook.failing")[];
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @description When the webhook was revoked; null while active. */
                                revokedAt: string | null;
                                /** Format: date-time */
                                updatedAt: string;
                                url: string;
                                /** Format: uuid */
                                workspaceId: string;
                            }[];
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_WEBHOOKS_CREATE: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description Default true.
                     * @default true
                     */
                    enabled?: boolean;
                    /** @description Event types to deliver (at least one, no repeats): job.completed, job.failed, job.cancelled, media.created, budget.threshold_crossed, credits.low, allocation.expiring, key.expiring, key.suspended, webhook.failing. */
                    eventTypes: ("job.completed" | "job.failed" | "job.cancelled" | "media.created" | "budget.threshold_crossed" | "credits.low" | "allocation.expiring" | "key.expiring" | "key.suspended" | "webhook.failing")[];
                    /** @description HTTPS URL of at most 2048 characters, without user name, password or fragment, on a hostname verified in this workspace (exactly: a verified parent domain does not cover it) that resolves only to public addresses. */
                    url: string;
                };
            };
        };
        responses: {
            /** @description Webhook created; the secret is shown once. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** @description The signing secret (whsec_…), shown only in this response. The HMAC key is this string as UTF-8 bytes. */
                            secret: string;
                            webhook: {
                                /** Format: date-time */
                                createdAt: string;
                                enabled: boolean;
                                eventTypes: ("job.completed" | "job.failed" | "job.cancelled" | "media.created" | "budget.threshold_crossed" | "credits.low" | "allocation.expiring" | "key.expiring" | "key.suspended" | "webhook.failing")[];
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @description When the webhook was revoked; null while active. */
                                revokedAt: string | null;
                                /** Format: date-time */
                                updatedAt: string;
                                url: string;
                                /** Format: uuid */
                                workspaceId: string;
                            };
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description WEBHOOK_URL_REJECTED (details.reason: TOO_LONG, INVALID_URL, NOT_HTTPS, USERINFO_NOT_ALLOWED, FRAGMENT_NOT_ALLOWED, DOMAIN_NOT_VERIFIED, ADDRESS_NOT_PERMITTED, UNRESOLVABLE) or INVALID_REQUEST (malformed body, unknown or repeated event types). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description WEBHOOK_LIMIT_REACHED: the workspace already has 20 active (unrevoked) webhooks. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the request body is over the size limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_WEBHOOKS_DELIVERIES: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deliveries listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            hasMore: boolean;
                            items: {
                                attempts: number;
                                /** Format: date-time */
                                createdAt: string;
                                deliveredAt: string | null;
                                /** Format: uuid */
                                eventId: string;
                                /** Format: uuid */
                                id: string;
                                lastErrorCode: string | null;
                                lastStatusCode: number | null;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                replayCount: number;
                                status: "pending" | "delivering" | "succeeded" | "failed";
                                /** Format: uuid */
                                webhookId: string;
                            }[];
                            nextCursor: string | null;
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_WEBHOOKS_REPLAY: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                deliveryId: string;
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Delivery queued again. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            delivery: {
                                attempts: number;
                                /** Format: date-time */
                                createdAt: string;
                                deliveredAt: string | null;
                                /** Format: uuid */
                                eventId: string;
                                /** Format: uuid */
                                id: string;
                                lastErrorCode: string | null;
                                lastStatusCode: number | null;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                replayCount: number;
                                status: "pending" | "delivering" | "succeeded" | "failed";
                                /** Format: uuid */
                                webhookId: string;
                            };
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_WEBHOOKS_REVOKE: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": Record<string, never> | null;
            };
        };
        responses: {
            /** @description Webhook revoked. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            webhook: {
                                /** Format: date-time */
                                createdAt: string;
                                enabled: boolean;
                                eventTypes: ("job.completed" | "job.failed" | "job.cancelled" | "media.created" | "budget.threshold_crossed" | "credits.low" | "allocation.expiring" | "key.expiring" | "key.suspended" | "webhook.failing")[];
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @description When the webhook was revoked; null while active. */
                                revokedAt: string | null;
                                /** Format: date-time */
                                updatedAt: string;
                                url: string;
                                /** Format: uuid */
                                workspaceId: string;
                            };
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed path id or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such webhook in the selected workspace (also for another workspace's id). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the request body is over the size limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_WEBHOOKS_ROTATE: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": Record<string, never> | null;
            };
        };
        responses: {
            /** @description Webhook secret rotated; the new secret is shown once. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            /** @description The signing secret (whsec_…), shown only in this response. The HMAC key is this string as UTF-8 bytes. */
                            secret: string;
                            webhook: {
                                /** Format: date-time */
                                createdAt: string;
                                enabled: boolean;
                                eventTypes: ("job.completed" | "job.failed" | "job.cancelled" | "media.created" | "budget.threshold_crossed" | "credits.low" | "allocation.expiring" | "key.expiring" | "key.suspended" | "webhook.failing")[];
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @description When the webhook was revoked; null while active. */
                                revokedAt: string | null;
                                /** Format: date-time */
                                updatedAt: string;
                                url: string;
                                /** Format: uuid */
                                workspaceId: string;
                            };
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed path id or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such webhook in the selected workspace (also for another workspace's id). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description WEBHOOK_REVOKED: the webhook is revoked. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the request body is over the size limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_WEBHOOKS_UPDATE: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path: {
                webhookId: string;
            };
            cookie?: never;
        };
        /** @description Any non-empty subset of url, eventTypes and enabled. */
        requestBody: {
            content: {
                "application/json": {
                    enabled?: boolean;
                    /** @description Event types to deliver (at least one, no repeats): job.completed, job.failed, job.cancelled, media.created, budget.threshold_crossed, credits.low, allocation.expiring, key.expiring, key.suspended, webhook.failing. */
                    eventTypes?: ("job.completed" | "job.failed" | "job.cancelled" | "media.created" | "budget.threshold_crossed" | "credits.low" | "allocation.expiring" | "key.expiring" | "key.suspended" | "webhook.failing")[];
                    /** @description HTTPS URL of at most 2048 characters, without user name, password or fragment, on a hostname verified in this workspace (exactly: a verified parent domain does not cover it) that resolves only to public addresses. */
                    url?: string;
                };
            };
        };
        responses: {
            /** @description Webhook updated. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            webhook: {
                                /** Format: date-time */
                                createdAt: string;
                                enabled: boolean;
                                eventTypes: ("job.completed" | "job.failed" | "job.cancelled" | "media.created" | "budget.threshold_crossed" | "credits.low" | "allocation.expiring" | "key.expiring" | "key.suspended" | "webhook.failing")[];
                                /** Format: uuid */
                                id: string;
                                /** @description false for an object of test mode (made with a test key), true otherwise. */
                                livemode: boolean;
                                /** @description When the webhook was revoked; null while active. */
                                revokedAt: string | null;
                                /** Format: date-time */
                                updatedAt: string;
                                url: string;
                                /** Format: uuid */
                                workspaceId: string;
                            };
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description WEBHOOK_URL_REJECTED (details.reason: TOO_LONG, INVALID_URL, NOT_HTTPS, USERINFO_NOT_ALLOWED, FRAGMENT_NOT_ALLOWED, DOMAIN_NOT_VERIFIED, ADDRESS_NOT_PERMITTED, UNRESOLVABLE) or INVALID_REQUEST (malformed body, unknown or repeated event types). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such webhook in the selected workspace (also for another workspace's id). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description WEBHOOK_REVOKED: the webhook is revoked. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the request body is over the size limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored. */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
    PUBLIC_WORKSPACES_LIST: {
        parameters: {
            query?: never;
            header: {
                /** @description UUID of a workspace included in the API key. */
                "x-service-workspace": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Workspaces listed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        data: {
                            items: {
                                /** Format: uuid */
                                id: string;
                                name: string;
                                organizationId: string | null;
                                plan: string;
                                role: "owner" | "admin";
                            }[];
                        };
                        message: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description INVALID_REQUEST: malformed header, query or body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description RATE_LIMITED (usage points; see Retry-After and details.limit). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
            /** @description UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code: string;
                        details?: {
                            [key: string]: unknown;
                        };
                        message: string;
                        requestId: string;
                        /** @enum {boolean} */
                        success: false;
                    };
                };
            };
        };
    };
}

/** The spec's usage point weights, copied from its tables (tests check the code against these, not against the code's own constants). */

/** Spec "Usage point weights" for the endpoints with a fixed weight. */
export const SPEC_WEIGHTS: Record<string, number> = {
  'GET /v1/workspaces': 2,
  'GET /v1/tools': 2,
  'POST /v1/estimates': 4,
  'GET /v1/jobs': 2,
  'GET /v1/jobs/:jobId': 1,
  'GET /v1/jobs/:jobId/output': 2,
  'POST /v1/jobs/:jobId/cancel': 2,
  'GET /v1/queue': 1,
  'GET /v1/balance': 2,
  'GET /v1/transactions': 2,
  'GET /v1/media': 2,
  'GET /v1/media/:mediaId': 1,
  'GET /v1/media/:mediaId/download': 2,
  'GET /v1/jobs/:jobId/stream': 3,
  'POST /v1/media/upload': 10,
  'GET /v1/usage': 1,
  'GET /v1/events': 2,
  'GET /v1/webhooks': 2,
  'POST /v1/webhooks': 5,
  'POST /v1/webhooks/:webhookId/update': 5,
  'POST /v1/webhooks/:webhookId/revoke': 2,
  'POST /v1/webhooks/:webhookId/rotate': 5,
  'GET /v1/webhooks/:webhookId/deliveries': 2,
  'POST /v1/webhooks/:webhookId/deliveries/:deliveryId/replay': 10,
};

/** Endpoints the spec does not have, with the weight docs/decisions.md gives them. */
export const DECIDED_WEIGHTS: Record<string, number> = {
  'GET /v1/runs/lookup': 1,
  // Cost and usage analytics (issue 36): as the other billing reads, and as GET /v1/usage.
  'GET /v1/costs': 2,
  'GET /v1/usage/history': 1,
  // Voices (issue 37): as GET /v1/media, GET /v1/media/{id} and POST /v1/webhooks/{id}/revoke.
  'GET /v1/voices': 2,
  'GET /v1/voices/:voiceId': 1,
  'DELETE /v1/voices/:voiceId': 2,
};

/** Spec "Operation-specific weights for running or retrying", copied from the table (not from the code). */
export const SPEC_OPERATION_WEIGHTS: Record<string, number> = {
  'link.preview': 4,
  'chat.generate': 10,
  'speech.generate': 15,
  'image.generate': 25,
  'headshot.generate': 35,
  'background.remove': 15,
  'video.generate': 100,
  'video.edit': 120,
  'music.generate': 50,
  'three-d.generate': 100,
  'three-d.rig': 50,
  'sprite.generate': 200,
  'voice.clone': 75,
  'security.scan': 80,
};

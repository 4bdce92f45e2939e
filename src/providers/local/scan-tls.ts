/**
 * The TLS checks of a scan, judged from two handshakes with the target (the egress client's TLS
 * probe): one offering TLS 1.2 and 1.3, one offering only TLS 1.0 and 1.1. The certificate is
 * judged on three separate counts (trust, validity period, hostname) so each verdict names one
 * problem and one remedy.
 */
import type { TlsCertificateInfo } from '../../egress/types.js';
import type { Check, CheckOutcome } from './scan-session.js';

/** A certificate closer than this to its end is a warning: renewal has failed or is late. */
export const EXPIRY_WARNING_DAYS = 14;
const DAY_MS = 86_400_000;
const MODERN_PROTOCOLS = new Set(['TLSv1.2', 'TLSv1.3']);
/** OpenSSL's verdicts about time; the trust of a chain is hidden behind them (see certificateTrust). */
const TIME_ERRORS = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERROR_IN_CERT_NOT_BEFORE_FIELD', 'ERROR_IN_CERT_NOT_AFTER_FIELD']);
const HOSTNAME_ERROR = 'ERR_TLS_CERT_ALTNAME_INVALID';

export const tlsProtocol: Check = async (session) => {
  const modern = await session.modernHandshake();
  const legacy = await session.legacyHandshake();
  const legacyAccepted = legacy.handshake === 'completed' ? legacy.protocol : null;
  if (modern.handshake !== 'completed') {
    // No handshake at all: certificateHandshake() fails the job with the reason.
    if (!legacyAccepted) await session.certificateHandshake();
    return {
      status: 'fail',
      summary: `The server speaks only ${legacyAccepted}, which browsers no longer accept.`,
      evidence: { negotiated: legacyAccepted, modernHandshake: modern.reason },
      remedy: 'Enable TLS 1.2 and TLS 1.3 on the server.',
    };
  }
  const negotiated = modern.protocol;
  const evidence = { negotiated, cipher: modern.cipher, legacyAccepted };
  if (!MODERN_PROTOCOLS.has(negotiated)) {
    return { status: 'fail', summary: `The server negotiated ${negotiated}.`, evidence, remedy: 'Enable TLS 1.2 and TLS 1.3 on the server.' };
  }
  if (legacyAccepted) {
    return {
      status: 'warn',
      summary: `The server negotiates ${negotiated} but still accepts ${legacyAccepted}.`,
      evidence,
      remedy: 'Disable TLS 1.0 and TLS 1.1 (deprecated by RFC 8996); keep TLS 1.2 and 1.3.',
    };
  }
  return { status: 'pass', summary: `The server negotiates ${negotiated} and refuses TLS 1.0 and 1.1.`, evidence };
};

export const certificateTrust: Check = async (session) => {
  const probe = await session.certificateHandshake();
  const leaf = probe.certificate;
  const evidence = {
    subject: leaf.subject,
    issuer: leaf.issuer,
    chain: probe.chain.map((c) => ({ subject: c.subject, issuer: c.issuer })),
    authorizationError: probe.authorizationError,
  };
  const error = probe.authorizationError;
  if (error === null || error === HOSTNAME_ERROR) {
    return { status: 'pass', summary: `The certificate chains to a trusted authority (${leaf.issuer}).`, evidence };
  }
  if (leaf.selfSigned) {
    return {
      status: 'fail',
      summary: 'The certificate is self-signed: browsers refuse it.',
      evidence: { ...evidence, selfSigned: true },
      remedy: 'Serve a certificate issued by a public certificate authority (for example Let’s Encrypt).',
    };
  }
  if (TIME_ERRORS.has(error)) {
    // OpenSSL reports the last problem it met, and the validity period is checked after the chain:
    // while the certificate is out of its period, the chain's own verdict cannot be seen.
    return {
      status: 'warn',
      summary: 'The chain could not be judged on its own while the certificate is outside its validity period.',
      evidence,
      remedy: 'Renew the certificate (see certificate-expiry), then scan again.',
    };
  }
  return {
    status: 'fail',
    summary: `The certificate is not trusted (${error}).`,
    evidence,
    remedy:
      error === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || error === 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'
        ? 'Serve the full chain (the certificate followed by its intermediate certificates).'
        : 'Serve a certificate issued by a public certificate authority, with its full chain.',
  };
};

export const certificateExpiry: Check = async (session) => {
  const probe = await session.certificateHandshake();
  const now = Date.now();
  // The leaf and any intermediates the server sends; a self-signed root it sends is judged too.
  const outcome = judgeValidity(probe.certificate, now);
  const expiredIntermediate = probe.chain.slice(1).find((c) => Date.parse(c.validTo) < now);
  if (outcome.status !== 'fail' && expiredIntermediate) {
    return {
      status: 'fail',
      summary: `A certificate of the chain expired on ${expiredIntermediate.validTo}.`,
      evidence: { ...outcome.evidence, expiredChainCertificate: { subject: expiredIntermediate.subject, validTo: expiredIntermediate.validTo } },
      remedy: 'Serve the current intermediate certificates of your certificate authority.',
    };
  }
  return outcome;
};

function judgeValidity(leaf: TlsCertificateInfo, now: number): CheckOutcome {
  const validTo = Date.parse(leaf.validTo);
  const daysLeft = Math.floor((validTo - now) / DAY_MS);
  const evidence = { validFrom: leaf.validFrom, validTo: leaf.validTo, daysLeft };
  const renew = 'Renew the certificate, and automate renewal (ACME) so it cannot lapse again.';
  if (validTo < now) return { status: 'fail', summary: `The certificate expired on ${leaf.validTo}.`, evidence, remedy: renew };
  if (Date.parse(leaf.validFrom) > now) {
    return { status: 'fail', summary: `The certificate is not valid before ${leaf.validFrom}.`, evidence, remedy: 'Check the clock of the machine that issued it, or serve the previous certificate until then.' };
  }
  if (daysLeft < EXPIRY_WARNING_DAYS) return { status: 'warn', summary: `The certificate expires in ${daysLeft} days (${leaf.validTo}).`, evidence, remedy: renew };
  return { status: 'pass', summary: `The certificate is valid until ${leaf.validTo} (${daysLeft} days).`, evidence };
}

export const certificateHostname: Check = async (session) => {
  const probe = await session.certificateHandshake();
  const evidence = { hostname: session.target.hostname, subject: probe.certificate.subject, subjectAltNames: probe.certificate.subjectAltNames.slice(0, 50) };
  if (probe.hostnameError === null) return { status: 'pass', summary: `The certificate names ${session.target.hostname}.`, evidence };
  return {
    status: 'fail',
    summary: `The certificate does not name ${session.target.hostname}.`,
    evidence: { ...evidence, reason: probe.hostnameError },
    remedy: `Serve a certificate whose subjectAltName lists ${session.target.hostname}.`,
  };
};

/**
 * link.preview as a provider: the page is fetched for real through the egress guard. The fetch
 * and the HTML tokenizer (htmlparser2 and its helpers) load on the first run, not with the
 * service (issue 38: a smaller idle process).
 */
import type { Egress } from '../egress/types.js';
import { ProviderError, type Provider } from './types.js';

export function linkPreviewProvider(egress: Egress): Provider {
  return {
    name: 'link-preview',
    async run(job) {
      const cost = job.route.price(job.input).maximumMillicents;
      const { fetchLinkPreview, LinkPreviewError } = await import('./link-preview.js');
      try {
        const { metadata } = await fetchLinkPreview(egress, String(job.input.url), { signal: job.signal });
        return { data: { metadata }, files: [], costMillicents: cost };
      } catch (err) {
        // A page that answered consumed the work even when it is unusable (an HTTP error, a
        // redirect to a blocked address, a body too large); a URL refused before any connection,
        // or a server never reached, consumed nothing.
        if (err instanceof LinkPreviewError) throw new ProviderError(err.code, err.message, err.fetched ? cost : 0);
        throw err;
      }
    },
  };
}

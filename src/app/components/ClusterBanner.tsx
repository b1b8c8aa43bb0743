'use client';
// Never a blank page: when the stream is down or the server says the cluster does not answer, say so above the
// last known state and offer Retry.
import { useLive, useFleet } from '../lib/live';

export function ClusterBanner() {
  const { link, lastError, retry } = useLive();
  const { clusterReady, synced } = useFleet();
  if (synced && !clusterReady) {
    return (
      <div className="banner banner-error" role="alert" data-testid="cluster-unreachable">
        <strong>Cluster unreachable.</strong>
        <span className="grow">Corral cannot reach the Kubernetes API; what you see is the last known state.</span>
        <button type="button" onClick={retry}>
          Retry
        </button>
      </div>
    );
  }
  if (link === 'failed' || (link === 'reconnecting' && lastError)) {
    return (
      <div className="banner banner-error" role="alert" data-testid="server-unreachable">
        <strong>Connection to Corral lost.</strong>
        <span className="grow">{lastError ? `${lastError} — ` : ''}reconnecting automatically.</span>
        <button type="button" onClick={retry}>
          Retry
        </button>
      </div>
    );
  }
  return null;
}

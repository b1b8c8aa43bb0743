/**
 * Kubeconfig loading: a file (KUBECONFIG / --kubeconfig, possibly with several contexts), the in-cluster service
 * account, or YAML text (the embedded cluster). Plain-http servers get skipTLSVerify so client-node accepts them —
 * no TLS is involved there; client-node refuses `http:` otherwise.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { CorralError } from '../errors';

export interface KubeconfigSource {
  /** Kubeconfig YAML text (takes precedence). */
  yaml?: string;
  /** Path to a kubeconfig file. */
  file?: string;
  /** Context to use instead of current-context. */
  context?: string;
}

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

function allowPlainHttp(kc: KubeConfig): KubeConfig {
  const clusters = kc.clusters.map((c) => (c.server.startsWith('http://') ? { ...c, skipTLSVerify: true } : c));
  const fixed = new KubeConfig();
  fixed.loadFromOptions({ clusters, users: kc.users, contexts: kc.contexts, currentContext: kc.currentContext });
  return fixed;
}

export function loadKubeConfig(source: KubeconfigSource = {}, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (source.yaml) {
    kc.loadFromString(source.yaml);
  } else {
    const file = source.file ?? env.KUBECONFIG?.split(':')[0];
    const home = join(homedir(), '.kube', 'config');
    if (file) {
      if (!existsSync(file)) throw new CorralError('BAD_REQUEST', `kubeconfig ${file} does not exist`);
      kc.loadFromFile(file);
    } else if (env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN)) {
      kc.loadFromCluster();
    } else if (existsSync(home)) {
      kc.loadFromFile(home);
    } else {
      throw new CorralError(
        'UNAVAILABLE',
        'no cluster configured: set KUBECONFIG, pass --kubeconfig FILE, run inside a cluster, or use --demo for the embedded cluster',
      );
    }
  }
  const fixed = allowPlainHttp(kc);
  if (source.context) {
    if (!fixed.getContexts().some((c) => c.name === source.context)) {
      const known =
        fixed
          .getContexts()
          .map((c) => c.name)
          .join(', ') || 'none';
      throw new CorralError('BAD_REQUEST', `context ${source.context} is not in the kubeconfig (contexts: ${known})`);
    }
    fixed.setCurrentContext(source.context);
  }
  if (!fixed.getCurrentCluster())
    throw new CorralError('BAD_REQUEST', 'the kubeconfig has no current cluster; pass --context NAME');
  return fixed;
}

export function contextNames(kc: KubeConfig): string[] {
  return kc.getContexts().map((c) => c.name);
}

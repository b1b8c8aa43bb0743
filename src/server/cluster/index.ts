/** The cluster layer's public surface (the only code importing @kubernetes/client-node). */
export { KubeCluster, type KubeClusterOptions } from './kube-cluster';
export { contextNames, loadKubeConfig, type KubeconfigSource } from './kubeconfig';
export { RESOURCES, resourcePath } from './resources';

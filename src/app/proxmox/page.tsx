import { ProxmoxGapsView } from '../components/proxmox/ProxmoxGapsView';

export default function ProxmoxPage() {
  return <ProxmoxGapsView />;
}

import { DatacenterView } from './components/datacenter/DatacenterView';

export default function DatacenterPage() {
  return <DatacenterView />;
}

import { HealthView } from '../components/health/HealthView';

export default function HealthPage() {
  return <HealthView />;
}

import { SchedulesView } from '../components/schedules/SchedulesView';

export default function SchedulesPage() {
  return <SchedulesView />;
}

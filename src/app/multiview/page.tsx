import { Multiview } from '../components/console/Multiview';

export const metadata = { title: 'Multiview — Corral' };

export default function MultiviewPage() {
  return <Multiview />;
}

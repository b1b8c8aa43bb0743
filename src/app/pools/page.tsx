import { PoolView } from '../components/pools/PoolView';

export default async function PoolPage({ searchParams }: { searchParams: Promise<{ path?: string | string[] }> }) {
  const { path } = await searchParams;
  return <PoolView path={typeof path === 'string' ? path : ''} />;
}

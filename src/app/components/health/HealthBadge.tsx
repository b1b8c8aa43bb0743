'use client';
// The header's warning badge: shown while any doctor check fails, linking to Datacenter → Health.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useTRPC } from '../../lib/trpc';
import './health.css';

export function HealthBadge() {
  const trpc = useTRPC();
  const list = useQuery(
    trpc.doctor.list.queryOptions({ refresh: false }, { staleTime: 30_000, refetchInterval: 60_000 }),
  );
  const failing = (list.data ?? []).filter((r) => r.status === 'fail');
  if (failing.length === 0) return null;
  const names = failing.map((r) => r.title).join(', ');
  return (
    <Link
      href="/health"
      className="badge badge-health"
      data-testid="health-badge"
      title={`Failing checks: ${names}. Open Health to see why and fix them.`}
    >
      ⚠ {failing.length}
      <span className="hide-phone"> failing check{failing.length === 1 ? '' : 's'}</span>
    </Link>
  );
}

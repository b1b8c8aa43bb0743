import { describe, expect, it } from 'vitest';
import { agentConnected, liveMigratable } from './vm-manifest';

const vm = (conditions: unknown[]) => ({ status: { conditions } });

describe('VM manifest facts', () => {
  it('reads the LiveMigratable condition with its reason', () => {
    expect(liveMigratable(vm([{ type: 'LiveMigratable', status: 'True' }]))).toEqual({ ok: true, reason: '' });
    expect(
      liveMigratable(
        vm([
          {
            type: 'LiveMigratable',
            status: 'False',
            reason: 'DisksNotLiveMigratable',
            message:
              'cannot migrate VMI: PVC web-disk is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)',
          },
        ]),
      ),
    ).toEqual({ ok: false, reason: expect.stringContaining('ReadWriteMany') });
    expect(liveMigratable(vm([]))).toBeUndefined();
    expect(liveMigratable(undefined)).toBeUndefined();
  });

  it('reads AgentConnected', () => {
    expect(agentConnected(vm([{ type: 'AgentConnected', status: 'True' }]))).toBe(true);
    expect(agentConnected(vm([{ type: 'AgentConnected', status: 'False' }]))).toBe(false);
    expect(agentConnected(vm([]))).toBeUndefined();
  });
});

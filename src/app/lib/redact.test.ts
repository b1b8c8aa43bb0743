import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets, toRedactedYaml } from './redact';

describe('redactSecrets', () => {
  it('hides cloud-init user data and password-like keys, keeps references', () => {
    const vm = {
      kind: 'VirtualMachine',
      metadata: { name: 'web', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"x":1}' } },
      spec: {
        template: {
          spec: {
            volumes: [
              {
                name: 'ci',
                cloudInitNoCloud: { userData: '#cloud-config\npassword: hunter2', secretRef: { name: 'web-ci' } },
              },
              { name: 'd', containerDisk: { image: 'quay.io/x:1' } },
            ],
          },
        },
      },
      status: { adminPassword: 'x', apiToken: 'y' },
    };
    const out = redactSecrets(vm);
    const ci = out.spec.template.spec.volumes[0]?.cloudInitNoCloud;
    expect(ci?.userData).toBe(REDACTED);
    expect(ci?.secretRef).toEqual({ name: 'web-ci' });
    expect(out.spec.template.spec.volumes[1]).toEqual({ name: 'd', containerDisk: { image: 'quay.io/x:1' } });
    expect(out.status).toEqual({ adminPassword: REDACTED, apiToken: REDACTED });
    expect(out.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toBe(REDACTED);
    expect(vm.status.adminPassword).toBe('x');
  });

  it("redacts a Secret's data values but keeps its keys", () => {
    const out = redactSecrets({ kind: 'Secret', data: { userdata: 'c2VjcmV0' }, stringData: { a: 'b' } });
    expect(out).toEqual({ kind: 'Secret', data: { userdata: REDACTED }, stringData: { a: REDACTED } });
  });

  it('renders YAML without the secret text', () => {
    const y = toRedactedYaml({ spec: { userData: 'password: hunter2' } });
    expect(y).not.toContain('hunter2');
    expect(y).toContain('userData: <redacted>');
  });
});

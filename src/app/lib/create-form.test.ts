import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CREATE_FORM,
  formFieldOf,
  sourceLabel,
  tabOf,
  suggestName,
  templateRef,
  toCloneInput,
  toCreateInput,
  validateForm,
  type CreateForm,
} from './create-form';

const form = (over: Partial<CreateForm> = {}): CreateForm => ({
  ...DEFAULT_CREATE_FORM,
  sourceValue: 'fedora',
  name: 'web',
  start: false,
  ...over,
});

describe('validateForm', () => {
  it('accepts a complete catalog form', () => {
    expect(validateForm(form())).toEqual({});
  });
  it('names each bad field', () => {
    const e = validateForm(form({ name: 'Web', sourceValue: '', cpu: 0, mem: 'lots', sshKey: 'nope' }));
    expect(Object.keys(e).sort()).toEqual(['cpu', 'mem', 'name', 'source', 'sshKey']);
  });
  it('checks the disk only for sources that create one, and skips cpu/mem under an instancetype', () => {
    expect(validateForm(form({ disk: 'x' }))).toEqual({});
    expect(validateForm(form({ source: 'import', sourceValue: 'https://x/y.qcow2', disk: 'x' })).disk).toBeDefined();
    expect(validateForm(form({ instancetype: 'u1.medium', cpu: 0, mem: '' }))).toEqual({});
  });
  it('validates the source value by kind', () => {
    expect(validateForm(form({ source: 'iso', sourceValue: 'not a url' })).source).toMatch(/URL/);
    expect(validateForm(form({ source: 'pvc', sourceValue: 'Bad_Name' })).source).toMatch(/PVC name/);
    expect(validateForm(form({ source: 'containerDisk', sourceValue: 'quay.io/a/b:1' }))).toEqual({});
  });
});

describe('toCreateInput', () => {
  it('sends exactly one source and omits empty optionals', () => {
    expect(toCreateInput(form())).toEqual({ name: 'web', image: 'fedora', cpu: 2, mem: '4Gi' });
  });
  it('asks the server to power on only when chosen', () => {
    expect(toCreateInput(form({ start: true })).start).toBe(true);
    expect('start' in toCreateInput(form())).toBe(false);
  });
  it('sends disk for disk-creating sources and drops cpu/mem under an instancetype', () => {
    expect(
      toCreateInput(
        form({
          source: 'import',
          sourceValue: ' https://x/y.qcow2 ',
          instancetype: 'u1.small',
          namespace: 'lab',
          node: 'n1',
          sshKey: ' ssh-ed25519 AAA a ',
        }),
      ),
    ).toEqual({
      name: 'web',
      import: 'https://x/y.qcow2',
      disk: '20Gi',
      instancetype: 'u1.small',
      namespace: 'lab',
      node: 'n1',
      sshKey: 'ssh-ed25519 AAA a',
    });
  });
});

describe('helpers', () => {
  it('maps server field names onto form fields', () => {
    expect(formFieldOf('image')).toBe('source');
    expect(formFieldOf('mem')).toBe('mem');
    expect(formFieldOf('other')).toBeNull();
  });
  it('suggests a valid name from the source', () => {
    const name = suggestName('quay.io/containerdisks/Fedora:42', () => 0);
    expect(name).toBe('fedora-aaaa');
    expect(suggestName('https://x/jammy-server.qcow2', () => 0)).toBe('jammy-server-aaaa');
  });
});

describe('template source', () => {
  const tpl = {
    ...DEFAULT_CREATE_FORM,
    source: 'template' as const,
    sourceValue: 'tailvm/fedora-template',
    name: 'web-3',
  };
  it('needs a template, not a size', () => {
    expect(validateForm({ ...tpl, sourceValue: '' }).source).toBe('Pick a template');
    expect(validateForm({ ...tpl, cpu: 0, mem: '' })).toEqual({});
    expect(validateForm({ ...tpl, name: 'Bad' }).name).toBeDefined();
  });
  it('becomes a clone of the template under the new name', () => {
    expect(toCloneInput(tpl)).toEqual({ ns: 'tailvm', name: 'fedora-template', target: 'web-3', start: true });
    expect(toCloneInput({ ...tpl, namespace: 'lab', start: false })).toEqual({
      ns: 'tailvm',
      name: 'fedora-template',
      target: 'web-3',
      namespace: 'lab',
      start: false,
    });
    expect(toCloneInput({ ...tpl, source: 'image' })).toBeNull();
    expect(templateRef('a/b')).toEqual({ namespace: 'a', name: 'b' });
    expect(templateRef('nope')).toBeNull();
  });
});

describe('image library sources', () => {
  it('a library disk or ISO is sent as dataVolume / isoDataVolume with its namespace and a disk size', () => {
    expect(toCreateInput(form({ source: 'dataVolume', sourceValue: 'golden', namespace: 'lab' }))).toEqual({
      name: 'web',
      dataVolume: 'golden',
      namespace: 'lab',
      cpu: 2,
      mem: '4Gi',
      disk: '20Gi',
    });
    expect(toCreateInput(form({ source: 'isoDataVolume', sourceValue: 'debian-iso', disk: '8Gi' }))).toMatchObject({
      isoDataVolume: 'debian-iso',
      disk: '8Gi',
    });
  });
  it('asks for a pick, and checks the disk size', () => {
    expect(validateForm(form({ source: 'dataVolume', sourceValue: '' })).source).toBe('Pick an image from the library');
    expect(validateForm(form({ source: 'isoDataVolume', sourceValue: 'x', disk: 'big' })).disk).toBeDefined();
  });
  it('both are picked on the Image library tab; the server naming either field points at the source', () => {
    expect(tabOf('isoDataVolume')).toBe('dataVolume');
    expect(tabOf('dataVolume')).toBe('dataVolume');
    expect(tabOf('pvc')).toBe('pvc');
    expect(sourceLabel('isoDataVolume')).toBe('Library ISO');
    expect(formFieldOf('isoDataVolume')).toBe('source');
    expect(formFieldOf('dataVolume')).toBe('source');
  });
});

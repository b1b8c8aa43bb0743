import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CREATE_FORM,
  formFieldOf,
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

import { describe, expect, it } from 'vitest';
import { CT_TEMPLATES, imageOfTemplate, ostypeOf, TemplateError } from './ct-view';

describe('imageOfTemplate', () => {
  it('maps PVE template file names on any storage to the distribution’s official image at that version', () => {
    expect(imageOfTemplate('local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst')).toBe('docker.io/library/debian:12');
    expect(imageOfTemplate('nfs-1:vztmpl/ubuntu-22.04-standard_22.04-1_amd64.tar.zst')).toBe(
      'docker.io/library/ubuntu:22.04',
    );
    expect(imageOfTemplate('local:vztmpl/alpine-3.19-default_20240207_amd64.tar.xz')).toBe(
      'docker.io/library/alpine:3.19',
    );
    expect(imageOfTemplate('local:vztmpl/archlinux-base_20240911-1_amd64.tar.zst')).toBe(
      'docker.io/library/archlinux:latest',
    );
    expect(imageOfTemplate('local:vztmpl/centos-9-stream-default_20221109_amd64.tar.xz')).toBe(
      'quay.io/centos/centos:stream9',
    );
    for (const t of CT_TEMPLATES) expect(imageOfTemplate(t.volid)).toBe(t.image);
  });

  it('takes an image reference as it is and refuses anything else', () => {
    expect(imageOfTemplate('ghcr.io/me/tools:1.2')).toBe('ghcr.io/me/tools:1.2');
    expect(imageOfTemplate('debian:bookworm')).toBe('debian:bookworm');
    for (const bad of [
      'local:vztmpl/plan9-4-default_1_amd64.tar.zst',
      'local:vztmpl/',
      'http://example.org/x.tar',
      'Debian:12',
      'local:iso/debian.iso',
    ])
      expect(() => imageOfTemplate(bad), bad).toThrow(TemplateError);
  });
});

describe('ostypeOf', () => {
  it('is the image’s distribution in PVE’s words', () => {
    expect(ostypeOf('docker.io/library/debian:12')).toBe('debian');
    expect(ostypeOf('alpine')).toBe('alpine');
    expect(ostypeOf('quay.io/rockylinux/rockylinux:9')).toBe('centos');
    expect(ostypeOf('registry.opensuse.org/opensuse/leap:15.6')).toBe('opensuse');
    expect(ostypeOf('registry.fedoraproject.org/fedora:42@sha256:' + 'a'.repeat(64))).toBe('fedora');
    expect(ostypeOf('ghcr.io/me/tools:1')).toBe('unmanaged');
  });
});
